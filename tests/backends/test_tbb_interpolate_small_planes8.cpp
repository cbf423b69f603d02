// The small-planes path of CPUs without AVX-512,
// interp_levels::planar_small_planes8_2d (8 planes in the lanes of a 32-byte
// vector, generic loops; AVX-512 CPUs reach it with generic_kernels_only):
// the bits of the row-wise path it replaces there
// (planar_rows_then_gather_2d: each lane does that path's operations on its
// element) for any number of threads, 16-bit in the instances for AVX2 and
// F16C (":avx2") and the target_clones ones, and the reference's values, on inputs
// with full mantissas, in every dtype; planes up to 32x32, groups of 8 and a
// last group in part, upsampling, downsampling, other ratios, inputs with
// no tap.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/cpu.hpp"
#include "support/default_threads.hpp"
#include "support/interp_case.hpp"

namespace bpg::test {
namespace {

// The generic loops for a scope (no AVX-512 code).
struct generic_loops {
    generic_loops() { tbb_backend::generic_kernels_only() = true; }
    ~generic_loops() { tbb_backend::generic_kernels_only() = false; }
};

struct shape_case {
    dims src, dst;
    const char *mode, *coord;
};

const shape_case shapes[] = {
        {{7, 7}, {14, 14}, "linear", "half_pixel"},
        {{14, 14}, {7, 7}, "linear", "half_pixel"},
        {{14, 14}, {28, 28}, "linear", "half_pixel"},
        {{28, 28}, {14, 14}, "linear", "align_corners"},
        {{13, 11}, {4, 5}, "nearest", "asymmetric"}, // inputs with no tap
        {{7, 7}, {14, 14}, "nearest", "half_pixel"},
        {{7, 5}, {3, 13}, "linear", "pytorch_half_pixel"},
        {{5, 1}, {9, 4}, "linear", "half_pixel"},
        {{5, 1}, {1, 9}, "linear", "half_pixel"},
        {{12, 12}, {26, 34}, "linear", "half_pixel"},
        {{20, 10}, {21, 31}, "nearest", "tf_half_pixel_for_nn"},
        {{32, 32}, {16, 16}, "linear", "half_pixel"},
};

const data_type dtypes[] = {data_type::f32, data_type::bf16, data_type::f16};

const char *const path = "interpolate:planar_small_planes8_2d:";

std::vector<float> run_on(const interp_case &c, int threads, const std::vector<float> &dd, bool small_planes) {
    std::vector<float> out;
    with_default_threads(threads, [&] {
        const std::string got = compile_interp_case(c, backend_kind::tbb).get_kernel_path();
        if (small_planes) EXPECT_EQ(got.rfind(path, 0), 0u) << got;
        else EXPECT_EQ(got.rfind("interpolate:planar_rows_then_gather_2d:", 0), 0u) << got;
        out = run_interp(c, backend_kind::tbb, dd);
    });
    return out;
}

// 2 x 70 planes (18 groups, the last of 4 planes) on 1 and 3 threads; its
// first 8 planes alone (too few groups for the path) on the row-wise path;
// the reference.
TEST(TbbInterpolateSmallPlanes8, RowPathBitsAndReference) {
    const generic_loops generic;
    for (data_type dt : dtypes)
        for (const shape_case &s : shapes) {
            const interp_case many = ncx_case(dt, 2, 70, s.src, s.dst, s.mode, s.coord),
                              few = ncx_case(dt, 1, 8, s.src, s.dst, s.mode, s.coord);
            SCOPED_TRACE(many.name());
            const size_t dd_plane = size_t(s.dst[0] * s.dst[1]), ds_plane = size_t(s.src[0] * s.src[1]);
            const std::vector<float> dd = full_mantissas(140 * dd_plane, 11);
            const std::vector<float> one = run_on(many, 1, dd, true), three = run_on(many, 3, dd, true);
            EXPECT_EQ(bits_of(one), bits_of(three));
            if (dt != data_type::f32 && tbb_backend::has_avx2() && tbb_backend::f16c_available()) {
                const std::string got = compile_interp_case(many, backend_kind::tbb).get_kernel_path();
                EXPECT_EQ(got.substr(got.size() - 5), ":avx2") << got;
                tbb_backend::clone_16bit_only() = true;
                const std::vector<float> clones = run_on(many, 2, dd, true);
                tbb_backend::clone_16bit_only() = false;
                EXPECT_EQ(bits_of(one), bits_of(clones)) << "target_clones";
            }
            const std::vector<float> rows =
                    run_on(few, 2, std::vector<float>(dd.begin(), dd.begin() + long(8 * dd_plane)), false);
            EXPECT_EQ(bits_of(one, 8 * ds_plane), bits_of(rows, 8 * ds_plane));
            expect_interp_close(one, run_interp(many, backend_kind::ref, dd), dt, "reference");
        }
}

// Planes past the path's sizes, and too few of them, stay on the rows.
TEST(TbbInterpolateSmallPlanes8, OnlySmallPlanesInEnoughGroups) {
    const generic_loops generic;
    with_default_threads(2, [&] {
        EXPECT_EQ(compile_interp_case(ncx_case(data_type::f32, 2, 64, {16, 16}, {32, 32}, "linear", "half_pixel"),
                          backend_kind::tbb)
                          .get_kernel_path()
                          .rfind(path, 0),
                0u);
        for (const interp_case &c : {ncx_case(data_type::f32, 2, 64, {17, 16}, {34, 32}, "linear", "half_pixel"),
                     ncx_case(data_type::bf16, 1, 55, {7, 7}, {14, 14}, "linear", "half_pixel")})
            EXPECT_EQ(compile_interp_case(c, backend_kind::tbb).get_kernel_path().find("small_planes"), std::string::npos)
                    << c.name();
    });
}

} // namespace
} // namespace bpg::test
