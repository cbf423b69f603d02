// The oneDNN backend (backend_kind::dnnl): lowers a single-op partition to a
// oneDNN 2.6+ or 3.x primitive exactly where the primitive computes
// docs/semantics.md (dnnl_compat.hpp builds each primitive descriptor for the
// version found; docs/onednn-versions.md). Compiled only with BPG_WITH_DNNL.
//   InterpolateBackprop       -> resampling_backward        (dnnl_interpolate.hpp)
//   BatchNormTrainingBackprop -> batch_normalization_backward (dnnl_batchnorm.hpp)
//   ReLUBackprop              -> not lowered: eltwise_backward(relu, alpha 0)
//       computes diff_dst * 0 where the input is <= 0, so an inf/NaN diff_dst
//       gives NaN there, and it passes diff_dst where the input is NaN;
//       docs/semantics.md gives 0 in both cases (measured on 2.6.3 and 3.9.2).
//   partitions of more than one op (the ReLUBackprop -> BN fusion): not
//       lowered; oneDNN has no primitive for that pattern.
// non_finite_divergence: oneDNN's linear resampling backward may give NaN
// where docs/semantics.md gives ±Inf (it adds diff_dst elements with zero
// weights), so the automatic rule never picks dnnl for linear interpolation.
// why_unsupported says which rule a problem breaks, with the op id. Primitives
// live in a thread-safe cache keyed by the full problem (primitive_cache.hpp);
// compiled kernels execute from any number of threads at once
// (dnnl_common.hpp).
#pragma once

#include "backends/backend.hpp"

namespace bpg::backends {

class dnnl_backend : public backend {
public:
    backend_kind kind() const override;
    std::string why_unsupported(const partition_problem &p) const override;
    std::string non_finite_divergence(const partition_problem &p) const override;
    std::unique_ptr<kernel> compile(const partition_problem &p) const override;
};

// For tests and diagnostics: the backend's primitive cache counters.
struct dnnl_cache_counters {
    uint64_t hits = 0, misses = 0;
    size_t entries = 0;
};
dnnl_cache_counters dnnl_primitive_cache_counters();
void dnnl_primitive_cache_clear();

} // namespace bpg::backends
