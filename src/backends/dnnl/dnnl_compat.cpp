#include "backends/dnnl/dnnl_compat.hpp"

namespace bpg::backends::dnnl_impl {

const std::string &onednn_name() {
    static const std::string name
            = "oneDNN " + std::to_string(DNNL_VERSION_MAJOR) + "." + std::to_string(DNNL_VERSION_MINOR);
    return name;
}

std::string loaded_onednn_version() {
    const dnnl_version_t *v = dnnl_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

dnnl::memory::dims dims_of(const dnnl::memory::desc &md) {
#if DNNL_VERSION_MAJOR >= 3
    return md.get_dims();
#else
    return md.dims();
#endif
}

dnnl::batch_normalization_backward::primitive_desc make_bnorm_bwd_pd(const dnnl::engine &eng,
        dnnl::prop_kind prop, const dnnl::memory::desc &diff_src_md, const dnnl::memory::desc &diff_dst_md,
        const dnnl::memory::desc &src_md, float epsilon, dnnl::normalization_flags flags,
        const dnnl::primitive_attr &attr) {
    using fwd = dnnl::batch_normalization_forward;
    using bwd = dnnl::batch_normalization_backward;
#if DNNL_VERSION_MAJOR >= 3
    const fwd::primitive_desc hint(eng, dnnl::prop_kind::forward_training, src_md, src_md, epsilon, flags);
    return bwd::primitive_desc(eng, prop, diff_src_md, diff_dst_md, src_md, epsilon, flags, hint, attr);
#else
    (void)diff_dst_md; // one descriptor for both: diff_src's (see the header)
    const fwd::primitive_desc hint(fwd::desc(dnnl::prop_kind::forward_training, src_md, epsilon, flags), eng);
    return bwd::primitive_desc(bwd::desc(prop, diff_src_md, src_md, epsilon, flags), attr, eng, hint);
#endif
}

dnnl::resampling_backward::primitive_desc make_resampling_bwd_pd(const dnnl::engine &eng, dnnl::algorithm alg,
        const dnnl::memory::desc &diff_src_md, const dnnl::memory::desc &diff_dst_md,
        const dnnl::primitive_attr &attr) {
    using fwd = dnnl::resampling_forward;
    using bwd = dnnl::resampling_backward;
#if DNNL_VERSION_MAJOR >= 3
    const fwd::primitive_desc hint(eng, dnnl::prop_kind::forward_training, alg, diff_src_md, diff_dst_md);
    return bwd::primitive_desc(eng, alg, diff_src_md, diff_dst_md, hint, attr);
#else
    const fwd::primitive_desc hint(fwd::desc(dnnl::prop_kind::forward_training, alg, diff_src_md, diff_dst_md), eng);
    return bwd::primitive_desc(bwd::desc(alg, diff_src_md, diff_dst_md), attr, eng, hint);
#endif
}

} // namespace bpg::backends::dnnl_impl
