// Channels-last InterpolateBackprop choices made for AMD Zen 4 (and sound on
// other CPUs). 1-D (interp_levels::channels_last_runs_1d)
// from the sizes on where diff_dst streams from memory: level 0 prefetches
// each input's new runs (interp_plan::prefetch_bytes0), and diff_src runs of
// whole lines stream out of the registers (interp_store::nontemporal,
// sum_taps_streamed in tap_sum16.hpp). Every dtype, NXC and NCX data with
// channels-last strides, against the reference, with the bits of the cached
// path and the same bits on 1 and 3 threads. test_size_threshold_shift()
// makes the small cases here count as large. 2-D: the fused runs only for
// runs shorter than fused_runs_max_run channels (f32 upsampling also where
// inputs share columns); the 16-bit levels narrow
// the last level in registers; upsampled slices summed in chunks.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/interpolate_plan.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "backends/tbb/tap_sum.hpp"
#include "support/default_threads.hpp"
#include "support/interp_case.hpp"
#include "support/problem_builders.hpp"

namespace bpg::test {
namespace {

const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;

struct lowered_thresholds {
    lowered_thresholds() { tbb_backend::test_size_threshold_shift() = 16; }
    ~lowered_thresholds() { tbb_backend::test_size_threshold_shift() = 0; }
};

// n images of c channels, 1-D, NXC (or NCX with channels-last strides).
interp_case runs_case(data_type dt, bool nxc, int64_t c, int64_t src, int64_t dst, const char *mode = "linear",
        const char *coord = "half_pixel") {
    interp_case k;
    k.mode = mode;
    k.coord = coord;
    k.dt = dt;
    k.nxc = nxc;
    k.channels_last_strides = !nxc;
    k.src = nxc ? dims {2, src, c} : dims {2, c, src};
    k.dst = nxc ? dims {2, dst, c} : dims {2, c, dst};
    return k;
}

// 2 images of c channels, 2-D spatial src -> dst, NXC (or NCX with channels-last strides).
interp_case planes_case(data_type dt, bool nxc, int64_t c, const dims &src, const dims &dst, const char *coord) {
    interp_case k;
    k.coord = coord;
    k.dt = dt;
    k.nxc = nxc;
    k.channels_last_strides = !nxc;
    k.src = nxc ? dims {2, src[0], src[1], c} : dims {2, c, src[0], src[1]};
    k.dst = nxc ? dims {2, dst[0], dst[1], c} : dims {2, c, dst[0], dst[1]};
    return k;
}

tbb_backend::interp_plan plan_of(data_type dt, int64_t c, int64_t src, int64_t dst) {
    const core::interpolate_bwd_problem p = make_interp_problem(core::interp_mode::linear,
            kernels::coord_mode::half_pixel, kernels::nearest_rounding::round_prefer_ceil, layout::nxc,
            {2, src, c}, {2, dst, c}, dt);
    tbb_backend::interp_plan plan;
    EXPECT_EQ(tbb_backend::make_interp_plan(p, plan), "");
    return plan;
}

std::string source_of(data_type dt) {
    return dt == f32 ? "f32" : tbb_backend::has_avx512f() ? "converted_in_registers" : "converted_ring";
}

// bf16 runs read in registers narrowed by vcvtneps2bf16 where the CPU has it.
std::string vcvtne(data_type dt) {
    return dt == bf16 && tbb_backend::has_avx512_bf16() ? ":bf16_vcvtne" : "";
}

TEST(TbbInterpolateAmdNxc, Runs1dPrefetchAndStoreFromASize) {
    for (data_type dt : {f32, bf16, f16}) {
        SCOPED_TRACE(int(dt));
        const tbb_backend::interp_plan small = plan_of(dt, 32, 40, 80);
        EXPECT_EQ(small.levels, tbb_backend::interp_levels::channels_last_runs_1d);
        EXPECT_EQ(small.prefetch_bytes0, 0);
        EXPECT_EQ(small.store, tbb_backend::interp_store::cached);
        const lowered_thresholds large;
        const tbb_backend::interp_plan big = plan_of(dt, 32, 40, 80);
        EXPECT_EQ(big.prefetch_bytes0, tbb_backend::prefetch_ahead_bytes);
        EXPECT_EQ(big.store, tbb_backend::has_avx512f() ? tbb_backend::interp_store::nontemporal
                                                         : tbb_backend::interp_store::cached);
        // bf16 rounded by the hardware where the CPU has it, cached too.
        EXPECT_EQ(big.bf16_vcvtne, dt == bf16 && tbb_backend::has_avx512_bf16());
        EXPECT_EQ(small.bf16_vcvtne, big.bf16_vcvtne);
        // Runs of part of a line stay cached (they would stream in pieces).
        EXPECT_EQ(plan_of(dt, dt == f32 ? 8 : 16, 40, 80).store, tbb_backend::interp_store::cached);
    }
}

// The streamed path against the reference, with the bits of the cached path
// (default thresholds) and of 3 threads.
TEST(TbbInterpolateAmdNxc, Runs1dStreamedGivesTheBitsOfCached) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    std::vector<interp_case> cases;
    for (data_type dt : {f32, bf16, f16}) {
        const int64_t line = dt == f32 ? 16 : 32; // elements of one 64-byte line
        for (bool nxc : {true, false}) {
            cases.push_back(runs_case(dt, nxc, line, 40, 80));                          // 2x linear
            cases.push_back(runs_case(dt, nxc, 3 * line, 9, 17));                       // other scale
            cases.push_back(runs_case(dt, nxc, line, 17, 9, "nearest"));                // downsampling
            cases.push_back(runs_case(dt, nxc, 2 * line, 7, 12, "linear", "align_corners"));
            cases.push_back(runs_case(dt, nxc, line, 5, 40));                           // many taps
        }
    }
    for (const interp_case &c : cases) {
        SCOPED_TRACE(c.name());
        // Full mantissas, some scaled into f32 denormals (vcvtneps2bf16
        // reads those as zero: the vector takes the integer rounding).
        std::vector<float> dd = full_mantissas(size_t(c.dst[0] * c.dst[1] * c.dst[2]), 29);
        for (size_t k = 0; k < dd.size(); k += 97) dd[k] *= 0x1p-130f;
        const std::vector<float> cached = run_interp(c, backend_kind::tbb, dd);
        EXPECT_EQ(compile_interp_case(c, backend_kind::tbb).get_kernel_path(),
                "interpolate:channels_last_runs_1d:" + source_of(c.dt) + ":cached" + vcvtne(c.dt));
        const lowered_thresholds large;
        for (int threads : {1, 3}) {
            with_default_threads(threads, [&] {
                EXPECT_EQ(compile_interp_case(c, backend_kind::tbb).get_kernel_path(),
                        "interpolate:channels_last_runs_1d:" + source_of(c.dt) + ":nontemporal" + vcvtne(c.dt));
                const std::vector<float> got = run_interp(c, backend_kind::tbb, dd);
                EXPECT_EQ(bits_of(got), bits_of(cached)) << threads << " threads";
                expect_interp_close(got, run_interp(c, backend_kind::ref, dd), c.dt, c.name());
            });
        }
    }
}

// Channels-last 2-D: runs of fused_runs_max_run channels and more take the
// levels, shorter ones the fused runs; both against the reference, in NXC
// and NCX data with channels-last strides, every dtype, 1 and 3 threads.
TEST(TbbInterpolateAmdNxc, LongRunsTakeTheLevels) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    const int64_t longest_fused = tbb_backend::fused_runs_max_run - 16;
    for (data_type dt : {f32, bf16, f16}) {
        const std::string src = dt == f32 ? "f32" : "converted_in_registers";
        for (bool nxc : {true, false}) {
            for (int64_t c : {longest_fused, tbb_backend::fused_runs_max_run}) {
                interp_case k;
                k.dt = dt;
                k.nxc = nxc;
                k.channels_last_strides = !nxc;
                k.src = nxc ? dims {1, 3, 4, c} : dims {1, c, 3, 4};
                k.dst = nxc ? dims {1, 6, 8, c} : dims {1, c, 6, 8};
                SCOPED_TRACE(k.name());
                const bool fused = c < tbb_backend::fused_runs_max_run;
                const std::string batch = fused || dt != f32 ? "batch=1" : "batch=4";
                const std::vector<float> dd = full_mantissas(size_t(6 * 8 * c), 31);
                std::vector<uint32_t> one;
                for (int threads : {1, 3}) {
                    with_default_threads(threads, [&] {
                        EXPECT_EQ(compile_interp_case(k, backend_kind::tbb).get_kernel_path(),
                                std::string("interpolate:") + (fused ? "channels_last_fused_runs_2d:"
                                                                     : "channels_last_levels_2d:")
                                        + src + ":" + batch + ":cached" + vcvtne(dt));
                        const std::vector<float> got = run_interp(k, backend_kind::tbb, dd);
                        expect_interp_close(got, run_interp(k, backend_kind::ref, dd), dt, k.name());
                        if (threads == 1) one = bits_of(got);
                        else EXPECT_EQ(bits_of(got), one);
                    });
                }
            }
        }
    }
}

// 16-bit channels-last levels: the last level narrowed in registers
// (sum_taps16 from the f32 scratch), inputs of no tap_fold form through the
// f32 row, and inputs repeating the previous one's taps copied; against the
// reference, the same bits on 1 and 3 threads.
TEST(TbbInterpolateAmdNxc, Levels16BitNarrowInRegisters) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    struct form {
        const char *mode, *coord;
        dims src, dst;
    };
    const form forms[] = {{"nearest", "half_pixel", {3, 4}, {6, 8}},  // repeated inputs of axis 0
            {"linear", "align_corners", {4, 5}, {7, 9}}, {"linear", "half_pixel", {6, 11}, {3, 2}}, // many taps
            {"linear", "half_pixel", {5, 6}, {7, 13}}};
    for (data_type dt : {bf16, f16}) {
        for (bool nxc : {true, false}) {
            for (const form &f : forms) {
                const int64_t c = tbb_backend::fused_runs_max_run; // the levels, not the fused runs
                interp_case k;
                k.mode = f.mode;
                k.coord = f.coord;
                k.dt = dt;
                k.nxc = nxc;
                k.channels_last_strides = !nxc;
                k.src = nxc ? dims {2, f.src[0], f.src[1], c} : dims {2, c, f.src[0], f.src[1]};
                k.dst = nxc ? dims {2, f.dst[0], f.dst[1], c} : dims {2, c, f.dst[0], f.dst[1]};
                SCOPED_TRACE(k.name());
                const std::vector<float> dd = full_mantissas(size_t(2 * f.dst[0] * f.dst[1] * c), 37);
                std::vector<uint32_t> one;
                for (int threads : {1, 3}) {
                    with_default_threads(threads, [&] {
                        const std::string path = compile_interp_case(k, backend_kind::tbb).get_kernel_path();
                        EXPECT_EQ(path.rfind("interpolate:channels_last_levels_2d:converted_in_registers:", 0), 0u)
                                << path;
                        const std::vector<float> got = run_interp(k, backend_kind::tbb, dd);
                        expect_interp_close(got, run_interp(k, backend_kind::ref, dd), dt, k.name());
                        if (threads == 1) one = bits_of(got);
                        else EXPECT_EQ(bits_of(got), one);
                    });
                }
            }
        }
    }
}

// f32 upsampling whose innermost inputs share columns all along
// (align_corners, other scales) takes the fused runs, each column summed once
// (the column ring of run_sum_gather.cpp); 16-bit and the gradient of
// downsampling keep the levels, but for align_corners near 2x, whose inner
// inputs slide their columns through registers (the weighted walk) in every
// dtype. Against the reference, the same bits on 1 and 3 threads, NXC and
// NCX with channels-last strides.
TEST(TbbInterpolateAmdNxc, SharedColumnsFusedInF32) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    struct form {
        const char *coord;
        dims src, dst;
        int64_t c;
        bool up;
        bool walked = false; // align_corners near 2x: inner inputs walked, fused in every dtype
    };
    const form forms[] = {{"align_corners", {5, 12}, {9, 22}, 32, true}, {"half_pixel", {6, 10}, {9, 16}, 48, true},
            {"asymmetric", {4, 6}, {6, 9}, 16, true}, {"align_corners", {7, 13}, {7, 24}, 64, true},
            {"half_pixel", {10, 16}, {5, 8}, 32, false}, {"align_corners", {9, 17}, {5, 12}, 32, false},
            {"align_corners", {6, 28}, {12, 56}, 32, true, true}};
    for (data_type dt : {f32, bf16, f16}) {
        for (bool nxc : {true, false}) {
            for (const form &f : forms) {
                const interp_case k = planes_case(dt, nxc, f.c, f.src, f.dst, f.coord);
                SCOPED_TRACE(k.name());
                const bool fused = (dt == f32 && f.up) || f.walked;
                const std::string want = std::string("interpolate:")
                        + (fused ? "channels_last_fused_runs_2d:" : "channels_last_levels_2d:") + source_of(dt)
                        + ":batch=1:cached" + vcvtne(dt);
                const std::vector<float> dd = full_mantissas(size_t(2 * f.dst[0] * f.dst[1] * f.c), 43);
                std::vector<uint32_t> one;
                for (int threads : {1, 3}) {
                    with_default_threads(threads, [&] {
                        EXPECT_EQ(compile_interp_case(k, backend_kind::tbb).get_kernel_path(), want);
                        const std::vector<float> got = run_interp(k, backend_kind::tbb, dd);
                        expect_interp_close(got, run_interp(k, backend_kind::ref, dd), dt, k.name());
                        if (threads == 1) one = bits_of(got);
                        else EXPECT_EQ(bits_of(got), one);
                    });
                }
            }
        }
    }
}

// Channels-last levels of upsampled slices, one input at a time (f32, and
// 16-bit read in registers): from the size on, level 0 sums each slice in
// chunks with the next input's rows prefetched
// (interp_plan::level0_chunk_floats); the bits of the unchunked sum, the
// reference result, the same bits on 1 and 3 threads.
TEST(TbbInterpolateAmdNxc, UpsampledSlicesSummedInChunks) {
    struct form {
        const char *coord;
        dims src, dst;
        int64_t c;
    };
    // (Axis 1 downsampled: f32 upsampling on both axes takes the fused runs.)
    const form forms[] = {{"half_pixel", {6, 20}, {9, 16}, 48}, {"align_corners", {5, 18}, {9, 17}, 32}, // 2-3 chunks
            {"half_pixel", {3, 7}, {8, 11}, 3}};
    for (data_type dt : {f32, bf16, f16}) {
        for (bool nxc : {true, false}) {
            for (const form &f : forms) {
                if (dt != f32 && (f.c % 16 != 0 || !tbb_backend::has_avx512f())) continue; // (the ring: no chunks)
                const interp_case k = planes_case(dt, nxc, f.c, f.src, f.dst, f.coord);
                SCOPED_TRACE(k.name());
                const std::vector<float> dd = full_mantissas(size_t(2 * f.dst[0] * f.dst[1] * f.c), 41);
                const std::vector<float> whole = run_interp(k, backend_kind::tbb, dd);
                const core::interpolate_bwd_problem p = make_interp_problem(core::interp_mode::linear,
                        kernels::coord_mode::half_pixel, kernels::nearest_rounding::round_prefer_ceil, layout::nxc,
                        {2, f.src[0], f.src[1], f.c}, {2, f.dst[0], f.dst[1], f.c}, dt);
                tbb_backend::interp_plan small;
                ASSERT_EQ(tbb_backend::make_interp_plan(p, small), "");
                EXPECT_EQ(small.level0_chunk_floats, 0);
                const lowered_thresholds large;
                tbb_backend::interp_plan big;
                ASSERT_EQ(tbb_backend::make_interp_plan(p, big), "");
                EXPECT_EQ(big.levels, tbb_backend::interp_levels::channels_last_levels_2d);
                EXPECT_EQ(big.level0_chunk_floats, tbb_backend::level0_chunk_floats);
                for (int threads : {1, 3}) {
                    with_default_threads(threads, [&] {
                        EXPECT_EQ(compile_interp_case(k, backend_kind::tbb).get_kernel_path(),
                                "interpolate:channels_last_levels_2d:" + source_of(dt) + ":batch=1:cached"
                                        + vcvtne(dt));
                        const std::vector<float> got = run_interp(k, backend_kind::tbb, dd);
                        EXPECT_EQ(bits_of(got), bits_of(whole)) << threads << " threads";
                        expect_interp_close(got, run_interp(k, backend_kind::ref, dd), dt, k.name());
                    });
                }
            }
        }
    }
}

// sum_sym4_columns over long rows (a channels-last slice: 1024 channels of a
// 2x upsampled row) goes four inputs at a time, all their rows loaded before
// any store: runs of 2 to 9 inputs (blocks of 1-4), rows 4 KiB apart and
// not, a partial last vector, with and without the prefetch: the bits of
// sum_taps for every input.
TEST(TbbInterpolateAmdNxc, Sym4ColumnsLongRowsInBlocksOfFour) {
    if (!tbb_backend::sym4_columns_available()) GTEST_SKIP() << "no AVX-512";
    for (int64_t n : {80, 131, 1024})
    for (int64_t gap : {0, 5})
    for (int64_t in : {4, 5, 6, 7, 8, 11})
    for (int64_t prefetch : {0, 4096}) {
        kernels::axis_map m;
        m.in = in;
        m.out = 2 * in;
        const tbb_backend::grouped_axis a
                = tbb_backend::group_axis(kernels::build_axis_gather(m, false, kernels::nearest_rounding::round_prefer_ceil));
        const int64_t stride = n + gap, outs = 2 * in;
        std::vector<float> src(size_t(outs * stride), NAN);
        for (int64_t o = 0; o < outs; ++o)
            for (int64_t j = 0; j < n; ++j) src[size_t(o * stride + j)] = std::sin(float(o * 131 + j * 7)) * 3.f;
        std::vector<const float *> x(4);
        std::vector<float> rows(static_cast<size_t>(in * stride), NAN), want(static_cast<size_t>(n));
        tbb_backend::sum_rows(a, 0, in, x.data(), {src.data(), stride}, n, rows.data(), stride, prefetch);
        for (int64_t i = 0; i < in; ++i) {
            tbb_backend::sum_taps(want.data(), n,
                    tbb_backend::taps_of(a, i, x.data(), [&](int64_t o) { return src.data() + o * stride; }));
            ASSERT_EQ(std::memcmp(want.data(), rows.data() + i * stride, size_t(n) * 4), 0)
                    << "n " << n << " gap " << gap << " in " << in << " input " << i;
            for (int64_t j = n; j < stride; ++j) ASSERT_TRUE(std::isnan(rows[size_t(i * stride + j)])) << j;
        }
    }
}

} // namespace
} // namespace bpg::test
