// InterpolateBackprop -> dnnl::resampling_backward (oneDNN 2.6+ or 3.x), where the
// primitive computes docs/semantics.md:
//   - coordinate mode half_pixel, or pytorch_half_pixel when the axis's output
//     size is > 1 (then the two are the same map); no DirectML pixel offsets.
//     oneDNN takes the factors from the shapes (dims are passed, never our
//     scales), which is docs/semantics.md's shape ratio.
//   - nearest only with round_prefer_ceil (oneDNN rounds ties up), and only
//     on axes where oneDNN's f32 range arithmetic gives every output to the
//     input docs/semantics.md gives it (resampling_model.hpp decides, per axis and
//     per oneDNN implementation, at compile);
//   - linear only where the f32 ranges and floors are exact and every weight
//     is within 2^-16 of the exact one (same model);
//   - 1 to 3 spatial axes; f32 or bf16 (2.6 has no f16 resampling; f16 is
//     not lowered on 3.x either);
//     sizes that fit in int32 (oneDNN's kernels index them as int);
//   - any strides oneDNN accepts in a memory::desc: the tensor's axes are
//     shown to oneDNN as N, C, spatial... by permuting dims and strides.
// Tensors with zero elements (N or C of 0) compile to a kernel that does
// nothing: diff_src has no element to write.
#pragma once

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace bpg::backends::dnnl_impl {

std::string interpolate_why_unsupported(const core::interpolate_bwd_problem &p);
// Throws bpg::error(unimplemented) when interpolate_why_unsupported is not empty.
std::unique_ptr<kernel> compile_interpolate(const core::interpolate_bwd_problem &p);

} // namespace bpg::backends::dnnl_impl
