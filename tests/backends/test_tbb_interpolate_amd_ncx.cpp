// Planar (NCX) 16-bit level-0 loads and their prefetch (issue 25, AMD Zen 4):
// the 16-bit rows converted into the tile prefetch a few lines per step as
// they are converted, and planar 3-D slices converted into the ring prefetch
// (":ring_prefetch") from ring_prefetch_min_bytes of diff_dst. A prefetch
// changes no result: each path gives the reference's result, the same bits
// on 1 and 3 threads, and the bits of the same path without the prefetch.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/interpolate_plan.hpp"
#include "backends/tbb/row_gather.hpp"
#include "backends/tbb/row_sum_gather.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "support/axis_cases.hpp"
#include "support/default_threads.hpp"
#include "support/interp_case.hpp"
#include "support/problem_builders.hpp"

namespace bpg::test {
namespace {

struct lowered_thresholds {
    explicit lowered_thresholds(int shift) { tbb_backend::test_size_threshold_shift() = shift; }
    ~lowered_thresholds() { tbb_backend::test_size_threshold_shift() = 0; }
};

// Planar: NCX, or NXC with C = 1 (its planes a row apart).
interp_case planar_case(data_type dt, bool nxc, const dims &src, const dims &dst, const char *mode = "linear") {
    interp_case k;
    k.mode = mode;
    k.dt = dt;
    k.nxc = nxc;
    const int64_t n = 2, c = nxc ? 1 : 3;
    auto full = [&](const dims &sp) {
        dims d {n};
        if (!nxc) d.push_back(c);
        d.insert(d.end(), sp.begin(), sp.end());
        if (nxc) d.push_back(c);
        return d;
    };
    k.src = full(src);
    k.dst = full(dst);
    return k;
}

// The case on `threads` threads takes `path` and gives the reference's
// result; returns its bits.
std::vector<uint32_t> bits_on(const interp_case &c, int threads, const std::string &path) {
    SCOPED_TRACE(c.name() + " on " + std::to_string(threads) + " threads");
    std::vector<float> got;
    with_default_threads(threads, [&] {
        EXPECT_EQ(compile_interp_case(c, backend_kind::tbb).get_kernel_path(), path);
        const std::vector<float> dd = diff_dst_values(c, 29);
        got = run_interp(c, backend_kind::tbb, dd);
        expect_interp_close(got, run_interp(c, backend_kind::ref, dd), c.dt, c.name());
    });
    return bits_of(got);
}

// The suffix of bf16 paths narrowed by vcvtneps2bf16, where the CPU has it.
std::string vcvtne(data_type dt) {
    return dt == data_type::bf16 && tbb_backend::has_avx512_bf16() ? ":bf16_vcvtne" : "";
}

// A 3-D or 4-D case: spatial shapes, mode and the levels the plan names.
struct nd_shape {
    dims src, dst;
    const char *mode;
    const char *levels;
};

TEST(TbbInterpolateAmdNcx, RingPrefetchNd) {
    // Fused rows (2x linear innermost) and rows then gather; 3-D and 4-D.
    const nd_shape shapes[] = {
            {{3, 4, 5}, {6, 8, 10}, "linear", "planar_fused_row_gather_nd"},
            {{3, 9, 40}, {6, 18, 80}, "linear", "planar_fused_row_gather_nd"},
            {{3, 4, 7}, {5, 6, 3}, "linear", "planar_rows_then_gather_nd"},
            {{2, 3, 2, 5}, {3, 5, 3, 9}, "linear", "planar_rows_then_gather_nd"},
            {{3, 5, 37}, {5, 9, 70}, "nearest", "planar_rows_then_gather_nd"},
    };
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (bool nxc : {false, true})
            for (const nd_shape &s : shapes) {
                const interp_case c = planar_case(dt, nxc, s.src, s.dst, s.mode);
                std::string path = std::string("interpolate:") + s.levels + ":converted_ring:batch=1:cached";
                if (std::string(s.levels) == "planar_fused_row_gather_nd" && !tbb_backend::has_avx512f())
                    path = "interpolate:planar_rows_then_gather_nd:converted_ring:batch=1:cached";
                const std::vector<uint32_t> plain = bits_on(c, 1, path);
                const lowered_thresholds large(16);
                const std::string prefetched = path + ":ring_prefetch";
                const std::vector<uint32_t> one = bits_on(c, 1, prefetched);
                EXPECT_EQ(one, plain) << c.name();
                EXPECT_EQ(one, bits_on(c, 3, prefetched)) << c.name();
            }
    // f32 slices are read in place: no ring, no ring prefetch.
    const lowered_thresholds large(16);
    const interp_case c = planar_case(data_type::f32, false, {3, 4, 7}, {5, 6, 3});
    with_default_threads(1, [&] {
        const std::string path = compile_interp_case(c, backend_kind::tbb).get_kernel_path();
        EXPECT_EQ(path.find("ring_prefetch"), std::string::npos) << path;
    });
}

// Rows of the converted tile long enough for several prefetch steps of 512
// bytes and a tail (2-D: prefetch_ahead_bytes, at any size), and long 2x
// rows fused in registers, in pairs, prefetched as they go.
TEST(TbbInterpolateAmdNcx, TileLoadLongRows) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (bool nxc : {false, true}) {
            const std::string fused =
                    "interpolate:planar_fused_row_gather_2d:converted_in_registers:batch=8:cached:row_pairs";
            const interp_case a = planar_case(dt, nxc, {9, 300}, {18, 600});
            EXPECT_EQ(bits_on(a, 1, fused), bits_on(a, 3, fused)) << a.name();
            const std::string rows = "interpolate:planar_rows_then_gather_2d:converted_tile:batch=16:cached";
            const interp_case b = planar_case(dt, nxc, {9, 301}, {14, 450});
            EXPECT_EQ(bits_on(b, 1, rows), bits_on(b, 3, rows)) << b.name();
        }
}

// 16-bit 2x nearest rows fused in registers, in pairs: prefetched from
// row_pairs16_prefetch_min_bytes of diff_dst (AMD Zen 5), the same bits as
// without; weighted pairs of align_corners, none of them 2x interiors, never.
TEST(TbbInterpolateAmdNcx, NearestRowPairsPrefetchFromASize) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    auto prefetch_of = [](const interp_case &c, core::interp_mode mode, kernels::coord_mode coord) {
        const core::interpolate_bwd_problem p = make_interp_problem(mode, coord,
                kernels::nearest_rounding::round_prefer_ceil, c.nxc ? layout::nxc : layout::ncx, c.src, c.dst, c.dt);
        tbb_backend::interp_plan plan;
        EXPECT_EQ(tbb_backend::make_interp_plan(p, plan), "");
        return plan.prefetch_bytes0;
    };
    const std::string path = "interpolate:planar_fused_row_gather_2d:converted_in_registers:batch=8:cached:row_pairs";
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (bool nxc : {false, true}) {
            const interp_case c = planar_case(dt, nxc, {9, 300}, {18, 600}, "nearest");
            // (An even count of rows: no input in the middle of the weights' symmetry.)
            interp_case corners = planar_case(dt, nxc, {10, 300}, {20, 600});
            corners.coord = "align_corners";
            const auto nearest = core::interp_mode::nearest;
            const auto half_pixel = kernels::coord_mode::half_pixel;
            EXPECT_EQ(prefetch_of(c, nearest, half_pixel), 0) << c.name();
            const std::vector<uint32_t> plain = bits_on(c, 1, path);
            const lowered_thresholds large(16);
            EXPECT_EQ(prefetch_of(c, nearest, half_pixel), tbb_backend::row_pairs16_prefetch_bytes) << c.name();
            EXPECT_EQ(prefetch_of(corners, core::interp_mode::linear, kernels::coord_mode::align_corners), 0);
            const std::vector<uint32_t> prefetched = bits_on(c, 1, path);
            EXPECT_EQ(prefetched, plain) << c.name();
            EXPECT_EQ(prefetched, bits_on(c, 3, path)) << c.name();
        }
}

// Planar 2-D 16-bit rows then gather: planes whose f32 rows of diff_dst and
// diff_src pass tile_task_max_bytes go 16 inputs at a time (batch=16), with
// a last batch of fewer; smaller planes and f32 keep the whole task. Every
// coordinate mode, nearest, downsampling (also streamed), tasks cutting
// planes (N = 1, 3 threads).
TEST(TbbInterpolateAmdNcx, RowsThenGatherBatch16) {
    const std::string sixteen = "interpolate:planar_rows_then_gather_2d:converted_tile:batch=16:";
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (bool nxc : {false, true}) {
            for (const char *coord : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"}) {
                interp_case a = planar_case(dt, nxc, {37, 40}, {55, 60});
                a.coord = coord;
                EXPECT_EQ(bits_on(a, 1, sixteen + "cached"), bits_on(a, 3, sixteen + "cached")) << a.name();
            }
            const interp_case b = planar_case(dt, nxc, {40, 42}, {67, 71}, "nearest");
            EXPECT_EQ(bits_on(b, 1, sixteen + "cached"), bits_on(b, 3, sixteen + "cached")) << b.name();
            interp_case c = planar_case(dt, nxc, {140, 64}, {70, 32});
            c.src[0] = c.dst[0] = 1;
            EXPECT_EQ(bits_on(c, 1, sixteen + "cached:pairs"), bits_on(c, 3, sixteen + "cached:pairs")) << c.name();
            {
                const lowered_thresholds large(16);
                const std::string streamed = sixteen + (dt == data_type::bf16 && tbb_backend::has_avx512_bf16()
                                                                 ? "nontemporal_narrowed_bf16_hw"
                                                                 : "nontemporal_narrowed");
                const interp_case d = planar_case(dt, nxc, {140, 64}, {70, 32});
                if (tbb_backend::has_avx512f()) {
                    EXPECT_EQ(bits_on(d, 1, streamed + ":pairs"), bits_on(d, 3, streamed + ":pairs")) << d.name();
                }
            }
            // A plane whose rows fit stays one batch.
            bits_on(planar_case(dt, nxc, {10, 12}, {15, 18}), 1,
                    "interpolate:planar_rows_then_gather_2d:converted_tile:batch=task:cached");
        }
    bits_on(planar_case(data_type::f32, false, {37, 40}, {55, 60}), 1,
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:cached");
}

// 3-D and 4-D slices of whole vectors: fused rows, rows then gather, nearest.
std::vector<nd_shape> slices_in_registers_shapes() {
    return {{{3, 24, 24}, {6, 48, 48}, "linear", "planar_fused_row_gather_nd"},
            {{4, 32, 32}, {8, 64, 64}, "nearest", "planar_fused_row_gather_nd"},
            {{3, 30, 40}, {5, 48, 64}, "linear", "planar_rows_then_gather_nd"},
            {{2, 3, 24, 24}, {3, 5, 48, 48}, "linear", "planar_fused_row_gather_nd"}};
}

// Planar 3-D and up, 16-bit slices of whole vectors whose f32 ring would
// pass ring_in_l1_max_bytes: level 0 widens diff_dst in registers, and gives
// the bits of the generic loops (no AVX-512: the ring; 3-D fused rows only,
// the generic loops of the others have bits of their own; the same-bits
// scripts compare those with the previous build); smaller slices keep
// the ring. Fused rows and rows then gather, nearest, NCX and NXC with C = 1.
TEST(TbbInterpolateAmdNcx, SlicesInRegistersNd) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    const std::vector<nd_shape> shapes = slices_in_registers_shapes();
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (bool nxc : {false, true})
            for (const nd_shape &s : shapes) {
                const interp_case c = planar_case(dt, nxc, s.src, s.dst, s.mode);
                const std::string path = std::string("interpolate:") + s.levels + ":converted_in_registers:batch=1:cached";
                const std::vector<uint32_t> one = bits_on(c, 1, path);
                EXPECT_EQ(one, bits_on(c, 3, path)) << c.name();
                if (std::string(s.levels) != "planar_fused_row_gather_nd" || s.src.size() != 3) continue;
                tbb_backend::generic_kernels_only() = true;
                const std::string ring = "interpolate:planar_rows_then_gather_nd:converted_ring:batch=1:cached";
                EXPECT_EQ(one, bits_on(c, 1, ring)) << c.name();
                tbb_backend::generic_kernels_only() = false;
            }
    // Slices whose ring fits, or not of whole vectors: the ring.
    for (data_type dt : {data_type::bf16, data_type::f16}) {
        bits_on(planar_case(dt, false, {3, 8, 8}, {6, 16, 16}), 1,
                "interpolate:planar_fused_row_gather_nd:converted_ring:batch=1:cached");
        bits_on(planar_case(dt, false, {3, 25, 25}, {6, 50, 50}), 1,
                "interpolate:planar_fused_row_gather_nd:converted_ring:batch=1:cached");
    }
}

// One axis, rows read in registers: long rows gathered and narrowed 64
// blocks (1024 inputs) at a time; rows of several such chunks and a partial
// last block, whole rows per task and rows cut into tasks (N = 1: 3 threads
// split each row at other points than the chunks).
TEST(TbbInterpolateAmdNcx, RowBlocks1dLongRows) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (bool nxc : {false, true}) {
            const std::string path = "interpolate:planar_row_blocks_1d:converted_in_registers:cached" + vcvtne(dt);
            const interp_case a = planar_case(dt, nxc, {2500}, {5000});
            EXPECT_EQ(bits_on(a, 1, path), bits_on(a, 3, path)) << a.name();
            interp_case b = planar_case(dt, nxc, {3000}, {6000}, "nearest");
            b.src[0] = b.dst[0] = 1;
            EXPECT_EQ(bits_on(b, 1, path), bits_on(b, 3, path)) << b.name();
            interp_case c = planar_case(dt, nxc, {1100}, {2200});
            c.coord = "pytorch_half_pixel";
            EXPECT_EQ(bits_on(c, 1, path), bits_on(c, 3, path)) << c.name();
        }
}

// Planar 2-D f32 rows then gather, the gradient of a non-integer
// upsampling whose diff_src is at least a third of diff_dst, past
// interp_nontemporal_min_bytes: the plane staged and streamed out
// (":nontemporal"), the bits of the cached store on 1 and 3 threads. Below a
// third (3x), planes cut into tasks (N = 1 on 3 threads), the fused 2x rows
// and 16-bit keep their stores.
TEST(TbbInterpolateAmdNcx, RowsThenGatherStagedUpsampling) {
    const std::string rows = "interpolate:planar_rows_then_gather_2d:f32:batch=task:";
    for (bool nxc : {false, true})
        for (const char *coord : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"}) {
            for (auto [src, dst] : {std::pair<dims, dims> {{28, 28}, {42, 42}}, {{37, 40}, {55, 60}}}) {
                interp_case c = planar_case(data_type::f32, nxc, src, dst);
                c.coord = coord;
                c.src[0] = c.dst[0] = 32; // a task per plane on 3 threads too
                const std::vector<uint32_t> cached = bits_on(c, 1, rows + "cached");
                const lowered_thresholds large(16);
                EXPECT_EQ(cached, bits_on(c, 1, rows + "nontemporal")) << c.name();
                EXPECT_EQ(cached, bits_on(c, 3, rows + "nontemporal")) << c.name();
            }
        }
    const lowered_thresholds large(16);
    bits_on(planar_case(data_type::f32, false, {20, 20}, {60, 60}), 1, rows + "cached");
    bits_on(planar_case(data_type::f32, false, {20, 20}, {60, 60}, "nearest"), 1, rows + "cached");
    interp_case one = planar_case(data_type::f32, false, {28, 28}, {42, 42});
    one.src[0] = one.dst[0] = 1;
    bits_on(one, 3, rows + "cached");
    if (tbb_backend::has_avx512f()) {
        bits_on(planar_case(data_type::f32, false, {28, 28}, {56, 56}), 1,
                "interpolate:planar_fused_row_gather_2d:f32:batch=8:cached");
        bits_on(planar_case(data_type::bf16, false, {28, 28}, {42, 42}), 1,
                "interpolate:planar_rows_then_gather_2d:converted_tile:batch=task:cached");
    }
}

// Planar 2-D 16-bit rows then gather, 2x linear downsampling (inputs 2k
// and 2k + 1 have the same taps): each pair's row gathered once (":pairs"),
// batches of 16 and whole tasks, an odd number of rows, cached and streamed
// stores; the reference's result and the same bits on 1 and 3 threads.
// Planes cut into tasks (N = 1, 3 threads) split at even inputs; other
// ratios and f32 keep every row.
TEST(TbbInterpolateAmdNcx, RowsThenGatherPairs) {
    const std::string rows = "interpolate:planar_rows_then_gather_2d:converted_tile:";
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (bool nxc : {false, true})
            for (const char *coord : {"half_pixel", "pytorch_half_pixel"}) {
                interp_case a = planar_case(dt, nxc, {140, 64}, {70, 32});
                a.coord = coord;
                a.src[0] = a.dst[0] = 32; // a task per plane on 3 threads too
                EXPECT_EQ(bits_on(a, 1, rows + "batch=16:cached:pairs"), bits_on(a, 3, rows + "batch=16:cached:pairs"))
                        << a.name();
                interp_case b = planar_case(dt, nxc, {30, 66}, {15, 33});
                b.coord = coord;
                b.src[0] = b.dst[0] = 32;
                EXPECT_EQ(bits_on(b, 1, rows + "batch=task:cached:pairs"), bits_on(b, 3, rows + "batch=task:cached:pairs"))
                        << b.name();
                if (!tbb_backend::has_avx512f()) continue;
                const lowered_thresholds large(16);
                const std::string streamed = dt == data_type::bf16 && tbb_backend::has_avx512_bf16()
                        ? "nontemporal_narrowed_bf16_hw"
                        : "nontemporal_narrowed";
                EXPECT_EQ(bits_on(a, 1, rows + "batch=16:" + streamed + ":pairs"),
                        bits_on(a, 3, rows + "batch=16:" + streamed + ":pairs"))
                        << a.name();
            }
    for (int64_t in0 : {140, 30, 62}) {
        interp_case cut = planar_case(data_type::bf16, false, {in0, 64}, {in0 / 2, 32});
        cut.src[0] = cut.dst[0] = 1;
        const std::string path = rows + (in0 == 140 ? "batch=16" : "batch=task") + ":cached:pairs";
        EXPECT_EQ(bits_on(cut, 1, path), bits_on(cut, 3, path)) << cut.name();
    }
    bits_on(planar_case(data_type::bf16, false, {141, 64}, {70, 32}), 1, rows + "batch=16:cached");
    bits_on(planar_case(data_type::f32, false, {140, 64}, {70, 32}), 1,
            "interpolate:planar_rows_then_gather_2d:f32:batch=task:cached");
}

// The fused rows take neighbouring inputs two at a time (row_stride2_pair:
// 2x linear interiors, and align_corners' taps of their own weights; f32
// rows, and 16-bit rows with `pairs`): the bits of the same inputs in
// batches of 1 and 3 (pairs cut at every other point), f32 rows and bf16
// and f16 rows of the same values with and without pairs, every axis-1
// length of the form (tails masked).
TEST(TbbInterpolateAmdNcx, FusedRowPairsBits) {
    for (kernels::coord_mode mode : {kernels::coord_mode::half_pixel, kernels::coord_mode::align_corners}) {
        const kernels::axis_gather g0 = axis_case {20, 40, mode, false, kernels::nearest_rounding::round_prefer_ceil}.gather();
        const tbb_backend::grouped_axis a = tbb_backend::group_axis(g0);
        std::mt19937 rng(3);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        for (int64_t in1 : {7, 16, 33, 56, 64}) {
            const kernels::axis_gather g = axis_case {in1, 2 * in1, kernels::coord_mode::half_pixel, false,
                    kernels::nearest_rounding::round_prefer_ceil}.gather();
            const tbb_backend::row_gather_table t = tbb_backend::make_row_gather(g);
            if (!tbb_backend::row_sum_gather_available(t)) GTEST_SKIP() << "needs AVX-512";
            // bf16, f16 and f32 rows of the same values (multiples of 2^-10
            // under 1 in magnitude: exact in both 16-bit types).
            std::vector<float> src(size_t(40 * g.out));
            std::vector<tbb_backend::bf16_t> src16(src.size());
            std::vector<tbb_backend::f16_t> src_f16(src.size());
            for (size_t k = 0; k < src.size(); ++k) {
                const float v = std::round(u(rng) * 128.f) / 1024.f;
                src16[k] = tbb_backend::from_f32<tbb_backend::bf16_t>(v);
                src_f16[k] = tbb_backend::from_f32<tbb_backend::f16_t>(v);
                src[k] = v;
                ASSERT_EQ(tbb_backend::to_f32(src16[k]), v);
                ASSERT_EQ(tbb_backend::to_f32(src_f16[k]), v);
            }
            std::vector<const float *> x(8);
            std::vector<float> row(size_t(g.out) + 16), conv(size_t(4 * g.out) + 16);
            enum rows_kind { f32_rows, bf16_rows, bf16_row_pairs, f16_rows, f16_row_pairs };
            auto run = [&](int64_t step, rows_kind kind) {
                std::vector<float> out(size_t(20 * g.in));
                for (int64_t i = 0; i < 20; i += step) {
                    const int64_t n = std::min<int64_t>(step, 20 - i);
                    float *o = out.data() + i * g.in;
                    if (kind == bf16_rows || kind == bf16_row_pairs)
                        tbb_backend::sum_gather_rows(a, i, n, x.data(),
                                tbb_backend::rows_of<tbb_backend::bf16_t> {src16.data(), g.out}, t, g, o, g.in,
                                row.data(), conv.data(), 0, kind == bf16_row_pairs);
                    else if (kind != f32_rows)
                        tbb_backend::sum_gather_rows(a, i, n, x.data(),
                                tbb_backend::rows_of<tbb_backend::f16_t> {src_f16.data(), g.out}, t, g, o, g.in,
                                row.data(), conv.data(), 0, kind == f16_row_pairs);
                    else
                        tbb_backend::sum_gather_rows(a, i, n, x.data(), tbb_backend::row_source {src.data(), g.out}, t, g,
                                o, g.in, row.data());
                }
                return out;
            };
            const std::vector<float> all = run(20, f32_rows);
            for (rows_kind kind : {f32_rows, bf16_rows, bf16_row_pairs, f16_rows, f16_row_pairs})
                for (int64_t step : {20, 1, 3}) {
                    const std::vector<float> cut = run(step, kind);
                    EXPECT_EQ(std::memcmp(all.data(), cut.data(), all.size() * sizeof(float)), 0)
                            << "in1 " << in1 << " step " << step << " rows " << int(kind) << " mode " << int(mode);
                }
        }
    }
}

// The slot gather's window form (row_gather_table::block_window: one load
// of 32 outputs per row for all of a block's slots) gives the bits of the
// slots' own loads, on every axis case of the slot form, rows of any length
// (windows inside the row and at its end), whole and streamed stores; the
// non-integer upsamplings of the suite have it in every block.
TEST(TbbInterpolateAmdNcx, GatherWindowFormBits) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    int windows = 0;
    std::vector<axis_case> all = axis_cases({1, 7, 16, 17, 33, 56, 100});
    for (int64_t in : {56, 224, 37})
        for (int64_t out : {int64_t(84), int64_t(299), int64_t(55), 3 * in / 2 + 1})
            all.push_back({in, out, kernels::coord_mode::half_pixel, false, kernels::nearest_rounding::round_prefer_ceil});
    for (const axis_case &c : all) {
        const kernels::axis_gather g = c.gather();
        tbb_backend::row_gather_table with = tbb_backend::make_row_gather(g);
        if (with.stride2) continue; // the stride-2 form runs instead
        with.stride2 = false;
        tbb_backend::row_gather_table without = with;
        std::fill(without.block_window.begin(), without.block_window.end(), -1);
        for (int64_t w : with.block_window) windows += w >= 0;
        const int64_t nrows = 5, stride = c.out + 3;
        std::vector<float> src(size_t(nrows * stride));
        for (float &x : src) x = u(rng);
        for (bool stream : {false, true}) {
            std::vector<float> a(size_t(nrows * c.in) + 16), b(a.size());
            tbb_backend::gather_rows(with, g, src.data(), stride, a.data(), c.in, nrows, stream);
            tbb_backend::gather_rows(without, g, src.data(), stride, b.data(), c.in, nrows, stream);
            EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
                    << "in " << c.in << " out " << c.out << " mode " << int(c.mode) << " nearest " << c.nearest;
        }
    }
    EXPECT_GT(windows, 100);
    for (auto [in, out] : {std::pair<int64_t, int64_t> {56, 84}, {224, 299}}) {
        const tbb_backend::row_gather_table t = tbb_backend::make_row_gather(
                axis_case {in, out, kernels::coord_mode::half_pixel, false, kernels::nearest_rounding::round_prefer_ceil}
                        .gather());
        for (int64_t w : t.block_window) EXPECT_GE(w, 0) << in << " -> " << out;
    }
}

// The tile's 16-bit rows widened 16 lanes at a time (widen_lanes) give
// row_io's values bit for bit, over every 16-bit pattern, for row lengths
// with every tail of 0 to 15 and a start off the line, with and without the
// prefetch; nothing is written past the row.
template <typename T> void expect_widen_lanes_bits() {
    std::vector<T> in(65536 + 64);
    for (size_t i = 0; i < in.size(); ++i) in[i] = T {uint16_t(i * 40503u)}; // every pattern
    for (int64_t start : {0, 3})
        for (int64_t n : {int64_t(65536), int64_t(65521), int64_t(48), int64_t(37), int64_t(9), int64_t(1)})
            for (int64_t ahead : {0, 4096}) {
                std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n) + 1, 7.f);
                tbb_backend::row_io<T>::load(in.data() + start, want.data(), n);
                tbb_backend::widen_lanes(in.data() + start, got.data(), n, ahead);
                EXPECT_EQ(got[size_t(n)], 7.f) << "wrote past the row";
                ASSERT_EQ(std::memcmp(want.data(), got.data(), size_t(n) * sizeof(float)), 0) << n << " " << start;
            }
}

TEST(TbbInterpolateAmdNcx, WidenLanesBits) {
    if (!tbb_backend::widen_lanes_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
    expect_widen_lanes_bits<tbb_backend::bf16_t>();
    expect_widen_lanes_bits<tbb_backend::f16_t>();
}

// bf16 rows of one axis narrowed by vcvtneps2bf16 (interp_plan::
// bf16_vcvtne): denormal results, which the instruction reads as zero, keep
// the integer rounding's bits through the formula; the generic loops round
// every value by the formula. Every third row is scaled into the denormals,
// and rows of 37 leave vectors with lanes of both kinds.
TEST(TbbInterpolateAmdNcx, RowBlocks1dBf16DenormalsKeepTheBits) {
    if (!tbb_backend::has_avx512_bf16()) GTEST_SKIP() << "needs AVX512_BF16";
    for (const dims &shape : {dims {37, 74}, dims {2500, 5000}}) {
        interp_case c = planar_case(data_type::bf16, false, {shape[0]}, {shape[1]});
        SCOPED_TRACE(c.name());
        const size_t row = size_t(shape[1]);
        std::vector<float> dd = full_mantissas(size_t(2 * 3) * row, 31);
        for (size_t i = 0; i < dd.size(); ++i)
            if (i / row % 3 == 0 || (i / 16) % 5 == 0) dd[i] *= 1e-38f;
        std::vector<float> got;
        with_default_threads(2, [&] {
            const std::string path = compile_interp_case(c, backend_kind::tbb).get_kernel_path();
            EXPECT_EQ(path, "interpolate:planar_row_blocks_1d:converted_in_registers:cached:bf16_vcvtne");
            got = run_interp(c, backend_kind::tbb, dd);
        });
        size_t denormals = 0;
        for (uint32_t b : bits_of(got)) denormals += (b & 0x7f800000u) == 0 && (b & 0x007fffffu) != 0;
        EXPECT_GT(denormals, got.size() / 8);
        tbb_backend::generic_kernels_only() = true; // the generic loops: no AVX-512 pass
        with_default_threads(2, [&] { EXPECT_EQ(bits_of(got), bits_of(run_interp(c, backend_kind::tbb, dd))); });
        tbb_backend::generic_kernels_only() = false;
    }
}

// Planar 16-bit slices of 3-D and up widened in registers, from
// fused_runs_prefetch_min_bytes of diff_dst: level 0 sums each input's slice
// level0_chunk_floats at a time, each chunk after the prefetch of the same
// columns of the slices new to the next input (interp_plan::
// level0_chunk_floats; the path name does not change). The bits of the
// whole-slice sum (default thresholds) and of 3 threads; slices of 2304
// floats end in a partial chunk.
TEST(TbbInterpolateAmdNcx, SlicesInRegistersChunkedNd) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "needs AVX-512";
    const std::vector<nd_shape> shapes = slices_in_registers_shapes();
    auto chunk_of = [](const interp_case &c) {
        const core::interpolate_bwd_problem p = make_interp_problem(core::interp_mode::linear,
                kernels::coord_mode::half_pixel, kernels::nearest_rounding::round_prefer_ceil,
                c.nxc ? layout::nxc : layout::ncx, c.src, c.dst, c.dt);
        tbb_backend::interp_plan plan;
        EXPECT_EQ(tbb_backend::make_interp_plan(p, plan), "");
        return plan.level0_chunk_floats;
    };
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (bool nxc : {false, true})
            for (const nd_shape &s : shapes) {
                const interp_case c = planar_case(dt, nxc, s.src, s.dst, s.mode);
                const std::string path = std::string("interpolate:") + s.levels + ":converted_in_registers:batch=1:cached";
                EXPECT_EQ(chunk_of(c), 0) << c.name();
                const std::vector<uint32_t> whole = bits_on(c, 1, path);
                const lowered_thresholds large(16);
                EXPECT_EQ(chunk_of(c), tbb_backend::level0_chunk_floats) << c.name();
                const std::vector<uint32_t> chunked = bits_on(c, 1, path);
                EXPECT_EQ(chunked, whole) << c.name();
                EXPECT_EQ(chunked, bits_on(c, 3, path)) << c.name();
            }
}

} // namespace
} // namespace bpg::test
