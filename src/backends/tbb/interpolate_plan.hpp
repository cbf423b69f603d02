// How the oneTBB InterpolateBackprop kernel walks a problem, decided once at
// compile: the math (per-axis gather tables from kernels/interp_tables.hpp)
// apart from the schedule (layout mode, levels, task split).
//
// The kernel sees each tensor as planes of spatial positions. Two layouts run
// without a copy:
//   vector mode  C has stride 1 in both tensors: a position is a run of C
//                floats (NXC, or NCX data with channels-last strides);
//                planes are the N images.
//   planar mode  the innermost spatial axis has stride 1 in both tensors:
//                a run is a row (NCX); planes are the N*C images.
// Other strides are refused here (the partition then runs elsewhere).
//
// Separable, outermost axis first: level k (k < last) accumulates, for one
// input index of axis k, the slices of the outputs that read it into a dense
// f32 scratch (axes k+1.. still at output resolution); the last level gathers
// the innermost axis and writes diff_src. Each diff_src element is summed by
// one task, its taps in an order the tables alone fix (tap_sum.hpp for the
// levels, row_gather.hpp for the planar rows): no atomics, and the same bits
// for any split of the work, hence for any number of threads.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/problems.hpp"
#include "backends/tbb/row_gather.hpp"
#include "backends/tbb/tap_sum.hpp"
#include "kernels/interp_tables.hpp"

namespace bpg::tbb_backend {

struct interp_plan {
    // N or C is 0 (spatial sizes are >= 1): diff_src is empty, nothing runs
    // and nothing below is filled.
    bool empty = false;
    data_type dt = data_type::f32;
    bool vector_mode = false;
    int nsp = 0;                             // spatial axes, outermost first
    std::vector<kernels::axis_gather> axes;  // one per spatial axis
    std::vector<grouped_axis> grouped;       // their taps in summation order (tap_sum.hpp)
    std::array<int64_t, 4> in {}, out {};    // sizes per spatial axis
    std::array<int64_t, 4> dd_sp {}, ds_sp {}; // element strides of the spatial axes
    int64_t n_count = 0, c_count = 1;        // planes = n_count * c_count (c_count = 1 in vector mode)
    int64_t dd_n = 0, dd_c = 0, ds_n = 0, ds_c = 0;
    int64_t run = 1;                         // contiguous run: C (vector) or out[last] (planar)
    // Level k < last: the dense scratch holds rows[k] runs (axes k+1..last at
    // output resolution, the run axis excluded); in dd those runs start at
    // dd_rows[k][r] from the slice start (only level 0 reads dd).
    std::array<int64_t, 4> rows {};
    std::vector<int64_t> dd_rows0;
    // Floats of one level-k slice (= its accumulator): rows[k] * run. Level
    // k+1 < last finds output o of its axis at o * slice_floats[k+1] in it.
    std::array<int64_t, 4> slice_floats {};
    int64_t min_block = 4; // smallest number of axis-0 inputs per task
    // Planar mode: the vectorized gather of the innermost axis. With one
    // spatial axis, tasks split a row on its 16-input blocks (split_unit).
    row_gather_table inner_rows;
    int64_t split_unit = 1;
    int64_t level0_span = 1; // most outputs of axis 0 one input reads (ring slots)
    // Inputs of axis 0 summed together. Planar 2-D: 8 when the row gather
    // has its stride-2 form (rows gathered while in L1), else all of a
    // task's (the slot form loads its tables once per call). Vector mode
    // and planar 3-D and up: 4 when axis 0 has 2x linear runs (slices shared
    // by neighbours loaded once; 2x trilinear NCX -21%, where 2 and 8 were
    // slower), else 1 (each slice goes on to the next level while in cache).
    int64_t level0_batch = 1;
    // Planar 2-D 16-bit: the most diff_dst rows one such batch reads (its
    // f32 tile, allocated before the run).
    int64_t batch_rows = 0;
    // Planar 2-D f32: level 0 sums rows straight from diff_dst and prefetches
    // the stream this many bytes ahead into L2 (row_sum_gather.hpp): the
    // hardware prefetchers alone do not run far enough ahead of a row-pair
    // stream (bench/NOTES.md).
    // Vector-mode 2-D: with fused_runs, the rows new to each input, this far
    // ahead of its columns (run_sum_gather.hpp); else the rows each level-0
    // batch reads first, as in planar mode (not in 3-D, where
    // those are whole slices and it was slower). 16-bit 2-D: the rows converted to f32
    // (planar: a batch's tile; vector: a ring slot), as they are converted.
    // 0: none. Measurements: bench/NOTES.md.
    int64_t prefetch_bytes0 = 0;
    // f32 diff_src of at least interp_nontemporal_min_bytes written with
    // non-temporal stores (no read for ownership of each line), through a
    // per-thread stage:
    //   vector mode, contiguous rows: each row of the last level (measured
    //     2x bilinear/trilinear NXC 13-16% faster, 2x downsampling 11%);
    //   planar 2-D, dense planes at least as large as diff_dst's (the
    //     gradient of downsampling): each whole plane (2x downsampling NCX
    //     23% faster; for upsampling, whose output is a quarter of its
    //     input, it was slower).
    // A 3 MB output, which the next reader finds in the cache, got 35%
    // slower: hence the threshold.
    bool nontemporal = false;
    // Vector mode, f32: the level above the last and the last run as one
    // pass (run_sum_gather.hpp) for its inputs of a tap_fold_simd.hpp form,
    // where the innermost axis allows it (run_sum_gather_available). In 2-D
    // level0_batch is then 1: each input reads its rows straight from
    // diff_dst, the new ones prefetched fused_runs_prefetch_bytes ahead; a
    // non-temporal output is streamed from registers (bench/NOTES.md).
    bool fused_runs = false;
    // 3-D and up, f32, level-0 slices of at least column_prefetch_min_bytes:
    // the column walk over a batch's ten slices prefetches each of them this
    // far ahead (tap_sum.hpp sum_rows); small slices gained nothing, hence
    // the threshold (bench/NOTES.md). 0: none.
    int64_t column_prefetch_bytes = 0;
};

constexpr int64_t column_prefetch_min_bytes = int64_t(64) << 10;

constexpr int64_t interp_nontemporal_min_bytes = int64_t(8) << 20;

// 8 KB: faster than 16 KB and 4 KB (bench/NOTES.md).
constexpr int64_t prefetch_ahead_bytes = int64_t(8) << 10;
constexpr int64_t fused_runs_prefetch_bytes = int64_t(4) << 10; // 2, 4 and 8 KB measured level

// Empty string and a filled plan when the kernel runs the problem; else why not.
std::string make_interp_plan(const core::interpolate_bwd_problem &p, interp_plan &plan);

// The plan's kernel path, as BPG_VERBOSE=2 prints it.
std::string interp_path_name(const interp_plan &plan);

// Runs the plan with oneTBB on the current task arena.
void run_interp_plan(const interp_plan &plan, const void *diff_dst, void *diff_src);

} // namespace bpg::tbb_backend
