// The fused last two vector-mode levels (run_sum_gather.hpp): summing a 2x
// linear interior's four rows column by column and gathering the columns over
// the innermost axis gives the bits of summing the row into memory (sum_taps)
// and then the innermost axis (sum_rows), for every coordinate and nearest
// mode of the innermost axis, runs of one to nine vectors, without reading
// past the rows or writing past the runs of diff_src.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/run_sum_gather.hpp"
#include "support/axis_cases.hpp"

namespace bpg::test {
namespace {

TEST(TbbRunSumGather, FusedRunsGiveTheBitsOfSumThenGather) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-4.f, 4.f);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    int64_t checked = 0, inner_forms = 0;
    int64_t pick = 0;
    const std::vector<axis_case> outer = axis_cases({3, 8, 13});
    const std::vector<axis_case> inner = axis_cases({1, 2, 5, 9, 16});
    for (const axis_case &oc : outer) {
        const tbb_backend::grouped_axis a = tbb_backend::group_axis(oc.gather());
        bool any_sym4 = false;
        for (uint8_t s : a.sym4) any_sym4 = any_sym4 || s;
        if (!any_sym4) continue;
        for (const axis_case &ic : inner) {
            const kernels::axis_gather ig = ic.gather();
            const tbb_backend::grouped_axis b = tbb_backend::group_axis(ig);
            const int64_t run = 16 * (1 + int64_t(pick++ % 9)); // 16 .. 144 floats
            if (!tbb_backend::run_sum_gather_available(b, run)) {
                if (ic.in >= 5 && !ic.nearest && ic.out == 2 * ic.in && ic.mode == kernels::coord_mode::half_pixel) {
                    if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this CPU";
                    ADD_FAILURE() << "a 2x half_pixel linear axis of " << ic.in << " is not fused";
                }
                continue;
            }
            ++inner_forms;
            // Rows of the outer axis: ig.out runs of `run` floats, NaN padding after each row.
            const int64_t row_floats = ig.out * run, stride = row_floats + 24;
            std::vector<float> src(size_t(stride * oc.out), nan);
            for (int64_t o = 0; o < oc.out; ++o)
                for (int64_t k = 0; k < row_floats; ++k) src[size_t(o * stride + k)] = (o + k) % 23 == 0 ? -0.f : u(rng);
            const tbb_backend::row_source rows {src.data(), stride};
            // diff_src runs `dst_stride` apart; the gaps must stay untouched.
            const int64_t dst_stride = run + 16;
            std::vector<const float *> x(size_t(std::max<int64_t>({oc.gather().max_taps, ig.max_taps, 1})));
            std::vector<float> col(size_t(tbb_backend::run_sum_gather_scratch(b)));
            std::vector<float> row(static_cast<size_t>(row_floats)), want(size_t(ig.in * dst_stride), 7.f);
            for (int64_t i = 0; i < oc.in; ++i) {
                if (!a.sym4[size_t(i)]) continue;
                std::vector<float> got(size_t(ig.in * dst_stride), 7.f);
                tbb_backend::sum_gather_runs(a, i, rows, b, run, x.data(), col.data(), got.data(), dst_stride);
                tbb_backend::sum_taps(row.data(), row_floats,
                        tbb_backend::taps_of(a, i, x.data(), [&](int64_t o) { return rows.row(o); }));
                tbb_backend::sum_rows(b, 0, ig.in, x.data(), {row.data(), run}, run, want.data(), dst_stride);
                SCOPED_TRACE(testing::Message() << "outer " << oc.in << "->" << oc.out << " input " << i << "; inner "
                                                << ic.in << "->" << ic.out << " mode " << int(ic.mode) << " nearest "
                                                << ic.nearest << " rounding " << int(ic.rounding) << "; run " << run);
                ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * 4), 0);
                for (int64_t j = 0; j < ig.in; ++j)
                    for (int64_t c = 0; c < run; ++c) ASSERT_FALSE(std::isnan(got[size_t(j * dst_stride + c)]));
                ++checked;
            }
        }
    }
    // Enough inner axes of the fused form, and inputs checked.
    EXPECT_GT(inner_forms, 20);
    EXPECT_GT(checked, 100);
}

TEST(TbbRunSumGather, OnlyAxesMostlyOfTheInteriorFormAndWholeVectorRuns) {
    const auto axis = [](int64_t in, int64_t out, bool nearest) {
        return tbb_backend::group_axis(
                axis_case {in, out, kernels::coord_mode::half_pixel, nearest, kernels::nearest_rounding::round_prefer_ceil}
                        .gather());
    };
    if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this CPU";
    EXPECT_TRUE(tbb_backend::run_sum_gather_available(axis(56, 112, false), 64));
    EXPECT_FALSE(tbb_backend::run_sum_gather_available(axis(56, 112, false), 40)); // not whole vectors
    EXPECT_FALSE(tbb_backend::run_sum_gather_available(axis(56, 112, true), 64));  // nearest: no sym4 inputs
    EXPECT_FALSE(tbb_backend::run_sum_gather_available(axis(112, 56, false), 64)); // downsampling
}

} // namespace
} // namespace bpg::test
