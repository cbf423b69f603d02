// Coordinate math of InterpolateBackprop: the one place where an output index
// is mapped to a source coordinate, then to a nearest index or linear taps.
// The reference backend, the fast kernels and the tests all call these.
//
// Derivation (in = input size, out = output size of one spatial axis):
//   half_pixel            s = (o + 1/2) in/out - 1/2 = ((2o+1) in - out) / (2 out)
//   align_corners         s = o (in-1)/(out-1)            (0 when out == 1)
//   asymmetric            s = o in/out
//   pytorch_half_pixel    s = -1/2 when out == 1, else half_pixel
//   tf_half_pixel_for_nn  s = (2o+1) in / (2 out)
//   pixel offsets (DML)   s = (o - output_offset)/scale - input_offset
// The first five come from shapes, so s is kept as an exact fraction num/den
// and every rounding is integer arithmetic: a tie (s = k + 1/2) is decided
// exactly at any size up to 2^62, never by float error. The pixel-offset mode
// is defined by floats, so it is evaluated once in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace bpg::kernels {

using wide_int = __int128; // products of two sizes need more than 64 bits

enum class coord_mode {
    half_pixel,
    align_corners,
    asymmetric,
    pytorch_half_pixel,
    tf_half_pixel_for_nn,
    pixel_offsets,
};

enum class nearest_rounding { round_prefer_ceil, round_prefer_floor, floor, ceil };

// The attribute values that name them (pixel_offsets has none: it is the
// scales + pixel offsets form).
inline const char *to_string(coord_mode m) {
    switch (m) {
        case coord_mode::half_pixel: return "half_pixel";
        case coord_mode::align_corners: return "align_corners";
        case coord_mode::asymmetric: return "asymmetric";
        case coord_mode::pytorch_half_pixel: return "pytorch_half_pixel";
        case coord_mode::tf_half_pixel_for_nn: return "tf_half_pixel_for_nn";
        case coord_mode::pixel_offsets: return "pixel offsets";
    }
    return "?";
}

inline const char *to_string(nearest_rounding r) {
    switch (r) {
        case nearest_rounding::round_prefer_ceil: return "round_prefer_ceil";
        case nearest_rounding::round_prefer_floor: return "round_prefer_floor";
        case nearest_rounding::floor: return "floor";
        case nearest_rounding::ceil: return "ceil";
    }
    return "?";
}

// How one spatial axis maps output indices to input coordinates.
struct axis_map {
    int64_t in = 1;
    int64_t out = 1;
    coord_mode mode = coord_mode::half_pixel;
    float scale = 1.f;        // pixel_offsets only
    float input_offset = 0.f; // pixel_offsets only
    float output_offset = 0.f;
};

// A source coordinate: exact num/den (den > 0) or, for pixel offsets, a double.
struct source_coord {
    bool exact = true;
    wide_int num = 0;
    wide_int den = 1;
    double value = 0.0; // used when !exact
    double as_double() const { return exact ? double(num) / double(den) : value; }
};

inline wide_int floor_div(wide_int a, wide_int b) { // b > 0
    wide_int q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}
inline wide_int ceil_div(wide_int a, wide_int b) { return -floor_div(-a, b); }

inline source_coord source_coordinate(const axis_map &m, int64_t o) {
    const wide_int in = m.in, out = m.out, w = o;
    source_coord c;
    switch (m.mode) {
        case coord_mode::half_pixel: c.num = (2 * w + 1) * in - out; c.den = 2 * out; break;
        case coord_mode::align_corners:
            if (m.out == 1) { c.num = 0; c.den = 1; }
            else { c.num = w * (in - 1); c.den = out - 1; }
            break;
        case coord_mode::asymmetric: c.num = w * in; c.den = out; break;
        case coord_mode::pytorch_half_pixel:
            if (m.out == 1) { c.num = -1; c.den = 2; }
            else { c.num = (2 * w + 1) * in - out; c.den = 2 * out; }
            break;
        case coord_mode::tf_half_pixel_for_nn: c.num = (2 * w + 1) * in; c.den = 2 * out; break;
        case coord_mode::pixel_offsets:
            c.exact = false;
            c.value = (double(o) - double(m.output_offset)) / double(m.scale)
                    - double(m.input_offset);
            break;
    }
    return c;
}

inline int64_t clamp_index(double v, int64_t in) {
    // Clamp in double first: converting a huge or NaN double to int is UB.
    if (!(v > 0.0)) return 0;
    if (v >= double(in - 1)) return in - 1;
    return int64_t(v);
}
inline int64_t clamp_index(wide_int v, int64_t in) {
    return v < 0 ? 0 : (v > in - 1 ? in - 1 : int64_t(v));
}

// Index of the input element a nearest-mode output element reads.
inline int64_t nearest_index(const source_coord &s, nearest_rounding r, int64_t in) {
    if (s.exact) {
        switch (r) {
            case nearest_rounding::round_prefer_ceil: // floor(s + 1/2)
                return clamp_index(floor_div(2 * s.num + s.den, 2 * s.den), in);
            case nearest_rounding::round_prefer_floor: // ceil(s - 1/2)
                return clamp_index(ceil_div(2 * s.num - s.den, 2 * s.den), in);
            case nearest_rounding::floor: return clamp_index(floor_div(s.num, s.den), in);
            case nearest_rounding::ceil: return clamp_index(ceil_div(s.num, s.den), in);
        }
    }
    double v = s.value;
    switch (r) {
        case nearest_rounding::round_prefer_ceil: v = std::floor(v + 0.5); break;
        case nearest_rounding::round_prefer_floor: v = std::ceil(v - 0.5); break;
        case nearest_rounding::floor: v = std::floor(v); break;
        case nearest_rounding::ceil: v = std::ceil(v); break;
    }
    return clamp_index(v, in);
}

// The two inputs a linear-mode output element reads, and their weights. A
// weight of exactly 0 (s on an integer, or clamped) means that tap is not
// read: backends skip it, so a NaN or inf in diff_dst reaches only the
// inputs whose weight is nonzero.
struct linear_taps {
    int64_t i0 = 0, i1 = 0;
    double w0 = 1.0, w1 = 0.0;
};

// s is clamped to [0, in-1]; i0 = floor(s), i1 = min(i0+1, in-1), w1 = s - i0.
inline linear_taps linear_taps_of(const source_coord &s, int64_t in) {
    linear_taps t;
    if (s.exact) {
        if (s.num <= 0) return t;
        if (s.num >= wide_int(in - 1) * s.den) { t.i0 = t.i1 = in - 1; return t; }
        wide_int q = s.num / s.den; // s > 0 here, so this is floor
        t.i0 = int64_t(q);
        t.w1 = double(s.num - q * s.den) / double(s.den);
    } else {
        double v = s.value;
        if (!(v > 0.0)) return t; // also catches NaN
        if (v >= double(in - 1)) { t.i0 = t.i1 = in - 1; return t; }
        t.i0 = int64_t(std::floor(v));
        t.w1 = v - double(t.i0);
    }
    t.i1 = std::min<int64_t>(t.i0 + 1, in - 1);
    t.w0 = 1.0 - t.w1;
    return t;
}

// floor(in * scale), computed exactly: a float is m * 2^e with a 24-bit m.
// Returns -1 when the result does not fit in int64 (the caller reports it).
inline int64_t output_size_from_scale(int64_t in, float scale) {
    if (!(scale > 0.f) || !std::isfinite(scale)) return -1;
    int e = 0;
    float frac = std::frexp(scale, &e);            // scale = frac * 2^e, frac in [0.5, 1)
    wide_int mant = wide_int(std::ldexp(frac, 24)); // exact 24-bit integer
    int shift = e - 24;                             // scale = mant * 2^shift
    wide_int p = wide_int(in) * mant;
    if (shift >= 0) {
        // Check before shifting: p << shift can pass 2^127 (in = 2^42 with
        // scale = 2^85), which would wrap to a small, wrong size.
        if (shift > 62 || p > (wide_int(INT64_MAX) >> shift)) return -1;
        p <<= shift;
    } else {
        p = (-shift >= 100) ? 0 : (p >> -shift); // p >= 0: shifting is floor
    }
    if (p > wide_int(INT64_MAX)) return -1;
    return int64_t(p);
}

} // namespace bpg::kernels
