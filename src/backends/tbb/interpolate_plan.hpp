// How the oneTBB InterpolateBackprop kernel walks a problem, decided once at
// compile: the math (per-axis gather tables from kernels/interp_tables.hpp)
// apart from the schedule (layout, levels, task split).
//
// The kernel sees each tensor as planes of spatial positions. Two layouts run
// without a copy:
//   channels_last  C has stride 1 in both tensors: a position is a run of C
//                  floats (NXC, or NCX data with channels-last strides);
//                  planes are the N images.
//   planar         the innermost spatial axis has stride 1 in both tensors:
//                  a run is a row (NCX); planes are the N*C images.
// Other strides are refused here (the partition then runs elsewhere).
//
// Separable, outermost axis first: level k (k < last) accumulates, for one
// input index of axis k, the slices of the outputs that read it into a dense
// f32 scratch (axes k+1.. still at output resolution); the last level gathers
// the innermost axis and writes diff_src. Each diff_src element is summed by
// one task, its taps in an order the tables alone fix (tap_sum.hpp for the
// levels, row_gather.hpp for the planar rows): no atomics, and the same bits
// for any split of the work, hence for any number of threads.
//
// The kernel path (choose_interp_path, interpolate_path.cpp) names which
// loops run: interpolate_run.cpp dispatches on it and decides nothing else
// but buffer alignment and the form of each input's taps.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/problems.hpp"
#include "backends/tbb/kept_memory.hpp"
#include "backends/tbb/row_gather.hpp"
#include "backends/tbb/tap_sum.hpp"
#include "kernels/interp_tables.hpp"

namespace bpg::tbb_backend {

// The levels a plan runs and how (interpolate_run.cpp, one loop each).
// _2d: two spatial axes, level 0 is the level above the last; _nd: three or
// four, level after level down to the last two, which run as in _2d.
enum class interp_levels {
    zero_sized,                  // N or C is 0: nothing runs
    planar_rows_1d,              // one axis, dense planar f32, a task per plane: one gather for the rows of 8 planes
    planar_row_blocks_1d,        // one axis, planar: a task gathers 16-input blocks of one row
    channels_last_runs_1d,       // one axis, channels-last: each input sums the C-float runs of its taps
    planar_fused_row_gather_2d,  // the row sums and the stride-2 row gather in one pass (row_sum_gather.hpp)
    planar_rows_then_gather_2d,  // the rows summed into scratch, then gathered (row_gather.hpp)
    planar_small_planes_2d,      // 16 small planes at once, one per vector lane (interpolate_small_planes.hpp)
    planar_small_planes8_2d,     // the same, 8 planes a vector, in generic loops (CPUs without AVX-512)
    planar_plane_rows_2d,        // small planes of rows of <= 16, a row per vector (interpolate_plane_rows.hpp)
    channels_last_fused_runs_2d, // an input's row sums and the innermost level in one pass (run_sum_gather.hpp)
    channels_last_levels_2d,     // the slices summed into scratch, then the innermost level
    planar_fused_row_gather_nd,
    planar_rows_then_gather_nd,
    channels_last_fused_runs_nd,
    channels_last_levels_nd,
};

// Where level 0 reads diff_dst.
enum class interp_source {
    f32,            // f32 in place; a level-0 slice is one contiguous block (summed a batch of inputs at a time)
    f32_strided,    // f32 in place, slices with gaps (padded diff_dst): summed run by run, one input at a time
    converted_tile, // 16-bit, planar 2-D: the rows a batch reads converted into an f32 tile
    converted_ring, // 16-bit otherwise: each slice (1-D: run, or row) converted once into a slot of a ring
    // 16-bit read and written as 16 values a register, converted there
    // (convert_lanes.hpp): small planes, as they are transposed.
    converted_in_registers,
};

// Inputs of axis 0 summed together at level 0 (1-D: none, level 0 is the last).
enum class interp_batch {
    none,
    one,  // each input alone: its slice goes on to the next level while in cache
    four, // axis 0 has 2x linear interiors: slices shared by neighbours are loaded once
    two,  // the same, three axes and more, slices of level0_batch_two_min_bytes and up
    eight, // planar 2-D, stride-2 row gather: the rows of 8 inputs gathered while in L1
    task, // planar 2-D, other row gathers: every input of a task (their tables loaded once per call)
    sixteen, // as task, 16-bit planes whose f32 tile would not stay in L1: 16 inputs at a time
};

// How diff_src is written.
enum class interp_store {
    cached,
    // Non-temporal stores (no read for ownership of each line): the result
    // goes through a per-thread buffer copied out past the caches, or straight
    // from the registers where a fused run is 64-byte aligned.
    nontemporal,
    // Planar 2-D f32 with the AVX-512 slot gather: the gather writes whole
    // aligned vectors of each plane past the caches itself.
    nontemporal_gather,
    // 16-bit planar 2-D: each batch of f32 rows narrowed in registers and
    // streamed in whole lines (narrow_stream.hpp), the ends in plain stores.
    nontemporal_narrowed,
    // The same, bf16 rounded by vcvtneps2bf16 where the CPU has AVX512_BF16
    // (the integer rounding held up the streaming loop).
    nontemporal_narrowed_bf16_hw,
};

struct interp_plan {
    // N or C is 0 (spatial sizes are >= 1): diff_src is empty, nothing runs
    // and nothing below but the path is filled.
    bool empty = false;
    data_type dt = data_type::f32;
    bool channels_last = false;
    int nsp = 0;                             // spatial axes, outermost first
    std::vector<kernels::axis_gather> axes;  // one per spatial axis
    std::vector<grouped_axis> grouped;       // their taps in summation order (tap_sum.hpp)
    std::array<int64_t, 4> in {}, out {};    // sizes per spatial axis
    std::array<int64_t, 4> dd_sp {}, ds_sp {}; // element strides of the spatial axes
    int64_t n_count = 0, c_count = 1;        // planes = n_count * c_count (c_count = 1 channels-last)
    int64_t dd_n = 0, dd_c = 0, ds_n = 0, ds_c = 0;
    int64_t run = 1;                         // contiguous run: C (channels-last) or out[last] (planar)
    // Level k < last: the dense scratch holds rows[k] runs (axes k+1..last at
    // output resolution, the run axis excluded); in dd those runs start at
    // dd_rows[k][r] from the slice start (only level 0 reads dd).
    std::array<int64_t, 4> rows {};
    std::vector<int64_t> dd_rows0;
    // Floats of one level-k slice (= its accumulator): rows[k] * run. Level
    // k+1 < last finds output o of its axis at o * slice_floats[k+1] in it.
    std::array<int64_t, 4> slice_floats {};
    int64_t min_block = 4; // smallest number of split units (axis-0 inputs, or blocks) per task
    // Planar: the vectorized gather of the innermost axis. With one
    // spatial axis, tasks split a row on its 16-input blocks (split_unit).
    row_gather_table inner_rows;
    int64_t split_unit = 1;
    int64_t level0_span = 1; // most outputs of axis 0 one input reads (ring slots)

    // The kernel path (choose_interp_path): execute dispatches on these.
    interp_levels levels = interp_levels::zero_sized;
    interp_source source = interp_source::f32;
    interp_batch batch = interp_batch::none;
    interp_store store = interp_store::cached;
    // Small planes, the streamed channels-last 1-D runs (interp_store::
    // nontemporal), planar 1-D rows and channels-last runs read in
    // registers, bf16, on a CPU with AVX512_BF16: diff_src narrowed by
    // vcvtneps2bf16 (convert16::bf16_vcvtne_t), the same bits as the
    // integer rounding in fewer instructions.
    bool bf16_vcvtne = false;
    // planar_small_planes8_2d, 16-bit, on a CPU with AVX2 and F16C (path
    // ":avx2"): the loops' instances built for those, converting 8 lanes
    // with their instructions (lanes8.hpp; F16C's for f16), the same bits.
    bool avx2_16bit = false;
    int64_t level0_batch = 1; // `batch` as a count of inputs
    // Tasks each plane is cut into: enough tasks for every thread that may
    // run at once (tasks_at_once() at compile) even when planes are few.
    int64_t tasks_per_plane = 1;
    // converted_tile: the most diff_dst rows one batch reads (the tile's rows).
    int64_t batch_rows = 0;
    // 2-D: how far ahead level 0 prefetches the rows it reads from diff_dst
    // into L2, which the hardware prefetchers alone do not reach in time
    // (planar f32: row_sum_gather.hpp; fused runs: the rows new to each
    // input, run_sum_gather.hpp; 16-bit: as the rows are converted, or the
    // rows new to each input of a row pair, row_pairs16_prefetch_bytes). Planar
    // 3-D and up: the 16-bit ring's slices, as converted (path
    // ":ring_prefetch"). 0: none.
    int64_t prefetch_bytes0 = 0;
    // Channels-last 2-D levels of upsampled slices, one input at a time
    // (f32 in place, or 16-bit converted_in_registers),
    // diff_dst streaming from memory: level 0 sums a slice this many floats
    // at a time, prefetching the same columns of the next input's new rows
    // before each chunk (a burst of them ahead held up the loads). 0: not.
    int64_t level0_chunk_floats = 0;
    // _nd f32 level-0 slices of at least column_prefetch_min_bytes: the
    // column walk over a batch's slices prefetches each of them this far
    // ahead (tap_sum.hpp sum_rows). 0: none (small slices gain nothing).
    int64_t column_prefetch_bytes = 0;
    // planar_small_planes_2d (and planar_small_planes8_2d, diff_dst only)
    // where diff_dst or diff_src planes are at least
    // small_planes_prefetch_min_bytes: each group prefetches the next
    // group's diff_dst planes into L2 as it reads its own (to_tile), and
    // its diff_src planes for writing as it stores its own (from_tile);
    // else diff_src planes a few at a time per input. planar_plane_rows_2d
    // (planes of plane_rows_prefetch_min_bytes): diff_dst into L2 (f32 the
    // next block's, 16-bit the one after), and the next block's diff_src
    // planes for writing, spread over the block's vectors; 16-bit rows over
    // 16 then read in place, not staged.
    bool next_group_prefetch = false;
    // planar_small_planes_2d with at most one tap per input on both axes
    // (single_tap_fit): plane by plane, each diff_src vector a permute of
    // diff_dst's plane and its two weights, no transposes.
    bool single_tap = false;
    // Planar 2-D 16-bit rows then gather whose axis-0 inputs repeat in
    // pairs (input 2k + 1 has input 2k's taps: the gradient of 2x linear
    // downsampling; tasks then split at even inputs, split_unit 2), batches
    // starting at even inputs: the last level gathers each pair's row once
    // and copies it (path ":pairs"; the same bits).
    bool level0_pairs = false;
    // planar_fused_row_gather_2d, 16-bit rows read in registers:
    // neighbouring inputs of one form gathered two at a time
    // (row_stride2_pair), as f32 rows always are, so a row both read is
    // loaded and widened once (path ":row_pairs"; the same bits).
    bool row_pairs16 = false;
    // one_task: every task runs in turn on the calling thread, with no
    // parallel loop (one-thread runs, and diff_dst under
    // interp_one_task_max_bytes, where a loop costs more than the work); the
    // results are the same bits. Its one scratch (scratch_bytes) is on the
    // stack when at most interp_stack_scratch_bytes, else allocated.
    bool one_task = false;
    int64_t scratch_bytes = 0;
    bool scratch_on_stack = false;
};

// diff_dst bytes below which a run is one task (tests lower it, see
// size_thresholds.hpp), and the largest scratch taken on the stack.
constexpr int64_t interp_one_task_max_bytes = int64_t(32) << 10;
constexpr int64_t interp_stack_scratch_bytes = int64_t(4) << 10;

constexpr int64_t column_prefetch_min_bytes = int64_t(64) << 10;
// f32 level-0 slices in place from which a batch of 2x linear interiors is
// two inputs, not four: four read ten such slices and write four at once,
// and the batches of two ran 10-20% faster (bench/NOTES.md).
constexpr int64_t level0_batch_two_min_bytes = int64_t(512) << 10;
// Below, the hardware prefetchers keep up and bursts of prefetches do not stall.
constexpr int64_t small_planes_prefetch_min_bytes = 1024;

// f32 diff_src from which stores are non-temporal: a smaller output is found
// in the cache by its next reader.
constexpr int64_t interp_nontemporal_min_bytes = int64_t(8) << 20;

// Channels (a run) from which channels-last 2-D takes the levels rather
// than the fused runs (interpolate_path.cpp fused_runs_2d).
constexpr int64_t fused_runs_max_run = 512;

// Level-0 prefetch distances (bench/NOTES.md).
constexpr int64_t prefetch_ahead_bytes = int64_t(8) << 10;
constexpr int64_t fused_runs_prefetch_bytes = int64_t(4) << 10;
constexpr int64_t row_pairs16_prefetch_bytes = int64_t(4) << 10;
// diff_dst from which 16-bit row pairs of 2x nearest prefetch at all.
constexpr int64_t row_pairs16_prefetch_min_bytes = int64_t(8) << 20;
// Rows of 2x linear interiors from which 16-bit data leaves the tile for row
// pairs in registers (measured faster from 48 outputs; rows of 28 and 32 the
// same either way).
constexpr int64_t row_pairs16_min_outputs = 48;
// Floats a chunk of interp_plan::level0_chunk_floats.
constexpr int64_t level0_chunk_floats = 512;
// diff_dst from which the fused runs prefetch at all (below, it is in the cache).
constexpr int64_t fused_runs_prefetch_min_bytes = int64_t(8) << 20;
// Planar 2-D 16-bit, other row gathers: where a plane's f32 rows of diff_dst
// and diff_src (the tile and the row sums) take more, they are converted and
// summed 16 inputs at a time (interp_batch::sixteen).
constexpr int64_t tile_task_max_bytes = int64_t(16) << 10;
// Planar 3-D and up, 16-bit slices: a ring of more f32 bytes (slots times a
// slice) is not used; level 0 widens diff_dst in registers instead.
constexpr int64_t ring_in_l1_max_bytes = int64_t(32) << 10;
// Planar 3-D and up, 16-bit slices converted into the ring: how far ahead,
// and from which diff_dst size (below, it is in the cache between planes).
constexpr int64_t ring_prefetch_bytes = int64_t(32) << 10;
constexpr int64_t ring_prefetch_min_bytes = int64_t(8) << 20;

// Empty string and a filled plan when the kernel runs the problem; else why not.
// Runs in the partition's thread context (tasks_at_once()).
std::string make_interp_plan(const core::interpolate_bwd_problem &p, interp_plan &plan);

// Fills the kernel path of a plan whose geometry is set, from the plan, the
// CPU and the sizes.
void choose_interp_path(interp_plan &plan);

// "interpolate:<levels>:<source>[:batch=<n>]:<store>[:column_prefetch][:next_group_prefetch]
// [:single_tap][:bf16_vcvtne][:pairs]", or
// "interpolate:zero_sized" (docs/verbose.md).
std::string interp_path_name(const interp_plan &plan);

// Bytes of one task's scratch for `plan` (its path chosen), 64-byte aligned pieces.
int64_t interp_scratch_bytes(const interp_plan &plan);

// Runs the plan with oneTBB on the current task arena (one_task: on the
// caller); the tasks' scratch from `kept` (the compiled kernel's).
void run_interp_plan(const interp_plan &plan, const void *diff_dst, void *diff_src, const kept_memory &kept);

} // namespace bpg::tbb_backend
