// The oneTBB InterpolateBackprop kernels against the reference backend on
// random small shapes (size 1, in == out, up, down, odd, prime), every mode,
// coordinate mode and nearest mode, the DirectML pixel offsets, NCX, NXC and
// NCX with channels-last strides, f32 / bf16 / f16, 1 to 4 spatial axes; and
// the same bits for any number of threads.
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "backends/tbb/interpolate_plan.hpp"
#include "graph/schemas/checks.hpp"
#include "support/default_threads.hpp"
#include "support/interp_case.hpp"

namespace bpg::test {
namespace {

const char *const coords[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"};
const char *const roundings[] = {"round_prefer_ceil", "round_prefer_floor", "floor", "ceil"};

// Spatial size pairs (in, out) that cover the interesting ratios.
const std::pair<int64_t, int64_t> sizes[] = {{1, 1}, {1, 5}, {5, 1}, {4, 4}, {3, 7}, {7, 3}, {4, 8}, {8, 4}, {5, 13}, {13, 5}, {2, 3}, {6, 11}};

interp_case random_case(std::mt19937 &rng, int nsp, data_type dt, const std::string &mode, int layout_kind) {
    interp_case c;
    c.mode = mode;
    c.dt = dt;
    c.nxc = layout_kind == 1;
    c.channels_last_strides = layout_kind == 2;
    std::uniform_int_distribution<int> pick(0, int(std::size(sizes)) - 1), small(1, 3);
    const int64_t n = small(rng), ch = std::uniform_int_distribution<int>(1, 5)(rng);
    dims sp_in, sp_out;
    for (int k = 0; k < nsp; ++k) {
        auto [i, o] = sizes[pick(rng)];
        if (nsp >= 3) { i = std::min<int64_t>(i, 5); o = std::min<int64_t>(o, 6); }
        sp_in.push_back(i);
        sp_out.push_back(o);
    }
    auto full = [&](const dims &sp) {
        dims d {n};
        if (!c.nxc) d.push_back(ch);
        d.insert(d.end(), sp.begin(), sp.end());
        if (c.nxc) d.push_back(ch);
        return d;
    };
    c.src = full(sp_in);
    c.dst = full(sp_out);
    return c;
}

void check_against_reference(const interp_case &c, uint32_t seed) {
    const auto dd = diff_dst_values(c, seed);
    expect_interp_close(run_interp(c, backend_kind::tbb, dd), run_interp(c, backend_kind::ref, dd), c.dt, c.name());
}

// N = 2, C = 3 on NCX (channels = 0) or `channels` innermost (NXC); spatial
// sizes: diff_src (forward src) sizes * src_factor, diff_dst sizes * dst_factor.
interp_case scaled_case(const char *mode, const char *coord, data_type dt, int64_t channels, const dims &sizes,
        int64_t src_factor, int64_t dst_factor) {
    interp_case c;
    c.mode = mode;
    c.coord = coord;
    c.dt = dt;
    c.nxc = channels > 0;
    c.src = c.nxc ? dims {2} : dims {2, 3};
    c.dst = c.src;
    for (dim d : sizes) c.src.push_back(src_factor * d), c.dst.push_back(dst_factor * d);
    if (c.nxc) c.src.push_back(channels), c.dst.push_back(channels);
    return c;
}

// As check_against_reference, and the same bits on 1 and 3 threads.
void check_against_reference_on_1_and_3_threads(const interp_case &c, uint32_t seed) {
    check_against_reference(c, seed);
    const auto dd = diff_dst_values(c, seed);
    std::vector<float> one, three;
    with_default_threads(1, [&] { one = run_interp(c, backend_kind::tbb, dd); });
    with_default_threads(3, [&] { three = run_interp(c, backend_kind::tbb, dd); });
    EXPECT_EQ(0, std::memcmp(one.data(), three.data(), one.size() * 4)) << c.name();
}

TEST(TbbInterpolate, MatchesReferenceForEveryModeLayoutAndDtype) {
    std::mt19937 rng(2024);
    int cases = 0;
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
        for (int layout_kind = 0; layout_kind < 3; ++layout_kind)
            for (int nsp = 1; nsp <= 4; ++nsp) {
                for (const char *coord : coords)
                    for (const char *mode : {"linear", "nearest"}) {
                        interp_case c = random_case(rng, nsp, dt, mode, layout_kind);
                        c.coord = coord;
                        if (std::string(mode) == "nearest") c.nearest_mode = roundings[cases % 4];
                        check_against_reference(c, uint32_t(cases++));
                    }
                for (const char *mode : {"linear", "nearest"}) { // DirectML pixel offsets
                    interp_case c = random_case(rng, nsp, dt, mode, layout_kind);
                    for (int a : graph_impl::spatial_axes(c.nxc, int(c.src.size()))) {
                        const float in = float(c.src[size_t(a)]), out = float(c.dst[size_t(a)]);
                        c.scales.push_back(out / in);
                        c.in_offsets.push_back(0.25f);
                        c.out_offsets.push_back(-0.5f);
                        // The output size of a scale is floor(in * scale).
                        c.dst[size_t(a)] = int64_t(std::floor(double(c.src[size_t(a)]) * double(c.scales.back())));
                    }
                    bool empty = false;
                    for (dim d : c.dst) empty = empty || d == 0;
                    if (empty) continue;
                    check_against_reference(c, uint32_t(cases++));
                }
            }
    EXPECT_GT(cases, 300);
}

// Exact 2x in two to four spatial dimensions: the random sizes above are
// capped for speed and never give it, yet it takes its own kernel paths (2x
// linear slices of axis 0 summed four at a time, fused row gathers, NXC runs
// of whole vectors summed and gathered in one pass); every coordinate mode,
// both layouts, f32 and bf16, against the reference and with the same bits on
// 1 and 3 threads.
TEST(TbbInterpolate, ExactTwoTimesInTwoToFourDimensions) {
    int cases = 0;
    for (data_type dt : {data_type::f32, data_type::bf16})
        for (int64_t channels : {0, 3, 32}) // 0: NCX; NXC with 3 channels, or 32 (whole vectors: fused runs)
            for (const char *coord : coords)
                for (const char *mode : {"linear", "nearest"})
                    for (int nsp : {2, 3, 4}) {
                        const dims in = nsp == 2 ? dims {5, 7} : nsp == 3 ? dims {5, 3, 7} : dims {3, 2, 3, 5};
                        const interp_case c = scaled_case(mode, coord, dt, channels, in, 1, 2);
                        check_against_reference_on_1_and_3_threads(c, uint32_t(cases++));
                    }
    EXPECT_GE(cases, 180);
}

// Exact 2x and 3x downsampling in two and three spatial dimensions: inputs
// of axis 0 whose taps repeat the previous input's take its result instead of
// summing again (grouped_axis::repeats), written to each of them; every
// coordinate mode, both layouts, f32 and bf16, against the reference, and the
// same bits on 1 and 3 threads (a task's range can end between repeats).
TEST(TbbInterpolate, ExactDownsamplingInTwoAndThreeDimensions) {
    int cases = 0;
    for (data_type dt : {data_type::f32, data_type::bf16})
        for (int64_t channels : {0, 3, 16}) // 0: NCX; NXC runs of 3, or of one vector
            for (const char *coord : coords)
                for (const char *mode : {"linear", "nearest"})
                    for (int64_t factor : {2, 3})
                        for (int nsp : {2, 3}) {
                            // The last axis long enough that its columns are
                            // not summed in the NXC fused pass (run_sum_gather).
                            const dims out = nsp == 2 ? dims {5, 6} : dims {3, 2, 6};
                            const interp_case c = scaled_case(mode, coord, dt, channels, out, factor, 1);
                            check_against_reference_on_1_and_3_threads(c, uint32_t(cases++));
                        }
    EXPECT_EQ(cases, 240);
}

// An f32 diff_src of interp_nontemporal_min_bytes or more leaves through a
// per-thread stage and non-temporal stores (NXC rows; NCX planes of the
// gradient of downsampling): the same results as the reference, for linear
// and nearest, upsampling and down, both layouts.
TEST(TbbInterpolate, LargeOutputsMatchReference) {
    for (const char *mode : {"linear", "nearest"})
        for (bool nxc : {true, false})
            for (bool up : {true, false}) {
                interp_case c;
                c.mode = mode;
                c.nxc = nxc;
                const dims big = up ? dims {64, 64} : dims {128, 256}, small = up ? dims {128, 128} : dims {64, 128};
                const int64_t ch = up ? 512 : 64;
                c.src = nxc ? dims {1, big[0], big[1], ch} : dims {1, ch, big[0], big[1]};
                c.dst = nxc ? dims {1, small[0], small[1], ch} : dims {1, ch, small[0], small[1]};
                int64_t bytes = 4;
                for (dim d : c.src) bytes *= d;
                ASSERT_GE(bytes, tbb_backend::interp_nontemporal_min_bytes); // the staged path where it applies
                check_against_reference(c, 9);
            }
}

// Every nearest rounding with exact ties (in = 2, out = 4 and 3 -> 2 give
// s = k + 1/2 under half_pixel), on both layouts.
TEST(TbbInterpolate, NearestTiesMatchReferenceExactly) {
    for (const char *r : roundings)
        for (bool nxc : {false, true})
            for (auto [in, out] : {std::pair<int64_t, int64_t> {2, 4}, {3, 2}, {2, 3}, {5, 10}}) {
                interp_case c;
                c.mode = "nearest";
                c.nearest_mode = r;
                c.nxc = nxc;
                c.src = nxc ? dims {1, in, in, 3} : dims {1, 3, in, in};
                c.dst = nxc ? dims {1, out, out, 3} : dims {1, 3, out, out};
                const auto dd = diff_dst_values(c, 7);
                EXPECT_EQ(run_interp(c, backend_kind::tbb, dd), run_interp(c, backend_kind::ref, dd)) << c.name();
            }
}

// Results do not depend on the number of threads: the same bits from arenas
// of 1, 2, 3 and 8 threads, for shapes where the work is split inside planes
// (few planes) and across planes (many).
TEST(TbbInterpolate, SameBitsForAnyThreadCount) {
    std::vector<interp_case> cases(3);
    cases[0].nxc = true, cases[0].src = {1, 37, 29, 16}, cases[0].dst = {1, 74, 61, 16};
    cases[1].src = {2, 24, 19, 23}, cases[1].dst = {2, 24, 40, 45};
    cases[2].nxc = true, cases[2].mode = "nearest", cases[2].src = {1, 9, 10, 11, 8}, cases[2].dst = {1, 17, 20, 5, 8};
    for (const interp_case &c : cases) {
        const auto dd = diff_dst_values(c, 3);
        std::vector<float> first;
        for (int threads : {1, 2, 3, 8}) {
            std::vector<float> got;
            with_default_threads(threads, [&] { got = run_interp(c, backend_kind::tbb, dd); });
            if (first.empty()) first = got;
            else EXPECT_EQ(0, std::memcmp(first.data(), got.data(), got.size() * 4)) << c.name() << " threads " << threads;
        }
    }
}

// Strides the kernel cannot walk directly (neither C nor the innermost spatial
// axis has stride 1, in one tensor or both) are copied to and from a dense
// layout, with the same results; padded rows run without a copy.
TEST(TbbInterpolate, AnyStridesGiveTheReferenceResult) {
    interp_case base;
    base.src = {2, 3, 5, 4};
    base.dst = {2, 3, 9, 7};
    // Memory order N, W, C, H: H has stride 1, C and W do not.
    const dims h_innermost_src {60, 5, 1, 15}, h_innermost_dst {189, 9, 1, 27};
    std::vector<std::pair<dims, dims>> layouts = {
            {h_innermost_src, h_innermost_dst},                 // both need a copy
            {h_innermost_src, dense_strides(base.dst)},         // only diff_src
            {dense_strides(base.src), h_innermost_dst},         // only diff_dst
            {{100, 30, 6, 1}, {400, 120, 12, 1}},               // padded rows: no copy
    };
    for (const char *mode : {"linear", "nearest"})
        for (data_type dt : {data_type::f32, data_type::bf16})
            for (const auto &[ss, ds] : layouts) {
                interp_case c = base;
                c.mode = mode;
                c.dt = dt;
                c.src_strides = ss;
                c.dst_strides = ds;
                check_against_reference(c, 11);
            }
}

// One spatial axis, NCX, with enough planes that every task takes whole
// rows: the batched-rows path (several planes per gather).
TEST(TbbInterpolate, OneAxisManyPlanesMatchesReference) {
    for (const char *mode : {"linear", "nearest"})
        for (auto [in, out] : {std::pair<int64_t, int64_t> {37, 75}, {75, 37}, {16, 48}, {1, 9}}) {
            interp_case c;
            c.mode = mode;
            c.src = {5, 9, in};
            c.dst = {5, 9, out};
            check_against_reference(c, 21);
        }
}

// NaN/inf in diff_dst reach only the inputs that read them with a nonzero
// weight, as in the reference.
TEST(TbbInterpolate, NonFiniteValuesReachOnlyTheirReaders) {
    interp_case c;
    c.coord = "align_corners";
    c.src = {1, 1, 1, 2};
    c.dst = {1, 1, 1, 3};
    const float nan = std::nanf("");
    auto got = run_interp(c, backend_kind::tbb, {nan, 0.f, 0.f});
    EXPECT_TRUE(std::isnan(got[0]));
    EXPECT_EQ(got[1], 0.f);
}

} // namespace
} // namespace bpg::test
