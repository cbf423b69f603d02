// What a backend sees and provides. A backend receives a partition's resolved
// problems (shapes, strides, dtypes and attributes all decoded) and returns a
// kernel that only binds pointers and runs. Backends are registered by an
// explicit, ordered list (registered_backends in dispatch.cpp), not by
// static-initialisation magic.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "backends/backend_buffers.hpp"
#include "bpg/graph.hpp"
#include "core/problems.hpp"

namespace bpg::backends {

using op_problem = std::variant<core::interpolate_bwd_problem, core::bn_bwd_problem,
        core::relu_bwd_problem>;

struct partition_problem {
    std::string pattern;                     // e.g. "relu_bwd+bn_bwd"
    std::vector<op_problem> ops;             // in execution order
    std::vector<core::tensor_desc> internal; // produced and consumed inside (a kernel that stores them allocates them)
};

class kernel {
public:
    virtual ~kernel() = default;
    // Every port of the partition is in buffers (not its internal tensors).
    virtual void execute(const buffer_map &buffers) const = 0;
    // The kernel path the backend's plan chose, named as oneDNN names its
    // implementation (compiled_partition::get_kernel_path, BPG_VERBOSE=2).
    virtual std::string path() const = 0;
    // True when the plan runs the whole partition as one task on the calling
    // thread (a small problem): execute then enters no oneTBB arena and makes
    // no OpenMP team, and the partition never creates its arena.
    virtual bool one_task() const { return false; }
};

class backend {
public:
    virtual ~backend() = default;
    virtual backend_kind kind() const = 0;
    // Empty when the backend computes this partition exactly; else why not.
    virtual std::string why_unsupported(const partition_problem &p) const = 0;
    // Empty when the results equal the reference's on every input, NaN and
    // ±Inf too; else how they differ on non-finite inputs (docs/divergences.md).
    // The automatic dispatch rule passes over such a backend; forcing it works.
    virtual std::string non_finite_divergence(const partition_problem &) const { return {}; }
    virtual std::unique_ptr<kernel> compile(const partition_problem &p) const = 0;
};

// True where oneDNN measured faster than the tbb kernels, so the dispatch
// rule tries dnnl first: BatchNormTrainingBackprop training on channels-last
// bf16 data under 1 MB with a channel count that is a multiple of 16
// (docs/dispatch.md; measurements in bench/NOTES.md).
bool dnnl_leads(const partition_problem &p);

// Every backend of this build, in order of preference.
const std::vector<const backend *> &registered_backends();
const backend *find_backend(backend_kind k); // nullptr if not in this build

// THE dispatch rule: which backend runs a compiled partition (documented in
// dispatch.cpp). requested != auto_select, or env (BPG_BACKEND) naming a
// backend, forces it (error if absent or unable); else the first backend of
// `order` that runs the partition. Returns it and, in *reason, why.
const backend &choose_backend(const partition_problem &p, backend_kind requested, const char *env,
        const std::vector<const backend *> &order, std::string *reason = nullptr);
// The same over registered_backends().
const backend &choose_backend(const partition_problem &p, backend_kind requested,
        const char *env, std::string *reason = nullptr);

} // namespace bpg::backends
