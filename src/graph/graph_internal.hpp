// The impl structs behind the public graph / partition / compiled_partition.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "bpg/graph.hpp"

namespace bpg {

struct graph::impl {
    engine::kind engine_kind = engine::kind::cpu;
    fpmath_mode fpmath = fpmath_mode::strict;
    std::vector<op> ops;         // as added
    std::vector<op> sorted_ops;  // topological order, after finalize
    bool finalized = false;
    std::vector<partition> partitions;       // partition_policy::fusion
    std::vector<partition> debug_partitions; // partition_policy::debug
};

struct partition::impl {
    size_t id = 0;
    std::string pattern;
    std::vector<op> ops; // execution order
    std::vector<logical_tensor> inputs, outputs; // ports, as given to add_op
    engine::kind engine_kind = engine::kind::cpu;
};

struct compiled_partition::impl {
    std::vector<logical_tensor> inputs, outputs; // concrete, strided
    backends::partition_problem problem;
    std::unique_ptr<backends::kernel> kernel;
    backend_kind backend = backend_kind::ref;
    std::string dispatch_reason;
    // "<pattern>,<ops>,<backend>,<ports>,<attrs>" of the bpg_verbose lines.
    std::string verbose_fields;
};

} // namespace bpg
