// The fused last two vector-mode levels (run_sum_gather.hpp): summing an
// input's rows column by column in registers (every tap_fold_simd.hpp form)
// and gathering the columns over the innermost axis gives the bits of summing
// the row into memory (sum_taps) and then the innermost axis (sum_rows), for
// every coordinate and nearest mode of both axes, runs of one to nine
// vectors, with ordinary and streaming stores and with prefetching, without
// reading past the rows or writing past the runs of diff_src.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/run_sum_gather.hpp"
#include "backends/tbb/tap_fold_simd.hpp"
#include "support/aligned.hpp"
#include "support/axis_cases.hpp"

namespace bpg::test {
namespace {

TEST(TbbRunSumGather, FusedRunsGiveTheBitsOfSumThenGather) {
    if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this CPU";
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-4.f, 4.f);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    int64_t checked = 0, inner_axes = 0, streamed = 0, weighted_walks = 0;
    int64_t forms[4] = {}; // outer inputs per tap_fold form: another, sym4, ones, weighted
    int64_t pick = 0;
    const std::vector<axis_case> outer = axis_cases({3, 8, 13});
    const std::vector<axis_case> inner = axis_cases({1, 2, 5, 9, 16, 56}); // 56: align_corners near 2x walked
    for (size_t n = 0; n < outer.size(); ++n) {
        const axis_case &oc = outer[n];
        const tbb_backend::grouped_axis a = tbb_backend::group_axis(oc.gather());
        // Each outer axis meets a few inner ones, in turn.
        for (size_t m = n % 7; m < inner.size(); m += 7) {
            const axis_case &ic = inner[m];
            const kernels::axis_gather ig = ic.gather();
            const tbb_backend::grouped_axis b = tbb_backend::group_axis(ig);
            const bool walks_weighted = tbb_backend::run_sum_gather_weighted_walks(b) > 0;
            const int64_t run = 16 * (1 + pick++ % 9); // 16 .. 144 floats
            // Every inner axis, also those run_sum_gather_available turns
            // down for speed: the pass must be exact on any.
            ++inner_axes;
            // Rows of the outer axis: ig.out runs of `run` floats, NaN padding after each row.
            const int64_t row_floats = ig.out * run, stride = row_floats + 24;
            std::vector<float> src(size_t(stride * oc.out), nan);
            for (int64_t o = 0; o < oc.out; ++o)
                for (int64_t k = 0; k < row_floats; ++k) src[size_t(o * stride + k)] = (o + k) % 23 == 0 ? -0.f : u(rng);
            const tbb_backend::row_source rows {src.data(), stride};
            // diff_src runs `dst_stride` apart, 64-byte aligned (streamed every
            // other axis); the gaps must stay untouched.
            const int64_t dst_stride = run + 16, dst_floats = ig.in * dst_stride;
            const bool nontemporal = pick % 2 == 0;
            std::vector<float> got_buffer(size_t(dst_floats + 16));
            float *got = got_buffer.data() + bytes_to_line(got_buffer.data()) / sizeof(float);
            std::vector<const float *> x(size_t(std::max<int64_t>({oc.gather().max_taps, ig.max_taps, 1})));
            std::vector<float> row(static_cast<size_t>(row_floats)), want(size_t(dst_floats), 7.f);
            for (int64_t i = 0; i < oc.in; ++i) {
                int64_t k = 0;
                ++forms[tbb_backend::tap_fold::form_of(a, i, k)];
                if (!tbb_backend::run_sum_gather_takes(a, i)) continue;
                std::fill(got, got + dst_floats, 7.f);
                tbb_backend::sum_gather_runs(a, i, rows, b, run, got, dst_stride, nontemporal, i % 2 ? 256 : 0);
                tbb_backend::sum_taps(row.data(), row_floats,
                        tbb_backend::taps_of(a, i, x.data(), [&](int64_t o) { return rows.row(o); }));
                tbb_backend::sum_rows(b, 0, ig.in, x.data(), {row.data(), run}, run, want.data(), dst_stride);
                SCOPED_TRACE(testing::Message() << "outer " << oc.in << "->" << oc.out << " mode " << int(oc.mode)
                                                << " nearest " << oc.nearest << " input " << i << "; inner " << ic.in
                                                << "->" << ic.out << " mode " << int(ic.mode) << " nearest "
                                                << ic.nearest << " rounding " << int(ic.rounding) << "; run " << run
                                                << (nontemporal ? ", streamed" : ""));
                ASSERT_EQ(std::memcmp(want.data(), got, want.size() * 4), 0);
                for (int64_t j = 0; j < ig.in; ++j)
                    for (int64_t c = 0; c < run; ++c) ASSERT_FALSE(std::isnan(got[j * dst_stride + c]));
                ++checked;
                streamed += nontemporal;
                weighted_walks += walks_weighted;
            }
        }
    }
    // Enough inner axes, inputs of every outer form, streamed and not.
    EXPECT_GT(inner_axes, 100);
    for (int64_t f : forms) EXPECT_GT(f, 50);
    EXPECT_GT(checked, 500);
    EXPECT_GT(streamed, 200);
    EXPECT_GT(checked - streamed, 200);
    EXPECT_GT(weighted_walks, 10);
}

TEST(TbbRunSumGather, OnlyWholeVectorRunsAndAboutOneSumPerColumn) {
    const auto axis = [](int64_t in, int64_t out, bool nearest, kernels::coord_mode mode) {
        return tbb_backend::group_axis(
                axis_case {in, out, mode, nearest, kernels::nearest_rounding::round_prefer_ceil}.gather());
    };
    if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this CPU";
    using kernels::coord_mode;
    EXPECT_TRUE(tbb_backend::run_sum_gather_available(axis(56, 112, false, coord_mode::half_pixel), 64));
    EXPECT_TRUE(tbb_backend::run_sum_gather_available(axis(56, 112, true, coord_mode::half_pixel), 16));
    EXPECT_TRUE(tbb_backend::run_sum_gather_available(axis(56, 56, false, coord_mode::half_pixel), 32));
    EXPECT_FALSE(tbb_backend::run_sum_gather_available(axis(56, 112, false, coord_mode::half_pixel), 40)); // not whole vectors
    EXPECT_FALSE(tbb_backend::run_sum_gather_available(axis(112, 56, false, coord_mode::half_pixel), 64)); // each column twice
    EXPECT_FALSE(tbb_backend::run_sum_gather_available(axis(56, 84, false, coord_mode::align_corners), 64)); // shared columns
    // align_corners near 2x: four weighted taps an input, walked two columns on.
    EXPECT_TRUE(tbb_backend::run_sum_gather_available(axis(56, 112, false, coord_mode::align_corners), 64));
    EXPECT_GT(tbb_backend::run_sum_gather_weighted_walks(axis(56, 112, false, coord_mode::align_corners)), 50);
    EXPECT_EQ(tbb_backend::run_sum_gather_weighted_walks(axis(56, 112, false, coord_mode::half_pixel)), 0); // sym4
    EXPECT_EQ(tbb_backend::run_sum_gather_weighted_walks(axis(56, 112, true, coord_mode::half_pixel)), 0);
    EXPECT_FALSE(tbb_backend::run_sum_gather_available(axis(8, 64, false, coord_mode::half_pixel), 64)); // ~16 taps an input
    // Counting the columns the ring keeps as summed once.
    EXPECT_TRUE(tbb_backend::run_sum_gather_once_per_column(axis(56, 112, false, coord_mode::align_corners), 64));
    EXPECT_TRUE(tbb_backend::run_sum_gather_once_per_column(axis(56, 84, false, coord_mode::half_pixel), 64));
    EXPECT_TRUE(tbb_backend::run_sum_gather_once_per_column(axis(10, 16, false, coord_mode::half_pixel), 64)); // 2 5 3 4
    EXPECT_TRUE(tbb_backend::run_sum_gather_once_per_column(axis(112, 56, false, coord_mode::half_pixel), 64));
    EXPECT_TRUE(tbb_backend::run_sum_gather_once_per_column(axis(56, 112, false, coord_mode::half_pixel), 64));
    EXPECT_FALSE(tbb_backend::run_sum_gather_once_per_column(axis(56, 112, false, coord_mode::align_corners), 40));
    EXPECT_FALSE(tbb_backend::run_sum_gather_once_per_column(axis(8, 64, false, coord_mode::half_pixel), 64));
}

} // namespace
} // namespace bpg::test
