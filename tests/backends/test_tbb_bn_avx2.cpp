// The AVX2 instances of the generic 16-bit BN loops (path ":avx2": bf16 and
// f16 on CPUs with AVX2 and F16C, the generic loops; AVX-512 CPUs reach them
// with generic_kernels_only): every loop they convert 8 lanes in, each
// schedule, both layouts, a ReLU fused either way, use_global_stats, cached
// and nontemporal, runs with a tail past the last 8 lanes. Each against the
// reference, the same bits on 1 and 3 threads, and the bits of the
// target_clones loops; inputs with NaN, infinities and denormal results
// rounded as those loops round them.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/cpu.hpp"
#include "support/bn_case.hpp"
#include "support/bn_paths.hpp"
#include "support/default_threads.hpp"

namespace bpg::test {
namespace {

bool avx2_here() { return tbb_backend::has_avx2() && tbb_backend::f16c_available(); }

// Each case in bf16 and f16 (the case's dtype replaced).
void expect_avx2_paths(std::vector<path_case> cases, uint32_t seed) {
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (path_case pc : cases) {
            pc.c.dt = dt;
            const knobs set(pc);
            SCOPED_TRACE(pc.c.name() + (pc.large ? " large" : ""));
            with_default_threads(3, [&] {
                EXPECT_EQ(compile_bn_case(pc.c, backend_kind::tbb).get_kernel_path(), pc.path + ":avx2");
            });
            expect_reference_and_same_bits(pc.c, seed++);
        }
}

const data_type h = data_type::f16; // (each case runs in bf16 too)

TEST(TbbBatchNormAvx2, Planar) {
    if (!avx2_here()) GTEST_SKIP() << "no AVX2 and F16C on this CPU";
    expect_avx2_paths({
            {"bn:two_sweeps:sums=planar:update=planar:cached", make({2, 3, 9, 11}, h), false, true},
            {"bn:two_sweeps:sums=planar:update=planar:cached", relu(make({2, 5, 16, 21}, h), 0), false, true},
            {"bn:two_sweeps:sums=planar:update=planar:nontemporal", relu(make({2, 5, 31, 33}, h), 1), true, true},
            {"bn:channel_tasks:sums=planar:update=planar:cached", make({2, 8, 16, 20}, h), false, true},
            {"bn:channel_tasks:sums=planar:update=planar:nontemporal", relu(make({2, 9, 17, 23}, h), 1), true, true},
            {"bn:global_update:sums=none:update=planar:cached", global(make({2, 3, 5, 7}, h), false), false, true},
            {"bn:global_sums:sums=planar:update=none:nontemporal", global(make({2, 3, 15, 17}, h), true), true, true},
            {"bn:global_sums:sums=planar:update=none:cached", relu(global(make({2, 4, 9, 9}, h), true), 0), false, true},
    }, 100);
}

TEST(TbbBatchNormAvx2, ShortRows) {
    if (!avx2_here()) GTEST_SKIP() << "no AVX2 and F16C on this CPU";
    expect_avx2_paths({
            {"bn:channel_groups:sums=planar:update=short_rows:cached", make({2, 48, 7, 7}, h), false, true},
            {"bn:channel_groups:sums=planar:update=short_rows:nontemporal", relu(make({2, 40, 5, 6}, h), 0), true, true},
            {"bn:channel_groups:sums=planar:update=short_rows:cached", relu(make({3, 32, 3, 5}, h), 1), false, true},
            // Groups of 6 and 16 channels (pass 1's lanes summed 4 rows at a time).
            {"bn:channel_groups:sums=planar:update=short_rows:cached", make({2, 96, 7, 7}, h), false, true},
            {"bn:channel_groups:sums=planar:update=short_rows:cached", relu(make({2, 256, 5, 5}, h), 0), false, true},
    }, 200);
}

TEST(TbbBatchNormAvx2, ChannelsLast) {
    if (!avx2_here()) GTEST_SKIP() << "no AVX2 and F16C on this CPU";
    const std::string blocks = "bn:two_sweeps:sums=register_blocks:update=register_blocks:";
    expect_avx2_paths({
            {blocks + "cached", make({2, 16, 5, 7}, h, true), false, true},
            {blocks + "cached", relu(make({3, 32, 5, 3}, h, true), 0), false, true},
            {blocks + "nontemporal", relu(make({2, 48, 5, 7}, h, true), 1), true, true},
            {blocks + "nontemporal", make({2, 64, 5, 7}, h, true), true, true},
            {"bn:global_update:sums=none:update=register_blocks:cached", global(make({2, 32, 5, 7}, h, true), false),
                    false, true},
            // Rows of channels past the register blocks, 8 lanes at a time and a tail.
            {"bn:two_sweeps:sums=channels_last:update=channels_last:cached", make({2, 83, 3, 5}, h, true), false, true},
            {"bn:two_sweeps:sums=channels_last:update=channels_last:nontemporal", relu(make({2, 88, 3, 5}, h, true), 0),
                    true, true},
            {"bn:two_sweeps:sums=channels_last:update=channels_last:cached:sliced", relu(make({2, 600, 17, 17}, h, true), 1),
                    false, true},
            {"bn:channel_slabs:sums=channels_last:update=channels_last:nontemporal",
                    relu(make({2, 600, 5, 5}, h, true), 0), true, true},
            {"bn:global_sums:sums=channels_last:update=none:cached", global(make({2, 36, 5, 5}, h, true), true), false,
                    true},
            {"bn:global_sums:sums=channels_last:update=none:cached:sliced", global(make({2, 600, 5, 5}, h, true), true),
                    false, true},
            {"bn:two_sweeps:sums=narrow:update=channels_last:cached", make({2, 3, 9, 7}, h, true), false, true},
    }, 300);
}

// Inputs that reach every branch of the conversions: NaN (quiet, with
// payloads) and infinities in diff_dst, and diff_dst scaled down so that
// diff_src holds 16-bit denormals and values that round to zero: the bits of
// the target_clones loops on every loop the AVX2 instances convert in.
TEST(TbbBatchNormAvx2, SpecialValuesRoundAsTheClones) {
    if (!avx2_here()) GTEST_SKIP() << "no AVX2 and F16C on this CPU";
    const std::vector<path_case> cases {
            {"", make({2, 3, 9, 11}, h), false, true},          {"", make({2, 48, 7, 7}, h), true, true},
            {"", make({2, 64, 5, 7}, h, true), true, true},     {"", make({2, 83, 3, 5}, h, true), false, true},
            {"", make({2, 600, 5, 5}, h, true), true, true},    {"", global(make({2, 36, 5, 5}, h, true), false), false, true},
    };
    uint32_t seed = 400;
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (path_case pc : cases) {
            pc.c.dt = dt;
            const knobs set(pc);
            SCOPED_TRACE(pc.c.name() + (pc.large ? " large" : ""));
            for (const float scale : {1.f, 1e-6f, 1e-38f}) {
                auto in = bn_inputs(pc.c, seed++);
                std::vector<float> &dd = in.at(1);
                for (float &x : dd) x *= scale;
                dd[dd.size() / 3] = std::numeric_limits<float>::quiet_NaN();
                dd[dd.size() / 2] = std::numeric_limits<float>::infinity();
                dd[dd.size() - 1] = -std::numeric_limits<float>::infinity();
                expect_same_bits(run_generic(pc.c, in), run_generic(pc.c, in, true), "target_clones");
            }
        }
}

} // namespace
} // namespace bpg::test
