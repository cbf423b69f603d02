// The one place that knows which oneDNN the backend is compiled against.
// oneDNN 3.0 removed the operation descriptors (batch_normalization_backward::
// desc, resampling_backward::desc): a 3.x primitive descriptor is built from
// the engine and the memory descriptors directly, and the backward batch
// normalization takes diff_src and diff_dst descriptors of their own. The
// helpers below build each primitive descriptor the backend uses, for 2.6+ and
// 3.x; every #if on the version lives in this header and dnnl_compat.cpp
// (docs/onednn-versions.md lists what differs).
#pragma once

#include <string>

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_version.h>

#if DNNL_VERSION_MAJOR < 2 || (DNNL_VERSION_MAJOR == 2 && DNNL_VERSION_MINOR < 6) || DNNL_VERSION_MAJOR > 3
#error "bpg's dnnl backend is written for oneDNN 2.6 to 3.x (CMakeLists.txt checks the version found)"
#endif

namespace bpg::backends::dnnl_impl {

// True when the headers are oneDNN 3.x (separate diff_src/diff_dst
// descriptors in the backward batch normalization).
inline constexpr bool onednn_v3 = DNNL_VERSION_MAJOR >= 3;

// Whether a backward batch normalization with use_shift wants SHIFT bound:
// 2.x checks it although backward never reads it; 3.x refuses the extra
// argument at execute ("bad number of inputs").
inline constexpr bool bnorm_bwd_binds_shift = DNNL_VERSION_MAJOR < 3;

// "oneDNN 2.6" or "oneDNN 3.9": the headers' version, for refusal messages.
const std::string &onednn_name();

// The oneDNN library loaded at run time (dnnl_version()), "3.9.2"; it may
// differ from the headers' when LD_LIBRARY_PATH points elsewhere.
std::string loaded_onednn_version();

// A memory descriptor's dims (2.6: dims(), 3.x: get_dims()).
dnnl::memory::dims dims_of(const dnnl::memory::desc &md);

// The backward batch normalization with its forward hint. 2.x describes
// diff_src and diff_dst with one descriptor, diff_src_md: the caller makes
// sure diff_dst has that layout.
dnnl::batch_normalization_backward::primitive_desc make_bnorm_bwd_pd(const dnnl::engine &eng,
        dnnl::prop_kind prop, const dnnl::memory::desc &diff_src_md, const dnnl::memory::desc &diff_dst_md,
        const dnnl::memory::desc &src_md, float epsilon, dnnl::normalization_flags flags,
        const dnnl::primitive_attr &attr);

// The backward resampling with its forward hint; the factors come from the
// shapes (no explicit factors are passed, on either version).
dnnl::resampling_backward::primitive_desc make_resampling_bwd_pd(const dnnl::engine &eng, dnnl::algorithm alg,
        const dnnl::memory::desc &diff_src_md, const dnnl::memory::desc &diff_dst_md,
        const dnnl::primitive_attr &attr);

} // namespace bpg::backends::dnnl_impl
