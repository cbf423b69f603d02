// kernels/interp_coords.hpp: exact source coordinates, exact tie decisions at
// sizes near 2^31 (where a double evaluation of the same formula picks another
// index), output sizes from float scales, clamping, and the float-defined
// pixel-offset path with NaN and infinite inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/interp_coords.hpp"

namespace bpg::kernels {
namespace {

using rounding = nearest_rounding;

axis_map map_of(coord_mode mode, int64_t in, int64_t out) {
    axis_map m;
    m.in = in;
    m.out = out;
    m.mode = mode;
    return m;
}

// The coordinate as an exact fraction, compared by cross-multiplication.
void expect_coord(coord_mode mode, int64_t in, int64_t out, int64_t o, int64_t num, int64_t den) {
    const source_coord s = source_coordinate(map_of(mode, in, out), o);
    ASSERT_TRUE(s.exact);
    EXPECT_TRUE(s.num * den == wide_int(num) * s.den)
            << "mode " << int(mode) << " in " << in << " out " << out << " o " << o << ": got "
            << s.as_double() << ", want " << num << "/" << den;
}

TEST(InterpCoords, SourceCoordinateOfEveryShapeMode) {
    // half_pixel: (o + 1/2) in/out - 1/2
    expect_coord(coord_mode::half_pixel, 3, 2, 1, 7, 4);
    expect_coord(coord_mode::half_pixel, 2, 4, 0, -1, 4);
    expect_coord(coord_mode::half_pixel, 4, 1, 0, 3, 2);
    // align_corners: o (in-1)/(out-1), 0 when out == 1
    expect_coord(coord_mode::align_corners, 3, 5, 3, 3, 2);
    expect_coord(coord_mode::align_corners, 7, 1, 0, 0, 1);
    // asymmetric: o in/out
    expect_coord(coord_mode::asymmetric, 3, 2, 1, 3, 2);
    // pytorch_half_pixel: -1/2 when out == 1, else half_pixel
    expect_coord(coord_mode::pytorch_half_pixel, 4, 1, 0, -1, 2);
    expect_coord(coord_mode::pytorch_half_pixel, 3, 2, 1, 7, 4);
    // tf_half_pixel_for_nn: (o + 1/2) in/out
    expect_coord(coord_mode::tf_half_pixel_for_nn, 3, 2, 1, 9, 4);
}

TEST(InterpCoords, PixelOffsetsCoordinate) {
    axis_map m = map_of(coord_mode::pixel_offsets, 2, 3);
    m.scale = 1.5f;
    m.input_offset = 0.5f;
    m.output_offset = -0.5f;
    // s = (o + 0.5)/1.5 - 0.5
    EXPECT_FALSE(source_coordinate(m, 0).exact);
    EXPECT_DOUBLE_EQ(source_coordinate(m, 0).as_double(), 0.5 / 1.5 - 0.5);
    EXPECT_EQ(source_coordinate(m, 1).as_double(), 0.5);
    EXPECT_DOUBLE_EQ(source_coordinate(m, 2).as_double(), 2.5 / 1.5 - 0.5);
}

int64_t nearest(coord_mode mode, int64_t in, int64_t out, int64_t o, rounding r) {
    return nearest_index(source_coordinate(map_of(mode, in, out), o), r, in);
}

// The naive evaluation of half_pixel + round_prefer_ceil in double, as a
// kernel computing "scale = in/out" once would do it.
int64_t naive_half_pixel_ceil(int64_t in, int64_t out, int64_t o) {
    const double scale = double(in) / double(out);
    return int64_t(std::floor((double(o) + 0.5) * scale - 0.5 + 0.5));
}
int64_t naive_half_pixel_floor(int64_t in, int64_t out, int64_t o) {
    const double scale = double(in) / double(out);
    return int64_t(std::ceil((double(o) + 0.5) * scale - 0.5 - 0.5));
}

// Near 2^31, one unit of s in the last place of a double is ~2^-22 while s
// misses a tie by 1/(2 out) ~ 2^-32: only exact arithmetic sees which side.
TEST(InterpCoords, TiesNear2To31AreDecidedExactly) {
    const int64_t a = (int64_t(1) << 31) - 1, b = (int64_t(1) << 31) - 2;
    const int64_t two30 = int64_t(1) << 30;

    // in = 2^31 - 1, out = 2^31 - 2, o = 2^30 - 2:
    // s = 2^30 - 2 + (2^31 - 3)/(2^32 - 4), just below the tie 2^30 - 1.5.
    EXPECT_EQ(nearest(coord_mode::half_pixel, a, b, two30 - 2, rounding::round_prefer_ceil),
            two30 - 2);
    EXPECT_EQ(naive_half_pixel_ceil(a, b, two30 - 2), two30 - 1); // double gets it wrong
    // o = 2^30 - 1: s = 2^30 - 1/2 + 1/(2^32 - 4), just above a tie.
    EXPECT_EQ(nearest(coord_mode::half_pixel, a, b, two30 - 1, rounding::round_prefer_floor),
            two30);
    EXPECT_EQ(naive_half_pixel_floor(a, b, two30 - 1), two30 - 1); // wrong again

    // in = 2^31 - 1, out = 2^31, o = 2^30: s = 2^30 - 1/2 - 2^-32.
    EXPECT_EQ(nearest(coord_mode::half_pixel, a, a + 1, two30, rounding::round_prefer_ceil),
            two30 - 1);
    EXPECT_EQ(naive_half_pixel_ceil(a, a + 1, two30), two30);

    // in = 2^31, out = 2^31 - 1, o = 2^30 - 1: s = (2^31 - 1)/2 exactly, a tie.
    EXPECT_EQ(nearest(coord_mode::half_pixel, a + 1, a, two30 - 1, rounding::round_prefer_ceil),
            two30);
    EXPECT_EQ(nearest(coord_mode::half_pixel, a + 1, a, two30 - 1, rounding::round_prefer_floor),
            two30 - 1);
    // align_corners, in = 2^31, out = 2^31 - 1, o = 2^30 - 1:
    // s = (2^30 - 1)(2^31 - 1)/(2^31 - 2) = 2^30 - 1/2 exactly.
    EXPECT_EQ(nearest(coord_mode::align_corners, a + 1, a, two30 - 1, rounding::round_prefer_ceil),
            two30);
    EXPECT_EQ(nearest(coord_mode::align_corners, a + 1, a, two30 - 1, rounding::round_prefer_floor),
            two30 - 1);
    // Last outputs stay in range: half_pixel o = out - 1 -> in - 1.
    EXPECT_EQ(nearest(coord_mode::half_pixel, a, b, b - 1, rounding::ceil), a - 1);
}

TEST(InterpCoords, LinearTapsNear2To31AreExact) {
    const int64_t a = (int64_t(1) << 31) - 1, b = (int64_t(1) << 31) - 2;
    // half_pixel, o = 2^30 - 2: s = 2^30 - 2 + (2^31 - 3)/(2^32 - 4).
    const linear_taps t =
            linear_taps_of(source_coordinate(map_of(coord_mode::half_pixel, a, b), (1 << 30) - 2), a);
    EXPECT_EQ(t.i0, (int64_t(1) << 30) - 2);
    EXPECT_EQ(t.i1, (int64_t(1) << 30) - 1);
    EXPECT_DOUBLE_EQ(t.w1, double((int64_t(1) << 31) - 3) / double((int64_t(1) << 32) - 4));
    EXPECT_DOUBLE_EQ(t.w0 + t.w1, 1.0);
}

TEST(InterpCoords, OutputSizeFromScaleIsExact) {
    // float(2^31 - 1) * 3 in float would be 6442450944.
    EXPECT_EQ(output_size_from_scale((int64_t(1) << 31) - 1, 3.0f), 6442450941);
    // 1.66667f = 1.6666699647..., times 3 = 5.0000099 -> 5
    EXPECT_EQ(output_size_from_scale(3, 1.66667f), 5);
    // 0.583333f = 0.58333301544..., times 12 = 6.9999962 -> 6 (not 7)
    EXPECT_EQ(output_size_from_scale(12, 0.583333f), 6);
    // Here the double product rounds up across an integer: the exact product
    // is 5248613488.99999..., double(in) * double(scale) is 5248613489.
    const int64_t in = 3000000007;
    const float scale = 0x1.bfe1b6p+0f;
    EXPECT_EQ(output_size_from_scale(in, scale), 5248613488);
    EXPECT_EQ(int64_t(std::floor(double(in) * double(scale))), 5248613489);
    EXPECT_EQ(output_size_from_scale(7, 1.0f), 7);
    EXPECT_EQ(output_size_from_scale(5, 0.1f), 0); // 0.1f is just above 0.1: 0.5000000075
    EXPECT_EQ(output_size_from_scale(10, 0.1f), 1);
    EXPECT_EQ(output_size_from_scale(5, std::numeric_limits<float>::denorm_min()), 0);
    EXPECT_EQ(output_size_from_scale(std::numeric_limits<int64_t>::max(), 1.0f),
            std::numeric_limits<int64_t>::max());
}

TEST(InterpCoords, OutputSizeFromScaleRejectsBadScalesAndOverflow) {
    for (float bad : {0.f, -1.f, std::numeric_limits<float>::quiet_NaN(),
                 std::numeric_limits<float>::infinity()})
        EXPECT_EQ(output_size_from_scale(4, bad), -1) << bad;
    EXPECT_EQ(output_size_from_scale(std::numeric_limits<int64_t>::max(), 2.0f), -1);
    EXPECT_EQ(output_size_from_scale(4, 0x1p100f), -1);
    // in * scale = 2^127: beyond int64, and past the 128-bit intermediate.
    EXPECT_EQ(output_size_from_scale(int64_t(1) << 42, 0x1p85f), -1);
    EXPECT_EQ(output_size_from_scale(int64_t(1) << 40, 0x1p23f), -1); // exactly 2^63
    EXPECT_EQ(output_size_from_scale(int64_t(1) << 39, 0x1p23f), int64_t(1) << 62);
}

TEST(InterpCoords, NearestClampsToTheInput) {
    // asymmetric 2 -> 1 with ceil: s = 0 -> 0; align_corners beyond the end.
    source_coord below;
    below.num = -7;
    below.den = 2;
    source_coord above;
    above.num = 41;
    above.den = 4;
    for (rounding r : {rounding::round_prefer_ceil, rounding::round_prefer_floor, rounding::floor,
                 rounding::ceil}) {
        EXPECT_EQ(nearest_index(below, r, 5), 0);
        EXPECT_EQ(nearest_index(above, r, 5), 4);
    }
    EXPECT_EQ(nearest(coord_mode::asymmetric, 2, 4, 3, rounding::ceil), 1); // s = 1.5 -> 2 -> 1
}

TEST(InterpCoords, LinearClampsToTheInput) {
    source_coord s;
    s.num = -1;
    s.den = 3;
    linear_taps t = linear_taps_of(s, 4);
    EXPECT_EQ(t.i0, 0);
    EXPECT_EQ(t.w0, 1.0);
    EXPECT_EQ(t.w1, 0.0);
    s.num = 13; // 13/3 > in - 1 = 3
    t = linear_taps_of(s, 4);
    EXPECT_EQ(t.i0, 3);
    EXPECT_EQ(t.i1, 3);
    EXPECT_EQ(t.w0 + t.w1, 1.0);
    s.num = 9; // exactly in - 1: a single tap
    t = linear_taps_of(s, 4);
    EXPECT_EQ(t.i0, 3);
    EXPECT_EQ(t.i1, 3);
    s.num = 7; // 7/3: taps 2 and 3 with weights 2/3, 1/3
    t = linear_taps_of(s, 4);
    EXPECT_EQ(t.i0, 2);
    EXPECT_EQ(t.i1, 3);
    EXPECT_DOUBLE_EQ(t.w1, 1.0 / 3.0);
    EXPECT_DOUBLE_EQ(t.w0, 2.0 / 3.0);
    // A single input element takes everything.
    t = linear_taps_of(source_coordinate(map_of(coord_mode::half_pixel, 1, 5), 4), 1);
    EXPECT_EQ(t.i0, 0);
    EXPECT_EQ(t.i1, 0);
}

source_coord float_coord(double v) {
    source_coord s;
    s.exact = false;
    s.value = v;
    return s;
}

// The pixel-offset path evaluates floats: NaN and infinities must neither
// crash nor produce an out-of-range index (converting them to int is UB).
TEST(InterpCoords, PixelOffsetPathIsNanAndInfinitySafe) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (rounding r : {rounding::round_prefer_ceil, rounding::round_prefer_floor, rounding::floor,
                 rounding::ceil}) {
        EXPECT_EQ(nearest_index(float_coord(nan), r, 6), 0);
        EXPECT_EQ(nearest_index(float_coord(inf), r, 6), 5);
        EXPECT_EQ(nearest_index(float_coord(-inf), r, 6), 0);
        EXPECT_EQ(nearest_index(float_coord(1e300), r, 6), 5);
        EXPECT_EQ(nearest_index(float_coord(-1e300), r, 6), 0);
    }
    for (double v : {nan, -inf, -1e300}) {
        const linear_taps t = linear_taps_of(float_coord(v), 6);
        EXPECT_EQ(t.i0, 0);
        EXPECT_EQ(t.i1, 0);
        EXPECT_EQ(t.w0, 1.0);
    }
    for (double v : {inf, 1e300}) {
        const linear_taps t = linear_taps_of(float_coord(v), 6);
        EXPECT_EQ(t.i0, 5);
        EXPECT_EQ(t.i1, 5);
    }
    // Through the axis map: a NaN scale and a zero scale (0/0 and 1/0).
    axis_map m = map_of(coord_mode::pixel_offsets, 6, 3);
    m.scale = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(nearest_index(source_coordinate(m, 1), rounding::round_prefer_ceil, 6), 0);
    m.scale = 0.f;
    EXPECT_EQ(nearest_index(source_coordinate(m, 0), rounding::round_prefer_ceil, 6), 0);
    EXPECT_EQ(nearest_index(source_coordinate(m, 1), rounding::round_prefer_ceil, 6), 5);
}

TEST(InterpCoords, PixelOffsetRoundingModes) {
    // 2.5 is a tie; 2.25 and 2.75 are not.
    EXPECT_EQ(nearest_index(float_coord(2.5), rounding::round_prefer_ceil, 9), 3);
    EXPECT_EQ(nearest_index(float_coord(2.5), rounding::round_prefer_floor, 9), 2);
    EXPECT_EQ(nearest_index(float_coord(2.25), rounding::round_prefer_floor, 9), 2);
    EXPECT_EQ(nearest_index(float_coord(2.75), rounding::round_prefer_ceil, 9), 3);
    EXPECT_EQ(nearest_index(float_coord(2.25), rounding::ceil, 9), 3);
    EXPECT_EQ(nearest_index(float_coord(2.75), rounding::floor, 9), 2);
    EXPECT_EQ(nearest_index(float_coord(-0.5), rounding::round_prefer_ceil, 9), 0);
}

} // namespace
} // namespace bpg::kernels
