// The channels-last fused runs on 16-bit data (interp_source::
// converted_in_registers: diff_dst widened and diff_src narrowed in the
// registers) keep the bits of the path that converts through f32 slices in
// memory (channels_last_levels_2d:converted_ring, reached here by padding
// diff_dst's runs), and give them for any number of threads, on inputs with
// full mantissas; the same for three axes, whose last two levels run fused
// from the f32 scratch, and for the levels that only widen in registers.
// (The small planes' 16-bit bits: test_tbb_interpolate_small_planes.cpp;
// their bf16 narrowed by vcvtneps2bf16, with denormals, at the end here.)
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/interpolate_small_planes.hpp"
#include "support/default_threads.hpp"
#include "support/interp_case.hpp"

namespace bpg::test {
namespace {

struct shape_case {
    dims src, dst; // spatial sizes of diff_src and diff_dst
    const char *mode;
    const char *coord;
};

// Every one reaches the fused pass: its innermost axis 2x linear (half-pixel
// modes) or nearest at any ratio; axis 0 of any form.
const shape_case shapes[] = {
        {{7, 7}, {14, 14}, "linear", "half_pixel"},
        {{6, 7}, {13, 14}, "linear", "half_pixel"},
        {{8, 5}, {12, 10}, "linear", "pytorch_half_pixel"},
        {{7, 7}, {14, 14}, "nearest", "half_pixel"},
        {{6, 7}, {13, 14}, "nearest", "align_corners"},
        {{14, 14}, {7, 7}, "nearest", "half_pixel"},
        {{6, 7}, {18, 21}, "nearest", "asymmetric"},
};

interp_case nxc_case(data_type dt, const shape_case &s, int64_t n, int64_t c) {
    interp_case k;
    k.mode = s.mode;
    k.coord = s.coord;
    k.dt = dt;
    k.nxc = true;
    k.src = {n, s.src[0], s.src[1], c};
    k.dst = {n, s.dst[0], s.dst[1], c};
    return k;
}

// The case on the tbb backend, which takes `path` (paths read in registers
// narrow bf16 by vcvtneps2bf16 where the CPU has it: ":bf16_vcvtne").
std::vector<float> run_on(const interp_case &c, int threads, const std::vector<float> &dd, const std::string &path) {
    const bool vcvtne = c.dt == data_type::bf16 && tbb_backend::has_avx512_bf16()
            && path.find("converted_in_registers") != std::string::npos;
    std::vector<float> out;
    with_default_threads(threads, [&] {
        EXPECT_EQ(compile_interp_case(c, backend_kind::tbb).get_kernel_path(), path + (vcvtne ? ":bf16_vcvtne" : ""));
        out = run_interp(c, backend_kind::tbb, dd);
    });
    return out;
}

const std::string fused = "interpolate:channels_last_fused_runs_2d:converted_in_registers:batch=1:cached";
const std::string levels = "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached";

TEST(TbbInterpolate16bit, FusedRunsSameBitsForAnyThreadCount) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (const shape_case &s : shapes) {
            const interp_case c = nxc_case(dt, s, 3, 80);
            SCOPED_TRACE(c.name());
            const std::vector<float> dd = full_mantissas(size_t(3 * 80 * s.dst[0] * s.dst[1]), 3);
            EXPECT_EQ(bits_of(run_on(c, 1, dd, fused)), bits_of(run_on(c, 3, dd, fused)));
        }
}

TEST(TbbInterpolate16bit, FusedRunsGiveTheLevelsBits) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (const shape_case &s : shapes) {
            const interp_case dense = nxc_case(dt, s, 2, 48);
            interp_case padded = dense; // a gap after each run of C: the levels path
            padded.dst_strides = {s.dst[0] * s.dst[1] * 64, s.dst[1] * 64, 64, 1};
            SCOPED_TRACE(dense.name());
            const std::vector<float> dd = full_mantissas(size_t(2 * 48 * s.dst[0] * s.dst[1]), 7);
            EXPECT_EQ(bits_of(run_on(dense, 2, dd, fused)), bits_of(run_on(padded, 2, dd, levels)));
        }
}

struct generic_loops {
    generic_loops() { tbb_backend::generic_kernels_only() = true; }
    ~generic_loops() { tbb_backend::generic_kernels_only() = false; }
};

// Three axes: the last two fused from the f32 scratch, narrowed as stored,
// against the levels apart (the generic loops: no AVX-512 pass).
TEST(TbbInterpolate16bit, FusedRunsNdGiveTheGenericBits) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    const std::string fused_nd = "interpolate:channels_last_fused_runs_nd:converted_in_registers:batch=1:cached";
    const std::string levels_nd = "interpolate:channels_last_levels_nd:converted_ring:batch=1:cached";
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (const char *mode : {"linear", "nearest"}) {
            interp_case c;
            c.mode = mode;
            c.dt = dt;
            c.nxc = true;
            c.src = {2, 3, 4, 5, 32};
            c.dst = {2, 6, 8, 10, 32};
            SCOPED_TRACE(c.name());
            const std::vector<float> dd = full_mantissas(size_t(2 * 6 * 8 * 10 * 32), 11);
            const std::vector<float> one = run_on(c, 1, dd, fused_nd), three = run_on(c, 3, dd, fused_nd);
            const generic_loops generic;
            EXPECT_EQ(bits_of(one), bits_of(three));
            EXPECT_EQ(bits_of(one), bits_of(run_on(c, 2, dd, levels_nd)));
        }
}

// Two axes, against the generic loops too (besides the padded runs above).
TEST(TbbInterpolate16bit, FusedRunsGiveTheGenericBits) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (const shape_case &s : shapes) {
            const interp_case c = nxc_case(dt, s, 2, 32);
            SCOPED_TRACE(c.name());
            const std::vector<float> dd = full_mantissas(size_t(2 * 32 * s.dst[0] * s.dst[1]), 13);
            const std::vector<float> fast = run_on(c, 2, dd, fused);
            const generic_loops generic;
            EXPECT_EQ(bits_of(fast), bits_of(run_on(c, 2, dd, levels)));
        }
}

// Channels-last levels whose sums are widened in registers but not fused
// (tap_sum16.hpp: level 0; one axis: diff_src narrowed too), and planar
// rows read as 16-bit by the stride-2 gather (one axis) or the fused row
// sums (two), against the generic loops (converted ring slots or tile) and
// across thread counts. Channels-last: the first half of diff_dst scaled
// into the denormals, bf16 narrowed by vcvtneps2bf16 (which reads them as
// zero) keeps the integer rounding's bits through the formula. (Not the
// planar rows: the stride-2 gather's w a + w b equals the grouped (a + b) w
// for w = 1/2 only while w a is exact, which a denormal a is not.)
TEST(TbbInterpolate16bit, InRegistersGiveTheGenericBits) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    struct nd_case {
        dims src, dst; // full NXC shapes
        const char *mode, *coord, *levels;
    };
    const nd_case cases[] = {
            {{2, 9, 32}, {2, 17, 32}, "linear", "half_pixel", "channels_last_runs_1d"},
            {{6, 37, 1}, {6, 74, 1}, "linear", "half_pixel", "planar_row_blocks_1d"}, // C = 1: planar rows
            {{2, 200, 1}, {2, 400, 1}, "nearest", "half_pixel", "planar_row_blocks_1d"},
            {{2, 7, 9, 1}, {2, 13, 18, 1}, "linear", "align_corners", "planar_fused_row_gather_2d"},
            {{3, 5, 40, 1}, {3, 11, 80, 1}, "nearest", "half_pixel", "planar_fused_row_gather_2d"},
            {{2, 3, 9, 1}, {2, 17, 18, 1}, "linear", "half_pixel", "planar_fused_row_gather_2d"},
            {{3, 17, 48}, {3, 9, 48}, "nearest", "asymmetric", "channels_last_runs_1d"},
            {{2, 7, 16}, {2, 12, 16}, "linear", "align_corners", "channels_last_runs_1d"},
            {{2, 6, 7, 32}, {2, 12, 14, 32}, "linear", "align_corners", "channels_last_levels_2d"},
            {{2, 14, 14, 16}, {2, 7, 7, 16}, "linear", "half_pixel", "channels_last_levels_2d"},
            {{2, 6, 9, 32}, {2, 13, 17, 32}, "linear", "half_pixel", "channels_last_levels_2d"},
            {{1, 3, 4, 5, 32}, {1, 6, 8, 10, 32}, "linear", "align_corners", "channels_last_levels_nd"},
            {{2, 3, 4, 5, 16}, {2, 6, 8, 10, 16}, "linear", "half_pixel", "channels_last_fused_runs_nd"},
    };
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (const nd_case &k : cases) {
            interp_case c;
            c.mode = k.mode;
            c.coord = k.coord;
            c.dt = dt;
            c.nxc = true;
            c.src = k.src;
            c.dst = k.dst;
            SCOPED_TRACE(c.name());
            size_t count = 1;
            for (int64_t d : k.dst) count *= size_t(d);
            const bool channels_last = std::string(k.levels).rfind("channels_last", 0) == 0;
            std::vector<float> dd = full_mantissas(count, 17);
            if (channels_last)
                for (size_t i = 0; i < count / 2; ++i) dd[i] *= 1e-38f;
            const std::string path = "interpolate:" + std::string(k.levels) + ":converted_in_registers";
            const bool vcvtne = channels_last && dt == data_type::bf16 && tbb_backend::has_avx512_bf16();
            std::vector<float> one, three;
            with_default_threads(1, [&] {
                const std::string got = compile_interp_case(c, backend_kind::tbb).get_kernel_path();
                EXPECT_EQ(got.rfind(path, 0), 0u) << got;
                if (vcvtne) {
                    EXPECT_NE(got.find(":bf16_vcvtne"), std::string::npos) << got;
                }
                one = run_interp(c, backend_kind::tbb, dd);
            });
            size_t denormals = 0;
            for (uint32_t b : bits_of(one)) denormals += (b & 0x7f800000u) == 0 && (b & 0x007fffffu) != 0;
            if (channels_last && dt == data_type::bf16) { // (f16 has no such small values)
                EXPECT_GT(denormals, 0u);
            }
            with_default_threads(3, [&] { three = run_interp(c, backend_kind::tbb, dd); });
            EXPECT_EQ(bits_of(one), bits_of(three));
            const generic_loops generic;
            with_default_threads(2, [&] {
                EXPECT_EQ(compile_interp_case(c, backend_kind::tbb).get_kernel_path().find("converted_in_registers"),
                        std::string::npos);
                EXPECT_EQ(bits_of(one), bits_of(run_interp(c, backend_kind::tbb, dd)));
            });
        }
}

// bf16 small planes narrowed by vcvtneps2bf16 (interp_plan::bf16_vcvtne):
// denormal results, which the instruction reads as zero, keep the integer
// rounding's bits through the formula; the generic loops round every value
// by the formula. Every third plane is scaled into the denormals, so that
// vectors of both kinds, and of lanes of both kinds, are narrowed.
TEST(TbbInterpolate16bit, SmallPlanesBf16DenormalsKeepTheBits) {
    if (!tbb_backend::has_avx512_bf16()) GTEST_SKIP() << "needs AVX512_BF16";
    const dims shapes16[][2] = {{{7, 7}, {14, 14}}, {{14, 14}, {7, 7}}}; // a row per vector, the lanes
    for (const auto &shape : shapes16) {
        interp_case c;
        c.mode = "linear";
        c.dt = data_type::bf16;
        c.src = {2, 100, shape[0][0], shape[0][1]};
        c.dst = {2, 100, shape[1][0], shape[1][1]};
        SCOPED_TRACE(c.name());
        const size_t plane = size_t(shape[1][0] * shape[1][1]);
        std::vector<float> dd = full_mantissas(200 * plane, 21);
        for (size_t i = 0; i < dd.size(); ++i)
            if (i / plane % 3 == 0) dd[i] *= 1e-38f;
        std::vector<float> got;
        with_default_threads(2, [&] {
            const std::string path = compile_interp_case(c, backend_kind::tbb).get_kernel_path();
            EXPECT_NE(path.find(":bf16_vcvtne"), std::string::npos) << path;
            got = run_interp(c, backend_kind::tbb, dd);
        });
        size_t denormals = 0;
        for (uint32_t b : bits_of(got)) denormals += (b & 0x7f800000u) == 0 && (b & 0x007fffffu) != 0;
        EXPECT_GT(denormals, got.size() / 8);
        const generic_loops generic;
        with_default_threads(2, [&] { EXPECT_EQ(bits_of(got), bits_of(run_interp(c, backend_kind::tbb, dd))); });
    }
}

} // namespace
} // namespace bpg::test
