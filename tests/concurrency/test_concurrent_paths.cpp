// Every kernel path of the tbb backend executed from several threads at once,
// each run giving the bits of a sequential run on the same tensors. The
// size thresholds are lowered (test_size_threshold_shift) so that tensors of
// a few KB take the paths of large ones: streamed stores from the registers
// and through the per-thread stage buffers, column prefetch. The shapes pick
// the other paths: planar and vector interpolation, few planes split into
// blocks, the reorder copies of mixed layouts, 16-bit conversions; BN planar
// per channel and in channel groups (short rows), channels-last register
// blocks, wide and narrow rows (bf16 rounded in hardware), use_global_stats,
// the fused ReLU (decisions kept as bits); ReLUBackprop alone. Each case
// also on the generic loops a CPU without AVX-512 runs. In the plain, ASan
// and TSan suites.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "support/bn_case.hpp"
#include "support/concurrent_runs.hpp"
#include "support/interp_case.hpp"
#include "support/small_partitions.hpp"

namespace bpg::test {
namespace {

constexpr int threads = 6;
constexpr int runs_per_thread = 30;
constexpr int threshold_shift = 12; // 16 MB -> 4 KB, 8 MB -> 2 KB, 64 KB -> 16 B

struct path_case {
    std::string name;
    std::function<compiled_partition()> compile;
};

class lowered_thresholds {
public:
    lowered_thresholds() { tbb_backend::test_size_threshold_shift() = threshold_shift; }
    ~lowered_thresholds() { tbb_backend::test_size_threshold_shift() = 0; }
};

// The loops a CPU without AVX-512 runs, for the whole test.
class generic_loops {
public:
    generic_loops() { tbb_backend::generic_kernels_only() = true; }
    ~generic_loops() { tbb_backend::generic_kernels_only() = false; }
};

void expect_concurrent_runs_match_sequential(const path_case &c) {
    const lowered_thresholds lowered;
    const compiled_partition cp = c.compile();
    ASSERT_EQ(cp.get_backend(), backend_kind::tbb);
    SCOPED_TRACE(cp.describe());
    expect_concurrent_runs_give_sequential_bits(cp, threads, runs_per_thread, 200);
}

class ConcurrentPaths : public ::testing::TestWithParam<path_case> {};

TEST_P(ConcurrentPaths, EveryRunGivesTheSequentialBits) { expect_concurrent_runs_match_sequential(GetParam()); }

TEST_P(ConcurrentPaths, EveryRunOfTheGenericLoopsGivesTheSequentialBits) {
    const generic_loops generic;
    expect_concurrent_runs_match_sequential(GetParam());
}

path_case interp(std::string name, dims src, dims dst, const std::string &mode, data_type dt = data_type::f32,
        bool nxc = false) {
    interp_case c;
    c.mode = mode;
    c.src = std::move(src);
    c.dst = std::move(dst);
    c.dt = dt;
    c.nxc = nxc;
    return {std::move(name), [c] { return compile_interp_case(c, backend_kind::tbb); }};
}

// NCX shapes, diff_dst dense and diff_src channels-last: no axis has stride 1
// in both, so tbb copies one of them to a dense layout around the kernel.
path_case interp_mixed(std::string name, dims src, dims dst) {
    interp_case c;
    c.src = src;
    c.dst = dst;
    c.src_strides = layout_strides(src, true);
    c.dst_strides = layout_strides(dst, false);
    return {std::move(name), [c] { return compile_interp_case(c, backend_kind::tbb); }};
}

path_case bn(std::string name, dims shape, bool nxc, data_type dt = data_type::f32, bool global = false, int relu = -1,
        bool three_outputs = true) {
    bn_case c;
    c.three_outputs = three_outputs;
    c.shape = shape;
    c.stat_shape = {nxc ? shape.back() : shape[1]};
    c.nxc = nxc;
    c.dt = dt;
    c.global_stats = global;
    c.relu = relu;
    return {std::move(name), [c] { return compile_bn_case(c, backend_kind::tbb); }};
}

path_case relu(std::string name, dims shape) {
    return {std::move(name), [shape] {
                op o(0, op::kind::ReLUBackprop,
                        {logical_tensor(0, data_type::f32, shape), logical_tensor(1, data_type::f32, shape)},
                        {logical_tensor(2, data_type::f32, shape)});
                graph g;
                g.add_op(o);
                g.finalize();
                const partition p = g.get_partitions().at(0);
                compile_options opts;
                opts.backend = backend_kind::tbb;
                return p.compile(p.get_input_ports(), p.get_output_ports(), engine(), opts);
            }};
}

INSTANTIATE_TEST_SUITE_P(Tbb, ConcurrentPaths,
        ::testing::Values(
                // Interpolate: planar NCX (stride-2 rows, three planes split into blocks).
                interp("interp_ncx_2x", {1, 3, 8, 8}, {1, 3, 16, 16}, "linear"),
                // Downsampling: diff_src as large as diff_dst's planes, streamed.
                interp("interp_ncx_down", {2, 3, 16, 16}, {2, 3, 8, 8}, "linear"),
                interp("interp_ncx_fraction", {2, 4, 6, 7}, {2, 4, 11, 13}, "linear"),
                interp("interp_ncx_nearest", {2, 4, 6, 7}, {2, 4, 11, 13}, "nearest"),
                interp("interp_ncx_1d", {2, 4, 9}, {2, 4, 17}, "linear"),
                interp("interp_ncx_3d", {1, 2, 4, 6, 6}, {1, 2, 8, 12, 12}, "linear"),
                // Vector mode (NXC): fused runs, streamed whole vectors.
                interp("interp_nxc_2x", {2, 8, 8, 16}, {2, 16, 16, 16}, "linear", data_type::f32, true),
                interp("interp_nxc_3d", {1, 4, 4, 4, 16}, {1, 8, 8, 8, 16}, "linear", data_type::f32, true),
                interp("interp_nxc_nearest", {1, 5, 6, 24}, {1, 9, 11, 24}, "nearest", data_type::f32, true),
                interp("interp_ncx_bf16", {2, 4, 8, 8}, {2, 4, 16, 16}, "linear", data_type::bf16),
                interp("interp_nxc_f16", {2, 6, 6, 16}, {2, 12, 12, 16}, "linear", data_type::f16, true),
                interp("interp_ncx_3d_f16", {1, 2, 4, 4, 4}, {1, 2, 8, 8, 8}, "linear", data_type::f16),
                interp_mixed("interp_mixed_layouts", {2, 8, 6, 6}, {2, 8, 12, 12}),
                // Many small planes (AVX-512): rows of up to 16 a row per
                // vector, longer ones 16 planes at once in the vector lanes.
                interp("interp_ncx_small_planes", {8, 64, 7, 7}, {8, 64, 14, 14}, "linear"),
                interp("interp_ncx_small_planes_lanes", {8, 64, 14, 14}, {8, 64, 28, 28}, "linear"),
                interp("interp_ncx_small_planes_f16", {8, 65, 14, 14}, {8, 65, 7, 7}, "nearest", data_type::f16),
                // 16-bit read and written in registers (docs/interpolate-16bit.md).
                interp("interp_nxc_down_bf16", {2, 12, 12, 32}, {2, 6, 6, 32}, "linear", data_type::bf16, true),
                interp("interp_nxc_1d_f16", {2, 20, 32}, {2, 40, 32}, "linear", data_type::f16, true),
                interp("interp_ncx_nearest_bf16", {2, 4, 6, 20}, {2, 4, 13, 40}, "nearest", data_type::bf16),
                interp("interp_ncx_1d_f16", {2, 4, 40}, {2, 4, 80}, "linear", data_type::f16),
                // 16-bit downsampling gradients streamed, narrowed in registers
                // (docs/interpolate-stores-prefetch.md).
                interp("interp_ncx_down_bf16", {2, 3, 16, 16}, {2, 3, 8, 8}, "linear", data_type::bf16),
                interp("interp_ncx_down_f16", {2, 3, 16, 16}, {2, 3, 8, 8}, "linear", data_type::f16),
                // BatchNorm: planar per channel (rows of 1 KB and more), in
                // channel groups (short rows), with few channels (generic schedule).
                bn("bn_ncx_per_channel", {2, 8, 16, 32}, false),
                bn("bn_ncx_short_rows", {4, 32, 7, 7}, false),
                bn("bn_ncx_few_channels", {4, 3, 16, 16}, false),
                bn("bn_nxc_blocks", {4, 8, 8, 32}, true),
                bn("bn_nxc_any_channels", {4, 6, 6, 40}, true),
                bn("bn_nxc_narrow", {4, 16, 16, 3}, true),
                bn("bn_ncx_global", {2, 8, 16, 32}, false, data_type::f32, true),
                bn("bn_nxc_global", {4, 8, 8, 32}, true, data_type::f32, true),
                bn("bn_ncx_global_diff_src_only", {2, 8, 16, 32}, false, data_type::f32, true, -1, false),
                bn("bn_nxc_global_narrow_bf16", {4, 16, 16, 5}, true, data_type::bf16, true),
                bn("bn_ncx_relu", {2, 8, 16, 32}, false, data_type::f32, false, 1),
                bn("bn_ncx_relu_short_rows", {4, 32, 7, 7}, false, data_type::f32, false, 1),
                bn("bn_nxc_relu", {4, 8, 8, 32}, true, data_type::f32, false, 1),
                bn("bn_nxc_relu_into_src", {4, 8, 8, 32}, true, data_type::f32, false, 0),
                bn("bn_ncx_bf16", {2, 8, 16, 32}, false, data_type::bf16),
                bn("bn_ncx_f16_short_rows", {4, 32, 7, 7}, false, data_type::f16),
                bn("bn_ncx_bf16_short_rows_relu", {4, 32, 7, 7}, false, data_type::bf16, false, 1),
                bn("bn_nxc_bf16", {4, 8, 8, 32}, true, data_type::bf16),
                bn("bn_nxc_bf16_wide", {4, 6, 6, 112}, true, data_type::bf16),
                bn("bn_nxc_f16_narrow", {4, 16, 16, 5}, true, data_type::f16),
                relu("relu_alone", {2, 8, 16, 16})),
        [](const ::testing::TestParamInfo<path_case> &info) { return info.param.name; });

} // namespace
} // namespace bpg::test
