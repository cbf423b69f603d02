// A model of how oneDNN's CPU resampling_backward maps outputs to inputs,
// float operation for float operation, so that compile can decide exactly
// whether the primitive computes docs/semantics.md on one spatial axis.
//
// Why this is needed. docs/semantics.md decides nearest ties exactly (rational
// arithmetic, kernels/interp_coords.hpp). oneDNN's backward does not evaluate
// the forward map; each input x gathers a range of outputs whose bounds are
// computed in f32:
//   jit:avx512_core (NXC-dense data),   factor = f32(out / in)
//   and 3.x's ref:any (padded data)     start(x) = ceil(f32(f32(x * factor) - 0.5))
//   simple:any, 2.6's ref:any           start(x) = ceil(f32(f32(f32(x * out) / in) - 0.5))
// end(x) = start(x + 1). The jit rounds `out / in` first, so an exact tie
// (s = k + 1/2 in the forward map) can land on the wrong side: measured on
// this machine, 33 of the 4096 (in, out) pairs with in, out in 1..64 differ
// from docs/semantics.md on the jit path (and on 3.x's ref), and none on
// simple (and 2.6's ref); at larger sizes
// (products past 2^24) both paths misplace outputs for most non-dyadic
// ratios. The model below predicts every one of them (tests check it against
// the primitive).
//
// Linear: the ranges use c(y) = f32((y + 0.5) * out / in - 0.5) and the
// weights the f32 forward coordinate s(o) = f32((o + 0.5) * in / out - 0.5):
// the same formulas on every path. The model checks that every range bound
// and every floor(s) equal their exact values (then each output reaches the
// same inputs as in docs/semantics.md, zero-weight taps included), and reports
// the largest |s_f32 - s_exact|, which bounds the error of every weight.
#pragma once

#include <cstdint>
#include <string>

namespace bpg::backends::dnnl_impl {

// jit: the factor-first bounds (every jit; 3.x's ref too); simple_or_ref:
// the product-first bounds (simple:any; 2.6's ref:any).
enum class resampling_kernel { jit, simple_or_ref, unknown };

// From the primitive descriptor's impl_info_str().
resampling_kernel resampling_kernel_of(const std::string &impl_info);

// Output range [start, end) that input x gathers with nearest, as the kernel
// computes it (no clamping: an end past `out` would be an out-of-bounds read).
struct output_range {
    int64_t start = 0, end = 0;
};
output_range nearest_range(resampling_kernel k, int64_t x, int64_t in, int64_t out);

// Empty when the kernel's nearest ranges give every output of an axis to the
// input docs/semantics.md gives it (half_pixel, round_prefer_ceil); otherwise the
// first difference, in words.
std::string nearest_axis_mismatch(resampling_kernel k, int64_t in, int64_t out);

struct linear_axis_report {
    std::string mismatch;       // empty when ranges and floors are exact
    double max_weight_error = 0; // max over outputs of |s_f32 - s_exact|
};
linear_axis_report linear_axis_check(int64_t in, int64_t out);

// The largest weight error a linear axis may have: 2^-16, i.e. every weight
// right to 16 fractional bits. The f32 coordinate is exact (error 0) while
// (2o + 1) * in fits in 24 bits and the ratio is dyadic, or when in is a
// power of two; for other ratios the error grows with the size (about
// in * 2^-24): axes up to a few hundred elements pass, 1000 -> 1500 does not.
constexpr double max_linear_weight_error = 1.0 / 65536;

} // namespace bpg::backends::dnnl_impl
