// Execution of an interp_plan (see interpolate_plan.hpp for the scheme).
// The per-task body is compiled for several instruction sets (target_clones)
// so the f32 loops are vectorized with AVX-512 or AVX2 where the CPU has them.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <tbb/blocked_range.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/interpolate_plan.hpp"
#include "backends/tbb/interpolate_plane_rows.hpp"
#include "backends/tbb/interpolate_small_planes.hpp"
#include "backends/tbb/kernel_attributes.hpp"
#include "backends/tbb/narrow_stream.hpp"
#include "backends/tbb/nontemporal.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/prefetch.hpp"
#include "backends/tbb/row_gather_stride2.hpp"
#include "backends/tbb/row_sum_gather.hpp"
#include "backends/tbb/run_sum_gather.hpp"
#include "backends/tbb/tap_sum16.hpp"
#include "backends/tbb/tap_sum.hpp"
#include "backends/tbb/task_pool.hpp"
#include "core/allocate.hpp"

namespace bpg::tbb_backend {

namespace {

// Where a task's scratch comes from: carved from one block the caller holds
// (the stack, for a small one-task plan: interp_plan::scratch_on_stack), or,
// without a block, allocated array by array. With `counting`, nothing is
// taken: only the bytes the block needs are added up (interp_scratch_bytes).
struct scratch_source {
    char *block = nullptr;
    bool counting = false;
    size_t used = 0;
    void *carve(size_t bytes) {
        used = round64(used); // every array 64-byte aligned
        void *p = counting ? nullptr : block + used;
        used += bytes;
        return p;
    }
};

// n uninitialised items of a trivial type (every use writes before it reads).
template <typename T> struct scratch_array {
    core::array<T> owned;
    T *p = nullptr;
    size_t n = 0;
    void resize(int64_t count, scratch_source &from) {
        n = size_t(std::max<int64_t>(count, 1));
        if (from.block || from.counting) {
            owned.reset();
            p = static_cast<T *>(from.carve(n * sizeof(T)));
        } else {
            owned = core::allocate_array<T>(n, "interpolate working memory");
            p = owned.get();
        }
    }
    T *data() const { return p; }
    size_t size() const { return n; }
    T &operator[](size_t i) const { return p[i]; }
    T *begin() const { return p; }
    T *end() const { return p + n; }
};
using float_buffer = scratch_array<float>;

// Level-0 slices of a 16-bit diff_dst, converted to f32 once each and kept in
// a few slots: consecutive inputs share most of their outputs.
struct converted_slices {
    int64_t floats = 0;
    float_buffer data;
    scratch_array<int64_t> holds; // output index in each slot, -1 = empty
    void reset(int64_t slot_floats, int64_t slots, scratch_source &from) {
        floats = slot_floats;
        data.resize(slot_floats * slots, from);
        holds.resize(slots, from);
        if (!from.counting) std::fill(holds.begin(), holds.end(), -1);
    }
    template <typename Load> const float *get(int64_t o, Load &&load) {
        const size_t s = size_t(o % int64_t(holds.size()));
        float *slot = data.data() + int64_t(s) * floats;
        if (holds[s] != o) {
            load(slot);
            holds[s] = o;
        }
        return slot;
    }
};

bool fuses_runs(const interp_plan &p) {
    return p.levels == interp_levels::channels_last_fused_runs_2d
            || p.levels == interp_levels::channels_last_fused_runs_nd;
}

// Channels-last 2-D: level 0 feeds the last level.
bool channels_last_2d(const interp_plan &p) {
    return p.levels == interp_levels::channels_last_levels_2d || p.levels == interp_levels::channels_last_fused_runs_2d;
}

bool fuses_rows(const interp_plan &p) {
    return p.levels == interp_levels::planar_fused_row_gather_2d
            || p.levels == interp_levels::planar_fused_row_gather_nd;
}

// Everything one task needs besides the plan; made before the run (task_pool).
struct scratch {
    std::array<float_buffer, 4> acc; // accumulator of level k
    float_buffer out;                // final level result before storing
    float_buffer rows;               // planar: the rows one final gather handles at once
    scratch_array<const float *> x;  // the runs the taps of the current input read
    converted_slices ring;           // interp_source::converted_ring only
    float_buffer tile;               // interp_source::converted_tile: the rows of one batch, as f32
    void prepare(const interp_plan &p, scratch_source &from) {
        const int last = p.nsp - 1;
        int64_t taps = 1;
        for (int k = 0; k <= last; ++k) taps = std::max(taps, p.axes[size_t(k)].max_taps);
        x.resize(taps, from);
        for (int k = 0; k < last; ++k)
            acc[size_t(k)].resize(p.slice_floats[size_t(k)] * (k == 0 ? p.level0_batch : 1), from);
        // 16-bit planar 2-D and up: the final level's result for every row of the level above.
        const bool planar_rows = !p.channels_last && last > 0;
        // 16-bit channels-last: a whole row of the last level, converted at once.
        const bool narrow = p.dt != data_type::f32;
        out.resize(planar_rows && narrow         ? p.in[size_t(last - 1)] * p.in[size_t(last)]
                        : p.channels_last && narrow && last > 0 ? p.in[size_t(last)] * p.run
                        : p.channels_last                      ? p.run
                                                               : p.in[size_t(last)],
                from);
        // Rows of the level above the last: all of its inputs (level 0: at
        // most one task's share, bounded by the whole axis).
        if (planar_rows) rows.resize(p.in[size_t(last - 1)] * p.run, from);
        if (p.source == interp_source::converted_tile) tile.resize(p.batch_rows * p.slice_floats[0], from);
        // Planar fused 16-bit rows: an input of no tap_fold form converts its rows here.
        if (p.source == interp_source::converted_in_registers && !p.channels_last && last == 1)
            tile.resize(p.axes[0].max_taps * p.slice_floats[0], from);
        // (Channels-last and planar 3-D and up in registers: the inputs of
        // other forms still sum converted slices.)
        const bool ring_too = p.source == interp_source::converted_in_registers && (p.channels_last || last >= 2);
        if (p.source != interp_source::converted_ring && !ring_too) return;
        // Slots: every output one input reads, plus one (capped at ~4 MB).
        const int64_t slot = last > 0 ? p.slice_floats[0] : (p.channels_last ? p.run : p.out[0]);
        const int64_t budget = std::max<int64_t>(1, (int64_t(4) << 20) / std::max<int64_t>(slot * 4, 1));
        ring.reset(slot, last == 0 && !p.channels_last ? 1 : std::min(p.level0_span + 1, budget), from);
    }
};

template <typename T> struct task {
    const interp_plan &p;
    scratch &s;
    const T *dd; // this plane
    T *ds;       // this plane
    bool gather_nontemporal = false; // interp_store::nontemporal_gather (this task writes a whole plane)
    bool dense_slices = false;       // 16-bit ring: level-0 slices are contiguous in diff_dst

    // sum_taps16 into 16-bit diff_src (p.run values at o), bf16 rounded by
    // the hardware where the plan says so.
    template <typename S> BPG_ALWAYS_INLINE bool narrowed_sum(const grouped_axis &a, int64_t i, const rows_of<S> &src,
            T *o) const {
        if constexpr (std::is_same_v<T, bf16_t>) return sum_taps16(a, i, src, p.run, o, p.bf16_vcvtne);
        else return sum_taps16(a, i, src, p.run, o);
    }

    // sum_gather_runs into 16-bit diff_src (its arguments up to the last),
    // bf16 rounded by the hardware where the plan says so.
    template <typename... Args> BPG_ALWAYS_INLINE void narrowed_runs(const Args &...args) const {
        if constexpr (std::is_same_v<T, bf16_t>) sum_gather_runs(args..., p.bf16_vcvtne);
        else sum_gather_runs(args...);
    }

    // Channels-last: the last (innermost) level from a dense f32 source, runs
    // of p.run floats at o * p.run. (Planar rows go through final_rows.)
    // copies > 1: the same result also at dst + c * copy_step, c < copies
    // (inputs of the level above whose taps repeat; grouped_axis::repeats).
    BPG_ALWAYS_INLINE void final_level(const float *src, T *dst, int64_t copies = 1, int64_t copy_step = 0) {
        const int last = p.nsp - 1;
        const kernels::axis_gather &g = p.axes[size_t(last)];
        const grouped_axis &a = p.grouped[size_t(last)];
        const int64_t sp = p.ds_sp[size_t(last)];
        if constexpr (std::is_same_v<T, float>) { // runs of diff_src are f32 runs already
            if (p.store == interp_store::nontemporal) { // a whole row of diff_src, through the buffer
                // (rows are contiguous here: choose_interp_path checks).
                const out_run<float> row(dst, g.in * p.run, true);
                sum_rows(a, 0, g.in, s.x.data(), {src, p.run}, p.run, row.out, p.run);
                row.finish();
                for (int64_t c = 1; c < copies; ++c) row.finish_copy(dst + c * copy_step);
                return;
            }
            sum_rows(a, 0, g.in, s.x.data(), {src, p.run}, p.run, dst, sp);
            for (int64_t c = 1; c < copies; ++c)
                for (int64_t i = 0; i < g.in; ++i)
                    std::memcpy(dst + c * copy_step + i * sp, dst + i * sp, size_t(p.run) * sizeof(float));
        } else if (p.source == interp_source::converted_in_registers) { // narrowed in registers, then copied
            for (int64_t i = 0; i < g.in; ++i) {
                T *o = dst + i * sp;
                if (!narrowed_sum(a, i, rows_of<float> {src, p.run}, o)) {
                    sum_taps(s.out.data(), p.run, taps_of(a, i, s.x.data(), [&](int64_t out) { return src + out * p.run; }));
                    row_io<T>::store(s.out.data(), o, p.run);
                }
                for (int64_t c = 1; c < copies; ++c) std::memcpy(o + c * copy_step, o, size_t(p.run) * sizeof(T));
            }
        } else if (sp == p.run) { // a contiguous row: summed whole, then one conversion per copy
            for (int64_t i = 0; i < g.in; ++i)
                sum_taps(s.out.data() + i * p.run, p.run,
                        taps_of(a, i, s.x.data(), [&](int64_t out) { return src + out * p.run; }));
            for (int64_t c = 0; c < copies; ++c) row_io<T>::store(s.out.data(), dst + c * copy_step, g.in * p.run);
        } else {
            for (int64_t i = 0; i < g.in; ++i) {
                sum_taps(s.out.data(), p.run, taps_of(a, i, s.x.data(), [&](int64_t out) { return src + out * p.run; }));
                for (int64_t c = 0; c < copies; ++c) row_io<T>::store(s.out.data(), dst + c * copy_step + i * sp, p.run);
            }
        }
    }

    // Channels-last 2-D, level-0 batches of one: how many inputs from i on
    // (up to end) share input i's taps, so its result (1: none after it).
    // Computed once and written to each: half the sums, and the staged row
    // streamed out twice from the cache (bench/NOTES.md).
    BPG_ALWAYS_INLINE int64_t repeats_from(int64_t i, int64_t end) const {
        const std::vector<uint8_t> &r = p.grouped[0].repeats;
        int64_t copies = 1;
        while (channels_last_2d(p) && i + copies < end && r[size_t(i + copies)]) ++copies;
        return copies;
    }

    // Channels-last fused runs: input i of the level above the last (axis
    // a, its rows at src) and the last level in one pass (run_sum_gather.hpp)
    // when i has a form it takes; false otherwise. A non-temporal row goes
    // straight from registers where it is 64-byte aligned, else through the
    // buffer. (16-bit: fused_runs16.)
    BPG_ALWAYS_INLINE bool fused_runs(const grouped_axis &a, int64_t i, const row_source &src, T *dst,
            int64_t prefetch_bytes = 0) {
        if constexpr (std::is_same_v<T, float>) {
            if (!fuses_runs(p) || !run_sum_gather_takes(a, i)) return false;
            const int last = p.nsp - 1;
            const grouped_axis &b = p.grouped[size_t(last)];
            const bool nontemporal = p.store == interp_store::nontemporal;
            if (nontemporal && streams_to(dst)) {
                sum_gather_runs(a, i, src, b, p.run, dst, p.run, true, prefetch_bytes);
                return true;
            }
            const out_run<float> row(dst, p.in[size_t(last)] * p.run, nontemporal);
            sum_gather_runs(a, i, src, b, p.run, row.out, nontemporal ? p.run : p.ds_sp[size_t(last)], false,
                    prefetch_bytes);
            row.finish();
            return true;
        } else { // three axes and more: from the f32 scratch, narrowed as stored
            if (p.levels != interp_levels::channels_last_fused_runs_nd || !run_sum_gather_takes(a, i)) return false;
            const int last = p.nsp - 1;
            narrowed_runs(a, i, src, p.grouped[size_t(last)], p.run, dst, p.ds_sp[size_t(last)]);
            return true;
        }
    }

    // 16-bit channels-last 2-D (interp_source::converted_in_registers): the
    // same pass over input i's rows of diff_dst, read and written as 16-bit.
    BPG_ALWAYS_INLINE bool fused_runs16(int64_t i, T *dst) {
        if constexpr (!std::is_same_v<T, float>) {
            const grouped_axis &a = p.grouped[0];
            if (p.levels != interp_levels::channels_last_fused_runs_2d || !run_sum_gather_takes(a, i)) return false;
            narrowed_runs(a, i, rows_of<T> {dd, p.dd_sp[0]}, p.grouped[1], p.run, dst, p.ds_sp[1], p.prefetch_bytes0);
            return true;
        }
        return false;
    }

    // Planar: the last level over nrows rows (of p.run floats in s.rows)
    // whose diff_src rows start at dst + r * row_stride.
    BPG_ALWAYS_INLINE void final_rows(int64_t nrows, T *dst, int64_t row_stride) {
        const kernels::axis_gather &g = p.axes[size_t(p.nsp - 1)];
        if constexpr (std::is_same_v<T, float>) {
            gather_rows(p.inner_rows, g, s.rows.data(), p.run, dst, row_stride, nrows, gather_nontemporal);
        } else { // 16 rows at a time, so that the f32 result is converted while in L1
            constexpr int64_t chunk = 16;
            for (int64_t r = 0; r < nrows; r += chunk) {
                const int64_t m = std::min(chunk, nrows - r);
                if (p.level0_pairs) { // rows r, r + 2, ... (even inputs: the plan), each copied to the next
                    gather_rows(p.inner_rows, g, s.rows.data() + r * p.run, 2 * p.run, s.out.data(), 2 * g.in,
                            (m + 1) / 2);
                    for (int64_t k = 1; k < m; k += 2)
                        std::memcpy(s.out.data() + k * g.in, s.out.data() + (k - 1) * g.in, size_t(g.in) * sizeof(float));
                } else {
                    gather_rows(p.inner_rows, g, s.rows.data() + r * p.run, p.run, s.out.data(), g.in, m);
                }
                store_rows(m, dst + r * row_stride, row_stride);
            }
        }
    }

    // 16-bit planar: nrows f32 rows of s.out out to diff_src rows at dst +
    // r * row_stride, in one conversion when they are contiguous there.
    BPG_ALWAYS_INLINE void store_rows(int64_t nrows, T *dst, int64_t row_stride) {
        const int64_t w = p.axes[size_t(p.nsp - 1)].in;
        if constexpr (std::is_same_v<T, bf16_t>)
            if (p.store == interp_store::nontemporal_narrowed_bf16_hw && row_stride == w)
                return narrow_stream_bf16_hw(s.out.data(), dst, nrows * w);
        if constexpr (!std::is_same_v<T, float>)
            if (p.store == interp_store::nontemporal_narrowed && row_stride == w)
                return narrow_stream(s.out.data(), dst, nrows * w);
        if (row_stride == w) return row_io<T>::store(s.out.data(), dst, nrows * w);
        for (int64_t r = 0; r < nrows; ++r) row_io<T>::store(s.out.data() + r * w, dst + r * row_stride, w);
    }

    // Planar: the level above the last and the last, for inputs [i0, i0 +
    // count) of the level above (grouped axis a, its rows of n floats at
    // rows); input i's diff_src row at dst + (i - i0) * row_stride. Fused
    // (row_sum_gather.hpp) where the row gather has its stride-2 form, else
    // the rows are summed into s.rows and gathered from there. Rows read
    // straight from diff_dst pass a prefetch distance (interp_plan).
    BPG_ALWAYS_INLINE void rows_to_diff_src(const grouped_axis &a, int64_t i0, int64_t count, const row_source &rows,
            int64_t n, T *dst, int64_t row_stride, int64_t prefetch_bytes = 0) {
        const kernels::axis_gather &g = p.axes[size_t(p.nsp - 1)];
        if (fuses_rows(p)) {
            if constexpr (std::is_same_v<T, float>) {
                sum_gather_rows(a, i0, count, s.x.data(), rows, p.inner_rows, g, dst, row_stride, s.rows.data(),
                        prefetch_bytes);
            } else {
                sum_gather_rows(a, i0, count, s.x.data(), rows, p.inner_rows, g, s.out.data(), g.in, s.rows.data());
                store_rows(count, dst, row_stride);
            }
            return;
        }
        // (With a prefetch distance, 8 inputs at a time, each group's rows
        // prefetched first: the gather still takes all the rows at once.)
        const int64_t step = prefetch_bytes > 0 ? 8 : count;
        for (int64_t k = i0; k < i0 + count; k += step) {
            const int64_t k1 = std::min(i0 + count, k + step);
            if (prefetch_bytes > 0) prefetch_rows_ahead(a, rows, n, k, k1, prefetch_bytes);
            sum_rows(a, k, k1 - k, s.x.data(), rows, n, s.rows.data() + (k - i0) * n, n);
        }
        final_rows(count, dst, row_stride);
    }

    // Levels 1..last from the dense accumulator of the level above. In
    // planar mode the level above the last writes its rows into s.rows and
    // the last level gathers them all at once.
    template <int K> BPG_ALWAYS_INLINE void level(const float *src, T *dst) {
        if constexpr (K < 4) {
            if (K == p.nsp - 1) return final_level(src, dst);
            if constexpr (K + 1 < 4) {
                const kernels::axis_gather &g = p.axes[K];
                const int64_t n = p.slice_floats[K];
                if (!p.channels_last && K + 1 == p.nsp - 1) // the rows, then the final gather
                    return rows_to_diff_src(p.grouped[K], 0, g.in, {src, n}, n, dst, p.ds_sp[K]);
                for (int64_t i = 0; i < g.in; ++i) {
                    if (K + 1 == p.nsp - 1 && fused_runs(p.grouped[K], i, {src, n}, dst + i * p.ds_sp[K])) continue;
                    float *acc = s.acc[K].data();
                    sum_taps(acc, n, taps_of(p.grouped[K], i, s.x.data(), [&](int64_t out) { return src + out * n; }));
                    level<K + 1>(acc, dst + i * p.ds_sp[K]);
                }
            }
        }
    }

    // A 16-bit row of diff_dst read at level 0, as f32: its lines are
    // prefetched p.prefetch_bytes0 ahead as it is converted (see the plan),
    // a few lines per step, not all of them first: a burst of prefetches
    // stalls on the misses already in flight.
    BPG_ALWAYS_INLINE void load_row0(const T *row, float *out, int64_t n) const {
        if constexpr (!std::is_same_v<T, float>)
            if (widen_lanes_available()) return widen_lanes(row, out, n, p.prefetch_bytes0);
        if (p.prefetch_bytes0 <= 0) return row_io<T>::load(row, out, n);
        constexpr int64_t step = 512 / int64_t(sizeof(T)); // 8 lines of the row
        for (int64_t k = 0; k < n; k += step) {
            const int64_t m = std::min(step, n - k);
            for (int64_t b = 0; b < m * int64_t(sizeof(T)); b += 64)
                prefetch_l2_ahead(reinterpret_cast<const char *>(row + k) + b, p.prefetch_bytes0);
            row_io<T>::load(row + k, out + k, m);
        }
    }

    // A level-0 slice of 16-bit diff_dst, converted into a ring slot (f32
    // data is read in place).
    BPG_ALWAYS_INLINE const float *slice0(int64_t o) {
        const T *base = dd + o * p.dd_sp[0];
        return s.ring.get(o, [&](float *slot) {
            if (dense_slices) // one conversion, not one a run
                return load_row0(base, slot, p.slice_floats[0]);
            for (size_t r = 0; r < p.dd_rows0.size(); ++r)
                load_row0(base + p.dd_rows0[r], slot + int64_t(r) * p.run, p.run);
        });
    }

    // Level 0 for inputs [ia, ib) of axis 0.
    BPG_ALWAYS_INLINE void run(int64_t ia, int64_t ib) {
        switch (p.levels) {
            case interp_levels::zero_sized: return;
            case interp_levels::channels_last_runs_1d: return runs_1d(ia, ib);
            case interp_levels::planar_rows_1d: // (f32 rows of whole planes go through run_tasks)
            case interp_levels::planar_row_blocks_1d: return row_blocks_1d(ia, ib);
            case interp_levels::planar_fused_row_gather_2d:
            case interp_levels::planar_rows_then_gather_2d: return planar_rows_2d(ia, ib);
            default: break;
        }
        if constexpr (std::is_same_v<T, float>)
            if (p.source == interp_source::f32) return slices_in_place(ia, ib);
        slices_one_by_one(ia, ib);
    }

    // Planar 2-D: rows, p.level0_batch inputs at a time. 16-bit rows are
    // converted into a tile first, once per batch (rows two batches share
    // are converted twice).
    BPG_ALWAYS_INLINE void planar_rows_2d(int64_t ia, int64_t ib) {
        const kernels::axis_gather &g = p.axes[0];
        const int64_t n = p.slice_floats[0];
        for (int64_t i = ia; i < ib; i += p.level0_batch) {
            const int64_t i1 = std::min(ib, i + p.level0_batch);
            if constexpr (!std::is_same_v<T, float>) {
                if (p.source == interp_source::converted_in_registers) { // fused, reading 16-bit rows
                    sum_gather_rows(p.grouped[0], i, i1 - i, s.x.data(), rows_of<T> {dd, p.dd_sp[0]}, p.inner_rows,
                            p.axes[1], s.out.data(), p.in[1], s.rows.data(), s.tile.data(), p.prefetch_bytes0,
                            p.row_pairs16);
                    store_rows(i1 - i, ds + i * p.ds_sp[0], p.ds_sp[0]);
                    continue;
                }
            }
            row_source rows {nullptr, p.dd_sp[0]};
            if constexpr (std::is_same_v<T, float>) {
                rows.base = dd;
            } else {
                const int64_t first = g.first_output(i, i1), end = g.end_output(i, i1);
                // Rows one after another (dense planes): one conversion for
                // all, not one per row (short rows pay its setup per row).
                if (p.dd_sp[0] == n) load_row0(dd + first * n, s.tile.data(), (end - first) * n);
                else
                    for (int64_t o = first; o < end; ++o)
                        load_row0(dd + o * p.dd_sp[0], s.tile.data() + (o - first) * n, n);
                rows = {s.tile.data(), n, first};
            }
            rows_to_diff_src(p.grouped[0], i, i1 - i, rows, n, ds + i * p.ds_sp[0], p.ds_sp[0],
                    std::is_same_v<T, float> ? p.prefetch_bytes0 : 0);
        }
    }

    // Input i's slice summed p.level0_chunk_floats at a time, each chunk
    // after the prefetch of the same columns of the rows new to input i + 1
    // (the plan: spread over the sum, not a burst). Elementwise: the same bits.
    BPG_ALWAYS_INLINE void sum_slice_chunked(int64_t i, const row_source &src, int64_t n) {
        const kernels::axis_gather &g = p.axes[0];
        const int64_t r0 = g.end_output(i, i + 1), r1 = i + 1 < g.in ? g.end_output(i + 1, i + 2) : r0;
        for (int64_t j = 0; j < n; j += p.level0_chunk_floats) {
            const int64_t m = std::min(p.level0_chunk_floats, n - j);
            for (int64_t r = r0; r < r1; ++r)
                prefetch_l2_lines(reinterpret_cast<uintptr_t>(src.row(r) + j), reinterpret_cast<uintptr_t>(src.row(r) + j + m));
            sum_rows(p.grouped[0], i, 1, s.x.data(), {src.base + j, src.stride, src.first}, m, s.acc[0].data() + j, n);
        }
    }

    // The same over 16-bit rows read in registers (sum_taps16; false, nothing
    // written, where input i has no tap_fold form).
    BPG_ALWAYS_INLINE bool sum_slice16_chunked(int64_t i, int64_t n, float *acc) {
        if constexpr (!std::is_same_v<T, float>) {
            if (!run_sum_gather_takes(p.grouped[0], i)) return false;
            const kernels::axis_gather &g = p.axes[0];
            const int64_t r0 = g.end_output(i, i + 1), r1 = i + 1 < g.in ? g.end_output(i + 1, i + 2) : r0;
            for (int64_t j = 0; j < n; j += p.level0_chunk_floats) {
                const int64_t m = std::min(p.level0_chunk_floats, n - j);
                for (int64_t r = r0; r < r1; ++r)
                    prefetch_l2_lines(reinterpret_cast<uintptr_t>(dd + r * p.dd_sp[0] + j),
                            reinterpret_cast<uintptr_t>(dd + r * p.dd_sp[0] + j + m));
                sum_taps16(p.grouped[0], i, rows_of<T> {dd + j, p.dd_sp[0]}, m, acc + j);
            }
            return true;
        }
        return false;
    }

    // interp_source::f32 (channels-last 2-D and up, planar 3-D and up): the
    // contiguous slices of p.level0_batch inputs summed at once.
    BPG_ALWAYS_INLINE void slices_in_place(int64_t ia, int64_t ib) {
        const int64_t n = p.slice_floats[0];
        const grouped_axis &a = p.grouped[0];
        const row_source src {dd, p.dd_sp[0]};
        for (int64_t i = ia, i1; i < ib; i = i1) {
            i1 = std::min(ib, i + p.level0_batch);
            if (p.levels == interp_levels::channels_last_fused_runs_2d && i1 - i == 1
                    && fused_runs(a, i, src, ds + i * p.ds_sp[0], p.prefetch_bytes0))
                continue;
            if (p.prefetch_bytes0 > 0) prefetch_rows_ahead(a, src, n, i, i1, p.prefetch_bytes0);
            if (p.level0_chunk_floats > 0 && i1 - i == 1) sum_slice_chunked(i, src, n);
            else
                sum_rows(a, i, i1 - i, s.x.data(), src, n, s.acc[0].data(), n, p.column_prefetch_bytes);
            if (i1 - i == 1 && channels_last_2d(p)) { // inputs repeating input i's taps take its result
                const int64_t copies = repeats_from(i, ib);
                final_level(s.acc[0].data(), ds + i * p.ds_sp[0], copies, p.ds_sp[0]);
                i1 = i + copies;
                continue;
            }
            for (int64_t k = i; k < i1; ++k) level<1>(s.acc[0].data() + (k - i) * n, ds + k * p.ds_sp[0]);
        }
    }

    // interp_source::f32_strided, converted_ring and converted_in_registers
    // (channels-last, planar 3-D and up): one input at a time.
    BPG_ALWAYS_INLINE void slices_one_by_one(int64_t ia, int64_t ib) {
        const int64_t n = p.slice_floats[0];
        const grouped_axis &a = p.grouped[0];
        for (int64_t i = ia, copies = 1; i < ib; i += copies) {
            copies = 1;
            if (fused_runs16(i, ds + i * p.ds_sp[0])) continue;
            float *acc = s.acc[0].data();
            if constexpr (std::is_same_v<T, float>) {
                // Strided f32 runs: sum run by run, straight from diff_dst.
                for (size_t r = 0; r < p.dd_rows0.size(); ++r) {
                    sum_taps(acc + int64_t(r) * p.run, p.run, taps_of(a, i, s.x.data(), [&](int64_t o) {
                        return reinterpret_cast<const float *>(dd + o * p.dd_sp[0] + p.dd_rows0[r]);
                    }));
                }
            } else {
                // Widened in registers where the plan says so and i has a
                // tap_fold form; else a 16-bit slice shared with the
                // previous input stays in its ring slot, converted once.
                if (p.source == interp_source::converted_in_registers && p.prefetch_bytes0 > 0)
                    prefetch_rows_ahead(a, reinterpret_cast<const char *>(dd), p.dd_sp[0] * int64_t(sizeof(T)),
                            n * int64_t(sizeof(T)), i, i + 1, p.prefetch_bytes0);
                if (p.source != interp_source::converted_in_registers
                        || !(p.level0_chunk_floats > 0 ? sum_slice16_chunked(i, n, acc)
                                                        : sum_taps16(a, i, rows_of<T> {dd, p.dd_sp[0]}, n, acc)))
                    sum_taps(acc, n, taps_of(a, i, s.x.data(), [&](int64_t o) { return slice0(o); }));
            }
            copies = repeats_from(i, ib);
            if (channels_last_2d(p)) final_level(acc, ds + i * p.ds_sp[0], copies, p.ds_sp[0]);
            else level<1>(acc, ds + i * p.ds_sp[0]);
        }
    }

    // Channels-last, one axis: level 0 is the last level and reads diff_dst
    // itself (16-bit runs converted once into ring slots). Non-temporal:
    // the inputs of a tap_fold form stream out of the registers, one store
    // fence for the task; the others are stored cached.
    BPG_ALWAYS_INLINE void runs_1d(int64_t ia, int64_t ib) {
        const rows_of<T> runs {dd, p.dd_sp[0]};
        const bool nontemporal = p.store == interp_store::nontemporal;
        uintptr_t fetched = 0; // the end of what was prefetched: runs are read in rising order
        for (int64_t i = ia; i < ib; ++i) {
            T *out = ds + i * p.ds_sp[0];
            if (const int64_t end = p.axes[0].end_output(i, i + 1); p.prefetch_bytes0 > 0 && end > 0) {
                const uintptr_t ahead = uintptr_t(p.prefetch_bytes0);
                const uintptr_t from = reinterpret_cast<uintptr_t>(runs.row(p.axes[0].first_output(i, i + 1))) + ahead;
                const uintptr_t to = reinterpret_cast<uintptr_t>(runs.row(end - 1) + p.run) + ahead;
                prefetch_l2_lines(std::max(from, fetched), to);
                fetched = std::max(fetched, to);
            }
            if (nontemporal && streams_to(out) && sum_taps_streamed(p.grouped[0], i, runs, p.run, out, p.bf16_vcvtne))
                continue;
            if constexpr (!std::is_same_v<T, float>) // diff_src straight from the registers
                if (p.source == interp_source::converted_in_registers && narrowed_sum(p.grouped[0], i, runs, out))
                    continue;
            const tap_run r = taps_of(p.grouped[0], i, s.x.data(), [&](int64_t oi) -> const float * {
                const T *run = runs.row(oi);
                if constexpr (std::is_same_v<T, float>) return run;
                else return s.ring.get(oi, [&](float *slot) { row_io<T>::load(run, slot, p.run); });
            });
            if constexpr (std::is_same_v<T, float>) {
                sum_taps(out, p.run, r); // the runs are diff_dst: they never overlap diff_src
            } else {
                sum_taps(s.out.data(), p.run, r);
                row_io<T>::store(s.out.data(), out, p.run);
            }
        }
        if (nontemporal) store_fence();
    }

    // Planar, one axis: the whole row of diff_dst, as f32 (converted once),
    // then the gather of inputs [ia, ib).
    BPG_ALWAYS_INLINE void row_blocks_1d(int64_t ia, int64_t ib) {
        float *o = s.out.data();
        if constexpr (!std::is_same_v<T, float>) {
            if (p.source == interp_source::converted_in_registers) { // the stride-2 gather widens as it loads
                // 64 blocks at a time, narrowed while their 4 KB of f32 are
                // in L1: a whole long row's f32 fell out of L1 before its
                // narrowing read it, beside the streaming diff_dst.
                constexpr int64_t chunk = 64;
                for (int64_t b = ia / 16, b1 = (ib + 15) / 16; b < b1; b += chunk) {
                    const int64_t e = std::min(b1, b + chunk);
                    gather_rows_stride2(p.inner_rows, p.axes[0], dd, 0, o, 0, 1, b, e);
                    const int64_t m = std::min(ib, 16 * e) - 16 * b;
                    if constexpr (std::is_same_v<T, bf16_t>)
                        if (p.bf16_vcvtne) {
                            narrow_lanes_bf16_hw(o, ds + 16 * b, m);
                            continue;
                        }
                    row_io<T>::store(o, ds + 16 * b, m);
                }
                return;
            }
        }
        const float *row;
        if constexpr (std::is_same_v<T, float>) row = dd;
        else row = s.ring.get(0, [&](float *slot) { row_io<T>::load(dd, slot, p.out[0]); });
        // ia is a multiple of 16 here (split_unit), so blocks line up.
        gather_row(p.inner_rows, p.axes[0], row, o, ia / 16, (ib + 15) / 16);
        row_io<T>::store(o, ds + ia, ib - ia);
    }
};

// Tasks [t0, t1): task t is part t % p.tasks_per_plane of plane t / p.tasks_per_plane.
template <typename T>
BPG_ALWAYS_INLINE void run_tasks(const interp_plan &p, scratch &s, const T *dd, T *ds, int64_t t0, int64_t t1) {
    const int64_t in0 = p.in[0], parts = p.tasks_per_plane;
    if constexpr (std::is_same_v<T, float>) {
        if (p.levels == interp_levels::planar_rows_1d) { // one task per plane, planes evenly spaced
            constexpr int64_t batch = 8;
            for (int64_t t = t0; t < t1; t += batch)
                gather_rows(p.inner_rows, p.axes[0], dd + t * p.dd_c, p.dd_c, ds + t * p.ds_c, p.ds_c,
                        std::min(batch, t1 - t));
            return;
        }
    }
    // Planar non-temporal stores (one task per plane): written by the final
    // gather itself, or the plane through the per-thread buffer.
    const bool planar_nontemporal = !p.channels_last
            && (p.store == interp_store::nontemporal || p.store == interp_store::nontemporal_gather);
    const bool by_gather = p.store == interp_store::nontemporal_gather;
    bool dense_slices = true;
    for (size_t r = 0; r < p.dd_rows0.size(); ++r) dense_slices = dense_slices && p.dd_rows0[r] == int64_t(r) * p.run;
    for (int64_t t = t0; t < t1; ++t) {
        const int64_t plane = t / parts, b = t % parts;
        const int64_t n = plane / p.c_count, c = plane % p.c_count;
        // Ring slots hold slices of one plane only.
        std::fill(s.ring.holds.begin(), s.ring.holds.end(), -1);
        const out_run<T> out(ds + n * p.ds_n + c * p.ds_c, p.in[0] * p.in[1], planar_nontemporal && !by_gather);
        task<T> k {p, s, dd + n * p.dd_n + c * p.dd_c, out.out, by_gather, dense_slices};
        const int64_t units = (in0 + p.split_unit - 1) / p.split_unit;
        k.run(std::min(in0, b * units / parts * p.split_unit), std::min(in0, (b + 1) * units / parts * p.split_unit));
        out.finish();
    }
    // Once a task, not once a streamed run.
    if (p.store == interp_store::nontemporal_narrowed || p.store == interp_store::nontemporal_narrowed_bf16_hw)
        store_fence();
}

BPG_CLONES void run_tasks_f32(const interp_plan &p, scratch &s, const void *dd, void *ds, int64_t t0, int64_t t1) {
    run_tasks(p, s, static_cast<const float *>(dd), static_cast<float *>(ds), t0, t1);
}
BPG_CLONES void run_tasks_bf16(const interp_plan &p, scratch &s, const void *dd, void *ds, int64_t t0, int64_t t1) {
    run_tasks(p, s, static_cast<const bf16_t *>(dd), static_cast<bf16_t *>(ds), t0, t1);
}
BPG_CLONES void run_tasks_f16(const interp_plan &p, scratch &s, const void *dd, void *ds, int64_t t0, int64_t t1) {
    run_tasks(p, s, static_cast<const f16_t *>(dd), static_cast<f16_t *>(ds), t0, t1);
}

} // namespace

int64_t interp_scratch_bytes(const interp_plan &p) {
    if (p.levels == interp_levels::zero_sized) return 0;
    scratch_source counter;
    counter.counting = true;
    scratch().prepare(p, counter);
    return int64_t(counter.used);
}

void run_interp_plan(const interp_plan &p, const void *diff_dst, void *diff_src, const kept_memory &kept) {
    if (p.levels == interp_levels::zero_sized) return;
    if (p.levels == interp_levels::planar_small_planes_2d) return run_small_planes(p, diff_dst, diff_src);
    if (p.levels == interp_levels::planar_small_planes8_2d) return run_small_planes8(p, diff_dst, diff_src);
    if (p.levels == interp_levels::planar_plane_rows_2d) return run_plane_rows(p, diff_dst, diff_src);
    const int64_t tasks = p.n_count * p.c_count * p.tasks_per_plane;
    auto body = p.dt == data_type::f32 ? run_tasks_f32 : p.dt == data_type::bf16 ? run_tasks_bf16 : run_tasks_f16;
    if (p.one_task) {
        // Every task in turn on the calling thread, one scratch for all, on
        // the stack when it fits: no loop, no allocation.
        alignas(64) char local[interp_stack_scratch_bytes];
        const kept_memory::lease block = kept.take(p.scratch_on_stack ? 0 : size_t(p.scratch_bytes),
                "interpolate working memory");
        scratch_source from;
        from.block = p.scratch_on_stack ? local : block.get();
        scratch s;
        s.prepare(p, from);
        inline_task(tbb::blocked_range<int64_t>(0, tasks, tasks), [&](const tbb::blocked_range<int64_t> &r) {
            body(p, s, diff_dst, diff_src, r.begin(), r.end());
        });
        return;
    }
    // Every task's scratch carved from one block (64-byte-aligned pieces, as
    // interp_scratch_bytes counts them).
    const size_t slots = size_t(task_pool_size(tasks));
    const kept_memory::lease block = kept.take(slots * round64(size_t(p.scratch_bytes)), "interpolate working memory");
    scratch_source heap;
    heap.block = block.get();
    const task_pool<scratch> pool(tasks, [&] {
        scratch s;
        s.prepare(p, heap);
        return s;
    });
    parallel_tasks(tbb::blocked_range<int64_t>(0, tasks), [&](const tbb::blocked_range<int64_t> &r) {
        const auto s = pool.borrow();
        body(p, *s, diff_dst, diff_src, r.begin(), r.end());
    });
}

} // namespace bpg::tbb_backend
