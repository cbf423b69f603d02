// The impl structs behind the public graph / partition / compiled_partition.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.hpp"
#include "bpg/graph.hpp"
#include "core/partition_threads.hpp"

namespace bpg {

// What the ops added so far say about one tensor id: its data type, the
// union of the dims they know, the strides if one gave them. A new use of the
// id conflicts with an earlier one exactly when it conflicts with these.
struct tensor_facts {
    data_type dt = data_type::undef;
    int rank = -1;     // unknown until one use knows it
    dims shape;        // per axis; unknown_dim until one use knows it
    dims strides;      // empty until a strided use of known rank gives them
};

struct graph::impl {
    engine::kind engine_kind = engine::kind::cpu;
    fpmath_mode fpmath = fpmath_mode::strict;
    bool fpmath_apply_to_int = false;
    std::vector<op> ops;         // as added
    // add_op's lookups by id, so building a graph is near-linear in its size.
    std::unordered_map<size_t, size_t> op_index;       // op id -> index in ops
    std::unordered_map<size_t, size_t> producer;       // tensor id -> index in ops
    std::unordered_map<size_t, tensor_facts> tensors;  // tensor id -> facts
    std::vector<op> sorted_ops;  // topological order, after finalize
    bool finalized = false;
    std::vector<partition> partitions;       // partition_policy::fusion
    std::vector<partition> debug_partitions; // partition_policy::debug
};

struct partition::impl {
    size_t id = 0;
    std::string pattern;
    bool supported = true; // false: an op kind bpg does not implement
    std::vector<op> ops; // execution order
    std::vector<logical_tensor> inputs, outputs; // ports, as given to add_op
    engine::kind engine_kind = engine::kind::cpu;
};

struct compiled_partition::impl {
    std::vector<logical_tensor> inputs, outputs; // concrete, strided
    // Per port, for execute's checks: whether no kernel reads it (InterpolateBackprop's
    // src: it may be null), and the bytes its buffer spans (get_mem_size, computed once here).
    std::vector<char> input_is_shape_only;
    std::vector<size_t> input_bytes, output_bytes;
    backends::partition_problem problem;
    std::unique_ptr<backends::kernel> kernel;
    backend_kind backend = backend_kind::ref;
    std::string dispatch_reason;
    std::string kernel_path; // the kernel's path(), asked once at compile
    // The partition's threads and runtime (max_threads resolved at compile).
    std::unique_ptr<core::partition_threads> threads;
    // "<pattern>,<ops>,<backend>,<ports>,<attrs>" of the bpg_verbose lines.
    std::string verbose_fields;
};

} // namespace bpg
