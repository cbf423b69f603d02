// Every kernel path of the oneTBB BatchNormTrainingBackprop plan (bn_path.cpp):
// a case that takes it, the path the compiled partition names, and its
// results against the reference. Paths of large tensors are reached with
// the size thresholds lowered; the generic loops by generic_kernels_only.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "support/bn_case.hpp"
#include "support/bn_paths.hpp"
#include "support/default_threads.hpp"

namespace bpg::test {
namespace {

// diff_dst scaled so that some bf16 diff_src values are f32 denormals (the
// integer rounding's case): with the size knob `large`, the generic loops' bits.
void expect_denormals_rounded_as_generic(const bn_case &c, bool large, uint32_t seed) {
    const knobs tiny({"", c, large, false});
    auto in = bn_inputs(c, seed);
    for (float &x : in.at(1)) x *= 1e-38f; // diff_dst (id 1)
    const auto got = run_bn(c, backend_kind::tbb, in);
    size_t denormal = 0;
    for (auto &[id, v] : got)
        if (id == 5) // diff_src
            for (float x : v) denormal += x != 0 && std::fpclassify(x) == FP_SUBNORMAL;
    EXPECT_GT(denormal, 0u) << "no denormal diff_src to round";
    expect_same_bits(got, run_generic(c, in), "generic, denormals");
}

// The channel_groups path of the short_rows AVX-512 loops up to the store
// policy: bf16 pass 2 rounds with AVX512_BF16 where the CPU has it.
std::string short_rows_path(data_type dt) {
    const bool hw = dt == data_type::bf16 && tbb_backend::has_avx512_bf16();
    return std::string("bn:channel_groups:sums=short_rows_avx512:update=")
            + (hw ? "short_rows_bf16_avx512:" : "short_rows_avx512:");
}

// Channels-last pass-2 loops `avx512` ("wide_avx512", "register_blocks_avx512")
// as the plan names them for dt: bf16 rounds with AVX512_BF16 where the CPU has it.
std::string channels_last_update(data_type dt, const std::string &avx512) {
    if (dt != data_type::bf16 || !tbb_backend::has_avx512_bf16()) return avx512;
    return avx512.substr(0, avx512.size() - 6) + "bf16_avx512";
}

TEST(TbbBatchNormPaths, ZeroSized) {
    expect_path_taken({{"bn:zero_sized", make({0, 3, 4, 4})}, {"bn:zero_sized", make({2, 3, 0, 4}, data_type::f32, true)}});
}

TEST(TbbBatchNormPaths, UseGlobalStats) {
    expect_path_taken({
            {"bn:global_update:sums=none:update=planar:cached", global(make({2, 3, 5, 7}), false), false, true},
            {"bn:global_sums:sums=planar:update=none:cached", global(make({2, 3, 5, 7}), true), false, true},
            {"bn:global_update:sums=none:update=register_blocks:cached",
                    global(make({2, 32, 5, 7}, data_type::f32, true), false)},
            {"bn:global_sums:sums=channels_last:update=none:cached", global(make({2, 32, 5, 7}, data_type::f32, true), true)},
    });
}

TEST(TbbBatchNormPaths, UseGlobalStatsAvx512) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    expect_path_taken({
            {"bn:global_update:sums=none:update=planar_avx512:cached", global(make({2, 3, 5, 7}), false)},
            {"bn:global_sums:sums=planar_avx512:update=none:nontemporal", global(make({2, 3, 15, 17}), true), true},
            {"bn:global_sums:sums=register_blocks_avx512:update=none:nontemporal",
                    global(make({2, 32, 5, 7}, data_type::bf16, true), true), true},
            {"bn:global_update:sums=none:update=wide_avx512:cached", global(make({2, 80, 3, 5}, data_type::f16, true), false)},
    });
}

TEST(TbbBatchNormPaths, PlanarChannelTasks) {
    expect_path_taken({
            {"bn:channel_tasks:sums=planar:update=planar:cached", make({2, 8, 16, 20}), false, true},
            {"bn:channel_tasks:sums=planar:update=planar:nontemporal", make({2, 8, 16, 20}, data_type::bf16), true, true},
            {"bn:channel_tasks:sums=planar:update=planar:cached", relu(make({2, 9, 16, 20}), 0), false, true},
    });
}

TEST(TbbBatchNormPaths, PlanarChannelTasksAvx512) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    expect_path_taken({
            {"bn:channel_tasks:sums=planar:update=planar_avx512:cached", make({2, 8, 16, 20})},
            {"bn:channel_tasks:sums=planar_avx512:update=planar_avx512:cached", make({2, 8, 16, 20}, data_type::f16)},
            {"bn:channel_tasks:sums=relu_decisions_avx512:update=relu_decisions_avx512:nontemporal",
                    relu(make({2, 8, 16, 20}), 0), true},
            {"bn:channel_tasks:sums=relu_decisions_avx512:update=relu_decisions_avx512:nontemporal",
                    relu(make({2, 8, 16, 19}), 1), true},
    });
}

TEST(TbbBatchNormPaths, PlanarChannelGroups) {
    expect_path_taken({
            {"bn:channel_groups:sums=planar:update=short_rows:cached", make({2, 48, 7, 7}), false, true},
            {"bn:channel_groups:sums=planar:update=short_rows:cached", make({2, 96, 7, 7}), false, true},
            {"bn:channel_groups:sums=planar:update=short_rows:cached", relu(make({2, 256, 5, 5}), 1), false, true},
            {"bn:channel_groups:sums=planar:update=short_rows:nontemporal", relu(make({2, 40, 5, 6}, data_type::bf16), 1),
                    true, true},
    });
    if (skip_without_avx512()) return;
    expect_path_taken({
            {"bn:channel_groups:sums=short_rows_avx512:update=short_rows_avx512:cached", make({2, 48, 7, 7})},
            {"bn:channel_groups:sums=short_rows_avx512:update=short_rows_avx512:nontemporal",
                    relu(make({2, 40, 5, 6}, data_type::f16), 0), true},
    });
}

TEST(TbbBatchNormPaths, PlanarTwoSweeps) {
    expect_path_taken({
            {"bn:two_sweeps:sums=planar:update=planar:cached", make({2, 3, 9, 11}), false, true},
            {"bn:two_sweeps:sums=planar:update=planar:cached", make({2, 1, 9, 11}, data_type::bf16), false, true},
            {"bn:two_sweeps:sums=planar:update=planar:cached", relu(make({2, 5, 16, 21}, data_type::f16), 1), false, true},
            {"bn:two_sweeps:sums=planar:update=planar:cached", relu(make({2, 5, 16, 21}, data_type::bf16), 0), false, true},
    });
    if (skip_without_avx512()) return;
    expect_path_taken({
            {"bn:two_sweeps:sums=planar:update=planar_avx512:cached", make({2, 3, 9, 11})},
            {"bn:two_sweeps:sums=planar_avx512:update=planar_avx512:nontemporal", make({2, 5, 31, 33}, data_type::bf16), true},
    });
}

TEST(TbbBatchNormPaths, ChannelsLast) {
    expect_path_taken({
            {"bn:two_sweeps:sums=register_blocks:update=register_blocks:cached", make({2, 32, 5, 7}, data_type::f32, true),
                    false, true},
            {"bn:two_sweeps:sums=register_blocks:update=register_blocks:nontemporal",
                    make({2, 48, 5, 7}, data_type::f16, true), true, true},
            {"bn:two_sweeps:sums=channels_last:update=channels_last:cached", make({2, 80, 3, 5}, data_type::f32, true),
                    false, true},
            {"bn:two_sweeps:sums=narrow:update=channels_last:cached", make({2, 3, 9, 7}, data_type::bf16, true), false, true},
            {"bn:two_sweeps:sums=register_blocks:update=register_blocks:cached",
                    relu(make({2, 16, 5, 7}, data_type::f32, true), 0), false, true},
    });
}

// The generic 16-bit register blocks (their lanes as vectors of 8): every
// block count, a ReLU fused either way, use_global_stats, both dtypes.
TEST(TbbBatchNormPaths, ChannelsLast16BitRegisterBlocks) {
    const std::string both = "bn:two_sweeps:sums=register_blocks:update=register_blocks:";
    expect_path_taken({
            {both + "cached", make({2, 16, 5, 7}, data_type::bf16, true), false, true},
            {both + "cached", make({3, 32, 5, 3}, data_type::f16, true), false, true},
            {both + "nontemporal", make({2, 64, 5, 7}, data_type::bf16, true), true, true},
            {both + "cached", relu(make({2, 48, 5, 7}, data_type::bf16, true), 0), false, true},
            {both + "cached", relu(make({2, 64, 3, 7}, data_type::f16, true), 1), false, true},
            {"bn:global_update:sums=none:update=register_blocks:cached",
                    global(make({2, 32, 5, 7}, data_type::f16, true), false), false, true},
    });
}

TEST(TbbBatchNormPaths, ChannelsLastAvx512) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    expect_path_taken({
            {"bn:two_sweeps:sums=register_blocks:update=register_blocks:cached", make({2, 32, 5, 7}, data_type::f32, true)},
            {"bn:two_sweeps:sums=register_blocks:update=register_blocks_avx512:nontemporal",
                    make({2, 64, 5, 7}, data_type::f32, true), true},
            {"bn:two_sweeps:sums=register_blocks_avx512:update=" + channels_last_update(data_type::bf16, "wide_avx512")
                            + ":cached",
                    make({2, 32, 5, 7}, data_type::bf16, true)},
            {"bn:two_sweeps:sums=register_blocks_avx512:update=register_blocks_avx512:nontemporal",
                    make({2, 16, 9, 8}, data_type::f16, true), true},
            {"bn:two_sweeps:sums=wide_avx512:update=wide_avx512:cached", make({2, 80, 3, 5}, data_type::f32, true)},
            {"bn:two_sweeps:sums=wide_avx512:update=" + channels_last_update(data_type::bf16, "wide_avx512")
                            + ":nontemporal",
                    make({2, 112, 3, 5}, data_type::bf16, true), true},
            {"bn:two_sweeps:sums=narrow_avx512:update=narrow_avx512:cached", make({2, 3, 9, 7}, data_type::f32, true)},
            {"bn:two_sweeps:sums=narrow_avx512:update=narrow_avx512:nontemporal",
                    relu(make({3, 5, 17, 9}, data_type::f16, true), 1), true},
            {"bn:two_sweeps:sums=relu_mask_avx512:update=relu_mask_avx512:cached",
                    relu(make({2, 16, 5, 7}, data_type::f32, true), 0)},
            {"bn:two_sweeps:sums=relu_mask_avx512:update=relu_mask_avx512:nontemporal",
                    relu(make({2, 48, 9, 7}, data_type::f32, true), 1), true},
    });
}

// Channels-last rows of many channels: a block of channels across the rows
// at a time (wide_blocks_avx512); with rows too few to share out, pass 1's
// items are slices of the channels too (":sliced", 3 threads at compile).
// The AVX-512 cases have too many rows for channel_slabs (more than 256 f32
// rows, 512 16-bit rows, 341 with a ReLU), or under 512 channels.
TEST(TbbBatchNormPaths, ChannelsLastManyChannels) {
    const std::vector<path_case> generic {
            {"bn:two_sweeps:sums=channels_last:update=channels_last:cached:sliced", make({2, 512, 17, 17}, data_type::f32, true),
                    false, true},
            {"bn:global_sums:sums=channels_last:update=none:cached:sliced",
                    global(make({2, 600, 5, 5}, data_type::bf16, true), true), false, true},
    };
    with_default_threads(3, [&] { expect_path_taken(generic); });
    if (skip_without_avx512()) return;
    const std::vector<path_case> avx512 {
            {"bn:two_sweeps:sums=wide_avx512:update=wide_avx512:cached:sliced", make({2, 480, 5, 5}, data_type::f32, true)},
            {"bn:two_sweeps:sums=wide_avx512:update=wide_avx512:cached:sliced", make({2, 488, 5, 5}, data_type::f16, true)},
            {"bn:two_sweeps:sums=wide_blocks_avx512:update=wide_blocks_avx512:cached:sliced",
                    make({2, 2048, 129, 1}, data_type::f32, true)},
            {"bn:two_sweeps:sums=wide_blocks_avx512:update=" + channels_last_update(data_type::bf16, "wide_blocks_avx512")
                            + ":nontemporal:sliced",
                    make({2, 2048, 257, 1}, data_type::bf16, true), true},
            {"bn:two_sweeps:sums=wide_blocks_avx512:update=wide_blocks_avx512:nontemporal:sliced",
                    relu(make({2, 2080, 171, 1}, data_type::f16, true), 1), true},
            {"bn:global_sums:sums=wide_blocks_avx512:update=none:nontemporal:sliced",
                    global(make({2, 2048, 3, 1}, data_type::bf16, true), true), true},
            {"bn:global_sums:sums=wide_avx512:update=none:nontemporal:sliced",
                    global(make({2, 640, 5, 5}, data_type::f32, true), true), true},
            // (Rows 1200 bytes apart: segments off 64-byte lines.)
            {"bn:global_sums:sums=wide_avx512:update=none:cached:sliced",
                    global(make({2, 600, 5, 5}, data_type::bf16, true), true), true},
            {"bn:global_update:sums=none:update=wide_blocks_avx512:nontemporal",
                    global(make({2, 2048, 3, 1}, data_type::f32, true), false), true},
    };
    with_default_threads(3, [&] { expect_path_taken(avx512); });
}

// Channels-last training of few rows and many channels: both passes of a
// slab of channels in one task (channel_slabs), on the wide loops; slab row
// segments streamed (f32, bf16 rows on 64-byte lines) or not (bf16 rows of
// 1200 bytes), channels past the last whole vector (600), a fused ReLU.
TEST(TbbBatchNormPaths, ChannelsLastSlabs) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    const std::vector<path_case> cases {
            {"bn:channel_slabs:sums=wide_avx512:update=wide_avx512:cached", make({2, 600, 5, 5}, data_type::f32, true)},
            {"bn:channel_slabs:sums=wide_avx512:update=wide_avx512:cached", make({2, 600, 5, 5}, data_type::f16, true)},
            {"bn:channel_slabs:sums=wide_avx512:update=" + channels_last_update(data_type::bf16, "wide_avx512")
                            + ":nontemporal",
                    make({2, 600, 5, 5}, data_type::bf16, true), true},
            {"bn:channel_slabs:sums=wide_blocks_avx512:update=wide_blocks_avx512:cached",
                    make({2, 2048, 3, 1}, data_type::f32, true)},
            {"bn:channel_slabs:sums=wide_blocks_avx512:update=wide_blocks_avx512:nontemporal",
                    make({2, 2048, 3, 1}, data_type::f32, true), true},
            {"bn:channel_slabs:sums=wide_blocks_avx512:update=" + channels_last_update(data_type::bf16, "wide_blocks_avx512")
                            + ":nontemporal",
                    make({2, 2048, 3, 1}, data_type::bf16, true), true},
            {"bn:channel_slabs:sums=wide_blocks_avx512:update=wide_blocks_avx512:nontemporal",
                    relu(make({2, 2080, 3, 1}, data_type::f16, true), 1), true},
    };
    with_default_threads(3, [&] { expect_path_taken(cases); });
    // Slabs change which task sums a channel and when, not the order of its
    // sums: the same bits on 1 and 3 threads and as the generic loops'.
    uint32_t seed = 41;
    for (const path_case &pc : cases) {
        const knobs set(pc);
        SCOPED_TRACE(pc.c.name() + (pc.large ? " large" : ""));
        expect_reference_and_same_bits(pc.c, seed++);
    }
}

// The same on the generic loops (pass 2's slab row segments streamed past
// the caches from their first 16-byte boundary, when nontemporal): f32,
// 16-bit, a ReLU fused either way, channels past the last whole vector of 8,
// buffers off 64-byte lines.
TEST(TbbBatchNormPaths, ChannelsLastSlabsGeneric) {
    const std::string slabs = "bn:channel_slabs:sums=channels_last:update=channels_last:";
    bn_case misaligned = make({2, 520, 5, 5}, data_type::bf16, true);
    misaligned.misaligned = true;
    const std::vector<path_case> cases {
            {slabs + "cached", make({2, 512, 5, 5}, data_type::f32, true), false, true},
            {slabs + "nontemporal", make({2, 514, 5, 5}, data_type::f32, true), true, true},
            {slabs + "cached", relu(make({2, 600, 5, 5}, data_type::bf16, true), 0), false, true},
            {slabs + "nontemporal", misaligned, true, true},
            {slabs + "nontemporal", relu(make({2, 604, 5, 5}, data_type::f16, true), 1), true, true},
    };
    with_default_threads(3, [&] { expect_path_taken(cases); });
    uint32_t seed = 61;
    for (const path_case &pc : cases) {
        const knobs set(pc);
        SCOPED_TRACE(pc.c.name());
        expect_reference_and_same_bits(pc.c, seed++);
    }
}

// Slices and blocks change which task sums a channel and when, not the
// order of its sums: the same bits as one thread's plan of whole rows (no
// slices), and the blocks the same bits as the generic loops. (Rows too
// many for channel_slabs.)
TEST(TbbBatchNormPaths, SlicesAndBlocksKeepTheBits) {
    const std::vector<bn_case> cases {make({2, 480, 5, 5}, data_type::f32, true), make({2, 488, 5, 5}, data_type::f16, true),
            make({2, 2048, 257, 1}, data_type::bf16, true), relu(make({2, 2080, 171, 1}, data_type::f16, true), 0),
            global(make({2, 2048, 3, 1}, data_type::f32, true), true), global(make({2, 640, 5, 5}, data_type::bf16, true), true),
            // (Pass 1's blocks of 4096 whole and in part at one thread.)
            make({2, 8224, 129, 1}, data_type::f32, true), make({2, 8224, 257, 1}, data_type::bf16, true)};
    uint32_t seed = 7;
    for (const bool large : {false, true})
    for (const bn_case &c : cases) {
        SCOPED_TRACE(c.name() + (large ? " large" : ""));
        const knobs streamed({"", c, large, false});
        const auto in = bn_inputs(c, seed++);
        outputs sliced, whole;
        with_default_threads(3, [&] {
            EXPECT_NE(compile_bn_case(c, backend_kind::tbb).get_kernel_path().find(":sliced"), std::string::npos);
            sliced = run_bn(c, backend_kind::tbb, in);
        });
        with_default_threads(1, [&] {
            EXPECT_EQ(compile_bn_case(c, backend_kind::tbb).get_kernel_path().find(":sliced"), std::string::npos);
            whole = run_bn(c, backend_kind::tbb, in);
        });
        expect_same_bits(sliced, whole, "one thread, whole rows");
        expect_same_bits(sliced, run_generic(c, in), "generic");
    }
}

// Statistics read and written in order (offset k for channel k: plain
// arrays) and at strided offsets (gathered): the same bits, each schedule's
// per-channel steps, f32 and bf16 statistics, training and use_global_stats.
TEST(TbbBatchNormPaths, StridedStatisticsKeepTheBits) {
    std::vector<bn_case> cases {make({2, 40, 5, 5}), make({2, 2048, 3, 1}, data_type::f32, true),
            make({128, 16, 7, 7}, data_type::bf16), global(make({3, 64, 4, 4}, data_type::f32, true), true),
            global(make({2, 48, 6, 6}), false)};
    bn_case bf16_stats = make({2, 24, 5, 5}, data_type::bf16, true);
    bf16_stats.stat_dt = data_type::bf16;
    cases.push_back(bf16_stats);
    uint32_t seed = 31;
    for (const bn_case &dense : cases) {
        bn_case strided = dense;
        strided.stat_strides = {3};
        SCOPED_TRACE(strided.name());
        const auto in = bn_inputs(dense, seed++);
        outputs want, got;
        with_default_threads(3, [&] {
            want = run_bn(dense, backend_kind::tbb, in);
            got = run_bn(strided, backend_kind::tbb, in);
        });
        expect_same_bits(got, want, "dense statistics");
        expect_bn_close(got, run_bn(strided, backend_kind::ref, in), strided);
    }
}

// Each NCX shape in every dtype, without a ReLU and with one fused either
// way: the cached short_rows_avx512 path taken, against the reference, with
// the generic loops' bits, the same bits on 1 and 3 threads.
void expect_cached_short_rows(const std::vector<dims> &shapes, uint32_t seed) {
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
        for (const dims &ncx : shapes)
            for (int into : {-1, 0, 1}) {
                bn_case c = make(ncx, dt);
                c.relu = into;
                SCOPED_TRACE(c.name());
                EXPECT_EQ(compile_bn_case(c, backend_kind::tbb).get_kernel_path(), short_rows_path(dt) + "cached");
                expect_reference_and_same_bits(c, seed++);
            }
}

// The short_rows_avx512 loops on every kind of row end: pass 1 adds a row's
// last B % 16 elements by one overlapping load (tails of 1, 14 and 15
// elements), none (B % 16 == 0), or lane by lane (B < 16), and sums the
// lanes of up to 16 rows at once (groups of 3 channels, of 16, and a last
// group of 4). Each against the reference, with the generic loops' bits, and
// the same bits on 1 and 3 threads; inputs with full mantissas, so that a
// changed order of additions shows.
TEST(TbbBatchNormPaths, ShortRowsEveryRowEndAvx512) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    const std::vector<dims> shapes = {{2, 48, 7, 7}, {3, 48, 5, 6}, {2, 48, 9, 7}, {2, 48, 4, 4}, {2, 48, 3, 3},
            {2, 260, 7, 7}, {1, 260, 4, 8}};
    expect_cached_short_rows(shapes, 11);
}

// Pass 2 of the short_rows_avx512 loops on the edges of a group's run:
// streamed (thresholds lowered), the elements before the run's first line
// boundary (0 to 31, by the row) and after its last whole vector by masked
// vector stores; runs under 16 elements (groups of 2 or 3 rows of 5) one by
// one; runs without a whole line after their head not streamed. The same
// bits as the cached run and as the generic loops, and the reference's values.
TEST(TbbBatchNormPaths, ShortRowsStreamedRunEdgesAvx512) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    const std::vector<dims> shapes = {{3, 48, 7, 7}, {3, 48, 5, 6}, {20, 48, 3, 3}, {2, 260, 7, 7}, {40, 32, 1, 5},
            {30, 48, 1, 5}, {5, 64, 3, 5}};
    uint32_t seed = 41;
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
        for (const dims &ncx : shapes)
            for (int into : {-1, 1}) {
                bn_case c = make(ncx, dt);
                c.relu = into;
                SCOPED_TRACE(c.name());
                auto in = bn_inputs(c, seed++);
                widen_mantissas(in);
                const auto cached = run_bn(c, backend_kind::tbb, in);
                tbb_backend::test_size_threshold_shift() = 12;
                EXPECT_EQ(compile_bn_case(c, backend_kind::tbb).get_kernel_path(), short_rows_path(dt) + "nontemporal");
                const auto streamed = run_bn(c, backend_kind::tbb, in);
                const auto generic = run_generic(c, in);
                tbb_backend::test_size_threshold_shift() = 0;
                expect_bn_close(streamed, run_bn(c, backend_kind::ref, in), c);
                expect_same_bits(streamed, cached, "cached");
                expect_same_bits(streamed, generic, "generic");
            }
}

// The bf16 pass 2 of short_rows_bf16_avx512 (vcvtneps2bf16; cached: pairs of
// vectors by vcvtne2ps2bf16, runs of an odd count of vectors) on diff_src
// values around the smallest normals, some denormal in f32 (gamma tiny):
// the instruction reads those as zero, so their vectors take the integer
// rounding. The same bits as the generic loops, cached and streamed, on 1
// and 3 threads; and the case does make denormals.
TEST(TbbBatchNormPaths, ShortRowsBf16HardwareRoundingKeepsTheBits) {
    if (!tbb_backend::has_avx512_bf16()) GTEST_SKIP() << "no AVX512_BF16 on this CPU";
    uint32_t seed = 71;
    for (const dims &ncx : {dims {4, 48, 7, 7}, dims {3, 260, 5, 6}})
        for (int shift : {0, 12}) {
            bn_case c = make(ncx, data_type::bf16);
            SCOPED_TRACE(c.name() + " threshold shift " + std::to_string(shift));
            tbb_backend::test_size_threshold_shift() = shift;
            EXPECT_EQ(compile_bn_case(c, backend_kind::tbb).get_kernel_path(),
                    short_rows_path(c.dt) + (shift ? "nontemporal" : "cached"));
            auto in = bn_inputs(c, seed++);
            for (float &g : in.at(4)) g *= 1e-37f;
            outputs one, three;
            with_default_threads(1, [&] { one = run_bn(c, backend_kind::tbb, in); });
            with_default_threads(3, [&] { three = run_bn(c, backend_kind::tbb, in); });
            const auto generic = run_generic(c, in);
            tbb_backend::test_size_threshold_shift() = 0;
            int denormals = 0;
            for (float v : one.at(5)) denormals += v != 0 && std::fabs(v) < std::numeric_limits<float>::min();
            EXPECT_GT(denormals, 0);
            expect_same_bits(one, three, "3 threads");
            expect_same_bits(one, generic, "generic");
        }
}

} // namespace
} // namespace bpg::test

namespace bpg::test {
namespace {

// Channels-last pass 2 with bf16 rounded by AVX512_BF16 (register_blocks_bf16_avx512,
// wide_bf16_avx512): streamed (thresholds lowered), cached, and not streamed
// for a misaligned diff_src, rows of an even
// and an odd count of vectors, channel tails (K % 16), fused ReLU either way,
// use_global_stats. Each against the reference, with the generic loops' bits
// (the integer rounding), and the same bits on 1 and 3 threads; f32 and f16
// keep their loops. Inputs with full mantissas.
TEST(TbbBatchNormPaths, ChannelsLastBf16HardwareRounding) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    struct shape_case {
        dims ncx;
        bool large;
        std::string sums, update;
        bool misaligned = false;
        const char *tail = ""; // rows of 512 bytes: pass 1 prefetches them (bn_plan::row_prefetch)
    };
    const std::vector<shape_case> shapes = {
            {{2, 64, 9, 8}, true, "register_blocks_avx512", "register_blocks_avx512"},
            {{3, 48, 5, 7}, true, "register_blocks_avx512", "register_blocks_avx512"},
            // (Not streamed at execute: the wide loops write it.)
            {{2, 64, 9, 8}, true, "register_blocks_avx512", "register_blocks_avx512", true},
            {{2, 32, 5, 7}, false, "register_blocks_avx512", "wide_avx512"},
            {{2, 112, 3, 5}, true, "wide_avx512", "wide_avx512"},
            {{2, 120, 3, 5}, false, "wide_avx512", "wide_avx512"},
            {{40, 256, 7, 7}, true, "wide_avx512", "wide_avx512", false, ":row_prefetch"},
    };
    uint32_t seed = 91;
    for (data_type dt : {data_type::bf16, data_type::f32, data_type::f16})
        for (const shape_case &sc : shapes)
            for (int into : {-1, 0, 1}) {
                bn_case c = relu(make(sc.ncx, dt, true), into);
                c.misaligned = sc.misaligned;
                const knobs set({"", c, sc.large, false});
                SCOPED_TRACE(c.name() + (sc.large ? " large" : ""));
                const std::string path = compile_bn_case(c, backend_kind::tbb).get_kernel_path();
                if (dt == data_type::bf16)
                    EXPECT_EQ(path, "bn:two_sweeps:sums=" + sc.sums + ":update=" + channels_last_update(dt, sc.update) + ":"
                                    + (sc.large ? "nontemporal" : "cached") + sc.tail);
                else EXPECT_EQ(path.find("bf16"), std::string::npos);
                expect_reference_and_same_bits(c, seed++);
            }
}

// Pass 1 of the wide loops on whole channels-last rows of 512 bytes and up
// in large tensors prefetches each row's vectors ahead (bn_plan::
// row_prefetch): the bits of the generic loops and of 1 thread on 3, every
// dtype, the ReLU fused either way (where the wide loops take it), rows of
// whole vectors and with a tail; not below 512 bytes, not in tensors that
// stay in the cache, not for use_global_stats (its pass 1 writes diff_src
// row by row).
TEST(TbbBatchNormPaths, ChannelsLastRowPrefetch) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    uint32_t seed = 171;
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16}) {
        const int64_t per_line = 64 / int64_t(size_of(dt)); // channels of 64 bytes
        for (int64_t k : {8 * per_line, 8 * per_line + 3, 8 * per_line - 16})
            for (int into : {-1, 0, 1}) {
                // 1024 rows: four chunks of rows, whole rows a task on 2 threads.
                const bn_case c = relu(make({16, k, 8, 8}, dt, true), into);
                SCOPED_TRACE(c.name());
                std::string path, small;
                with_default_threads(2, [&] { small = compile_bn_case(c, backend_kind::tbb).get_kernel_path(); });
                EXPECT_EQ(small.find("row_prefetch"), std::string::npos) << small;
                const knobs large({"", c, true, false});
                with_default_threads(2, [&] { path = compile_bn_case(c, backend_kind::tbb).get_kernel_path(); });
                const bool wide = path.find(":sums=wide_avx512:") != std::string::npos;
                EXPECT_TRUE(wide || into >= 0) << path;
                const bool wide_rows = wide && k * int64_t(size_of(dt)) >= 512;
                EXPECT_EQ(path.size() >= 13 && path.compare(path.size() - 13, 13, ":row_prefetch") == 0, wide_rows)
                        << path;
                expect_reference_and_same_bits(c, seed++);
            }
        const bn_case g = global(make({16, 8 * per_line, 8, 8}, dt, true), true);
        const knobs large({"", g, true, false});
        EXPECT_EQ(compile_bn_case(g, backend_kind::tbb).get_kernel_path().find("row_prefetch"), std::string::npos);
    }
}

// use_global_stats' pass 2 takes the same loops; diff_src values that are
// f32 denormals (diff_dst scaled down), which vcvtne2ps2bf16 would read as
// zero, keep the integer rounding's bits.
TEST(TbbBatchNormPaths, ChannelsLastBf16HardwareRoundingGlobalAndDenormals) {
    if (skip_without_avx512() || !tbb_backend::has_avx512_bf16()) GTEST_SKIP() << "no AVX512_BF16 on this CPU";
    uint32_t seed = 131;
    for (const bool large : {false, true}) {
        const bn_case g = global(make({2, 64, 9, 8}, data_type::bf16, true), false);
        const knobs set({"", g, large, false});
        EXPECT_EQ(compile_bn_case(g, backend_kind::tbb).get_kernel_path(),
                std::string("bn:global_update:sums=none:update=")
                        + (large ? "register_blocks_bf16_avx512:nontemporal" : "wide_bf16_avx512:cached"));
        auto in = bn_inputs(g, seed++);
        widen_mantissas(in);
        expect_bn_close(run_bn(g, backend_kind::tbb, in), run_bn(g, backend_kind::ref, in), g);
        expect_same_bits(run_bn(g, backend_kind::tbb, in), run_generic(g, in), "generic");
        for (const dims &ncx : {dims {2, 64, 9, 8}, dims {2, 112, 3, 5}}) {
            const bn_case c = make(ncx, data_type::bf16, true);
            SCOPED_TRACE(c.name() + (large ? " large" : ""));
            expect_denormals_rounded_as_generic(c, large, seed++);
        }
    }
}

// Channels-last bf16 pass 2 in blocks of channels rounded by AVX512_BF16
// (wide_blocks_bf16_avx512): streamed, cached, not streamed for a misaligned
// diff_src, a short last block (2080 channels: 1024, 1024, 32), fused ReLU either way,
// use_global_stats, and diff_src values that are f32 denormals (the integer
// rounding's bits). Against the reference, with the generic loops' bits, the
// same bits on 1 and 3 threads; f32 (but with a fused ReLU: relu_mask_avx512)
// and f16 keep wide_blocks_avx512.
TEST(TbbBatchNormPaths, ChannelsLastBlocksBf16HardwareRounding) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    uint32_t seed = 211;
    for (data_type dt : {data_type::bf16, data_type::f32, data_type::f16})
        for (const bool large : {false, true})
            for (const bool misaligned : {false, true})
                for (const int64_t k : {2048, 2080})
                    for (int into : {-1, 0, 1, 2}) { // (2: use_global_stats)
                        if (dt == data_type::f32 && (into == 0 || into == 1)) continue; // (relu_mask_avx512)
                        bn_case c = into == 2 ? global(make({3, k, 2, 1}, dt, true), false)
                                              : relu(make({3, k, 2, 1}, dt, true), into);
                        c.misaligned = misaligned;
                        const knobs set({"", c, large, false});
                        SCOPED_TRACE(c.name() + (large ? " large" : ""));
                        const std::string path = compile_bn_case(c, backend_kind::tbb).get_kernel_path();
                        EXPECT_NE(path.find(":update=" + channels_last_update(dt, "wide_blocks_avx512") + ":"),
                                std::string::npos)
                                << path;
                        expect_reference_and_same_bits(c, seed++);
                    }
    if (!tbb_backend::has_avx512_bf16()) return;
    for (const bool large : {false, true}) {
        const bn_case c = make({3, 2048, 2, 1}, data_type::bf16, true);
        SCOPED_TRACE(c.name() + (large ? " large" : ""));
        expect_denormals_rounded_as_generic(c, large, seed++);
    }
}

// Pass 1 of short_rows_avx512 on rows of 1 to 3 whole vectors and a tail of
// 1 to 4 elements (17, 18, 35, 36, 49 and 52 elements): the row loop
// unrolled, the tail added to the transposed columns, element j of row i
// from the 16 elements that put it in lane i, read inside the row, into the
// group's next row, or (a group's last row, when those 16 would pass its
// end) alone: groups of 16 with a last group of 4 (260 channels) and of 2
// (40 channels). Each with a fused ReLU either way, against the reference,
// with the generic loops' bits, the same bits on 1 and 3 threads.
// (use_global_stats sums with other loops: global_sums.)
TEST(TbbBatchNormPaths, ShortRowsTailColumnsAvx512) {
    if (skip_without_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
    const std::vector<dims> shapes = {{1, 260, 1, 17}, {1, 260, 3, 6}, {1, 260, 5, 7}, {1, 260, 6, 6}, {2, 260, 7, 7},
            {1, 260, 4, 13}, {2, 40, 7, 7}, {3, 40, 2, 9}};
    expect_cached_short_rows(shapes, 171);
}

} // namespace
} // namespace bpg::test
