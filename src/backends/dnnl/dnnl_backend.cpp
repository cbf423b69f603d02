#include "backends/dnnl/dnnl_backend.hpp"

#include "backends/dnnl/dnnl_batchnorm.hpp"
#include "backends/dnnl/dnnl_compat.hpp"
#include "backends/dnnl/dnnl_interpolate.hpp"
#include "backends/dnnl/primitive_cache.hpp"

namespace bpg::backends {
namespace {

struct why_visitor {
    std::string operator()(const core::interpolate_bwd_problem &p) const {
        return dnnl_impl::interpolate_why_unsupported(p);
    }
    std::string operator()(const core::bn_bwd_problem &p) const {
        return dnnl_impl::batchnorm_why_unsupported(p);
    }
    std::string operator()(const core::relu_bwd_problem &p) const {
        return "ReLUBackprop op " + std::to_string(p.op_id)
                + ": not lowered: " + dnnl_impl::onednn_name() + "'s eltwise_backward(relu) multiplies diff_dst by 0 where the "
                  "input is <= 0 (inf/NaN diff_dst -> NaN) and passes diff_dst where the input is NaN; "
                  "docs/semantics.md gives 0 in both cases";
    }
};

struct compile_visitor {
    std::unique_ptr<kernel> operator()(const core::interpolate_bwd_problem &p) const {
        return dnnl_impl::compile_interpolate(p);
    }
    std::unique_ptr<kernel> operator()(const core::bn_bwd_problem &p) const {
        return dnnl_impl::compile_batchnorm(p);
    }
    std::unique_ptr<kernel> operator()(const core::relu_bwd_problem &p) const {
        throw error(status::unimplemented, why_visitor {}(p));
    }
};

std::string multi_op_refusal(const partition_problem &p) {
    if (p.ops.size() == 1) return {};
    return "partition " + p.pattern + " has " + std::to_string(p.ops.size())
            + " ops: the dnnl backend lowers single-op partitions only (" + dnnl_impl::onednn_name()
            + " has no primitive for this fused pattern)";
}

} // namespace

backend_kind dnnl_backend::kind() const { return backend_kind::dnnl; }

std::string dnnl_backend::why_unsupported(const partition_problem &p) const {
    std::string no = multi_op_refusal(p);
    if (!no.empty()) return no;
    return std::visit(why_visitor {}, p.ops.front());
}

std::string dnnl_backend::non_finite_divergence(const partition_problem &p) const {
    if (p.ops.size() != 1) return {};
    const auto *ip = std::get_if<core::interpolate_bwd_problem>(&p.ops.front());
    if (!ip || ip->mode != core::interp_mode::linear) return {};
    return "InterpolateBackprop op " + std::to_string(ip->op_id)
            + ": oneDNN's linear resampling backward may give NaN where a diff_src element is +Inf or -Inf "
              "(it multiplies diff_dst elements by zero weights)";
}

std::unique_ptr<kernel> dnnl_backend::compile(const partition_problem &p) const {
    const std::string no = multi_op_refusal(p);
    if (!no.empty()) throw error(status::unimplemented, no);
    return std::visit(compile_visitor {}, p.ops.front());
}

dnnl_cache_counters dnnl_primitive_cache_counters() {
    const dnnl_impl::cache_stats s = dnnl_impl::global_primitive_cache().stats();
    return {s.hits, s.misses, s.entries};
}

void dnnl_primitive_cache_clear() { dnnl_impl::global_primitive_cache().clear(); }

} // namespace bpg::backends
