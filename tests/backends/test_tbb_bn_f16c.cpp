// The f16c instances of the generic BN loops (path ":f16c": f16 on CPUs
// with AVX2 and F16C, the generic loops; AVX-512 CPUs reach them with
// generic_kernels_only): every loop they convert 8 lanes in, each schedule,
// both layouts, a ReLU fused either way, use_global_stats, cached and
// nontemporal, runs with a tail past the last 8 lanes. Each against the
// reference, the same bits on 1 and 3 threads, and the bits of the integer
// conversions' loops.
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

bool f16c_here() { return tbb_backend::has_avx2() && tbb_backend::f16c_available(); }

void expect_f16c_paths(const std::vector<path_case> &cases, uint32_t seed) {
    for (const path_case &pc : cases) {
        const knobs set(pc);
        SCOPED_TRACE(pc.c.name() + (pc.large ? " large" : ""));
        with_default_threads(3, [&] {
            EXPECT_EQ(compile_bn_case(pc.c, backend_kind::tbb).get_kernel_path(), pc.path + ":f16c");
        });
        expect_reference_and_same_bits(pc.c, seed++);
    }
}

const data_type f16 = data_type::f16;

TEST(TbbBatchNormF16c, Planar) {
    if (!f16c_here()) GTEST_SKIP() << "no AVX2 and F16C on this CPU";
    expect_f16c_paths({
            {"bn:two_sweeps:sums=planar:update=planar:cached", make({2, 3, 9, 11}, f16), false, true},
            {"bn:two_sweeps:sums=planar:update=planar:cached", relu(make({2, 5, 16, 21}, f16), 0), false, true},
            {"bn:two_sweeps:sums=planar:update=planar:nontemporal", relu(make({2, 5, 31, 33}, f16), 1), true, true},
            {"bn:channel_tasks:sums=planar:update=planar:cached", make({2, 8, 16, 20}, f16), false, true},
            {"bn:channel_tasks:sums=planar:update=planar:nontemporal", relu(make({2, 9, 17, 23}, f16), 1), true, true},
            {"bn:global_update:sums=none:update=planar:cached", global(make({2, 3, 5, 7}, f16), false), false, true},
            {"bn:global_sums:sums=planar:update=none:nontemporal", global(make({2, 3, 15, 17}, f16), true), true, true},
            {"bn:global_sums:sums=planar:update=none:cached", relu(global(make({2, 4, 9, 9}, f16), true), 0), false, true},
    }, 100);
}

TEST(TbbBatchNormF16c, ShortRows) {
    if (!f16c_here()) GTEST_SKIP() << "no AVX2 and F16C on this CPU";
    expect_f16c_paths({
            {"bn:channel_groups:sums=planar:update=short_rows:cached", make({2, 48, 7, 7}, f16), false, true},
            {"bn:channel_groups:sums=planar:update=short_rows:nontemporal", relu(make({2, 40, 5, 6}, f16), 0), true, true},
            {"bn:channel_groups:sums=planar:update=short_rows:cached", relu(make({3, 32, 3, 5}, f16), 1), false, true},
    }, 200);
}

TEST(TbbBatchNormF16c, ChannelsLast) {
    if (!f16c_here()) GTEST_SKIP() << "no AVX2 and F16C on this CPU";
    const std::string blocks = "bn:two_sweeps:sums=register_blocks:update=register_blocks:";
    expect_f16c_paths({
            {blocks + "cached", make({2, 16, 5, 7}, f16, true), false, true},
            {blocks + "cached", relu(make({3, 32, 5, 3}, f16, true), 0), false, true},
            {blocks + "nontemporal", relu(make({2, 48, 5, 7}, f16, true), 1), true, true},
            {blocks + "nontemporal", make({2, 64, 5, 7}, f16, true), true, true},
            {"bn:global_update:sums=none:update=register_blocks:cached", global(make({2, 32, 5, 7}, f16, true), false),
                    false, true},
            // Rows of channels past the register blocks, 8 lanes at a time and a tail.
            {"bn:two_sweeps:sums=channels_last:update=channels_last:cached", make({2, 83, 3, 5}, f16, true), false, true},
            {"bn:two_sweeps:sums=channels_last:update=channels_last:nontemporal", relu(make({2, 88, 3, 5}, f16, true), 0),
                    true, true},
            {"bn:two_sweeps:sums=channels_last:update=channels_last:cached:sliced", relu(make({2, 600, 17, 17}, f16, true), 1),
                    false, true},
            {"bn:channel_slabs:sums=channels_last:update=channels_last:nontemporal",
                    relu(make({2, 600, 5, 5}, f16, true), 0), true, true},
            {"bn:global_sums:sums=channels_last:update=none:cached", global(make({2, 36, 5, 5}, f16, true), true), false,
                    true},
            {"bn:global_sums:sums=channels_last:update=none:cached:sliced", global(make({2, 600, 5, 5}, f16, true), true),
                    false, true},
            {"bn:two_sweeps:sums=narrow:update=channels_last:cached", make({2, 3, 9, 7}, f16, true), false, true},
    }, 300);
}

} // namespace
} // namespace bpg::test
