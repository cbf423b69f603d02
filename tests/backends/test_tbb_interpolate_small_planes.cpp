// The small-planes paths, interp_levels::planar_small_planes_2d (16 planes
// in the lanes) and planar_plane_rows_2d (a row per vector), keep the bits
// of the row-wise path they replace (planar_fused_row_gather_2d: each lane
// does that path's operations on its element) and give them for any number
// of threads, on inputs with full mantissas, in every dtype. The lanes path
// with at most one tap per input (interp_plan::single_tap, the gradient of
// downsampling) permutes each plane instead: the same bits.
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
    dims src, dst;
    const char *mode;
    const char *path;
    bool single_tap = false; // the path ends in :single_tap (bf16 then :bf16_vcvtne)
};

const char *const lanes = "interpolate:planar_small_planes_2d", *const rows = "interpolate:planar_plane_rows_2d";

const shape_case shapes[] = {
        {{7, 7}, {14, 14}, "linear", rows},
        {{14, 14}, {7, 7}, "linear", lanes, true},
        {{28, 28}, {14, 14}, "linear", lanes, true},
        {{13, 11}, {4, 5}, "nearest", lanes, true}, // inputs with no tap
        {{20, 40}, {10, 40}, "linear", lanes, false}, // windows over 32 floats
        {{6, 31}, {3, 16}, "nearest", lanes, true},
        {{7, 7}, {14, 14}, "nearest", rows},
        {{7, 5}, {3, 13}, "linear", rows},
        {{6, 9}, {13, 4}, "nearest", lanes},
        {{5, 1}, {9, 4}, "linear", rows},
        {{5, 1}, {1, 9}, "linear", lanes},
        {{16, 16}, {8, 8}, "linear", lanes, true},
        {{4, 7}, {9, 13}, "nearest", rows},
        {{14, 14}, {28, 28}, "linear", rows}, // rows of 28: two vectors
        {{20, 10}, {40, 20}, "linear", rows}, // two vectors a row, packed in the stage
        {{12, 12}, {26, 34}, "linear", lanes},
        {{9, 17}, {5, 9}, "linear", lanes, true},
        {{7, 2}, {14, 16}, "linear", lanes},
};

const data_type dtypes[] = {data_type::f32, data_type::bf16, data_type::f16};

std::vector<float> run_on(const interp_case &c, int threads, const std::vector<float> &dd,
        const std::string &want_path, int single_tap = -1) {
    std::vector<float> out;
    with_default_threads(threads, [&] {
        const std::string path = compile_interp_case(c, backend_kind::tbb).get_kernel_path();
        EXPECT_EQ(path.rfind(want_path, 0), 0u) << path;
        if (single_tap >= 0) {
            EXPECT_EQ(path.find(":single_tap") != std::string::npos, single_tap == 1) << path;
        }
        out = run_interp(c, backend_kind::tbb, dd);
    });
    return out;
}

TEST(TbbInterpolateSmallPlanes, SameBitsForAnyThreadCount) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    for (data_type dt : dtypes)
        for (const shape_case &s : shapes) {
            const interp_case c = ncx_case(dt, 3, 70, s.src, s.dst, s.mode); // 210 planes: the last group part full
            SCOPED_TRACE(c.name());
            const std::vector<float> dd = full_mantissas(size_t(3 * 70 * s.dst[0] * s.dst[1]), 5);
            const std::vector<float> one = run_on(c, 1, dd, s.path, s.single_tap);
            const std::vector<float> three = run_on(c, 3, dd, s.path, s.single_tap);
            EXPECT_EQ(bits_of(one, one.size()), bits_of(three, three.size()));
        }
}

// The first 8 planes of a large case against the same 8 planes alone, which
// take the row-wise path.
TEST(TbbInterpolateSmallPlanes, RowPathBits) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    for (data_type dt : dtypes)
        for (const shape_case &s : shapes) {
            const interp_case many = ncx_case(dt, 1, 200, s.src, s.dst, s.mode), few = ncx_case(dt, 1, 8, s.src, s.dst, s.mode);
            SCOPED_TRACE(many.name());
            const size_t dd_plane = size_t(s.dst[0] * s.dst[1]), ds_plane = size_t(s.src[0] * s.src[1]);
            const std::vector<float> dd = full_mantissas(200 * dd_plane, 9);
            const std::vector<float> got = run_on(many, 2, dd, s.path, s.single_tap);
            const std::vector<float> want = run_on(few, 2, std::vector<float>(dd.begin(), dd.begin() + long(8 * dd_plane)),
                    "interpolate:planar_");
            const std::string few_path = compile_interp_case(few, backend_kind::tbb).get_kernel_path();
            EXPECT_EQ(few_path.find("small_planes"), std::string::npos);
            EXPECT_EQ(few_path.find("plane_rows"), std::string::npos);
            EXPECT_EQ(bits_of(got, 8 * ds_plane), bits_of(want, 8 * ds_plane));
        }
}

} // namespace
} // namespace bpg::test
