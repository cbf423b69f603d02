// The grouped tap sums of the oneTBB interpolate levels: taps of equal
// weight are added first, in the order the table fixes, and the result is
// exactly that expression (so it never depends on how the work is split).
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/tap_sum.hpp"

namespace bpg::test {
namespace {

kernels::axis_gather linear_2x(int64_t in) {
    kernels::axis_map m;
    m.in = in;
    m.out = 2 * in;
    return kernels::build_axis_gather(m, false, kernels::nearest_rounding::round_prefer_ceil);
}

TEST(TbbTapSum, EqualWeightsAreGroupedInTableOrder) {
    const kernels::axis_gather g = linear_2x(8);
    const tbb_backend::grouped_axis a = tbb_backend::group_axis(g);
    // Interior input 3 reads outputs 5, 6, 7, 8 with weights 1/4, 3/4, 3/4, 1/4.
    const int64_t t0 = a.begin[3];
    ASSERT_EQ(a.begin[4] - t0, 4);
    EXPECT_EQ((std::vector<int64_t>(a.output.begin() + t0, a.output.begin() + t0 + 4)), (std::vector<int64_t> {5, 8, 6, 7}));
    EXPECT_EQ(a.starts[3], 0b0101u);
    EXPECT_FALSE(a.ones[3]);
    // Edge input 0 reads outputs 0 (weight 1), 1 (3/4), 2 (1/4): three groups.
    EXPECT_EQ(a.starts[0], 0b0111u);
}

TEST(TbbTapSum, SumIsTheGroupedExpressionBitForBit) {
    const kernels::axis_gather g = linear_2x(8);
    const tbb_backend::grouped_axis a = tbb_backend::group_axis(g);
    const int64_t n = 37; // a vector body and a tail
    std::vector<std::vector<float>> rows(16, std::vector<float>(size_t(n)));
    for (size_t o = 0; o < rows.size(); ++o)
        for (int64_t j = 0; j < n; ++j) rows[o][size_t(j)] = std::sin(float(o * 131 + size_t(j) * 7)) * 1e3f;
    rows[6][5] = NAN; // read by inputs 2 and 3 only
    std::vector<const float *> x(8);
    std::vector<float> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < 8; ++i) {
        tbb_backend::sum_taps(out.data(), n, tbb_backend::taps_of(a, i, x.data(), [&](int64_t o) { return rows[size_t(o)].data(); }));
        for (int64_t j = 0; j < n; ++j) {
            float want;
            auto r = [&](int64_t o) { return rows[size_t(o)][size_t(j)]; };
            if (i == 0) want = (r(0) + 0.75f * r(1)) + 0.25f * r(2);
            else if (i == 7) want = 0.25f * r(13) + 0.75f * r(14) + r(15);
            else want = 0.25f * (r(2 * i - 1) + r(2 * i + 2)) + 0.75f * (r(2 * i) + r(2 * i + 1));
            const bool nan_expected = j == 5 && (i == 2 || i == 3);
            ASSERT_EQ(std::isnan(out[size_t(j)]), nan_expected) << "input " << i << " j " << j;
            if (!nan_expected) {
                ASSERT_EQ(std::memcmp(&want, &out[size_t(j)], 4), 0) << "input " << i << " j " << j;
            }
        }
    }
}

TEST(TbbTapSum, ManyTapsTakeTheGenericLoopInTheSameOrder) {
    kernels::axis_map m; // 64 -> 1, align_corners: every output reads the one input
    m.in = 1;
    m.out = 64;
    m.mode = kernels::coord_mode::align_corners;
    kernels::axis_gather g = kernels::build_axis_gather(m, false, kernels::nearest_rounding::round_prefer_ceil);
    ASSERT_GT(g.max_taps, 4);
    const tbb_backend::grouped_axis a = tbb_backend::group_axis(g);
    std::vector<float> src(64);
    for (size_t o = 0; o < src.size(); ++o) src[o] = float(o) * 0.5f - 3.f;
    std::vector<const float *> x(size_t(g.max_taps));
    float out = 0.f;
    tbb_backend::sum_taps(&out, 1, tbb_backend::taps_of(a, 0, x.data(), [&](int64_t o) { return &src[size_t(o)]; }));
    float want = src[0]; // every weight is 1: one group, summed in output order
    for (size_t o = 1; o < src.size(); ++o) want = want + src[o];
    EXPECT_EQ(want, out);
}

TEST(TbbTapSum, RowRunsGiveTheBitsOfTheTapSums) {
    for (int64_t n : {16, 32, 45, 48, 64, 100, 131}) // runs of 1-4 whole vectors in one walk, longer ones a vector per walk
    for (int64_t in : {2, 3, 8, 21}) {
        const kernels::axis_gather g = linear_2x(in);
        const tbb_backend::grouped_axis a = tbb_backend::group_axis(g);
        ASSERT_EQ(a.sym4[0], 0);
        for (int64_t i = 1; i + 1 < in; ++i) ASSERT_EQ(a.sym4[size_t(i)], 1) << i;
        const int64_t stride = n + 5; // rows of n floats, 5 unread floats between them
        std::vector<float> src(size_t(2 * in * stride), NAN);
        for (int64_t o = 0; o < 2 * in; ++o)
            for (int64_t j = 0; j < n; ++j) src[size_t(o * stride + j)] = std::cos(float(o * 57 + j * 3)) * 10.f;
        std::vector<const float *> x(4);
        std::vector<float> rows(static_cast<size_t>(in * n)), want(static_cast<size_t>(n));
        tbb_backend::sum_rows(a, 0, in, x.data(), {src.data(), stride}, n, rows.data(), n);
        for (int64_t i = 0; i < in; ++i) {
            tbb_backend::sum_taps(want.data(), n, tbb_backend::taps_of(a, i, x.data(), [&](int64_t o) { return src.data() + o * stride; }));
            ASSERT_EQ(std::memcmp(want.data(), rows.data() + i * n, size_t(n) * 4), 0) << "n " << n << " in " << in << " input " << i;
        }
    }
}

// Inputs whose taps (outputs, groups, weights, order) are input i - 1's:
// the gradient of an exact 2x linear downsampling gives inputs 2o and 2o + 1
// output o alone; of 3x, input 3o + 1 output o alone and the others none, so
// only the tapless neighbours repeat; upsampling's inputs never do.
TEST(TbbTapSum, RepeatsMarksInputsWithTheTapsOfTheOneBefore) {
    auto axis = [](int64_t in, int64_t out) {
        kernels::axis_map m;
        m.in = in;
        m.out = out;
        return tbb_backend::group_axis(kernels::build_axis_gather(m, false, kernels::nearest_rounding::round_prefer_ceil));
    };
    const tbb_backend::grouped_axis down2 = axis(8, 4), down3 = axis(9, 3), up2 = axis(4, 8);
    ASSERT_EQ(down2.repeats.size(), 8u);
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(down2.repeats[size_t(i)], i % 2) << i;
    for (int64_t i = 0; i < 9; ++i) {
        const int64_t taps = down3.begin[size_t(i) + 1] - down3.begin[size_t(i)];
        EXPECT_EQ(taps, i % 3 == 1 ? 1 : 0) << i;
        EXPECT_EQ(down3.repeats[size_t(i)], i % 3 == 0 && i > 0) << i; // 3o after 3o - 1: both tapless
    }
    for (int64_t i = 0; i < 4; ++i) EXPECT_FALSE(up2.repeats[size_t(i)]) << i;
}

} // namespace
} // namespace bpg::test
