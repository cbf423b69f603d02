// The channels-last fused runs on 16-bit data (interp_source::
// converted_in_registers: diff_dst widened and diff_src narrowed in the
// registers) keep the bits of the path that converts through f32 slices in
// memory (channels_last_levels_2d:converted_ring, reached here by padding
// diff_dst's runs), and give them for any number of threads, on inputs with
// full mantissas; the same for three axes, whose last two levels run fused
// from the f32 scratch. (The small planes' 16-bit bits:
// test_tbb_interpolate_small_planes.cpp.)
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
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

std::vector<float> full_mantissas(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> v(n);
    for (float &x : v) x = u(rng);
    return v;
}

std::vector<uint32_t> bits_of(const std::vector<float> &v) {
    std::vector<uint32_t> b(v.size());
    std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
    return b;
}

std::vector<float> run_on(const interp_case &c, int threads, const std::vector<float> &dd, const std::string &path) {
    std::vector<float> out;
    with_default_threads(threads, [&] {
        EXPECT_EQ(compile_interp_case(c, backend_kind::tbb).get_kernel_path(), path);
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
    const std::string fused_nd = "interpolate:channels_last_fused_runs_nd:converted_ring:batch=1:cached";
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

} // namespace
} // namespace bpg::test
