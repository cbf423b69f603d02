// Reference InterpolateBackprop: golden values from docs/semantics.md, hand-computed
// 1-D cases for every coordinate and nearest mode; then the backward checked
// as the adjoint of an independent forward (tests/support/forward_ref) on every
// mode, layout and 1 to 3 spatial axes; strides and dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "reference/reference.hpp"
#include "support/forward_ref.hpp"
#include "support/problem_builders.hpp"

namespace bpg {
namespace {

using kernels::coord_mode;
using rounding = kernels::nearest_rounding;
using core::interp_mode;
using test::layout;

std::vector<double> run_bwd(const core::interpolate_bwd_problem &p, const std::vector<double> &dd) {
    test::buffer in(p.diff_dst, dd);
    test::buffer out(p.diff_src);
    reference::interpolate_bwd(p, in.data(), out.data());
    EXPECT_TRUE(out.padding_intact());
    return out.dense();
}

core::interpolate_bwd_problem problem_1d(interp_mode mode, coord_mode coord, rounding r,
        int64_t in, int64_t out) {
    return test::make_interp_problem(mode, coord, r, layout::ncx, {1, 1, in}, {1, 1, out});
}

std::vector<double> iota(size_t n) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = double(i);
    return v;
}

TEST(InterpolateRef, DirectmlWorkedExample) {
    auto p = test::make_interp_problem(interp_mode::nearest, coord_mode::half_pixel,
            rounding::round_prefer_floor, layout::ncx, {1, 1, 2, 2}, {1, 1, 1, 3});
    EXPECT_EQ(run_bwd(p, {4, 5, 6}), (std::vector<double>{9, 6, 0, 0}));
}

// The same example as DirectML states it: scales 0.5 (height) and 1.5
// (width), input offsets 0.5, output offsets -0.5, so s = (o + 0.5)/scale - 0.5.
TEST(InterpolateRef, DirectmlWorkedExampleThroughPixelOffsets) {
    auto p = test::make_interp_problem(interp_mode::nearest, coord_mode::half_pixel,
            rounding::round_prefer_floor, layout::ncx, {1, 1, 2, 2}, {1, 1, 1, 3});
    test::set_pixel_offsets(p, {0.5f, 1.5f}, {0.5f, 0.5f}, {-0.5f, -0.5f});
    EXPECT_EQ(run_bwd(p, {4, 5, 6}), (std::vector<double>{9, 6, 0, 0}));
}

TEST(InterpolateRef, OnednnGoldenNearestDefaultRounding) {
    for (layout fmt : {layout::ncx, layout::nxc}) {
        const dims src = fmt == layout::ncx ? dims{1, 1, 2, 2} : dims{1, 2, 2, 1};
        const dims dst = fmt == layout::ncx ? dims{1, 1, 3, 3} : dims{1, 3, 3, 1};
        auto p = test::make_interp_problem(interp_mode::nearest, coord_mode::half_pixel,
                rounding::round_prefer_ceil, fmt, src, dst);
        EXPECT_EQ(run_bwd(p, iota(9)), (std::vector<double>{0, 3, 9, 24}));
    }
}

TEST(InterpolateRef, OnednnGoldenBilinear) {
    for (layout fmt : {layout::ncx, layout::nxc}) {
        const dims src = fmt == layout::ncx ? dims{1, 1, 2, 2} : dims{1, 2, 2, 1};
        const dims dst = fmt == layout::ncx ? dims{1, 1, 3, 3} : dims{1, 3, 3, 1};
        auto p = test::make_interp_problem(interp_mode::linear, coord_mode::half_pixel,
                rounding::round_prefer_ceil, fmt, src, dst);
        EXPECT_EQ(run_bwd(p, iota(9)), (std::vector<double>{3, 6, 12, 15}));
    }
}

// One nearest case: output o reads input map[o] (hand-computed from the
// docs/semantics.md formulas; the derivation of s is in the comment of each row).
struct nearest_case {
    coord_mode coord;
    int64_t in, out;
    rounding r;
    std::vector<int64_t> map;
};

// diff_dst[o] = 2^o, so every diff_src value spells out which outputs read it.
void check_nearest(const nearest_case &c) {
    auto p = problem_1d(interp_mode::nearest, c.coord, c.r, c.in, c.out);
    std::vector<double> dd(size_t(c.out)), expected(size_t(c.in), 0.0);
    for (int64_t o = 0; o < c.out; ++o) {
        dd[size_t(o)] = std::ldexp(1.0, int(o));
        expected[size_t(c.map[size_t(o)])] += dd[size_t(o)];
    }
    EXPECT_EQ(run_bwd(p, dd), expected)
            << "coord " << int(c.coord) << " rounding " << int(c.r) << " in " << c.in << " out "
            << c.out;
}

TEST(InterpolateRef, NearestHandComputedEveryCoordinateAndRoundingMode) {
    const rounding pc = rounding::round_prefer_ceil, pf = rounding::round_prefer_floor,
                   fl = rounding::floor, ce = rounding::ceil;
    const coord_mode hp = coord_mode::half_pixel, ac = coord_mode::align_corners,
                     as = coord_mode::asymmetric, pt = coord_mode::pytorch_half_pixel,
                     tf = coord_mode::tf_half_pixel_for_nn;
    const std::vector<nearest_case> cases = {
            // half_pixel 2 -> 4: s = (2o-1)/4 = -0.25, 0.25, 0.75, 1.25
            {hp, 2, 4, pc, {0, 0, 1, 1}}, {hp, 2, 4, pf, {0, 0, 1, 1}},
            {hp, 2, 4, fl, {0, 0, 0, 1}}, {hp, 2, 4, ce, {0, 1, 1, 1}},
            // half_pixel 4 -> 2: s = 0.5, 2.5, both exact ties
            {hp, 4, 2, pc, {1, 3}}, {hp, 4, 2, pf, {0, 2}}, {hp, 4, 2, fl, {0, 2}},
            {hp, 4, 2, ce, {1, 3}},
            // half_pixel 3 -> 2: s = 0.25, 1.75
            {hp, 3, 2, pc, {0, 2}}, {hp, 3, 2, pf, {0, 2}}, {hp, 3, 2, fl, {0, 1}},
            {hp, 3, 2, ce, {1, 2}},
            // half_pixel 4 -> 1: s = 1.5, a tie
            {hp, 4, 1, pc, {2}}, {hp, 4, 1, pf, {1}}, {hp, 4, 1, fl, {1}}, {hp, 4, 1, ce, {2}},
            // pytorch_half_pixel 4 -> 1: s = -0.5, everything clamps to 0
            {pt, 4, 1, pc, {0}}, {pt, 4, 1, pf, {0}}, {pt, 4, 1, fl, {0}}, {pt, 4, 1, ce, {0}},
            // pytorch_half_pixel 2 -> 4: as half_pixel
            {pt, 2, 4, pc, {0, 0, 1, 1}}, {pt, 2, 4, ce, {0, 1, 1, 1}},
            // align_corners 3 -> 5: s = o/2 = 0, 0.5, 1, 1.5, 2
            {ac, 3, 5, pc, {0, 1, 1, 2, 2}}, {ac, 3, 5, pf, {0, 0, 1, 1, 2}},
            {ac, 3, 5, fl, {0, 0, 1, 1, 2}}, {ac, 3, 5, ce, {0, 1, 1, 2, 2}},
            // align_corners 4 -> 3: s = 1.5 o = 0, 1.5, 3
            {ac, 4, 3, pc, {0, 2, 3}}, {ac, 4, 3, pf, {0, 1, 3}}, {ac, 4, 3, fl, {0, 1, 3}},
            {ac, 4, 3, ce, {0, 2, 3}},
            // align_corners 5 -> 1: s = 0
            {ac, 5, 1, pc, {0}}, {ac, 5, 1, ce, {0}},
            // asymmetric 3 -> 2: s = 0, 1.5
            {as, 3, 2, pc, {0, 2}}, {as, 3, 2, pf, {0, 1}}, {as, 3, 2, fl, {0, 1}},
            {as, 3, 2, ce, {0, 2}},
            // asymmetric 2 -> 4: s = 0, 0.5, 1, 1.5 (1.5 rounds up to 2, clamps to 1)
            {as, 2, 4, pc, {0, 1, 1, 1}}, {as, 2, 4, pf, {0, 0, 1, 1}},
            {as, 2, 4, fl, {0, 0, 1, 1}}, {as, 2, 4, ce, {0, 1, 1, 1}},
            // tf_half_pixel_for_nn 2 -> 4: s = 0.25, 0.75, 1.25, 1.75
            {tf, 2, 4, pc, {0, 1, 1, 1}}, {tf, 2, 4, pf, {0, 1, 1, 1}},
            {tf, 2, 4, fl, {0, 0, 1, 1}}, {tf, 2, 4, ce, {1, 1, 1, 1}},
            // tf_half_pixel_for_nn 3 -> 2: s = 0.75, 2.25
            {tf, 3, 2, pc, {1, 2}}, {tf, 3, 2, pf, {1, 2}}, {tf, 3, 2, fl, {0, 2}},
            {tf, 3, 2, ce, {1, 2}},
            // tf_half_pixel_for_nn 3 -> 3: s = o + 0.5, all ties: not the identity
            {tf, 3, 3, pc, {1, 2, 2}}, {tf, 3, 3, pf, {0, 1, 2}},
    };
    for (const nearest_case &c : cases) check_nearest(c);
}

TEST(InterpolateRef, NearestSameSizeIsIdentity) {
    for (coord_mode coord : {coord_mode::half_pixel, coord_mode::align_corners,
                 coord_mode::asymmetric, coord_mode::pytorch_half_pixel})
        for (rounding r : {rounding::round_prefer_ceil, rounding::round_prefer_floor,
                     rounding::floor, rounding::ceil})
            check_nearest({coord, 5, 5, r, {0, 1, 2, 3, 4}});
}

struct linear_case {
    coord_mode coord;
    int64_t in, out;
    std::vector<double> dd, expected;
};

TEST(InterpolateRef, LinearHandComputedEveryCoordinateMode) {
    const std::vector<linear_case> cases = {
            // half_pixel 2 -> 4: s = -0.25 (clamped), 0.25, 0.75, 1.25 (clamped)
            {coord_mode::half_pixel, 2, 4, {1, 2, 3, 4}, {1 + 2 * .75 + 3 * .25, 2 * .25 + 3 * .75 + 4}},
            // half_pixel 4 -> 2: s = 0.5, 2.5
            {coord_mode::half_pixel, 4, 2, {1, 2}, {.5, .5, 1, 1}},
            // half_pixel 5 -> 2: s = 0.75, 3.25; input 2 is read by no output
            {coord_mode::half_pixel, 5, 2, {1, 2}, {.25, .75, 0, 1.5, .5}},
            // half_pixel 4 -> 1: s = 1.5
            {coord_mode::half_pixel, 4, 1, {8}, {0, 4, 4, 0}},
            // half_pixel 1 -> 3: a single input takes everything
            {coord_mode::half_pixel, 1, 3, {1, 2, 4}, {7}},
            // half_pixel 3 -> 3: identity
            {coord_mode::half_pixel, 3, 3, {1, 2, 3}, {1, 2, 3}},
            // pytorch_half_pixel 4 -> 1: s = -0.5, clamped to 0
            {coord_mode::pytorch_half_pixel, 4, 1, {8}, {8, 0, 0, 0}},
            // pytorch_half_pixel 2 -> 4: as half_pixel
            {coord_mode::pytorch_half_pixel, 2, 4, {1, 2, 3, 4}, {3.25, 6.75}},
            // align_corners 3 -> 5: s = 0, 0.5, 1, 1.5, 2
            {coord_mode::align_corners, 3, 5, {1, 2, 3, 4, 5}, {2, 6, 7}},
            // align_corners 4 -> 1: s = 0
            {coord_mode::align_corners, 4, 1, {8}, {8, 0, 0, 0}},
            // align_corners 3 -> 3: identity
            {coord_mode::align_corners, 3, 3, {1, 2, 3}, {1, 2, 3}},
            // asymmetric 3 -> 2: s = 0, 1.5
            {coord_mode::asymmetric, 3, 2, {1, 2}, {1, 1, 1}},
            // asymmetric 2 -> 4: s = 0, 0.5, 1, 1.5 (clamped to 1)
            {coord_mode::asymmetric, 2, 4, {1, 2, 3, 4}, {2, 8}},
            // tf_half_pixel_for_nn 3 -> 2: s = 0.75, 2.25 (clamped to 2)
            {coord_mode::tf_half_pixel_for_nn, 3, 2, {1, 2}, {.25, .75, 2}},
            // tf_half_pixel_for_nn 3 -> 3: s = o + 0.5
            {coord_mode::tf_half_pixel_for_nn, 3, 3, {1, 2, 3}, {.5, 1.5, 4}},
    };
    for (const linear_case &c : cases) {
        auto p = problem_1d(interp_mode::linear, c.coord, rounding::round_prefer_ceil, c.in, c.out);
        EXPECT_EQ(run_bwd(p, c.dd), c.expected)
                << "coord " << int(c.coord) << " in " << c.in << " out " << c.out;
    }
}

// Multi-axis weights multiply: 2x2 -> 3x3 bilinear, one diff_dst element at a
// time, gives the outer product of the per-axis weights of 1-D 2 -> 3.
TEST(InterpolateRef, LinearWeightsAreSeparable) {
    // half_pixel 2 -> 3: s = -1/6 (clamped), 0.5, 7/6 (clamped)
    const double w[3][2] = {{1, 0}, {.5, .5}, {0, 1}};
    auto p = test::make_interp_problem(interp_mode::linear, coord_mode::half_pixel,
            rounding::round_prefer_ceil, layout::ncx, {1, 1, 2, 2}, {1, 1, 3, 3});
    for (int oh = 0; oh < 3; ++oh)
        for (int ow = 0; ow < 3; ++ow) {
            std::vector<double> dd(9, 0.0);
            dd[size_t(oh * 3 + ow)] = 1;
            std::vector<double> expected;
            for (int ih = 0; ih < 2; ++ih)
                for (int iw = 0; iw < 2; ++iw) expected.push_back(w[oh][ih] * w[ow][iw]);
            EXPECT_EQ(run_bwd(p, dd), expected) << oh << "," << ow;
        }
}

// N and C are batch-like: each (n, c) plane is its own problem.
TEST(InterpolateRef, BatchAndChannelPlanesAreIndependent) {
    for (layout fmt : {layout::ncx, layout::nxc}) {
        const dims src = fmt == layout::ncx ? dims{2, 3, 2, 2} : dims{2, 2, 2, 3};
        const dims dst = fmt == layout::ncx ? dims{2, 3, 3, 3} : dims{2, 3, 3, 3};
        auto p = test::make_interp_problem(interp_mode::nearest, coord_mode::half_pixel,
                rounding::round_prefer_ceil, fmt, src, dst);
        // Plane (n, c) gets diff_dst 0..8 scaled by (1 + 3n + c).
        std::vector<double> dd;
        core::for_each_index(p.diff_dst.shape, p.diff_dst.strides, [&](const dims &i, int64_t) {
            const int64_t n = i[0], c = i[size_t(p.channel_axis)];
            const int64_t h = i[size_t(p.spatial_axes[0])], w = i[size_t(p.spatial_axes[1])];
            dd.push_back(double((1 + 3 * n + c) * (h * 3 + w)));
        });
        const std::vector<double> got = run_bwd(p, dd);
        size_t k = 0;
        const double golden[4] = {0, 3, 9, 24};
        core::for_each_index(p.diff_src.shape, p.diff_src.strides, [&](const dims &i, int64_t) {
            const int64_t n = i[0], c = i[size_t(p.channel_axis)];
            const int64_t h = i[size_t(p.spatial_axes[0])], w = i[size_t(p.spatial_axes[1])];
            EXPECT_EQ(got[k++], double(1 + 3 * n + c) * golden[h * 2 + w]);
        });
    }
}

// ---- Backward = adjoint of the forward -------------------------------------
// Interpolate is linear, dst = W src, so its backward must be W^T:
// <W x, g> == <x, W^T g> for any x and g. The forward (tests/support) builds
// W one axis at a time as dense matrices and gathers, so this compares two
// differently structured computations of the same weights.

struct kind {
    interp_mode mode;
    rounding r;
};

const kind all_kinds[] = {
        {interp_mode::nearest, rounding::round_prefer_ceil},
        {interp_mode::nearest, rounding::round_prefer_floor},
        {interp_mode::nearest, rounding::floor},
        {interp_mode::nearest, rounding::ceil},
        {interp_mode::linear, rounding::round_prefer_ceil},
};

// pixel_offsets here stands for the DirectML mapping with arbitrary offsets.
const coord_mode all_coords[] = {coord_mode::half_pixel, coord_mode::align_corners,
        coord_mode::asymmetric, coord_mode::pytorch_half_pixel,
        coord_mode::tf_half_pixel_for_nn, coord_mode::pixel_offsets};

// (src, dst) spatial shapes for 1 to 4 axes: up, down, odd, size 1, equal.
const std::vector<std::pair<dims, dims>> spatial_shapes = {
        {{3}, {7}}, {{7}, {3}}, {{5}, {5}}, {{1}, {4}}, {{4}, {1}},
        {{3, 4}, {5, 2}}, {{1, 5}, {3, 1}}, {{4, 4}, {4, 4}}, {{2, 3}, {6, 9}},
        {{2, 3, 1}, {3, 1, 2}}, {{3, 2, 2}, {2, 4, 1}},
        {{2, 1, 3, 2}, {3, 2, 1, 3}},
};

dims full_shape(layout fmt, int64_t n, int64_t c, const dims &spatial) {
    dims d{n};
    if (fmt == layout::ncx) d.push_back(c);
    d.insert(d.end(), spatial.begin(), spatial.end());
    if (fmt == layout::nxc) d.push_back(c);
    return d;
}

core::interpolate_bwd_problem sweep_problem(const kind &k, coord_mode coord, layout fmt,
        const dims &src_sp, const dims &dst_sp, data_type dt = data_type::f32) {
    const bool offsets = coord == coord_mode::pixel_offsets;
    auto p = test::make_interp_problem(k.mode, offsets ? coord_mode::half_pixel : coord, k.r,
            fmt, full_shape(fmt, 2, 3, src_sp), full_shape(fmt, 2, 3, dst_sp), dt);
    if (offsets) {
        std::vector<float> scales, in_off(src_sp.size(), 0.3f), out_off(src_sp.size(), -0.2f);
        for (size_t a = 0; a < src_sp.size(); ++a)
            scales.push_back(0.9f * float(dst_sp[a]) / float(src_sp[a]));
        test::set_pixel_offsets(p, scales, in_off, out_off);
    }
    return p;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
    double s = 0.0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

// Values k/16 with |k| <= 64: exact in f32, bf16 and f16, so a diff_dst buffer
// holds exactly what the f64 forward side sees.
std::vector<double> dyadic_values(size_t n, std::mt19937 &rng) {
    std::uniform_int_distribution<int> k(-64, 64);
    std::vector<double> v(n);
    for (double &x : v) x = k(rng) / 16.0;
    return v;
}

void check_adjoint(const core::interpolate_bwd_problem &p, std::mt19937 &rng) {
    const size_t ns = size_t(p.src.element_count()), nd = size_t(p.diff_dst.element_count());
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> x(ns);
    for (double &v : x) v = u(rng);
    const std::vector<double> g = dyadic_values(nd, rng);

    auto loss = [&](const std::vector<double> &at) {
        std::vector<double> y;
        test::interpolate_fwd(p, at, y);
        return dot(y, g);
    };
    const std::vector<double> grad = run_bwd(p, g);
    const double lhs = loss(x), rhs = dot(x, grad);
    double magnitude = 0.0;
    for (size_t i = 0; i < ns; ++i) magnitude += std::fabs(x[i] * grad[i]);
    // diff_src is an f32 buffer: with nearest it holds sums of dyadic values,
    // exactly; linear weights are rounded once to f32 (2^-24 relative).
    const double stored = p.mode == interp_mode::linear ? std::ldexp(magnitude, -24) : 0.0;
    EXPECT_NEAR(lhs, rhs, 1e-12 * magnitude + stored);

    // Central differences on a few elements (exact up to rounding: L is linear).
    const double h = 1e-5;
    for (size_t i : {size_t(0), ns / 2, ns - 1}) {
        std::vector<double> xp = x, xm = x;
        xp[i] += h;
        xm[i] -= h;
        const double fd = (loss(xp) - loss(xm)) / (2 * h);
        EXPECT_NEAR(fd, grad[i], 1e-6 * (1.0 + std::fabs(grad[i]))) << "element " << i;
    }
}

TEST(InterpolateRef, BackwardIsAdjointOfForwardEveryModeLayoutAndRank) {
    std::mt19937 rng(7);
    int checked = 0;
    for (const kind &k : all_kinds)
        for (coord_mode coord : all_coords)
            for (layout fmt : {layout::ncx, layout::nxc})
                for (const auto &sh : spatial_shapes) {
                    SCOPED_TRACE(testing::Message()
                            << "mode " << int(k.mode) << " rounding " << int(k.r) << " coord "
                            << int(coord) << " layout " << int(fmt) << " spatial rank "
                            << sh.first.size() << " case " << (&sh - spatial_shapes.data()));
                    check_adjoint(sweep_problem(k, coord, fmt, sh.first, sh.second), rng);
                    ++checked;
                }
    EXPECT_EQ(checked, 5 * 6 * 2 * spatial_shapes.size());
}

// ---- Strides and dtypes --------------------------------------------------------

TEST(InterpolateRef, StridedTensorsGiveTheDenseValues) {
    std::mt19937 rng(11);
    const dims src{2, 3, 3, 4}, dst{2, 3, 5, 2}; // NCX
    const std::vector<std::pair<dims, dims>> layouts = {
            {test::permuted_strides(src, {0, 2, 3, 1}), test::permuted_strides(dst, {0, 2, 3, 1})},
            {test::padded_strides(src, 3), test::padded_strides(dst, 2)},
            {test::permuted_strides(src, {3, 2, 1, 0}), test::padded_strides(dst, 1)},
    };
    for (interp_mode mode : {interp_mode::nearest, interp_mode::linear}) {
        auto dense = test::make_interp_problem(mode, coord_mode::half_pixel,
                rounding::round_prefer_ceil, layout::ncx, src, dst);
        const std::vector<double> g = dyadic_values(size_t(dense.diff_dst.element_count()), rng);
        const std::vector<double> want = run_bwd(dense, g);
        for (const auto &st : layouts) {
            auto strided = test::make_interp_problem(mode, coord_mode::half_pixel,
                    rounding::round_prefer_ceil, layout::ncx, src, dst, data_type::f32,
                    st.first, st.second);
            EXPECT_EQ(run_bwd(strided, g), want);
        }
    }
}

float round_to(data_type dt, float v) {
    return dt == data_type::bf16 ? kernels::bf16_to_f32(kernels::f32_to_bf16(v))
                                 : kernels::f16_to_f32(kernels::f32_to_f16(v));
}

// The f64 result rounded once to the data type: the 16-bit output is the f32
// output rounded (store_from_double goes f64 -> f32 -> 16-bit), and both are
// within the type's half ulp of W^T g computed in f64 from the forward.
TEST(InterpolateRef, Bf16AndF16AreTheF64ResultRounded) {
    std::mt19937 rng(13);
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (interp_mode mode : {interp_mode::nearest, interp_mode::linear}) {
            const kind k{mode, rounding::round_prefer_ceil};
            auto p32 = sweep_problem(k, coord_mode::align_corners, layout::nxc, {3, 4}, {7, 3});
            auto p16 = sweep_problem(
                    k, coord_mode::align_corners, layout::nxc, {3, 4}, {7, 3}, dt);
            const std::vector<double> g = dyadic_values(size_t(p32.diff_dst.element_count()), rng);
            const std::vector<double> out32 = run_bwd(p32, g), out16 = run_bwd(p16, g);
            const double half_ulp = dt == data_type::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
            for (size_t i = 0; i < out32.size(); ++i) {
                std::vector<double> unit(out32.size(), 0.0), y;
                unit[i] = 1.0;
                test::interpolate_fwd(p32, unit, y);
                const double exact = dot(y, g);
                EXPECT_EQ(out16[i], double(round_to(dt, float(out32[i])))) << i;
                EXPECT_NEAR(out16[i], exact, std::fabs(exact) * (half_ulp + 1e-7)) << i;
            }
        }
}

// 300 outputs of 1.0 all read the single input: a bf16 (or f16) accumulator
// would stop at 256, the f64 one gives 300, which bf16 and f16 represent.
TEST(InterpolateRef, SixteenBitDataAccumulatesInF64) {
    for (data_type dt : {data_type::bf16, data_type::f16}) {
        auto p = test::make_interp_problem(interp_mode::nearest, coord_mode::half_pixel,
                rounding::round_prefer_ceil, layout::ncx, {1, 1, 1}, {1, 1, 300}, dt);
        EXPECT_EQ(run_bwd(p, std::vector<double>(300, 1.0)), std::vector<double>{300.0});
    }
}

// A problem whose axis maps disagree with its shapes is a compile() bug; the
// reference refuses it instead of writing out of bounds.
TEST(InterpolateRef, InconsistentProblemIsRefused) {
    auto p = test::make_interp_problem(interp_mode::nearest, coord_mode::half_pixel,
            rounding::round_prefer_ceil, layout::ncx, {1, 1, 2}, {1, 1, 3});
    p.axes[0].out = 4;
    std::vector<float> dd(3), ds(2);
    EXPECT_THROW(reference::interpolate_bwd(p, dd.data(), ds.data()), error);
}

TEST(InterpolateRef, EmptyBatchDoesNothing) {
    auto p = test::make_interp_problem(interp_mode::linear, coord_mode::half_pixel,
            rounding::round_prefer_ceil, layout::nxc, {0, 2, 3}, {0, 5, 3});
    EXPECT_TRUE(run_bwd(p, {}).empty());
}

} // namespace
} // namespace bpg

namespace bpg {
namespace {

// A NaN or inf in diff_dst reaches only the inputs its output reads with a
// nonzero weight. align_corners 2 -> 3: output 0 sits exactly on input 0
// (weight 0 on input 1), output 2 exactly on input 1.
TEST(InterpolateRef, NonFiniteDiffDstReachesOnlyTheInputsItReads) {
    auto p = problem_1d(interp_mode::linear, coord_mode::align_corners, rounding::round_prefer_ceil, 2, 3);
    const double nan = std::nan(""), inf = INFINITY;
    std::vector<double> out = run_bwd(p, {nan, 0.0, 0.0});
    EXPECT_TRUE(std::isnan(out[0]));
    EXPECT_EQ(out[1], 0.0);
    out = run_bwd(p, {0.0, 0.0, inf});
    EXPECT_EQ(out[0], 0.0);
    EXPECT_EQ(out[1], inf);
    // Output 1 (s = 0.5) reads both inputs.
    out = run_bwd(p, {0.0, nan, 0.0});
    EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]));
}

} // namespace
} // namespace bpg
