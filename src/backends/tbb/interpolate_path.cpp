// The interpolate kernel path: which loops run a plan, decided here from the
// plan, the CPU and the sizes; interpolate_run.cpp only dispatches on it.
// Measurements behind each rule: bench/NOTES.md.
#include <algorithm>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/interpolate_plan.hpp"
#include "backends/tbb/interpolate_plane_rows.hpp"
#include "backends/tbb/interpolate_small_planes.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/row_sum_gather.hpp"
#include "backends/tbb/run_sum_gather.hpp"
#include "backends/tbb/size_thresholds.hpp"

namespace bpg::tbb_backend {

namespace {

// The most outputs of g that `batch` consecutive inputs read, from the first
// to the last (kernels::axis_gather::first_output / end_output), in O(in).
int64_t most_outputs_of_a_batch(const kernels::axis_gather &g, int64_t batch) {
    const size_t n = size_t(g.in);
    std::vector<int64_t> next(n + 1, g.in), prev(n + 1, -1); // nearest input with taps at/after i, before i
    for (size_t i = n; i-- > 0;) next[i] = g.begin[i] != g.begin[i + 1] ? int64_t(i) : next[i + 1];
    for (size_t i = 1; i <= n; ++i) prev[i] = g.begin[i - 1] != g.begin[i] ? int64_t(i) - 1 : prev[i - 1];
    int64_t most = 0;
    for (int64_t i = 0; i < g.in; ++i) {
        const int64_t i1 = std::min(g.in, i + batch), a = next[size_t(i)], b = prev[size_t(i1)];
        if (a >= i1) continue;
        most = std::max(most, g.output[size_t(g.begin[size_t(b) + 1] - 1)] + 1 - g.output[size_t(g.begin[size_t(a)])]);
    }
    return most;
}

// Enough tasks for every thread even when planes are few (NXC with N = 1);
// the split never changes results (see interpolate_plan.hpp).
int64_t tasks_per_plane(const interp_plan &p) {
    const int64_t planes = p.n_count * p.c_count;
    const int64_t units = (p.in[0] + p.split_unit - 1) / p.split_unit; // what a task split may cut
    const int64_t want = 8 * tasks_at_once();
    return planes >= want ? 1 : std::max<int64_t>(1, std::min((want + planes - 1) / planes, units / p.min_block));
}

// Level-0 slices of diff_dst are contiguous blocks (no gaps between runs).
bool dense_slices(const interp_plan &p) {
    for (size_t r = 0; r < p.dd_rows0.size(); ++r)
        if (p.dd_rows0[r] != int64_t(r) * p.run) return false;
    return true;
}

// Channels-last 2-D whose innermost level the fused pass takes over
// contiguous slices: 16-bit goes through it too, converted in registers.
// Not for long runs (fused_runs_max_run): the pass walks a chunk of
// channels down the columns of four rows, a run apart, and from 1-2 KiB
// apart those lines crowd a few L1 sets (4 KiB apart: one); the levels
// sum the rows contiguously instead.
// f32 upsampling whose innermost inputs share columns all along
// (align_corners, other scales) too, each column summed once (the column
// ring); 16-bit and the gradient of downsampling measured slower there.
bool fused_runs_2d(const interp_plan &p) {
    if (!p.channels_last || p.nsp != 2 || !dense_slices(p) || p.run >= fused_runs_max_run) return false;
    const bool upsampled = p.out[0] >= p.in[0] && p.out[1] > p.in[1];
    return run_sum_gather_available(p.grouped[1], p.run)
            || (p.dt == data_type::f32 && upsampled && run_sum_gather_once_per_column(p.grouped[1], p.run));
}

// Planar 2-D whose axis 0 has 2x linear interiors (each row read by two inputs).
bool sym4_rows(const interp_plan &p) {
    const std::vector<uint8_t> &sym4 = p.grouped[0].sym4;
    return p.nsp == 2 && !p.channels_last && std::find(sym4.begin(), sym4.end(), 1) != sym4.end();
}

// Planar 2-D whose axis 0 has inputs of two taps of weight 1 (2x nearest).
bool ones2_rows(const interp_plan &p) {
    const grouped_axis &a = p.grouped[0];
    if (p.nsp != 2 || p.channels_last) return false;
    for (size_t i = 0; i + 1 < a.begin.size(); ++i)
        if (a.ones[i] && a.begin[i + 1] - a.begin[i] == 2) return true;
    return false;
}

interp_source source_of(const interp_plan &p) {
    if (p.dt != data_type::f32) {
        // Channels-last slices of whole vectors: level 0 (1-D: the only
        // level) sums 16-bit diff_dst widened in registers (tap_sum16.hpp).
        if (fused_runs_2d(p) || (p.channels_last && has_avx512f() && dense_slices(p) && p.run % 16 == 0))
            return interp_source::converted_in_registers;
        // Planar rows with the stride-2 gather (2-D: fused with the row
        // sums): read as 16-bit. Where axis 0 has 2x linear interiors, each
        // row is read by two inputs: short rows are converted once into the
        // tile; rows of row_pairs16_min_outputs and up go in pairs
        // (row_pairs16), faster than the tile.
        const bool sym4_ok = !sym4_rows(p) || p.out[1] >= row_pairs16_min_outputs;
        if ((p.nsp == 1 || (p.nsp == 2 && sym4_ok)) && !p.channels_last && has_avx512f() && p.inner_rows.stride2)
            return interp_source::converted_in_registers;
        // Planar slices of 3-D and up, of whole vectors: the same, where the
        // ring's f32 slots would not stay in L1 (each slice is then read as
        // 16-bit by every input that taps it, not converted once).
        const double ring_bytes = double(p.slice_floats[0]) * double(sizeof(float)) * double(p.level0_span + 1);
        if (!p.channels_last && p.nsp >= 3 && has_avx512f() && dense_slices(p) && p.slice_floats[0] % 16 == 0
                && ring_bytes > double(ring_in_l1_max_bytes))
            return interp_source::converted_in_registers;
        return !p.channels_last && p.nsp == 2 ? interp_source::converted_tile : interp_source::converted_ring;
    }
    return dense_slices(p) ? interp_source::f32 : interp_source::f32_strided;
}

interp_levels levels_of(const interp_plan &p) {
    if (p.nsp == 1) {
        if (p.channels_last) return interp_levels::channels_last_runs_1d;
        // Rows of several planes per gather load each block's tables once
        // per 8 rows: whole rows per task, planes evenly spaced.
        const bool dense = p.dd_n == p.c_count * p.dd_c && p.ds_n == p.c_count * p.ds_c;
        return p.dt == data_type::f32 && p.tasks_per_plane == 1 && dense ? interp_levels::planar_rows_1d
                                                                          : interp_levels::planar_row_blocks_1d;
    }
    if (!p.channels_last) {
        if (small_planes_fit(p))
            return plane_rows_fit(p) ? interp_levels::planar_plane_rows_2d : interp_levels::planar_small_planes_2d;
        if (small_planes8_fit(p)) return interp_levels::planar_small_planes8_2d;
        const bool fused = row_sum_gather_available(p.inner_rows);
        if (p.nsp == 2)
            return fused ? interp_levels::planar_fused_row_gather_2d : interp_levels::planar_rows_then_gather_2d;
        return fused ? interp_levels::planar_fused_row_gather_nd : interp_levels::planar_rows_then_gather_nd;
    }
    // In 2-D only contiguous slices reach the fused pass; strided ones go
    // run by run to the innermost level.
    if (p.nsp == 2)
        return fused_runs_2d(p) ? interp_levels::channels_last_fused_runs_2d : interp_levels::channels_last_levels_2d;
    const bool fused = run_sum_gather_available(p.grouped[size_t(p.nsp - 1)], p.run);
    return fused ? interp_levels::channels_last_fused_runs_nd : interp_levels::channels_last_levels_nd;
}

// Either small-planes path (the lanes of planes or a row per vector).
bool small_planes(const interp_plan &p) {
    return p.levels == interp_levels::planar_small_planes_2d || p.levels == interp_levels::planar_plane_rows_2d
            || p.levels == interp_levels::planar_small_planes8_2d;
}

bool planar_2d(const interp_plan &p) {
    return p.levels == interp_levels::planar_fused_row_gather_2d
            || p.levels == interp_levels::planar_rows_then_gather_2d;
}

interp_batch batch_of(const interp_plan &p) {
    if (p.nsp == 1 || small_planes(p)) return interp_batch::none;
    if (planar_2d(p)) {
        if (p.inner_rows.stride2) return interp_batch::eight;
        // 16-bit: a whole task's f32 tile and its row sums fell out of L1
        // before the gather read them.
        const double tile_bytes = double(p.out[0] + p.in[0]) * double(p.slice_floats[0]) * double(sizeof(float));
        return p.source == interp_source::converted_tile && tile_bytes > double(tile_task_max_bytes)
                ? interp_batch::sixteen
                : interp_batch::task;
    }
    // Strided and 16-bit slices are summed one input at a time; fused runs
    // read each input's rows straight from diff_dst.
    if (p.source != interp_source::f32 || p.levels == interp_levels::channels_last_fused_runs_2d)
        return interp_batch::one;
    const std::vector<uint8_t> &sym4 = p.grouped[0].sym4;
    if (std::find(sym4.begin(), sym4.end(), 1) == sym4.end()) return interp_batch::one;
    const double slice_bytes = double(p.slice_floats[0]) * double(sizeof(float));
    return p.nsp >= 3 && slice_bytes >= double(size_threshold(level0_batch_two_min_bytes)) ? interp_batch::two
                                                                                          : interp_batch::four;
}

int64_t inputs_of(const interp_plan &p, interp_batch b) {
    switch (b) {
        case interp_batch::four: return 4;
        case interp_batch::two: return 2;
        case interp_batch::eight: return 8;
        case interp_batch::sixteen: return 16;
        case interp_batch::task: return p.in[0];
        default: return 1;
    }
}

// Bytes of diff_src (spatial sizes p.in) or diff_dst (p.out), in double:
// huge shapes would overflow a product of int64.
double bytes_of(const interp_plan &p, const std::array<int64_t, 4> &spatial) {
    double bytes = double(p.n_count) * double(p.c_count) * double(size_of(p.dt)) * (p.channels_last ? double(p.run) : 1.0);
    for (int k = 0; k < p.nsp; ++k) bytes *= double(spatial[size_t(k)]);
    return bytes;
}

interp_store store_of(const interp_plan &p) {
    if (bytes_of(p, p.in) < double(size_threshold(interp_nontemporal_min_bytes))) return interp_store::cached;
    // Channels-last 1-D, diff_src's runs one after another in whole lines:
    // each input's sum streams from the registers (any dtype, tap_sum16.hpp).
    if (p.levels == interp_levels::channels_last_runs_1d) {
        const bool lines = p.ds_sp[0] == p.run && p.run * int64_t(size_of(p.dt)) % 64 == 0;
        return has_avx512f() && lines ? interp_store::nontemporal : interp_store::cached;
    }
    if (p.nsp == 1) return interp_store::cached;
    int64_t ds_plane = 1, dd_plane = 1;
    for (int k = 0; k < p.nsp; ++k) {
        ds_plane *= p.in[size_t(k)];
        dd_plane *= p.out[size_t(k)];
    }
    if (p.dt != data_type::f32) {
        // 16-bit planar 2-D, the gradient of downsampling: rows contiguous in
        // diff_src, so that a batch of them streams as one run.
        const bool streams = planar_2d(p) && has_avx512f() && ds_plane >= dd_plane && p.ds_sp[0] == p.in[1];
        if (!streams) return interp_store::cached;
        return p.dt == data_type::bf16 && has_avx512_bf16() ? interp_store::nontemporal_narrowed_bf16_hw
                                                             : interp_store::nontemporal_narrowed;
    }
    // Channels-last: each contiguous row of the last level. The levels
    // stage each row and copy it out: where diff_src is smaller than
    // diff_dst (the gradient of upsampling) the copy costs more than the
    // reads for ownership it saves.
    if (p.channels_last) {
        const bool staged_upsampling = p.nsp == 2 && p.levels == interp_levels::channels_last_levels_2d && ds_plane < dd_plane;
        return p.ds_sp[size_t(p.nsp - 1)] == p.run && !staged_upsampling ? interp_store::nontemporal
                                                                         : interp_store::cached;
    }
    // Planar 2-D: whole dense planes, one task per plane, at least as large
    // as diff_dst's (the gradient of downsampling); for rows then gather, a
    // third of them (non-integer upsampling: the plane staged, its reads for
    // ownership a large share of the traffic). 2x upsampling's output, a
    // quarter of its input, gains nothing.
    const bool staged_rows = p.levels == interp_levels::planar_rows_then_gather_2d && 3 * ds_plane >= dd_plane;
    if (!planar_2d(p) || p.ds_sp[0] != p.in[1] || p.tasks_per_plane != 1) return interp_store::cached;
    if (ds_plane < dd_plane) return staged_rows ? interp_store::nontemporal : interp_store::cached;
    return gather_rows_streams(p.inner_rows) ? interp_store::nontemporal_gather : interp_store::nontemporal;
}

std::string to_string(interp_levels l) {
    switch (l) {
        case interp_levels::zero_sized: return "zero_sized";
        case interp_levels::planar_rows_1d: return "planar_rows_1d";
        case interp_levels::planar_row_blocks_1d: return "planar_row_blocks_1d";
        case interp_levels::channels_last_runs_1d: return "channels_last_runs_1d";
        case interp_levels::planar_fused_row_gather_2d: return "planar_fused_row_gather_2d";
        case interp_levels::planar_rows_then_gather_2d: return "planar_rows_then_gather_2d";
        case interp_levels::planar_small_planes_2d: return "planar_small_planes_2d";
        case interp_levels::planar_small_planes8_2d: return "planar_small_planes8_2d";
        case interp_levels::planar_plane_rows_2d: return "planar_plane_rows_2d";
        case interp_levels::channels_last_fused_runs_2d: return "channels_last_fused_runs_2d";
        case interp_levels::channels_last_levels_2d: return "channels_last_levels_2d";
        case interp_levels::planar_fused_row_gather_nd: return "planar_fused_row_gather_nd";
        case interp_levels::planar_rows_then_gather_nd: return "planar_rows_then_gather_nd";
        case interp_levels::channels_last_fused_runs_nd: return "channels_last_fused_runs_nd";
        case interp_levels::channels_last_levels_nd: return "channels_last_levels_nd";
    }
    return "?";
}

std::string to_string(interp_source s) {
    switch (s) {
        case interp_source::f32: return "f32";
        case interp_source::f32_strided: return "f32_strided";
        case interp_source::converted_tile: return "converted_tile";
        case interp_source::converted_ring: return "converted_ring";
        case interp_source::converted_in_registers: return "converted_in_registers";
    }
    return "?";
}

std::string to_string(interp_batch b) {
    switch (b) {
        case interp_batch::none: return "";
        case interp_batch::one: return "batch=1";
        case interp_batch::four: return "batch=4";
        case interp_batch::two: return "batch=2";
        case interp_batch::eight: return "batch=8";
        case interp_batch::task: return "batch=task";
        case interp_batch::sixteen: return "batch=16";
    }
    return "?";
}

std::string to_string(interp_store s) {
    switch (s) {
        case interp_store::cached: return "cached";
        case interp_store::nontemporal: return "nontemporal";
        case interp_store::nontemporal_gather: return "nontemporal_gather";
        case interp_store::nontemporal_narrowed: return "nontemporal_narrowed";
        case interp_store::nontemporal_narrowed_bf16_hw: return "nontemporal_narrowed_bf16_hw";
    }
    return "?";
}

} // namespace

void choose_interp_path(interp_plan &p) {
    if (p.empty) {
        p.levels = interp_levels::zero_sized;
        p.one_task = true; // nothing runs
        return;
    }
    // Planar 2-D 16-bit rows then gather whose inputs of axis 0 repeat in
    // pairs (input 2k + 1 has input 2k's taps): tasks start at even inputs
    // (level0_pairs), at least as many inputs a task as before.
    const std::vector<uint8_t> &rep = p.grouped[0].repeats;
    bool pair_rows = !p.channels_last && p.nsp == 2 && p.in[0] >= 2 && p.dt != data_type::f32
            && !row_sum_gather_available(p.inner_rows);
    for (size_t i = 0; pair_rows && i < rep.size(); ++i) pair_rows = (rep[i] != 0) == (i % 2 == 1);
    if (pair_rows) {
        p.split_unit = 2;
        p.min_block = (p.min_block + 1) / 2;
    }
    p.tasks_per_plane = tasks_per_plane(p);
    p.source = source_of(p);
    p.levels = levels_of(p);
    // Small planes convert 16-bit data in registers, as they read and write it.
    if (small_planes(p) && p.dt != data_type::f32)
        p.source = interp_source::converted_in_registers;
    p.batch = batch_of(p);
    p.level0_batch = inputs_of(p, p.batch);
    if (p.source == interp_source::converted_tile) p.batch_rows = most_outputs_of_a_batch(p.axes[0], p.level0_batch);
    // 2-D rows read from diff_dst are prefetched (in 3-D those are whole
    // slices, where it was slower); fused runs prefetch only the rows new to
    // each input, a shorter way ahead.
    // Channels-last levels: not where axis 0 is upsampled (an input reads
    // several whole new slices at once, and their burst of prefetches held
    // up its own loads).
    // Nor for planar 16-bit rows read in registers: the prefetches of each
    // input's new rows stalled on the misses already in flight (bf16 rows
    // of 2x linear interiors in pairs prefetch a shorter way ahead, below).
    // Nor for fused runs over a diff_dst that stays in the cache between
    // runs: the prefetches only took issue slots.
    const bool upsampled_slices = p.levels == interp_levels::channels_last_levels_2d && p.out[0] > p.in[0];
    const bool rows_in_registers = !p.channels_last && p.source == interp_source::converted_in_registers;
    const bool cached_runs = p.levels == interp_levels::channels_last_fused_runs_2d
            && bytes_of(p, p.out) < double(size_threshold(fused_runs_prefetch_min_bytes));
    if (p.nsp == 2 && p.source != interp_source::f32_strided && !small_planes(p)
            && !upsampled_slices && !rows_in_registers && !cached_runs)
        p.prefetch_bytes0 = p.levels == interp_levels::channels_last_fused_runs_2d ? fused_runs_prefetch_bytes
                                                                                   : prefetch_ahead_bytes;
    p.row_pairs16 = p.levels == interp_levels::planar_fused_row_gather_2d && p.dt != data_type::f32
            && p.source == interp_source::converted_in_registers;
    // Pairs of 2x linear interiors prefetch their new rows a short way
    // ahead; so do pairs of 2x nearest inputs where diff_dst streams from
    // memory (in the cache, the prefetches only took issue slots). Other
    // weighted pairs measured no better.
    const bool streamed_ones2
            = ones2_rows(p) && bytes_of(p, p.out) >= double(size_threshold(row_pairs16_prefetch_min_bytes));
    if (p.row_pairs16 && (sym4_rows(p) || streamed_ones2)) p.prefetch_bytes0 = row_pairs16_prefetch_bytes;
    // Planar 16-bit slices of 3-D and up stream from memory into the ring,
    // one after another: converted behind their prefetch.
    if (p.nsp >= 3 && !p.channels_last && p.source == interp_source::converted_ring
            && bytes_of(p, p.out) >= double(size_threshold(ring_prefetch_min_bytes)))
        p.prefetch_bytes0 = ring_prefetch_bytes;
    // Channels-last 1-D runs streaming from memory: the hardware prefetchers
    // alone left each input waiting on its two new runs.
    if (p.levels == interp_levels::channels_last_runs_1d
            && bytes_of(p, p.out) >= double(size_threshold(fused_runs_prefetch_min_bytes)))
        p.prefetch_bytes0 = prefetch_ahead_bytes;
    // Upsampled slices, one input at a time: the prefetch spread over the sum.
    // So too planar 16-bit slices of 3-D and up widened in registers: without
    // it, each input waited on its new slices from memory.
    const bool summed_in_chunks = p.source == interp_source::f32 || p.source == interp_source::converted_in_registers;
    const bool planar_slices16 = p.nsp >= 3 && !p.channels_last && p.source == interp_source::converted_in_registers;
    if (((upsampled_slices && p.batch == interp_batch::one && summed_in_chunks) || planar_slices16)
            && bytes_of(p, p.out) >= double(size_threshold(fused_runs_prefetch_min_bytes)))
        p.level0_chunk_floats = level0_chunk_floats;
    if (p.nsp >= 3 && p.source == interp_source::f32
            && p.slice_floats[0] * int64_t(sizeof(float)) >= size_threshold(column_prefetch_min_bytes))
        p.column_prefetch_bytes = int64_t(2) << 10;
    const int64_t largest_plane = std::max(p.out[0] * p.out[1], p.in[0] * p.in[1]) * int64_t(size_of(p.dt));
    p.single_tap = p.levels == interp_levels::planar_small_planes_2d && single_tap_fit(p);
    p.next_group_prefetch = ((p.levels == interp_levels::planar_small_planes_2d
                                     || p.levels == interp_levels::planar_small_planes8_2d)
                                    && !p.single_tap && largest_plane >= small_planes_prefetch_min_bytes)
            || (p.levels == interp_levels::planar_plane_rows_2d && largest_plane >= plane_rows_prefetch_min_bytes);
    // Each pair's row gathered once: batches start at even inputs.
    p.level0_pairs = pair_rows && p.levels == interp_levels::planar_rows_then_gather_2d
            && p.source == interp_source::converted_tile
            && (p.batch == interp_batch::task || p.level0_batch % 2 == 0);
    p.store = store_of(p);
    const bool streamed_runs = p.levels == interp_levels::channels_last_runs_1d && p.store == interp_store::nontemporal;
    // Planar rows of one axis read in registers: their narrowing was a
    // quarter of the kernel's time.
    const bool rows_1d = p.levels == interp_levels::planar_row_blocks_1d && p.source == interp_source::converted_in_registers;
    // Channels-last runs read in registers: the integer rounding left bf16
    // ~20% behind f16 on the same path.
    const bool runs_in_registers = p.channels_last && p.source == interp_source::converted_in_registers;
    p.bf16_vcvtne = (small_planes(p) || streamed_runs || rows_1d || runs_in_registers) && p.dt == data_type::bf16
            && has_avx512_bf16();
    p.avx2_16bit = p.levels == interp_levels::planar_small_planes8_2d && p.dt != data_type::f32 && has_avx2()
            && f16c_available() && !clone_16bit_only();
    p.one_task = tasks_at_once() == 1 || bytes_of(p, p.out) < double(size_threshold(interp_one_task_max_bytes));
    p.scratch_bytes = interp_scratch_bytes(p);
    p.scratch_on_stack = p.one_task && p.scratch_bytes <= interp_stack_scratch_bytes;
}

std::string interp_path_name(const interp_plan &p) {
    if (p.levels == interp_levels::zero_sized) return "interpolate:zero_sized";
    std::string s = "interpolate:" + to_string(p.levels) + ":" + to_string(p.source);
    if (p.batch != interp_batch::none) s += ":" + to_string(p.batch);
    s += ":" + to_string(p.store);
    if (p.column_prefetch_bytes > 0) s += ":column_prefetch";
    if (p.next_group_prefetch) s += ":next_group_prefetch";
    if (p.single_tap) s += ":single_tap";
    if (p.nsp >= 3 && p.prefetch_bytes0 > 0) s += ":ring_prefetch";
    if (p.bf16_vcvtne) s += ":bf16_vcvtne";
    if (p.level0_pairs) s += ":pairs";
    if (p.row_pairs16) s += ":row_pairs";
    if (p.avx2_16bit) s += ":avx2";
    return s;
}

} // namespace bpg::tbb_backend
