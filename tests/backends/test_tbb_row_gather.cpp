// The planar row gather of the oneTBB interpolate kernel: its stride-2 form
// (2x upsampling) gives the bits of the general slot form on every row
// length and every coordinate and nearest mode, never reads past a row, and
// both agree with a double-precision sum of the taps.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/row_gather.hpp"
#include "backends/tbb/row_gather_avx2.hpp"
#include "backends/tbb/simd_store.hpp"
#include "support/aligned.hpp"
#include "support/axis_cases.hpp"

namespace bpg::test {
namespace {

std::vector<axis_case> cases() { return axis_cases({1, 2, 7, 15, 16, 17, 31, 32, 33, 56, 100}); }

// Rows of `out` floats, each followed by NaN padding the gather must not read.
struct rows {
    int64_t stride;
    std::vector<float> data;
};
rows random_rows(int64_t out, int64_t n, std::mt19937 &rng) {
    rows r {out + 40, {}};
    r.data.assign(size_t(r.stride * n), std::numeric_limits<float>::quiet_NaN());
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int64_t k = 0; k < n; ++k)
        for (int64_t o = 0; o < out; ++o) r.data[size_t(k * r.stride + o)] = u(rng);
    return r;
}

TEST(TbbRowGather, Stride2FormMatchesSlotFormBitForBit) {
    std::mt19937 rng(7);
    int stride2_tables = 0;
    for (const axis_case &c : cases()) {
        const kernels::axis_gather g = c.gather();
        const tbb_backend::row_gather_table with = tbb_backend::make_row_gather(g);
        tbb_backend::row_gather_table without = with;
        without.stride2 = false;
        if (without.avx2_form) tbb_backend::add_avx2_form(without); // the tables of the slot form
        stride2_tables += with.stride2;
        const int64_t nrows = 3;
        const rows src = random_rows(c.out, nrows, rng);
        std::vector<float> a(size_t(nrows * c.in)), b(a.size());
        tbb_backend::gather_rows(with, g, src.data.data(), src.stride, a.data(), c.in, nrows);
        tbb_backend::gather_rows(without, g, src.data.data(), src.stride, b.data(), c.in, nrows);
        std::vector<float> one(size_t(c.in) + 16); // one row through the single-row entry, all blocks
        tbb_backend::gather_row(with, g, src.data.data(), one.data(), 0, (c.in + 15) / 16);
        for (int64_t r = 0; r < nrows; ++r)
            for (int64_t i = 0; i < c.in; ++i) {
                const float x = a[size_t(r * c.in + i)];
                double want = 0.0;
                for (int64_t t = g.begin[size_t(i)]; t < g.begin[size_t(i) + 1]; ++t)
                    want += double(g.weight[size_t(t)]) * src.data[size_t(r * src.stride + g.output[size_t(t)])];
                SCOPED_TRACE(testing::Message() << "in " << c.in << " out " << c.out << " mode " << int(c.mode)
                                                << " nearest " << c.nearest << " rounding " << int(c.rounding)
                                                << " row " << r << " input " << i);
                ASSERT_EQ(std::memcmp(&x, &b[size_t(r * c.in + i)], 4), 0) << x << " vs " << b[size_t(r * c.in + i)];
                ASSERT_NEAR(x, want, 1e-5);
                if (r == 0) {
                    ASSERT_EQ(std::memcmp(&x, &one[size_t(i)], 4), 0);
                }
            }
    }
    // Exact 2x upsampling has the form in every coordinate mode but align_corners.
    EXPECT_GT(stride2_tables, 100) << stride2_tables << " of " << cases().size();
    std::printf("stride-2 form: %d of %zu tables\n", stride2_tables, cases().size());
}

// The streamed gather (whole vectors at 64-byte-aligned addresses leave as
// non-temporal stores) writes the same bits as the ordinary one, aligned or
// not, row lengths of whole vectors and not, and nothing between the rows.
TEST(TbbRowGather, StreamedRowsMatchOrdinaryStoresBitForBit) {
    if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this CPU";
    std::mt19937 rng(9);
    int streamed = 0;
    for (const axis_case &c : cases()) {
        const kernels::axis_gather g = c.gather();
        const tbb_backend::row_gather_table t = tbb_backend::make_row_gather(g);
        if (!tbb_backend::gather_rows_streams(t)) continue;
        ++streamed;
        const int64_t nrows = 5, stride = (c.in + 15) / 16 * 16 + 16; // rows 64-byte multiples apart
        const rows src = random_rows(c.out, nrows, rng);
        for (int64_t shift : {0, 3}) { // the output 64-byte aligned, then not
            std::vector<float> buffer(size_t(nrows * stride + 32), 7.f), want(buffer.size(), 7.f);
            const int64_t at = int64_t(bytes_to_line(buffer.data()) / sizeof(float)) + shift;
            tbb_backend::gather_rows(t, g, src.data.data(), src.stride, buffer.data() + at, stride, nrows, true);
            tbb_backend::gather_rows(t, g, src.data.data(), src.stride, want.data() + at, stride, nrows, false);
            SCOPED_TRACE(testing::Message() << "in " << c.in << " out " << c.out << " mode " << int(c.mode)
                                            << " nearest " << c.nearest << " shift " << shift);
            ASSERT_EQ(std::memcmp(buffer.data(), want.data(), buffer.size() * 4), 0);
        }
    }
    EXPECT_GT(streamed, 50);
}

// The AVX2 form (CPUs without AVX-512) gives the scalar loop's bits: the axis
// cases, downsampling, 3x and 4x (windows wider than two vectors: hardware
// gathers), non-integer scales, every coordinate and nearest mode; all
// blocks and a tail range of blocks; nothing written between the rows. The
// tables of the stride-2 form, in it and in the form of the others too. The
// plan builds the AVX2 tables where it runs them: only there.
TEST(TbbRowGather, Avx2FormGivesTheScalarBits) {
    if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
    std::mt19937 rng(11);
    std::vector<axis_case> all = cases();
    for (const axis_case &c : axis_cases({3, 5, 16, 28, 33}))
        for (int64_t out : {c.in * 3, c.in * 4 + 1, c.in / 2 + 1, (c.in * 4) / 3})
            all.push_back({c.in * (out < c.in ? 2 : 1), out, c.mode, c.nearest, c.rounding});
    all.push_back({224, 299, kernels::coord_mode::half_pixel, false, kernels::nearest_rounding::round_prefer_ceil});
    all.push_back({299, 224, kernels::coord_mode::align_corners, false, kernels::nearest_rounding::round_prefer_ceil});
    int gathers = 0, stride2_tables = 0;
    std::vector<std::pair<axis_case, bool>> runs; // (case, its stride-2 form off)
    for (const axis_case &c : all) {
        runs.push_back({c, false});
        if (tbb_backend::make_row_gather(c.gather()).stride2) runs.push_back({c, true});
    }
    for (const auto &[c, slots_only] : runs) {
        const kernels::axis_gather g = c.gather();
        tbb_backend::row_gather_table t = tbb_backend::make_row_gather(g);
        stride2_tables += t.stride2 && !slots_only;
        if (slots_only) t.stride2 = false;
        tbb_backend::add_avx2_form(t); // made by the plan on CPUs without AVX-512 only
        for (uint8_t wide : t.half_gather) gathers += wide;
        const int64_t nrows = 3, nblocks = (c.in + 15) / 16, stride = c.in + 5;
        const rows src = random_rows(c.out, nrows, rng);
        for (int64_t b0 : {int64_t(0), std::min<int64_t>(1, nblocks - 1)}) {
            std::vector<float> a(size_t(nrows * stride), -7.f), b(a.size(), -7.f);
            tbb_backend::gather_rows_avx2(t, g, src.data.data(), src.stride, a.data(), stride, nrows, b0, nblocks);
            tbb_backend::gather_rows_scalar(g, src.data.data(), src.stride, b.data(), stride, nrows, b0, nblocks);
            SCOPED_TRACE(testing::Message() << "in " << c.in << " out " << c.out << " mode " << int(c.mode)
                                            << " nearest " << c.nearest << " rounding " << int(c.rounding)
                                            << " from block " << b0 << " stride-2 form " << t.stride2);
            ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0);
            for (int64_t r = 0; r < nrows; ++r)
                for (int64_t i = c.in - 16 * b0; i < stride; ++i) ASSERT_EQ(a[size_t(r * stride + i)], -7.f) << r << " " << i;
        }
    }
    EXPECT_GT(gathers, 50); // the hardware-gather slots ran too
    EXPECT_GT(stride2_tables, 100);
}

// The AVX2 tables are made where the AVX2 form runs (AVX2 without AVX-512),
// and of them only the ones of the table's form: the s2_half_* ones for a
// stride-2 table, the half_* ones for the others.
TEST(TbbRowGather, Avx2TablesOnlyWhereTheyRun) {
    const bool runs = tbb_backend::has_avx2() && !tbb_backend::has_avx512f();
    for (const axis_case &c : cases()) {
        const tbb_backend::row_gather_table t = tbb_backend::make_row_gather(c.gather());
        SCOPED_TRACE(testing::Message() << "in " << c.in << " out " << c.out << " stride-2 form " << t.stride2);
        ASSERT_EQ(t.avx2_form, runs);
        ASSERT_EQ(t.half_first.empty(), !runs || t.stride2);
        ASSERT_EQ(t.s2_half_weight.empty(), !runs || !t.stride2);
    }
}

// The partial-vector store of the AVX-512 kernels writes lanes [0, n) and not
// one byte more, at any alignment.
__attribute__((target("avx512f"))) void store_lanes(float *dst, const float *lanes, int64_t n) {
    tbb_backend::store_first(dst, _mm512_loadu_ps(lanes), n);
}

TEST(TbbRowGather, PartialStoreWritesExactlyTheFirstLanes) {
    if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this CPU";
    float lanes[16];
    for (int k = 0; k < 16; ++k) lanes[k] = float(k + 1);
    for (int64_t offset = 0; offset < 16; ++offset)
        for (int64_t n = -1; n <= 17; ++n) {
            std::vector<float> buf(48, -7.f);
            store_lanes(buf.data() + 16 + offset, lanes, n);
            for (int64_t k = 0; k < 48; ++k) {
                const int64_t lane = k - 16 - offset;
                const float want = lane >= 0 && lane < std::min<int64_t>(n, 16) ? float(lane + 1) : -7.f;
                ASSERT_EQ(buf[size_t(k)], want) << "n " << n << " offset " << offset << " at " << k;
            }
        }
}

} // namespace
} // namespace bpg::test
