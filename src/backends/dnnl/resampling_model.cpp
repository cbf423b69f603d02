#include "backends/dnnl/resampling_model.hpp"

#include <algorithm>
#include <cmath>

#include "backends/dnnl/dnnl_compat.hpp"
#include "kernels/interp_coords.hpp"

namespace bpg::backends::dnnl_impl {
namespace {

using kernels::wide_int;

// Rounds to f32 and keeps it there: every step of the model is one f32
// operation of the kernel, never fused (no FMA contraction) or kept wider.
float f32(float v) {
    volatile float r = v;
    return r;
}

// oneDNN's ceil_idx: negative -> 0, else ceil.
int64_t ceil_idx(float v) {
    return v < 0.f ? 0 : int64_t(std::ceil(double(v)));
}

// c(y) = (y + 0.5) * x_max / y_max - 0.5, as the kernels evaluate it.
float coeff_f32(int64_t y, int64_t y_max, int64_t x_max) {
    const float a = f32(float(y) + 0.5f);
    const float b = f32(a * float(x_max));
    const float c = f32(b / float(y_max));
    return f32(c - 0.5f);
}

// The same, exactly: ((2y + 1) x_max - y_max) / (2 y_max).
struct fraction {
    wide_int num, den; // den > 0
};
fraction coeff_exact(int64_t y, int64_t y_max, int64_t x_max) {
    return {(2 * wide_int(y) + 1) * x_max - y_max, 2 * wide_int(y_max)};
}

int64_t floor_of(float v) { return int64_t(std::floor(double(v))); }
int64_t floor_of(const fraction &f) { return int64_t(kernels::floor_div(f.num, f.den)); }
int64_t ceil0_of(float v) { return ceil_idx(v); }
int64_t ceil0_of(const fraction &f) {
    return f.num < 0 ? 0 : int64_t(kernels::ceil_div(f.num, f.den));
}
bool negative(float v) { return v < 0.f; }
bool negative(const fraction &f) { return f.num < 0; }

// The four bounds of the linear backward for input x: outputs [ls, le) reach
// x as their left tap, [rs, re) as their right tap. C is float (the kernel)
// or fraction (exact); coeff(y) is c(y) with y_max = in, x_max = out.
template <typename C, typename F>
void linear_bounds(int64_t x, int64_t in, int64_t out, F coeff, int64_t b[4]) {
    const C here = coeff(x), next = coeff(x + 1), prev = coeff(x - 1);
    b[0] = x == 0 ? 0 : ceil0_of(here);
    b[1] = std::min(ceil0_of(next), out);
    b[2] = negative(prev) ? 0 : floor_of(prev) + 1;
    b[3] = x == in - 1 ? out : std::min(negative(here) ? 0 : floor_of(here) + 1, out);
}

std::string axis_text(int64_t in, int64_t out) {
    return "(in " + std::to_string(in) + ", out " + std::to_string(out) + ")";
}

} // namespace

resampling_kernel resampling_kernel_of(const std::string &impl_info) {
    if (impl_info.rfind("jit:", 0) == 0) return resampling_kernel::jit;
    // 3.x's ref:any computes its ranges as the jit does (measured on 3.9).
    if (onednn_v3 && impl_info.rfind("ref:", 0) == 0) return resampling_kernel::jit;
    if (impl_info.rfind("simple:", 0) == 0 || impl_info.rfind("ref:", 0) == 0)
        return resampling_kernel::simple_or_ref;
    return resampling_kernel::unknown;
}

output_range nearest_range(resampling_kernel k, int64_t x, int64_t in, int64_t out) {
    if (k == resampling_kernel::jit) {
        // start: ceil(x * factor - 0.5) with factor = (float)out / in,
        // converted with round-up (vcvtss2si {ru-sae}); -0.5 rounds to -0 = 0.
        const float factor = f32(float(out) / float(in));
        auto bound = [&](int64_t y) {
            return int64_t(std::ceil(double(f32(f32(float(y) * factor) - 0.5f))));
        };
        return {bound(x), bound(x + 1)};
    }
    // ceil_idx(((float)x * out / in) - 0.5f) and ceil_idx(((x + 1.f) * out / in) - 0.5f)
    auto bound = [&](float y) {
        return ceil_idx(f32(f32(f32(y * float(out)) / float(in)) - 0.5f));
    };
    return {bound(float(x)), bound(f32(float(x) + 1.f))};
}

std::string nearest_axis_mismatch(resampling_kernel k, int64_t in, int64_t out) {
    if (k == resampling_kernel::unknown) return "unknown oneDNN implementation";
    kernels::axis_map m;
    m.in = in;
    m.out = out;
    auto differs = [&](int64_t o, const std::string &got) {
        const kernels::source_coord s = kernels::source_coordinate(m, o);
        const int64_t want = kernels::nearest_index(s, kernels::nearest_rounding::round_prefer_ceil, in);
        const bool tie = (2 * s.num + s.den) % (2 * s.den) == 0;
        return "output " + std::to_string(o) + " of axis " + axis_text(in, out) + " (s = "
                + std::to_string(s.as_double()) + (tie ? ", an exact tie" : "") + ") is gathered by "
                + got + " in oneDNN's f32 arithmetic, but docs/semantics.md reads input " + std::to_string(want);
    };
    // The ranges must tile [0, out) in order, each output in the range of
    // the input docs/semantics.md gives it. Streamed: no table of `out` entries.
    int64_t next = 0; // first output not yet gathered
    for (int64_t x = 0; x < in; ++x) {
        const output_range r = nearest_range(k, x, in, out);
        if (r.start < 0 || r.end > out)
            return "input " + std::to_string(x) + " of axis " + axis_text(in, out)
                    + " would gather outputs [" + std::to_string(r.start) + ", "
                    + std::to_string(r.end) + "), outside the tensor";
        if (r.start > next) return differs(next, "no input");
        if (r.start < next) return differs(r.start, "two inputs");
        for (int64_t o = r.start; o < r.end; ++o) {
            const int64_t want = kernels::nearest_index(kernels::source_coordinate(m, o),
                    kernels::nearest_rounding::round_prefer_ceil, in);
            if (want != x) return differs(o, "input " + std::to_string(x));
        }
        next = std::max(next, r.end);
    }
    if (next < out) return differs(next, "no input");
    return {};
}

linear_axis_report linear_axis_check(int64_t in, int64_t out) {
    linear_axis_report rep;
    const char *names[4] = {"left-tap start", "left-tap end", "right-tap start", "right-tap end"};
    for (int64_t x = 0; x < in; ++x) {
        int64_t got[4], want[4];
        linear_bounds<float>(x, in, out, [&](int64_t y) { return coeff_f32(y, in, out); }, got);
        linear_bounds<fraction>(x, in, out, [&](int64_t y) { return coeff_exact(y, in, out); }, want);
        for (int k = 0; k < 4; ++k)
            if (got[k] != want[k]) {
                rep.mismatch = std::string("the ") + names[k] + " of input " + std::to_string(x)
                        + " on axis " + axis_text(in, out) + " is " + std::to_string(got[k])
                        + " in oneDNN's f32 arithmetic instead of " + std::to_string(want[k]);
                return rep;
            }
    }
    for (int64_t o = 0; o < out; ++o) {
        const float sf = coeff_f32(o, out, in);
        const fraction se = coeff_exact(o, out, in);
        if (floor_of(sf) != floor_of(se)) {
            rep.mismatch = "the coordinate of output " + std::to_string(o) + " on axis "
                    + axis_text(in, out) + " is " + std::to_string(sf)
                    + " in f32, on the other side of an integer from its exact value";
            return rep;
        }
        const double exact = double(se.num) / double(se.den);
        rep.max_weight_error = std::max(rep.max_weight_error, std::fabs(double(sf) - exact));
    }
    return rep;
}

} // namespace bpg::backends::dnnl_impl
