// Every kernel path of the oneTBB InterpolateBackprop kernel (interp_levels,
// interp_source, interp_batch, interp_store and the column prefetch of
// interpolate_plan.hpp): a small case reaching it, through the public API,
// gets that name from compiled_partition::get_kernel_path() and the
// reference backend's result. Paths that need AVX-512 skip without it;
// generic_kernels_only() reaches the generic forms on any CPU, and
// test_size_threshold_shift() the ones chosen for large tensors.
#include <string>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/interpolate_small_planes.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "support/default_threads.hpp"
#include "support/interp_case.hpp"

namespace bpg::test {
namespace {

const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;

// NCX, NXC, or NCX data with channels-last strides.
enum class layout { ncx, nxc, ncx_channels_last };

// n images of c channels; spatial sizes of diff_src (the forward src) and
// of diff_dst.
interp_case make_case(layout l, data_type dt, int64_t n, int64_t c, const dims &src, const dims &dst,
        const char *mode = "linear") {
    interp_case k;
    k.mode = mode;
    k.dt = dt;
    k.nxc = l == layout::nxc;
    k.channels_last_strides = l == layout::ncx_channels_last;
    auto full = [&](const dims &sp) {
        dims d {n};
        if (!k.nxc) d.push_back(c);
        d.insert(d.end(), sp.begin(), sp.end());
        if (k.nxc) d.push_back(c);
        return d;
    };
    k.src = full(src);
    k.dst = full(dst);
    return k;
}

// Dense strides of `shape` with its innermost axis `pad` elements longer.
dims padded_strides(const dims &shape, int64_t pad) {
    dims s(shape.size());
    int64_t step = 1;
    for (size_t a = shape.size(); a-- > 0;) {
        s[a] = step;
        step *= shape[a] + (a + 1 == shape.size() ? pad : 0);
    }
    return s;
}

// The case with diff_dst's innermost axis padded: gaps between its runs.
interp_case padded_diff_dst(interp_case c, int64_t pad) {
    c.dst_strides = padded_strides(c.dst, pad);
    return c;
}

// The suffix of the paths that narrow bf16 by vcvtneps2bf16 where the CPU
// has it (small planes, rows and channels-last runs read in registers).
std::string vcvtne(data_type dt) {
    return dt == data_type::bf16 && tbb_backend::has_avx512_bf16() ? ":bf16_vcvtne" : "";
}

// 16-bit fused planar rows read in registers go in pairs (interp_plan::row_pairs16).
std::string row_pairs(data_type dt) { return dt != data_type::f32 ? ":row_pairs" : ""; }

struct lowered_thresholds {
    explicit lowered_thresholds(int shift) { tbb_backend::test_size_threshold_shift() = shift; }
    ~lowered_thresholds() { tbb_backend::test_size_threshold_shift() = 0; }
};

struct generic_loops {
    generic_loops() { tbb_backend::generic_kernels_only() = true; }
    ~generic_loops() { tbb_backend::generic_kernels_only() = false; }
};

// The case compiled for tbb on `threads` threads takes `path`, and gives
// the reference backend's result.
void expect_path(const interp_case &c, const std::string &path, int threads = 1) {
    SCOPED_TRACE(c.name() + " on " + std::to_string(threads) + " threads");
    with_default_threads(threads, [&] {
        EXPECT_EQ(compile_interp_case(c, backend_kind::tbb).get_kernel_path(), path);
        const std::vector<float> dd = diff_dst_values(c, 17);
        expect_interp_close(run_interp(c, backend_kind::tbb, dd), run_interp(c, backend_kind::ref, dd), c.dt, c.name());
    });
}

#define REQUIRE_AVX512F() \
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512"

// Lowered so that every tensor here counts as large (non-temporal stores,
// column prefetch).
constexpr int all_large = 16;

// ---- interp_levels ----

TEST(TbbInterpolatePaths, ZeroSized) {
    expect_path(make_case(layout::ncx, f32, 0, 3, {4, 5}, {8, 10}), "interpolate:zero_sized");
    expect_path(make_case(layout::nxc, bf16, 2, 0, {4, 5}, {8, 10}), "interpolate:zero_sized");
}

// Dense NCX f32, a task per plane: rows of 8 planes per gather. (NXC with
// C = 1 has its planes a row apart, not C rows: it takes row blocks.)
TEST(TbbInterpolatePaths, PlanarRows1d) {
    const std::string path = "interpolate:planar_rows_1d:f32:cached";
    expect_path(make_case(layout::ncx, f32, 2, 4, {37}, {75}), path);
    expect_path(make_case(layout::ncx, f32, 2, 4, {75}, {37}, "nearest"), path);
    expect_path(make_case(layout::ncx, f32, 4, 8, {37}, {75}), path, 3);
    const lowered_thresholds large(all_large); // one axis never stores non-temporally
    expect_path(make_case(layout::ncx, f32, 2, 4, {75}, {37}), path);
}

TEST(TbbInterpolatePaths, PlanarRowBlocks1d) {
    // Two planes cut into tasks of row blocks.
    expect_path(make_case(layout::ncx, f32, 1, 2, {200}, {400}), "interpolate:planar_row_blocks_1d:f32:cached");
    expect_path(make_case(layout::nxc, f32, 8, 1, {37}, {75}), "interpolate:planar_row_blocks_1d:f32:cached");
    for (data_type dt : {bf16, f16}) {
        expect_path(make_case(layout::ncx, dt, 2, 4, {37}, {75}),
                "interpolate:planar_row_blocks_1d:converted_ring:cached");
        expect_path(make_case(layout::nxc, dt, 3, 1, {75}, {37}, "nearest"),
                "interpolate:planar_row_blocks_1d:converted_ring:cached");
    }
    if (!tbb_backend::has_avx512f()) return;
    // Rows with the stride-2 gather: read as 16-bit, widened in registers.
    for (data_type dt : {bf16, f16}) {
        const std::string in_registers = "interpolate:planar_row_blocks_1d:converted_in_registers:cached" + vcvtne(dt);
        expect_path(make_case(layout::ncx, dt, 2, 4, {37}, {74}), in_registers, 3);
        expect_path(make_case(layout::ncx, dt, 1, 2, {200}, {400}), in_registers, 3); // tasks of row blocks
        expect_path(make_case(layout::nxc, dt, 3, 1, {40}, {80}, "nearest"), in_registers);
        interp_case c = make_case(layout::ncx, dt, 2, 3, {45}, {90});
        c.coord = "pytorch_half_pixel";
        expect_path(c, in_registers, 3);
    }
}

TEST(TbbInterpolatePaths, ChannelsLastRuns1d) {
    expect_path(make_case(layout::nxc, f32, 2, 3, {9}, {17}), "interpolate:channels_last_runs_1d:f32:cached");
    expect_path(make_case(layout::ncx_channels_last, f32, 2, 3, {17}, {9}, "nearest"),
            "interpolate:channels_last_runs_1d:f32:cached");
    for (data_type dt : {bf16, f16}) {
        expect_path(make_case(layout::nxc, dt, 2, 3, {9}, {17}),
                "interpolate:channels_last_runs_1d:converted_ring:cached");
        expect_path(make_case(layout::ncx_channels_last, dt, 2, 5, {9}, {17}),
                "interpolate:channels_last_runs_1d:converted_ring:cached");
    }
    if (tbb_backend::has_avx512f()) {
        // Runs of whole vectors: diff_dst widened and diff_src narrowed in
        // registers (inputs of no tap_fold form through the ring).
        for (data_type dt : {bf16, f16}) {
            const std::string in_registers =
                    "interpolate:channels_last_runs_1d:converted_in_registers:cached" + vcvtne(dt);
            expect_path(make_case(layout::nxc, dt, 2, 32, {9}, {17}), in_registers, 3);
            expect_path(make_case(layout::nxc, dt, 2, 16, {40}, {80}), in_registers);
            expect_path(make_case(layout::ncx_channels_last, dt, 2, 16, {17}, {9}, "nearest"), in_registers, 3);
            expect_path(make_case(layout::nxc, dt, 2, 48, {5}, {23}), in_registers);
            interp_case c = make_case(layout::nxc, dt, 2, 16, {7}, {12});
            c.coord = "align_corners";
            expect_path(c, in_registers, 3);
        }
    }
    const lowered_thresholds large(all_large);
    // Runs of whole lines stream from the registers (test_tbb_interpolate_amd_nxc.cpp).
    expect_path(make_case(layout::nxc, f32, 2, 16, {40}, {80}),
            tbb_backend::has_avx512f() ? "interpolate:channels_last_runs_1d:f32:nontemporal"
                                       : "interpolate:channels_last_runs_1d:f32:cached");
}

// 2x upsampling rows have the stride-2 gather that the fused pass needs.
TEST(TbbInterpolatePaths, PlanarFusedRowGather2d) {
    REQUIRE_AVX512F();
    expect_path(make_case(layout::ncx, f32, 2, 4, {5, 7}, {10, 14}),
            "interpolate:planar_fused_row_gather_2d:f32:batch=8:cached");
    expect_path(make_case(layout::nxc, f32, 2, 1, {5, 7}, {10, 14}, "nearest"),
            "interpolate:planar_fused_row_gather_2d:f32:batch=8:cached");
    for (data_type dt : {bf16, f16}) {
        // Axis 0 with 2x linear interiors: rows converted once into the
        // tile, but rows of 48 outputs and up (row_pairs16_min_outputs)
        // read in registers two inputs at a time, rows with a tail too.
        const std::string tile = "interpolate:planar_fused_row_gather_2d:converted_tile:batch=8:cached";
        const std::string in_registers =
                "interpolate:planar_fused_row_gather_2d:converted_in_registers:batch=8:cached" + row_pairs(dt);
        expect_path(make_case(layout::ncx, dt, 2, 4, {5, 7}, {10, 14}), tile, 3);
        expect_path(make_case(layout::nxc, dt, 2, 1, {5, 7}, {10, 14}), tile);
        expect_path(make_case(layout::ncx, dt, 2, 3, {6, 23}, {12, 46}), tile);
        expect_path(make_case(layout::ncx, dt, 2, 3, {6, 24}, {12, 48}), in_registers, 3);
        expect_path(make_case(layout::ncx, dt, 2, 3, {6, 28}, {12, 56}), in_registers, 3);
        expect_path(make_case(layout::ncx, dt, 2, 3, {6, 57}, {12, 114}), in_registers, 3);
        // Axis 0 without 2x linear interiors: the rows read as 16-bit, in
        // every tap_fold form and the others (converted first).
        expect_path(make_case(layout::ncx, dt, 2, 4, {5, 7}, {10, 14}, "nearest"), in_registers, 3);
        expect_path(make_case(layout::nxc, dt, 3, 1, {5, 40}, {11, 80}, "nearest"), in_registers);
        expect_path(make_case(layout::ncx, dt, 2, 4, {5, 7}, {13, 14}), in_registers, 3);
        expect_path(padded_diff_dst(make_case(layout::ncx, dt, 2, 4, {6, 7}, {13, 14}), 3), in_registers);
        for (const char *coord : {"align_corners", "asymmetric"}) {
            interp_case c = make_case(layout::ncx, dt, 2, 4, {7, 9}, {13, 18});
            c.coord = coord;
            expect_path(c, in_registers, 3);
        }
        interp_case c = make_case(layout::ncx, dt, 2, 4, {3, 9}, {17, 18}); // 6 taps an input: converted first
        expect_path(c, in_registers, 3);
    }
}

TEST(TbbInterpolatePaths, PlanarRowsThenGather2d) {
    expect_path(make_case(layout::ncx, f32, 2, 4, {7, 5}, {3, 13}),
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:cached");
    expect_path(make_case(layout::nxc, f32, 2, 1, {7, 5}, {3, 13}),
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:cached");
    for (data_type dt : {bf16, f16})
        expect_path(make_case(layout::ncx, dt, 2, 4, {7, 5}, {3, 13}, "nearest"),
                "interpolate:planar_rows_then_gather_2d:converted_tile:batch=task:cached");
    const generic_loops generic; // 2x rows, without the fused pass
    expect_path(make_case(layout::ncx, f32, 2, 4, {5, 7}, {10, 14}),
            "interpolate:planar_rows_then_gather_2d:f32:batch=8:cached");
}

// Planes of a few vectors, many of them: 16 at once, one per lane, or a
// row per vector where rows are 16 or shorter (PlanarPlaneRows2d). Every
// coordinate mode and tap form reaches it; planes are counted so that each
// of 3 threads gets several groups, the last one part full.
TEST(TbbInterpolatePaths, PlanarSmallPlanes2d) {
    REQUIRE_AVX512F();
    const std::string path = "interpolate:planar_small_planes_2d:f32:cached";
    const std::string rows = "interpolate:planar_plane_rows_2d:f32:cached"; // rows of <= 16
    expect_path(make_case(layout::ncx, f32, 2, 100, {7, 7}, {14, 14}), rows);
    // One tap per input on both axes (2x downsampling): single_tap.
    expect_path(make_case(layout::ncx, f32, 2, 100, {14, 14}, {7, 7}), path + ":single_tap", 3);
    expect_path(make_case(layout::ncx, f32, 2, 100, {28, 28}, {14, 14}), path + ":single_tap", 3);
    expect_path(make_case(layout::nxc, f32, 201, 1, {14, 14}, {7, 7}, "nearest"), path + ":single_tap", 3);
    expect_path(make_case(layout::ncx, f32, 2, 100, {20, 40}, {10, 40}), path + ":next_group_prefetch", 3); // windows > 32
    expect_path(make_case(layout::ncx, f32, 3, 67, {7, 7}, {14, 14}, "nearest"), rows, 3);
    expect_path(make_case(layout::ncx, f32, 1, 200, {7, 5}, {3, 13}), rows);
    expect_path(make_case(layout::ncx, f32, 1, 200, {5, 1}, {1, 9}), path);
    // diff_dst or diff_src planes of 1 KB or more: the next group prefetched.
    const std::string prefetching = "interpolate:planar_small_planes_2d:f32:cached:next_group_prefetch";
    expect_path(make_case(layout::ncx, f32, 2, 100, {12, 12}, {26, 34}), prefetching, 3); // rows over 32
    // diff_dst rows of 17 to 32 (two vectors), a diff_src row per vector: plane rows.
    expect_path(make_case(layout::ncx, f32, 2, 100, {14, 14}, {28, 28}), rows + ":next_group_prefetch", 3);
    expect_path(make_case(layout::ncx, f32, 2, 100, {16, 16}, {32, 32}, "nearest"), rows + ":next_group_prefetch");
    expect_path(make_case(layout::nxc, f32, 201, 1, {6, 7}, {13, 14}), rows, 3);
    for (const char *coord : {"align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"}) {
        interp_case c = make_case(layout::ncx, f32, 2, 100, {7, 6}, {13, 14}, "nearest");
        c.coord = coord;
        expect_path(c, rows, 3);
        if (std::string(coord) == "tf_half_pixel_for_nn") continue; // nearest only
        c.mode = "linear";
        expect_path(c, rows, 3);
    }
    for (data_type dt : {bf16, f16}) {
        const std::string tile = "interpolate:planar_small_planes_2d:converted_in_registers:cached" + vcvtne(dt);
        const std::string rows16 = "interpolate:planar_plane_rows_2d:converted_in_registers:cached" + vcvtne(dt);
        expect_path(make_case(layout::ncx, dt, 2, 100, {7, 7}, {14, 14}), rows16);
        const std::string single = "interpolate:planar_small_planes_2d:converted_in_registers:cached:single_tap";
        expect_path(make_case(layout::ncx, dt, 2, 100, {14, 14}, {7, 7}, "nearest"), single + vcvtne(dt), 3);
        expect_path(make_case(layout::ncx, dt, 2, 100, {28, 28}, {14, 14}), single + vcvtne(dt), 3);
        expect_path(make_case(layout::nxc, dt, 201, 1, {13, 11}, {4, 5}, "nearest"), single + vcvtne(dt), 3);
        expect_path(make_case(layout::ncx, dt, 2, 100, {20, 40}, {10, 40}),
                "interpolate:planar_small_planes_2d:converted_in_registers:cached:next_group_prefetch" + vcvtne(dt), 3);
        expect_path(make_case(layout::nxc, dt, 201, 1, {7, 5}, {3, 13}), rows16, 3);
        // 16-bit planes of 1 KB or more: the next block prefetched.
        expect_path(make_case(layout::ncx, dt, 2, 100, {14, 14}, {28, 28}),
                "interpolate:planar_plane_rows_2d:converted_in_registers:cached:next_group_prefetch" + vcvtne(dt), 3);
    }
    // Planes too large or too few, diff_dst rows with gaps: the row paths.
    expect_path(make_case(layout::ncx, f32, 2, 100, {17, 16}, {34, 32}),
            "interpolate:planar_fused_row_gather_2d:f32:batch=8:cached");
    expect_path(make_case(layout::ncx, f32, 2, 100, {33, 32}, {16, 16}),
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:cached");
    expect_path(make_case(layout::ncx, f32, 2, 4, {7, 7}, {14, 14}),
            "interpolate:planar_fused_row_gather_2d:f32:batch=8:cached");
    expect_path(padded_diff_dst(make_case(layout::ncx, f32, 2, 100, {7, 7}, {14, 14}), 2),
            "interpolate:planar_fused_row_gather_2d:f32:batch=8:cached");
}

TEST(TbbInterpolatePaths, ChannelsLastFusedRuns2d) {
    REQUIRE_AVX512F();
    expect_path(make_case(layout::nxc, f32, 2, 32, {5, 7}, {10, 14}),
            "interpolate:channels_last_fused_runs_2d:f32:batch=1:cached");
    expect_path(make_case(layout::ncx_channels_last, f32, 2, 16, {5, 7}, {10, 14}, "nearest"),
            "interpolate:channels_last_fused_runs_2d:f32:batch=1:cached");
    // 16-bit: the same pass, converting in registers.
    for (data_type dt : {bf16, f16}) {
        const std::string in_registers =
                "interpolate:channels_last_fused_runs_2d:converted_in_registers:batch=1:cached" + vcvtne(dt);
        expect_path(make_case(layout::nxc, dt, 2, 32, {5, 7}, {10, 14}), in_registers);
        expect_path(make_case(layout::nxc, dt, 3, 64, {7, 7}, {14, 14}), in_registers, 3);
        expect_path(make_case(layout::ncx_channels_last, dt, 2, 16, {5, 7}, {10, 14}, "nearest"), in_registers, 3);
        expect_path(make_case(layout::nxc, dt, 2, 48, {6, 5}, {9, 10}), in_registers, 3);
        expect_path(make_case(layout::nxc, dt, 2, 16, {14, 14}, {7, 7}, "nearest"), in_registers);
        expect_path(make_case(layout::nxc, dt, 2, 16, {6, 7}, {18, 21}, "nearest"), in_registers);
        // Nearest in every mode; linear where the innermost axis is a 2x
        // interior (else the levels apart: ChannelsLastLevels2d).
        for (const char *coord : {"align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"}) {
            interp_case c = make_case(layout::nxc, dt, 2, 32, {6, 7}, {13, 14}, "nearest");
            c.coord = coord;
            expect_path(c, in_registers, 3);
        }
        interp_case c = make_case(layout::nxc, dt, 2, 32, {6, 7}, {12, 14});
        c.coord = "pytorch_half_pixel";
        expect_path(c, in_registers, 3);
    }
}

TEST(TbbInterpolatePaths, ChannelsLastLevels2d) {
    // Runs of 3 floats: no fused pass; 2x linear rows of axis 0 four at a time.
    expect_path(make_case(layout::nxc, f32, 2, 3, {5, 7}, {10, 14}),
            "interpolate:channels_last_levels_2d:f32:batch=4:cached");
    expect_path(make_case(layout::ncx_channels_last, f32, 2, 3, {5, 7}, {9, 4}),
            "interpolate:channels_last_levels_2d:f32:batch=1:cached");
    // 16-bit runs the fused pass cannot take: C not whole vectors, gaps
    // between diff_dst's runs, no AVX-512.
    for (data_type dt : {bf16, f16}) {
        expect_path(make_case(layout::nxc, dt, 2, 24, {5, 7}, {10, 14}),
                "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached");
        expect_path(padded_diff_dst(make_case(layout::nxc, dt, 2, 32, {5, 7}, {10, 14}), 16),
                "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached");
    }
    if (tbb_backend::has_avx512f())
        for (data_type dt : {bf16, f16}) { // level 0 widened in registers (tap_sum16.hpp)
            const std::string in_registers =
                    "interpolate:channels_last_levels_2d:converted_in_registers:batch=1:cached" + vcvtne(dt);
            interp_case c = make_case(layout::nxc, dt, 2, 32, {6, 7}, {12, 14});
            c.coord = "align_corners";
            expect_path(c, in_registers, 3);
            expect_path(make_case(layout::nxc, dt, 2, 16, {14, 14}, {7, 7}), in_registers, 3);
            expect_path(make_case(layout::ncx_channels_last, dt, 2, 32, {6, 9}, {13, 17}), in_registers);
        }
    const generic_loops generic;
    expect_path(make_case(layout::nxc, f32, 2, 32, {5, 7}, {10, 14}),
            "interpolate:channels_last_levels_2d:f32:batch=4:cached");
    for (data_type dt : {bf16, f16})
        expect_path(make_case(layout::nxc, dt, 2, 32, {5, 7}, {10, 14}),
                "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached");
}

TEST(TbbInterpolatePaths, PlanarFusedRowGatherNd) {
    REQUIRE_AVX512F();
    expect_path(make_case(layout::ncx, f32, 1, 2, {3, 4, 5}, {6, 8, 10}),
            "interpolate:planar_fused_row_gather_nd:f32:batch=4:cached");
    expect_path(make_case(layout::nxc, f32, 2, 1, {3, 4, 5}, {5, 8, 10}),
            "interpolate:planar_fused_row_gather_nd:f32:batch=1:cached");
    expect_path(make_case(layout::ncx, f32, 1, 2, {3, 3, 2, 5}, {6, 6, 4, 10}),
            "interpolate:planar_fused_row_gather_nd:f32:batch=4:cached");
    // (Axis 0 of 2 inputs has no 2x interior.)
    expect_path(make_case(layout::nxc, f32, 1, 1, {2, 3, 2, 5}, {4, 6, 4, 10}),
            "interpolate:planar_fused_row_gather_nd:f32:batch=1:cached");
    for (data_type dt : {bf16, f16})
        expect_path(make_case(layout::ncx, dt, 1, 2, {3, 4, 5}, {6, 8, 10}),
                "interpolate:planar_fused_row_gather_nd:converted_ring:batch=1:cached");
}

TEST(TbbInterpolatePaths, PlanarRowsThenGatherNd) {
    expect_path(make_case(layout::ncx, f32, 1, 2, {3, 4, 7}, {5, 6, 3}),
            "interpolate:planar_rows_then_gather_nd:f32:batch=1:cached");
    expect_path(make_case(layout::nxc, f32, 2, 1, {3, 4, 7}, {5, 6, 3}, "nearest"),
            "interpolate:planar_rows_then_gather_nd:f32:batch=1:cached");
    expect_path(make_case(layout::ncx, f32, 1, 2, {2, 3, 2, 5}, {3, 5, 3, 9}),
            "interpolate:planar_rows_then_gather_nd:f32:batch=1:cached");
    for (data_type dt : {bf16, f16})
        expect_path(make_case(layout::ncx, dt, 1, 2, {3, 4, 7}, {5, 6, 3}),
                "interpolate:planar_rows_then_gather_nd:converted_ring:batch=1:cached");
    const generic_loops generic;
    expect_path(make_case(layout::ncx, f32, 1, 2, {3, 4, 5}, {6, 8, 10}),
            "interpolate:planar_rows_then_gather_nd:f32:batch=4:cached");
}

TEST(TbbInterpolatePaths, ChannelsLastFusedRunsNd) {
    REQUIRE_AVX512F();
    expect_path(make_case(layout::nxc, f32, 1, 32, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_fused_runs_nd:f32:batch=4:cached");
    expect_path(make_case(layout::ncx_channels_last, f32, 1, 16, {3, 4, 5}, {5, 8, 10}, "nearest"),
            "interpolate:channels_last_fused_runs_nd:f32:batch=1:cached");
    expect_path(make_case(layout::nxc, f32, 1, 16, {3, 3, 2, 5}, {6, 6, 4, 10}),
            "interpolate:channels_last_fused_runs_nd:f32:batch=4:cached");
    // 16-bit: level 0 widened in registers (inputs of no tap_fold form from
    // converted ring slots), the last two levels fused from the f32
    // scratch, narrowed as stored.
    for (data_type dt : {bf16, f16}) {
        const std::string ring =
                "interpolate:channels_last_fused_runs_nd:converted_in_registers:batch=1:cached" + vcvtne(dt);
        expect_path(make_case(layout::nxc, dt, 1, 32, {3, 4, 5}, {6, 8, 10}), ring);
        expect_path(make_case(layout::nxc, dt, 2, 32, {4, 4, 5}, {8, 8, 10}, "nearest"), ring, 3);
        expect_path(make_case(layout::ncx_channels_last, dt, 1, 16, {3, 4, 5}, {5, 8, 10}), ring, 3);
        expect_path(make_case(layout::nxc, dt, 1, 16, {3, 3, 2, 5}, {6, 6, 4, 10}), ring);
        interp_case c = make_case(layout::nxc, dt, 1, 16, {3, 4, 5}, {6, 9, 10});
        c.coord = "pytorch_half_pixel";
        expect_path(c, ring, 3);
    }
}

TEST(TbbInterpolatePaths, ChannelsLastLevelsNd) {
    expect_path(make_case(layout::nxc, f32, 1, 3, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_levels_nd:f32:batch=4:cached");
    expect_path(make_case(layout::ncx_channels_last, f32, 1, 3, {3, 4, 5}, {5, 8, 10}),
            "interpolate:channels_last_levels_nd:f32:batch=1:cached");
    expect_path(make_case(layout::nxc, f32, 1, 3, {2, 3, 2, 5}, {3, 5, 3, 9}, "nearest"),
            "interpolate:channels_last_levels_nd:f32:batch=1:cached");
    for (data_type dt : {bf16, f16}) {
        expect_path(make_case(layout::nxc, dt, 1, 24, {3, 4, 5}, {6, 8, 10}),
                "interpolate:channels_last_levels_nd:converted_ring:batch=1:cached");
        if (!tbb_backend::has_avx512f()) continue;
        interp_case c = make_case(layout::nxc, dt, 1, 32, {3, 4, 5}, {6, 8, 10});
        c.coord = "align_corners"; // no fused last levels
        expect_path(c, "interpolate:channels_last_levels_nd:converted_in_registers:batch=1:cached" + vcvtne(dt), 3);
    }
    const generic_loops generic;
    expect_path(make_case(layout::nxc, f32, 1, 32, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_levels_nd:f32:batch=4:cached");
    for (data_type dt : {bf16, f16})
        expect_path(make_case(layout::nxc, dt, 1, 32, {3, 4, 5}, {6, 8, 10}),
                "interpolate:channels_last_levels_nd:converted_ring:batch=1:cached");
}

// ---- interp_source ----

TEST(TbbInterpolatePaths, SourceF32) {
    expect_path(make_case(layout::ncx, f32, 2, 4, {37}, {75}), "interpolate:planar_rows_1d:f32:cached");
    expect_path(make_case(layout::nxc, f32, 2, 3, {9}, {17}), "interpolate:channels_last_runs_1d:f32:cached");
    expect_path(make_case(layout::ncx, f32, 2, 4, {7, 5}, {3, 13}),
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:cached");
    expect_path(make_case(layout::nxc, f32, 2, 3, {5, 7}, {9, 4}),
            "interpolate:channels_last_levels_2d:f32:batch=1:cached");
    expect_path(make_case(layout::ncx, f32, 1, 2, {3, 4, 7}, {5, 6, 3}),
            "interpolate:planar_rows_then_gather_nd:f32:batch=1:cached");
    expect_path(make_case(layout::nxc, f32, 1, 3, {3, 4, 5}, {5, 8, 10}),
            "interpolate:channels_last_levels_nd:f32:batch=1:cached");
}

// Padded diff_dst: level-0 slices with gaps, summed run by run. Planar 2-D
// rows are read at their own stride either way.
TEST(TbbInterpolatePaths, SourceF32Strided) {
    expect_path(padded_diff_dst(make_case(layout::nxc, f32, 2, 3, {5, 7}, {10, 14}), 1),
            "interpolate:channels_last_levels_2d:f32_strided:batch=1:cached");
    // The fused pass takes only contiguous slices in 2-D.
    expect_path(padded_diff_dst(make_case(layout::nxc, f32, 2, 32, {5, 7}, {10, 14}), 16),
            "interpolate:channels_last_levels_2d:f32_strided:batch=1:cached");
    expect_path(padded_diff_dst(make_case(layout::nxc, f32, 1, 3, {3, 4, 5}, {6, 8, 10}), 2),
            "interpolate:channels_last_levels_nd:f32_strided:batch=1:cached");
    expect_path(padded_diff_dst(make_case(layout::ncx, f32, 1, 2, {3, 4, 7}, {5, 6, 3}), 3),
            "interpolate:planar_rows_then_gather_nd:f32_strided:batch=1:cached");
    expect_path(padded_diff_dst(make_case(layout::ncx, f32, 2, 4, {7, 5}, {3, 13}), 3),
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:cached");
    if (!tbb_backend::has_avx512f()) return;
    expect_path(padded_diff_dst(make_case(layout::nxc, f32, 1, 32, {3, 4, 5}, {6, 8, 10}), 16),
            "interpolate:channels_last_fused_runs_nd:f32_strided:batch=1:cached");
    expect_path(padded_diff_dst(make_case(layout::ncx, f32, 1, 2, {3, 4, 5}, {6, 8, 10}), 3),
            "interpolate:planar_fused_row_gather_nd:f32_strided:batch=1:cached");
}

TEST(TbbInterpolatePaths, SourceConvertedTile) {
    for (data_type dt : {bf16, f16}) {
        expect_path(make_case(layout::ncx, dt, 2, 4, {7, 5}, {3, 13}),
                "interpolate:planar_rows_then_gather_2d:converted_tile:batch=task:cached");
        expect_path(make_case(layout::nxc, dt, 2, 1, {7, 5}, {13, 3}, "nearest"),
                "interpolate:planar_rows_then_gather_2d:converted_tile:batch=task:cached");
        const generic_loops generic;
        expect_path(make_case(layout::ncx, dt, 2, 4, {5, 7}, {10, 14}),
                "interpolate:planar_rows_then_gather_2d:converted_tile:batch=8:cached");
    }
}

// 16-bit read and written by the kernel itself, 16 values a register: the
// small planes (NCX, NXC with C = 1) and the channels-last fused runs.
TEST(TbbInterpolatePaths, SourceConvertedInRegisters) {
    REQUIRE_AVX512F();
    for (data_type dt : {bf16, f16}) {
        expect_path(make_case(layout::ncx, dt, 2, 100, {7, 7}, {14, 14}),
                "interpolate:planar_plane_rows_2d:converted_in_registers:cached" + vcvtne(dt), 3);
        expect_path(make_case(layout::nxc, dt, 201, 1, {14, 14}, {28, 28}),
                "interpolate:planar_plane_rows_2d:converted_in_registers:cached:next_group_prefetch" + vcvtne(dt));
        expect_path(make_case(layout::nxc, dt, 201, 1, {12, 12}, {26, 34}),
                "interpolate:planar_small_planes_2d:converted_in_registers:cached:next_group_prefetch" + vcvtne(dt));
        expect_path(make_case(layout::nxc, dt, 2, 32, {5, 7}, {10, 14}),
                "interpolate:channels_last_fused_runs_2d:converted_in_registers:batch=1:cached" + vcvtne(dt), 3);
        expect_path(make_case(layout::ncx_channels_last, dt, 2, 16, {5, 7}, {10, 14}),
                "interpolate:channels_last_fused_runs_2d:converted_in_registers:batch=1:cached" + vcvtne(dt));
        expect_path(make_case(layout::nxc, dt, 2, 16, {14, 14}, {7, 7}),
                "interpolate:channels_last_levels_2d:converted_in_registers:batch=1:cached" + vcvtne(dt));
        expect_path(make_case(layout::nxc, dt, 2, 32, {9}, {17}),
                "interpolate:channels_last_runs_1d:converted_in_registers:cached" + vcvtne(dt), 3);
        expect_path(make_case(layout::nxc, dt, 1, 32, {3, 4, 5}, {6, 8, 10}),
                "interpolate:channels_last_fused_runs_nd:converted_in_registers:batch=1:cached" + vcvtne(dt));
        expect_path(make_case(layout::ncx, dt, 2, 4, {40}, {80}),
                "interpolate:planar_row_blocks_1d:converted_in_registers:cached" + vcvtne(dt), 3);
        expect_path(make_case(layout::ncx, dt, 2, 4, {5, 7}, {10, 14}, "nearest"),
                "interpolate:planar_fused_row_gather_2d:converted_in_registers:batch=8:cached" + row_pairs(dt));
    }
}

TEST(TbbInterpolatePaths, SourceConvertedRing) {
    for (data_type dt : {bf16, f16}) {
        expect_path(make_case(layout::ncx, dt, 2, 4, {37}, {75}),
                "interpolate:planar_row_blocks_1d:converted_ring:cached");
        expect_path(make_case(layout::nxc, dt, 2, 3, {9}, {17}),
                "interpolate:channels_last_runs_1d:converted_ring:cached");
        expect_path(make_case(layout::nxc, dt, 2, 3, {5, 7}, {10, 14}),
                "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached");
        expect_path(make_case(layout::ncx_channels_last, dt, 2, 3, {5, 7}, {9, 4}),
                "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached");
        expect_path(make_case(layout::ncx, dt, 1, 2, {3, 4, 7}, {5, 6, 3}),
                "interpolate:planar_rows_then_gather_nd:converted_ring:batch=1:cached");
        expect_path(make_case(layout::nxc, dt, 1, 3, {3, 4, 5}, {6, 8, 10}),
                "interpolate:channels_last_levels_nd:converted_ring:batch=1:cached");
    }
}

// ---- interp_batch ----

TEST(TbbInterpolatePaths, BatchNoneWithOneAxis) {
    expect_path(make_case(layout::ncx, f32, 2, 4, {37}, {75}), "interpolate:planar_rows_1d:f32:cached");
    expect_path(make_case(layout::nxc, f32, 8, 1, {37}, {75}), "interpolate:planar_row_blocks_1d:f32:cached");
    expect_path(make_case(layout::nxc, bf16, 2, 3, {9}, {17}),
            "interpolate:channels_last_runs_1d:converted_ring:cached");
}

TEST(TbbInterpolatePaths, BatchOne) {
    expect_path(make_case(layout::nxc, f32, 2, 3, {5, 7}, {9, 4}),
            "interpolate:channels_last_levels_2d:f32:batch=1:cached");
    expect_path(make_case(layout::ncx, f32, 1, 2, {3, 4, 7}, {5, 6, 3}),
            "interpolate:planar_rows_then_gather_nd:f32:batch=1:cached");
    expect_path(make_case(layout::ncx_channels_last, f16, 2, 3, {5, 7}, {10, 14}),
            "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached");
    if (!tbb_backend::has_avx512f()) return;
    // Fused runs read each input's rows straight from diff_dst.
    expect_path(make_case(layout::nxc, f32, 2, 32, {5, 7}, {10, 14}),
            "interpolate:channels_last_fused_runs_2d:f32:batch=1:cached");
}

// Axis 0 with 2x linear interiors, f32 slices read in place.
TEST(TbbInterpolatePaths, BatchFour) {
    expect_path(make_case(layout::nxc, f32, 2, 3, {5, 7}, {10, 14}),
            "interpolate:channels_last_levels_2d:f32:batch=4:cached");
    expect_path(make_case(layout::ncx_channels_last, f32, 1, 3, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_levels_nd:f32:batch=4:cached");
    expect_path(make_case(layout::ncx, f32, 1, 2, {3, 4, 7}, {6, 6, 3}),
            "interpolate:planar_rows_then_gather_nd:f32:batch=4:cached");
    expect_path(make_case(layout::nxc, f32, 2, 1, {3, 4, 7}, {6, 6, 3}),
            "interpolate:planar_rows_then_gather_nd:f32:batch=4:cached");
}

// Planar 2-D rows with the stride-2 gather (2x upsampling).
TEST(TbbInterpolatePaths, BatchEight) {
    const generic_loops generic;
    for (data_type dt : {f32, bf16}) {
        const std::string source = dt == f32 ? "f32" : "converted_tile";
        expect_path(make_case(layout::ncx, dt, 2, 4, {5, 7}, {10, 14}),
                "interpolate:planar_rows_then_gather_2d:" + source + ":batch=8:cached");
        expect_path(make_case(layout::nxc, dt, 2, 1, {11, 7}, {22, 14}, "nearest"),
                "interpolate:planar_rows_then_gather_2d:" + source + ":batch=8:cached");
    }
}

// Planar 2-D rows with another gather: every input of a task at once.
TEST(TbbInterpolatePaths, BatchTask) {
    for (data_type dt : {f32, bf16, f16}) {
        const std::string source = dt == f32 ? "f32" : "converted_tile";
        expect_path(make_case(layout::ncx, dt, 2, 4, {7, 5}, {3, 13}),
                "interpolate:planar_rows_then_gather_2d:" + source + ":batch=task:cached");
        expect_path(make_case(layout::nxc, dt, 2, 1, {12, 10}, {6, 5}),
                "interpolate:planar_rows_then_gather_2d:" + source + ":batch=task:cached" + (dt == f32 ? "" : ":pairs"),
                3);
    }
}

// ---- interp_store ----

// Small outputs, and large ones where non-temporal stores do not apply.
TEST(TbbInterpolatePaths, StoreCached) {
    expect_path(make_case(layout::nxc, f32, 2, 3, {5, 7}, {10, 14}),
            "interpolate:channels_last_levels_2d:f32:batch=4:cached");
    const lowered_thresholds large(all_large);
    // One axis; 16-bit data; planar upsampling (diff_src smaller than
    // diff_dst); planar planes cut into several tasks; planar 3-D;
    // channels-last diff_src whose rows have gaps.
    expect_path(make_case(layout::nxc, f32, 2, 3, {9}, {17}), "interpolate:channels_last_runs_1d:f32:cached");
    expect_path(make_case(layout::nxc, bf16, 2, 3, {5, 7}, {10, 14}),
            "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached");
    expect_path(make_case(layout::ncx, f32, 2, 4, {7, 5}, {9, 13}),
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:cached");
    expect_path(make_case(layout::ncx, f32, 1, 1, {12, 10}, {6, 5}),
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:cached", 3);
    expect_path(make_case(layout::ncx, f32, 1, 2, {3, 4, 7}, {5, 6, 3}),
            "interpolate:planar_rows_then_gather_nd:f32:batch=1:cached:column_prefetch");
    interp_case gaps = make_case(layout::nxc, f32, 2, 3, {5, 7}, {9, 4});
    gaps.src_strides = padded_strides(gaps.src, 1);
    expect_path(gaps, "interpolate:channels_last_levels_2d:f32:batch=1:cached");
}

TEST(TbbInterpolatePaths, StoreNontemporal) {
    const lowered_thresholds large(all_large);
    // (The levels' gradients of upsampling stay cached: ChannelsLastLevelsUpsamplingCached.)
    expect_path(make_case(layout::nxc, f32, 2, 3, {10, 14}, {5, 14}),
            "interpolate:channels_last_levels_2d:f32:batch=1:nontemporal");
    expect_path(make_case(layout::ncx_channels_last, f32, 2, 3, {10, 14}, {5, 7}),
            "interpolate:channels_last_levels_2d:f32:batch=1:nontemporal");
    expect_path(padded_diff_dst(make_case(layout::nxc, f32, 2, 3, {5, 7}, {4, 4}), 1),
            "interpolate:channels_last_levels_2d:f32_strided:batch=1:nontemporal");
    // (Slices this large count as 512 KB and more: batches of two, Level0BatchTwo.)
    expect_path(make_case(layout::nxc, f32, 1, 3, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_levels_nd:f32:batch=2:nontemporal:column_prefetch");
    {
        // Planar 2-D gradient of downsampling, a task per plane: the plane
        // through the per-thread buffer where the gather does not store it.
        const generic_loops generic;
        expect_path(make_case(layout::ncx, f32, 2, 4, {10, 12}, {5, 6}),
                "interpolate:planar_rows_then_gather_2d:f32:batch=task:nontemporal");
        expect_path(make_case(layout::nxc, f32, 8, 1, {10, 12}, {5, 6}, "nearest"),
                "interpolate:planar_rows_then_gather_2d:f32:batch=task:nontemporal");
    }
    if (!tbb_backend::has_avx512f()) return;
    expect_path(make_case(layout::nxc, f32, 2, 32, {5, 7}, {10, 14}),
            "interpolate:channels_last_fused_runs_2d:f32:batch=1:nontemporal");
    expect_path(make_case(layout::ncx_channels_last, f32, 1, 16, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_fused_runs_nd:f32:batch=2:nontemporal:column_prefetch");
    // Axis 0 downsampled, axis 1 2x upsampled: the stride-2 fused pass.
    expect_path(make_case(layout::ncx, f32, 2, 4, {16, 7}, {4, 14}),
            "interpolate:planar_fused_row_gather_2d:f32:batch=8:nontemporal");
}

TEST(TbbInterpolatePaths, StoreNontemporalGather) {
    REQUIRE_AVX512F();
    const lowered_thresholds large(all_large);
    expect_path(make_case(layout::ncx, f32, 2, 4, {10, 12}, {5, 6}),
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:nontemporal_gather");
    expect_path(make_case(layout::nxc, f32, 8, 1, {10, 12}, {5, 6}, "nearest"),
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:nontemporal_gather");
}

// ---- column prefetch ----

// f32 level-0 slices in place, in three axes and more, from a size on.
TEST(TbbInterpolatePaths, ColumnPrefetch) {
    // Below the threshold as built: none.
    expect_path(make_case(layout::nxc, f32, 1, 8, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_levels_nd:f32:batch=4:cached");
    const lowered_thresholds lowered(6); // slices of 1 KB and more
    expect_path(make_case(layout::nxc, f32, 1, 8, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_levels_nd:f32:batch=4:cached:column_prefetch");
    expect_path(make_case(layout::ncx, f32, 1, 2, {3, 16, 21}, {6, 32, 9}),
            "interpolate:planar_rows_then_gather_nd:f32:batch=4:cached:column_prefetch");
    expect_path(make_case(layout::nxc, f32, 1, 3, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_levels_nd:f32:batch=4:cached");
    // Not for slices read run by run, nor 16-bit ones.
    expect_path(padded_diff_dst(make_case(layout::nxc, f32, 1, 8, {3, 4, 5}, {6, 8, 10}), 1),
            "interpolate:channels_last_levels_nd:f32_strided:batch=1:cached");
    expect_path(make_case(layout::nxc, bf16, 1, 8, {3, 4, 5}, {6, 8, 10}),
            "interpolate:channels_last_levels_nd:converted_ring:batch=1:cached");
}

// ---- issue 25: 16-bit downsampling, align_corners, channels-last short rows ----

// diff_src of a case on `threads` threads, from full-mantissa diff_dst
// times `scale`, after checking the path it takes.
std::vector<uint32_t> bits_on(const interp_case &c, int threads, const std::string &path, float scale = 1.f) {
    size_t n = 1;
    for (int64_t d : c.dst) n *= size_t(d);
    std::vector<float> dd = full_mantissas(n, 5), out;
    for (float &v : dd) v *= scale;
    with_default_threads(threads, [&] {
        EXPECT_EQ(compile_interp_case(c, backend_kind::tbb).get_kernel_path(), path);
        out = run_interp(c, backend_kind::tbb, dd);
    });
    return bits_of(out);
}

// f32 level-0 slices of 512 KB and more in three axes (here small slices
// under lowered thresholds): 2x linear interiors of axis 0 two at a time,
// an odd count of them included. The sums are elementwise, so the bits are
// those of the batches of four, on 1 and 3 threads.
TEST(TbbInterpolatePaths, Level0BatchTwo) {
    struct form {
        interp_case c;
        std::string four, two;
    };
    std::vector<form> forms = {
            {make_case(layout::nxc, f32, 2, 8, {3, 4, 5}, {6, 8, 10}),
                    "interpolate:channels_last_levels_nd:f32:batch=4:cached",
                    "interpolate:channels_last_levels_nd:f32:batch=2:cached:column_prefetch"},
            {make_case(layout::ncx, f32, 1, 2, {5, 16, 21}, {10, 32, 9}),
                    "interpolate:planar_rows_then_gather_nd:f32:batch=4:cached",
                    "interpolate:planar_rows_then_gather_nd:f32:batch=2:cached:column_prefetch"},
    };
    if (tbb_backend::has_avx512f()) {
        forms.push_back({make_case(layout::nxc, f32, 2, 16, {3, 4, 5}, {6, 8, 10}),
                "interpolate:channels_last_fused_runs_nd:f32:batch=4:cached",
                "interpolate:channels_last_fused_runs_nd:f32:batch=2:cached:column_prefetch"});
        forms.push_back({make_case(layout::ncx, f32, 1, 2, {5, 8, 14}, {10, 16, 28}),
                "interpolate:planar_fused_row_gather_nd:f32:batch=4:cached",
                "interpolate:planar_fused_row_gather_nd:f32:batch=2:cached:column_prefetch"});
    }
    for (const form &f : forms) {
        const std::vector<uint32_t> four = bits_on(f.c, 1, f.four);
        const lowered_thresholds lowered(9); // slices of 1 KB and more
        expect_path(f.c, f.two, 3);
        EXPECT_EQ(bits_on(f.c, 1, f.two), four) << f.c.name();
        EXPECT_EQ(bits_on(f.c, 3, f.two), four) << f.c.name();
    }
}

// 16-bit planar 2-D gradient of downsampling, a large diff_src: the rows
// narrowed in registers and streamed. Planes of 120 and 98 values start
// anywhere within a line, so both partial ends are taken. The bits are
// those of the cached store (thresholds as built) on 1 and 3 threads, for
// bf16 rounded by vcvtneps2bf16 also with denormal results.
TEST(TbbInterpolatePaths, StoreNontemporalNarrowed) {
    REQUIRE_AVX512F();
    struct form {
        dims src, dst;
        const char *mode, *coord, *levels;
        const char *pairs = ""; // each pair of rows gathered once (interp_plan::level0_pairs)
    };
    const form forms[] = {
            {{10, 12}, {5, 6}, "linear", "half_pixel", "planar_rows_then_gather_2d:converted_tile:batch=task", ":pairs"},
            {{10, 12}, {5, 6}, "linear", "align_corners", "planar_rows_then_gather_2d:converted_tile:batch=task"},
            {{10, 12}, {5, 6}, "linear", "asymmetric", "planar_rows_then_gather_2d:converted_tile:batch=task"},
            {{14, 7}, {7, 3}, "nearest", "half_pixel", "planar_rows_then_gather_2d:converted_tile:batch=task"},
            // Axis 0 downsampled, axis 1 2x upsampled: the fused stride-2 pass.
            {{16, 7}, {4, 14}, "linear", "half_pixel", "planar_fused_row_gather_2d:converted_in_registers:batch=8"},
            {{16, 7}, {4, 14}, "linear", "pytorch_half_pixel",
                    "planar_fused_row_gather_2d:converted_in_registers:batch=8"},
    };
    for (data_type dt : {bf16, f16})
        for (const form &f : forms)
            for (layout l : {layout::ncx, layout::nxc}) {
                interp_case c = make_case(l, dt, l == layout::nxc ? 9 : 3, l == layout::nxc ? 1 : 5, f.src, f.dst, f.mode);
                c.coord = f.coord;
                const std::string fused_pairs =
                        std::string(f.levels).rfind("planar_fused_row_gather_2d", 0) == 0 ? row_pairs(dt) : "";
                const std::string base = std::string("interpolate:") + f.levels;
                // bf16 rounded by vcvtneps2bf16 where the CPU has it.
                const std::string narrowed = base + (dt == bf16 && tbb_backend::has_avx512_bf16()
                                                                    ? ":nontemporal_narrowed_bf16_hw"
                                                                    : ":nontemporal_narrowed")
                        + f.pairs + fused_pairs;
                const std::vector<uint32_t> cached = bits_on(c, 3, base + ":cached" + f.pairs + fused_pairs);
                // Values down to bf16 and f32 denormals, which vcvtneps2bf16 reads as zero.
                const std::vector<uint32_t> tiny = bits_on(c, 3, base + ":cached" + f.pairs + fused_pairs, 0x1p-128f);
                const lowered_thresholds large(all_large);
                expect_path(c, narrowed, 3);
                EXPECT_EQ(bits_on(c, 1, narrowed), cached) << c.name();
                EXPECT_EQ(bits_on(c, 3, narrowed), cached) << c.name();
                if (dt == bf16) {
                    EXPECT_EQ(bits_on(c, 3, narrowed, 0x1p-128f), tiny) << c.name();
                }
            }
    const lowered_thresholds large(all_large);
    for (data_type dt : {bf16, f16}) {
        // Upsampling (diff_src smaller than diff_dst) and channels-last
        // strides stay cached.
        expect_path(make_case(layout::ncx, dt, 2, 3, {5, 6}, {10, 12}),
                "interpolate:planar_fused_row_gather_2d:converted_tile:batch=8:cached");
        expect_path(make_case(layout::ncx_channels_last, dt, 2, 3, {10, 12}, {5, 6}),
                "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached");
        // diff_src rows with gaps between them stay cached.
        interp_case gaps = make_case(layout::ncx, dt, 2, 3, {10, 12}, {5, 6});
        gaps.src_strides = padded_strides(gaps.src, 2);
        expect_path(gaps, "interpolate:planar_rows_then_gather_2d:converted_tile:batch=task:cached:pairs");
    }
}

// Channels-last levels (staged rows), the gradient of upsampling: diff_src
// smaller than diff_dst is written with ordinary stores (the stage's copy
// cost more than it saved) and level 0 prefetches nothing; the results are
// the reference's, the same bits on 1 and 3 threads. Downsampling keeps
// both.
TEST(TbbInterpolatePaths, ChannelsLastLevelsUpsamplingCached) {
    const lowered_thresholds large(all_large);
    for (const char *coord : {"align_corners", "half_pixel", "asymmetric", "pytorch_half_pixel"})
        for (layout l : {layout::nxc, layout::ncx_channels_last}) {
            interp_case c = make_case(l, f32, 2, 3, {5, 7}, {10, 14});
            c.coord = coord;
            const std::string batch = std::string(coord) == "asymmetric" ? "1" : "4"; // 2x linear interiors
            const std::string path = "interpolate:channels_last_levels_2d:f32:batch=" + batch + ":cached";
            expect_path(c, path, 3);
            EXPECT_EQ(bits_on(c, 1, path), bits_on(c, 3, path)) << c.name();
        }
    expect_path(padded_diff_dst(make_case(layout::nxc, f32, 2, 3, {5, 7}, {9, 4}), 1),
            "interpolate:channels_last_levels_2d:f32_strided:batch=1:cached");
    // 16-bit slices converted into the ring, without the prefetch too.
    for (data_type dt : {bf16, f16})
        for (layout l : {layout::nxc, layout::ncx_channels_last}) {
            interp_case c = make_case(l, dt, 2, 3, {5, 7}, {10, 14});
            c.coord = "align_corners";
            const std::string path = "interpolate:channels_last_levels_2d:converted_ring:batch=1:cached";
            expect_path(c, path, 3);
            EXPECT_EQ(bits_on(c, 1, path), bits_on(c, 3, path)) << c.name();
        }
    // Not the fused runs, which stream from the registers.
    if (tbb_backend::has_avx512f())
        expect_path(make_case(layout::nxc, f32, 2, 32, {5, 7}, {10, 14}),
                "interpolate:channels_last_fused_runs_2d:f32:batch=1:nontemporal");
}

// ---- small planes, a row per vector ----

// Small planes whose diff_dst and diff_src rows are 16 elements or fewer,
// diff_src planes smaller than diff_dst's:
// a plane at a time, four side by side. Sizes around the vector (rows of 1,
// 5, 8 and 16: two rows per vector or one, full and partial stores), every
// coordinate mode, a part-full last block of planes (201 planes), NCX and
// the planar layouts of C = 1; 1 and 3 threads.
TEST(TbbInterpolatePaths, PlanarPlaneRows2d) {
    REQUIRE_AVX512F();
    for (data_type dt : {f32, bf16, f16}) {
        const std::string rows = "interpolate:planar_plane_rows_2d:"
                + std::string(dt == f32 ? "f32" : "converted_in_registers") + ":cached" + vcvtne(dt);
        const std::string rows16x16 = rows; // 1 KB f32 planes: no next_group_prefetch
        for (int threads : {1, 3}) {
            expect_path(make_case(layout::ncx, dt, 2, 100, {7, 7}, {14, 14}), rows, threads);
            expect_path(make_case(layout::ncx, dt, 2, 100, {8, 8}, {16, 16}, "nearest"), rows16x16, threads);
        }
        expect_path(make_case(layout::ncx, dt, 2, 100, {7, 7}, {14, 14}, "nearest"), rows, 3);
        expect_path(make_case(layout::ncx, dt, 2, 100, {8, 8}, {16, 16}), rows16x16);
        expect_path(make_case(layout::ncx, dt, 1, 200, {5, 1}, {9, 4}), rows, 3);
        expect_path(make_case(layout::ncx, dt, 1, 200, {3, 5}, {6, 3}, "nearest"), rows, 3);
        expect_path(make_case(layout::ncx, dt, 1, 200, {5, 16}, {9, 16}), rows);
        expect_path(make_case(layout::nxc, dt, 201, 1, {6, 7}, {13, 14}), rows, 3);
        expect_path(make_case(layout::ncx_channels_last, dt, 201, 1, {7, 7}, {14, 14}), rows, 3);
        for (const char *coord : {"align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"}) {
            interp_case c = make_case(layout::ncx, dt, 2, 100, {7, 6}, {13, 14}, "nearest");
            c.coord = coord;
            expect_path(c, rows, 3);
            if (std::string(coord) == "tf_half_pixel_for_nn") continue; // nearest only
            c.mode = "linear";
            expect_path(c, rows, 3);
        }
    }
    // Rows over 32 (or over 16 with two diff_src rows a vector), more than
    // 8 taps per diff_src element of the inner axis, diff_src planes as
    // large as diff_dst's: 16 planes in the lanes.
    const std::string lanes = "interpolate:planar_small_planes_2d:f32:cached";
    expect_path(make_case(layout::ncx, f32, 2, 100, {14, 14}, {7, 7}), lanes + ":single_tap", 3);
    expect_path(make_case(layout::ncx, f32, 2, 100, {16, 16}, {8, 8}), lanes + ":single_tap");
    expect_path(make_case(layout::ncx, f32, 2, 100, {20, 40}, {10, 40}), lanes + ":next_group_prefetch"); // windows over 32
    expect_path(make_case(layout::ncx, f32, 2, 100, {7, 9}, {13, 17}), "interpolate:planar_plane_rows_2d:f32:cached", 3);
    expect_path(make_case(layout::ncx, f32, 2, 100, {7, 8}, {13, 17}), lanes, 3);
    expect_path(make_case(layout::ncx, f32, 2, 100, {12, 12}, {26, 34}), lanes + ":next_group_prefetch", 3);
    expect_path(make_case(layout::ncx, f32, 2, 100, {7, 2}, {14, 16}), lanes, 3);
}

// ---- small planes, a row per vector: blocks, staging, paired inputs ----

// How planar_plane_rows_2d walks its planes and reads their rows, each
// against the reference and on 1 and 3 threads with the same bits (full
// mantissas), f32, bf16 and f16:
// - 3 images of 67 channels: blocks of four planes that cross an image
//   (the plane cursor), the last block part full;
// - 2x linear, whose inner inputs of axis 0 are folded two at a time from
//   six shared rows (fold_sym4_pair), the border inputs by the table;
// - the f32 blocks read in place (with the next block prefetched) and the
//   last ones, within 16 values of diff_dst's end, staged a row per vector;
//   16-bit planes staged a row per vector, or as packed rows where a plane
//   has more rows than the stage holds vectors (80 rows);
// - NCX, and NXC and channels-last strides with C = 1 (planes a row apart).
// The paired fold and both stagings keep the row path's bits: the first 8
// planes against the same 8 planes alone.
TEST(TbbInterpolatePaths, PlanarPlaneRows2dBlocksAndStaging) {
    REQUIRE_AVX512F();
    struct shape {
        int64_t n, c;
        dims src, dst;
        const char *mode, *coord;
    };
    const shape shapes[] = {
            {3, 67, {7, 7}, {14, 14}, "linear", "half_pixel"},         // paired inputs, cursor across images
            {3, 67, {7, 7}, {14, 14}, "linear", "pytorch_half_pixel"}, // the same taps
            {1, 201, {40, 6}, {80, 12}, "linear", "half_pixel"},       // 80 rows: packed 16-bit stage
            {1, 201, {33, 5}, {66, 15}, "nearest", "asymmetric"},      // packed, single taps
            {2, 101, {4, 8}, {8, 16}, "linear", "half_pixel"},         // one diff_src row per vector
            {2, 101, {3, 3}, {6, 6}, "linear", "align_corners"},       // a plane in one vector
    };
    // diff_dst planes of 1.5 KB or more: next_group_prefetch.
    auto rows_path = [](data_type dt, const shape &s) {
        const bool prefetched = s.dst[0] * s.dst[1] * (dt == f32 ? 4 : 2) >= 1536;
        return "interpolate:planar_plane_rows_2d:" + std::string(dt == f32 ? "f32" : "converted_in_registers")
                + ":cached" + (prefetched ? ":next_group_prefetch" : "") + vcvtne(dt);
    };
    for (data_type dt : {f32, bf16, f16}) {
        for (const shape &s : shapes)
            for (layout l : {layout::ncx, layout::nxc, layout::ncx_channels_last}) {
                const std::string rows = rows_path(dt, s);
                // Planar layouts of NXC data need C = 1.
                interp_case c = l == layout::ncx ? make_case(l, dt, s.n, s.c, s.src, s.dst, s.mode)
                                                 : make_case(l, dt, s.n * s.c, 1, s.src, s.dst, s.mode);
                c.coord = s.coord;
                expect_path(c, rows, 1);
                expect_path(c, rows, 3);
                EXPECT_EQ(bits_on(c, 1, rows), bits_on(c, 3, rows)) << c.name();
            }
        for (const shape &s : shapes) {
            interp_case many = make_case(layout::ncx, dt, 1, 200, s.src, s.dst, s.mode);
            interp_case few = make_case(layout::ncx, dt, 1, 8, s.src, s.dst, s.mode);
            many.coord = few.coord = s.coord;
            SCOPED_TRACE(many.name());
            const std::string rows = rows_path(dt, s);
            const size_t dd_plane = size_t(s.dst[0] * s.dst[1]), ds_plane = size_t(s.src[0] * s.src[1]);
            const std::vector<float> dd = full_mantissas(200 * dd_plane, 7);
            std::vector<float> got, want;
            std::string few_path;
            with_default_threads(2, [&] {
                EXPECT_EQ(compile_interp_case(many, backend_kind::tbb).get_kernel_path(), rows);
                got = run_interp(many, backend_kind::tbb, dd);
                few_path = compile_interp_case(few, backend_kind::tbb).get_kernel_path();
                const std::vector<float> first8(dd.begin(), dd.begin() + long(8 * dd_plane));
                want = run_interp(few, backend_kind::tbb, first8);
            });
            EXPECT_EQ(few_path.find("plane_rows"), std::string::npos) << few_path;
            EXPECT_EQ(few_path.find("small_planes"), std::string::npos) << few_path;
            EXPECT_EQ(bits_of(got, 8 * ds_plane), bits_of(want, 8 * ds_plane));
        }
    }
}

} // namespace
} // namespace bpg::test
