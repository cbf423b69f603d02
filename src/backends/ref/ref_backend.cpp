// The reference backend: runs each op of a partition with the naive f64
// kernels of src/reference, in order. A fused partition runs op by op through
// buffers of its internal tensors, allocated per call before any op runs (so
// concurrent calls never share them): the reference defines results, not speed.
#include "backends/ref/ref_backend.hpp"

#include "core/allocate.hpp"
#include "reference/reference.hpp"

namespace bpg::backends {

namespace {

void *buffer_of(const buffer_map &b, size_t id) { return b.at(id); }

struct op_runner {
    const buffer_map &b;
    void operator()(const core::interpolate_bwd_problem &p) const {
        reference::interpolate_bwd(p, buffer_of(b, p.diff_dst.id), buffer_of(b, p.diff_src.id));
    }
    void operator()(const core::bn_bwd_problem &p) const {
        const auto optional = [&](const std::optional<core::tensor_desc> &t) { return t ? buffer_of(b, t->id) : nullptr; };
        const bool sums_out = core::ends_with_sums(p.part);
        reference::bn_buffers r;
        r.src = buffer_of(b, p.src.id), r.diff_dst = buffer_of(b, p.diff_dst.id), r.mean = buffer_of(b, p.mean.id);
        r.variance = sums_out ? nullptr : buffer_of(b, p.variance.id);
        r.gamma = optional(p.gamma);
        r.sum_diff_dst = optional(p.sum_diff_dst), r.sum_diff_dst_centered = optional(p.sum_diff_dst_centered);
        r.diff_src = sums_out ? nullptr : buffer_of(b, p.diff_src.id);
        r.diff_gamma = optional(p.diff_gamma), r.diff_beta = optional(p.diff_beta);
        reference::batchnorm_bwd(p, r);
    }
    void operator()(const core::relu_bwd_problem &p) const {
        reference::relu_bwd(p, buffer_of(b, p.input.id), buffer_of(b, p.diff_dst.id),
                buffer_of(b, p.diff_src.id));
    }
};

class ref_kernel : public kernel {
public:
    explicit ref_kernel(partition_problem p) : p_(std::move(p)) {}
    void execute(const buffer_map &buffers) const override {
        buffer_map b = buffers;
        core::checked_vector<core::aligned_buffer> internal;
        internal.reserve(p_.internal.size());
        for (const core::tensor_desc &d : p_.internal) {
            internal.push_back(core::allocate(size_t(d.element_count()) * size_of(d.dt),
                    "internal tensor " + std::to_string(d.id) + " of " + p_.pattern));
            b[d.id] = internal.back().get();
        }
        for (const op_problem &op : p_.ops) std::visit(op_runner {b}, op);
    }
    std::string path() const override { return "reference:f64"; }

private:
    partition_problem p_;
};

} // namespace

backend_kind ref_backend::kind() const { return backend_kind::ref; }

std::string ref_backend::why_unsupported(const partition_problem &) const { return {}; }

std::unique_ptr<kernel> ref_backend::compile(const partition_problem &p) const {
    return std::make_unique<ref_kernel>(p);
}

} // namespace bpg::backends
