// The fused last two planar levels (row_sum_gather.hpp): summing an input's
// taps in registers (tap_fold_simd.hpp: 2x linear interiors, taps of weight 1,
// taps of their own weights) and gathering it gives the bits
// of summing the row into memory (sum_taps) and gathering that (gather_rows),
// for every coordinate and nearest mode of both axes, on rows of every length
// (the tails masked), without reading past a row.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/row_sum_gather.hpp"
#include "backends/tbb/tap_fold_simd.hpp"
#include "support/axis_cases.hpp"

namespace bpg::test {
namespace {

TEST(TbbRowSumGather, FusedRowsGiveTheBitsOfSumThenGather) {
    std::vector<tbb_backend::row_gather_table> tables;
    std::vector<kernels::axis_gather> inner;
    for (const axis_case &c : axis_cases({1, 7, 16, 17, 33, 56})) {
        kernels::axis_gather g = c.gather();
        tbb_backend::row_gather_table t = tbb_backend::make_row_gather(g);
        if (!t.stride2) continue;
        inner.push_back(std::move(g));
        tables.push_back(std::move(t));
    }
    ASSERT_GT(tables.size(), 50u);
    if (!tbb_backend::row_sum_gather_available(tables[0])) GTEST_SKIP() << "no AVX-512 on this CPU";
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-4.f, 4.f);
    size_t pick = 0;
    int64_t forms[4] = {}; // inputs met per tap_fold form: another, sym4, ones, weighted
    int64_t shared_weighted = 0; // neighbours of four weighted taps on rows o .. o + 5 (align_corners)
    for (const axis_case &oc : axis_cases({1, 2, 3, 8, 13})) {
        const kernels::axis_gather og = oc.gather();
        const tbb_backend::grouped_axis a = tbb_backend::group_axis(og);
        for (int rep = 0; rep < 3; ++rep, pick = (pick + 7) % tables.size()) {
            const kernels::axis_gather &g = inner[pick];
            const tbb_backend::row_gather_table &t = tables[pick];
            // Source rows of g.out floats, NaN padding between them (read it and the sums turn NaN).
            const int64_t stride = g.out + 40;
            std::vector<float> src(size_t(stride * oc.out + 40), std::numeric_limits<float>::quiet_NaN());
            for (int64_t o = 0; o < oc.out; ++o)
                for (int64_t j = 0; j < g.out; ++j) {
                    float v = u(rng);
                    if ((o * 31 + j) % 29 == 0) v = -0.f;
                    src[size_t(o * stride + j)] = v;
                }
            const tbb_backend::row_source rows {src.data(), stride};
            std::vector<const float *> x(size_t(std::max<int64_t>(og.max_taps, 1)));
            std::vector<float> fused(size_t(oc.in * g.in), 7.f), row(size_t(g.out));
            tbb_backend::sum_gather_rows(a, 0, oc.in, x.data(), rows, t, g, fused.data(), g.in, row.data());
            std::vector<float> want(size_t(g.in));
            for (int64_t i = 0; i < oc.in; ++i) {
                int64_t k = 0;
                const int form = tbb_backend::tap_fold::form_of(a, i, k);
                ++forms[form];
                int64_t k1 = 0;
                if (form == 3 && k == 4 && i + 1 < oc.in && tbb_backend::tap_fold::form_of(a, i + 1, k1) == 3 && k1 == 4)
                    shared_weighted += tbb_backend::tap_fold::shares_two_rows(a, i);
                tbb_backend::sum_taps(row.data(), g.out, tbb_backend::taps_of(a, i, x.data(), [&](int64_t o) { return rows.row(o); }));
                tbb_backend::gather_rows(t, g, row.data(), g.out, want.data(), g.in, 1);
                SCOPED_TRACE(testing::Message() << "outer " << oc.in << "->" << oc.out << " mode " << int(oc.mode)
                                                << " nearest " << oc.nearest << " rounding " << int(oc.rounding)
                                                << " input " << i << "; inner " << g.in << "->" << g.out);
                ASSERT_EQ(std::memcmp(want.data(), fused.data() + i * g.in, size_t(g.in) * 4), 0);
                for (int64_t j = 0; j < g.in; ++j) ASSERT_FALSE(std::isnan(fused[size_t(i * g.in + j)])) << j;
            }
        }
    }
    // Every form met, many times over, and weighted neighbours that share rows.
    for (int64_t n : forms) EXPECT_GT(n, 100);
    EXPECT_GT(shared_weighted, 20);
}

} // namespace
} // namespace bpg::test
