#include "backends/tbb/interpolate_plane_rows.hpp"

#include <algorithm>
#include <type_traits>

#include <immintrin.h>

#include "backends/tbb/convert_lanes.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/interpolate_small_planes.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/simd_store.hpp"

namespace bpg::tbb_backend {

namespace {

constexpr int64_t lanes = 16;
constexpr int64_t group_planes = 16; // planes per task unit, as the small-planes path
constexpr int side_by_side = 4;      // planes run together (one read of each table entry)

// Level 1 of one diff_src vector: `rows` rows of w elements, lane r * w + j
// element j of row r. Tap k of that lane reads lane idx[k] of the row sums
// (16 + : those of the vector's second row) with weight w[k], where mask[k]
// has its bit: the element has more than k taps.
struct inner_taps {
    int64_t rows = 1, taps = 0;
    alignas(64) int32_t idx[plane_rows_max_inner_taps][lanes] = {};
    alignas(64) float w[plane_rows_max_inner_taps][lanes] = {};
    uint16_t mask[plane_rows_max_inner_taps] = {};
};

inner_taps inner_taps_of(const interp_plan &p) {
    inner_taps t;
    const kernels::axis_gather &g = p.axes[1];
    const int64_t w = p.in[1];
    t.rows = 2 * w <= lanes ? 2 : 1;
    t.taps = g.max_taps;
    for (int64_t r = 0; r < t.rows; ++r)
        for (int64_t j = 0; j < w; ++j) {
            const int64_t lane = r * w + j;
            for (int64_t k = 0; k < g.begin[size_t(j) + 1] - g.begin[size_t(j)]; ++k) {
                const size_t tap = size_t(g.begin[size_t(j)] + k);
                t.idx[k][lane] = int32_t(g.output[tap] + r * lanes);
                t.w[k][lane] = g.weight[tap];
                t.mask[k] = uint16_t(t.mask[k] | (1u << lane));
            }
        }
    return t;
}

#define BPG_PLANE_ROWS_INLINE __attribute__((target("avx512f"), always_inline)) inline
#define BPG_PLANE_ROWS_LAMBDA __attribute__((target("avx512f"), always_inline))

// 16 values of a row as f32: staged or f32 rows, or 16-bit rows read in place.
BPG_PLANE_ROWS_INLINE __m512 load_lanes(const float *at) { return _mm512_loadu_ps(at); }
template <typename E> BPG_PLANE_ROWS_INLINE __m512 load_lanes(const E *at) { return convert16::load16(at); }

// Level 0 for input i of axis 0 in the planes side by side: sum_taps' fold
// (tap_sum.hpp) on whole rows. Each group of taps is summed in output order,
// multiplied by its weight unless every weight of the input is 1, and added
// to the groups before it; no taps: zero. Row o of plane q is at
// rows[q] + o * stride, 16 floats readable.
template <typename E>
BPG_PLANE_ROWS_INLINE void fold_rows(const grouped_axis &a, int64_t i, const E *const *rows, int64_t stride,
        __m512 *out) {
    const int64_t t0 = a.begin[size_t(i)], t1 = a.begin[size_t(i) + 1];
    const bool ones = a.ones[size_t(i)] != 0;
    for (int q = 0; q < side_by_side; ++q) out[q] = _mm512_setzero_ps();
    for (int64_t t = t0; t < t1;) {
        __m512 s[side_by_side];
        int64_t at = a.output[size_t(t)] * stride;
        for (int q = 0; q < side_by_side; ++q) s[q] = load_lanes(rows[q] + at);
        int64_t e = t + 1;
        for (; e < t1 && !a.start[size_t(e)]; ++e) {
            at = a.output[size_t(e)] * stride;
            for (int q = 0; q < side_by_side; ++q) s[q] = _mm512_add_ps(s[q], load_lanes(rows[q] + at));
        }
        if (!ones) {
            const __m512 w = _mm512_set1_ps(a.weight[size_t(t)]);
            for (int q = 0; q < side_by_side; ++q) s[q] = _mm512_mul_ps(w, s[q]);
        }
        for (int q = 0; q < side_by_side; ++q) out[q] = t == t0 ? s[q] : _mm512_add_ps(out[q], s[q]);
        t = e;
    }
}

// Level 0 for inputs i and i + 1, both of the 2x linear interior form
// (grouped_axis::sym4, weights not all 1): input i reads rows 2i - 1 ..
// 2i + 2, input i + 1 rows 2i + 1 .. 2i + 4, so the six rows are loaded once
// for both. The fold is fold_rows' on those taps: wa * (x[2i-1] + x[2i+2])
// + wb * (x[2i] + x[2i+1]).
template <typename E>
BPG_PLANE_ROWS_INLINE void fold_sym4_pair(const grouped_axis &a, int64_t i, const E *const *rows, int64_t stride,
        __m512 *first, __m512 *second) {
    const __m512 wa = _mm512_set1_ps(a.sym4_wa), wb = _mm512_set1_ps(a.sym4_wb);
    for (int q = 0; q < side_by_side; ++q) {
        const E *r = rows[q] + (2 * i - 1) * stride;
        const __m512 x0 = load_lanes(r), x1 = load_lanes(r + stride), x2 = load_lanes(r + 2 * stride),
                     x3 = load_lanes(r + 3 * stride), x4 = load_lanes(r + 4 * stride), x5 = load_lanes(r + 5 * stride);
        first[q] = _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(x0, x3)), _mm512_mul_ps(wb, _mm512_add_ps(x1, x2)));
        second[q] = _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(x2, x5)), _mm512_mul_ps(wb, _mm512_add_ps(x3, x4)));
    }
}

// Rows over 16, input i: the sums of both halves (s0, s1); where inputs i
// and i + 1 both have the paired form, input i + 1's too (n0, n1), from six
// shared rows (returns true).
template <typename E>
BPG_PLANE_ROWS_INLINE bool fold_halves(const grouped_axis &a, int64_t i, int64_t h, const E *const *rows,
        int64_t stride, __m512 *s0, __m512 *s1, __m512 *n0, __m512 *n1) {
    const E *half[side_by_side];
    for (int q = 0; q < side_by_side; ++q) half[q] = rows[q] + lanes;
    if (i + 1 < h && a.sym4[size_t(i)] && a.sym4[size_t(i + 1)] && !a.ones[size_t(i)] && !a.ones[size_t(i + 1)]) {
        fold_sym4_pair(a, i, rows, stride, s0, n0);
        fold_sym4_pair(a, i, half, stride, s1, n1);
        return true;
    }
    fold_rows(a, i, rows, stride, s0);
    fold_rows(a, i, half, stride, s1);
    return false;
}

// Level 1: each lane's FMA chain from zero over its taps, in table order
// (the row gather's order), lanes without a k-th tap left as they are.
BPG_PLANE_ROWS_INLINE void gather_rows(const inner_taps &t, const __m512 *first, const __m512 *second, __m512 *out) {
    for (int q = 0; q < side_by_side; ++q) out[q] = _mm512_setzero_ps();
    for (int64_t k = 0; k < t.taps; ++k) {
        const __m512i idx = _mm512_load_si512(t.idx[k]);
        const __m512 w = _mm512_load_ps(t.w[k]);
        const __mmask16 m = t.mask[k];
        for (int q = 0; q < side_by_side; ++q)
            out[q] = _mm512_mask3_fmadd_ps(_mm512_permutex2var_ps(first[q], idx, second[q]), w, out[q], m);
    }
}

// n values of one diff_src plane from v: a full vector where the 16 lie in
// the plane (the lanes past n are overwritten by the next vector of the
// plane, stored later by this task), else exactly n.
BPG_PLANE_ROWS_INLINE void store_vector(float *at, __m512 v, int64_t n, bool full) {
    if (full) return _mm512_storeu_ps(at, v);
    store_first(at, v, n);
}
template <typename T> BPG_PLANE_ROWS_INLINE void store_vector(T *at, __m512 v, int64_t n, bool full) {
    if (full) return convert16::store16(at, v);
    convert16::store_first(at, v, n);
}

// Row r of an f32 copy of a diff_dst plane: rows of H, W <= 16 values
// stored a vector each, so each row the fold reads is one aligned load of
// what one store wrote (rows packed W apart would split most loads over two
// stores and two lines). Values read past the plane are the next plane's, or
// zero at diff_dst's end (`end`): lanes past W are never used.
template <typename T> BPG_PLANE_ROWS_INLINE __m512 load_row(const T *at, int64_t W, const T *end) {
    if (end - at >= lanes) {
        if constexpr (std::is_same_v<T, float>) return _mm512_loadu_ps(at);
        else return convert16::load16(at);
    }
    if constexpr (std::is_same_v<T, float>) return _mm512_maskz_loadu_ps(__mmask16((1u << W) - 1u), at);
    else return convert16::load_first(at, W);
}
// Rows of W > 16 (at most 32) take two vectors each (`chunks`).
template <typename T>
BPG_PLANE_ROWS_INLINE void stage_plane(const T *plane, int64_t H, int64_t W, int64_t chunks, const T *end, float *to) {
    if (end - (plane + (H - 1) * W) >= chunks * lanes) { // every row readable whole: no test per row
#pragma GCC unroll 4
        for (int64_t o = 0; o < H; ++o)
            for (int64_t c = 0; c < chunks; ++c) {
                const T *at = plane + o * W + c * lanes;
                float *row = to + (o * chunks + c) * lanes;
                _mm512_store_ps(row, load_lanes(at));
            }
        return;
    }
    for (int64_t o = 0; o < H; ++o)
        for (int64_t c = 0; c < chunks; ++c)
            _mm512_store_ps(to + (o * chunks + c) * lanes, load_row(plane + o * W + c * lanes, W - c * lanes, end));
}

// Planes t, t + 1, ... as (image, channel): their offsets without a
// division per plane.
struct plane_cursor {
    int64_t n, c, c_count;
    plane_cursor(int64_t t, int64_t c_count_) : n(t / c_count_), c(t % c_count_), c_count(c_count_) {}
    void advance(int64_t k) {
        for (c += k; c >= c_count; c -= c_count) ++n;
    }
    int64_t offset(int64_t n_stride, int64_t c_stride) const { return n * n_stride + c * c_stride; }
};

// The planes of one side-by-side block: diff_dst and diff_src of planes
// [t, t + side_by_side) clamped to t1 - 1 (a part-full last block runs
// copies of its last plane).
template <typename T> struct block_planes {
    const T *dd[side_by_side];
    T *ds[side_by_side];
};
template <typename T>
BPG_PLANE_ROWS_INLINE block_planes<T> locate(const interp_plan &p, plane_cursor at, int64_t t, int64_t t1, const T *dd,
        T *ds) {
    block_planes<T> b;
    for (int q = 0; q < side_by_side; ++q) {
        b.dd[q] = dd + at.offset(p.dd_n, p.dd_c);
        b.ds[q] = ds + at.offset(p.ds_n, p.ds_c);
        if (t + q + 1 < t1) at.advance(1);
    }
    return b;
}

// Planes [t0, t1). Lanes of the side-by-side block past t1 run a copy of
// the last plane and store nothing. CHUNKS: vectors a diff_dst row (rows
// over 16: 2); PREFETCH_NEXT: interp_plan::next_group_prefetch (both fixed
// at compile: tests per vector slowed the small planes' tight loop).
template <typename T, int CHUNKS, bool PREFETCH_NEXT>
__attribute__((target("avx512f,prfchw"))) void run_planes(const interp_plan &p, const inner_taps &tab, const T *dd, T *ds,
        int64_t t0, int64_t t1) {
    const int64_t W = p.out[1], H = p.out[0], w = p.in[1], h = p.in[0], dd_plane = H * W, ds_plane = h * w;
    const T *dd_end = dd + (p.n_count - 1) * p.dd_n + (p.c_count - 1) * p.dd_c + dd_plane;
    const grouped_axis &a = p.grouped[0];
    const int64_t R = tab.rows, vectors = (h + R - 1) / R;
    // Rows over 16 (one diff_src row per vector): level 0 on both halves,
    // whose sums are the two sources of the level-1 permutes.
    constexpr int64_t chunks = CHUNKS;
    // f32 rows are read in place: the next block's planes are prefetched
    // while this one computes, or the first loads of each block wait on L3.
    // 16-bit rows, also read in place, are not prefetched where planes are
    // small (the hardware prefetchers keep up). Larger planes
    // (interp_plan::next_group_prefetch) prefetch into L2 instead (four such
    // planes into L1 evicted the rows being summed): f32 the next block,
    // 16-bit the block after it (the next one came too late), and the
    // next block's diff_src planes for writing.
    constexpr bool prefetch = std::is_same_v<T, float> || PREFETCH_NEXT;
    constexpr bool two_ahead = !std::is_same_v<T, float> && PREFETCH_NEXT;
    const int64_t ds_lines = (ds_plane * int64_t(sizeof(T)) + 63) / 64 + 1; // a plane's lines, unaligned
    // Blocks whose last row ends within a row's vectors of diff_dst's end
    // are read from f32 copies: a row per vector (packed rows for planes too
    // tall for that, read 16 wide past the plane).
    alignas(64) float stage[side_by_side][small_plane_max_dd + 2 * lanes];
    const bool padded = H * chunks * lanes <= small_plane_max_dd + 2 * lanes;
    const int64_t staged = (dd_plane + lanes - 1) / lanes * lanes;
    if (!padded)
        for (int q = 0; q < side_by_side; ++q) _mm512_store_ps(stage[q] + staged, _mm512_setzero_ps());
    const int64_t plane_lines = (dd_plane * int64_t(sizeof(T)) + 63) / 64;
    plane_cursor cur(t0, p.c_count);
    block_planes<T> b = locate(p, cur, t0, t1, dd, ds);
    for (int64_t t = t0; t < t1; t += side_by_side) {
        const int64_t tn = t + side_by_side;
        block_planes<T> next = b;
        if (tn < t1) {
            cur.advance(side_by_side);
            next = locate(p, cur, tn, t1, dd, ds);
        }
        block_planes<T> ahead = next; // the block whose diff_dst is prefetched
        bool has_ahead = tn < t1;
        if constexpr (two_ahead) {
            has_ahead = tn + side_by_side < t1;
            if (has_ahead) {
                plane_cursor after = cur;
                after.advance(side_by_side);
                ahead = locate(p, after, tn + side_by_side, t1, dd, ds);
            }
        }
        const float *rows[side_by_side] = {};
        const bool readable = dd_end - (b.dd[side_by_side - 1] + dd_plane - W) >= chunks * lanes;
        const bool in_place = std::is_same_v<T, float> && readable;
        // 16-bit rows are read and widened in place (load_lanes), as f32
        // rows are read, rather than staged at each block's start.
        const bool direct = !std::is_same_v<T, float> && readable;
        int64_t stride = W;
        for (int q = 0; q < side_by_side && !direct; ++q) {
            if (in_place) {
                rows[q] = reinterpret_cast<const float *>(b.dd[q]);
            } else if (padded) {
                stage_plane(b.dd[q], H, W, chunks, dd_end, stage[q]);
                rows[q] = stage[q];
                stride = chunks * lanes;
            } else {
                for (int64_t e = 0; e < dd_plane; e += lanes)
                    _mm512_store_ps(stage[q] + e, load_row(b.dd[q] + e, std::min(lanes, dd_plane - e), dd_end));
                rows[q] = stage[q];
            }
        }
        const int stored = int(std::min<int64_t>(side_by_side, t1 - t));
        __m512 s0[side_by_side] = {}, s1[side_by_side] = {}, v[side_by_side] = {};
        __m512 h0[side_by_side] = {}, h1[side_by_side] = {}; // rows over 16: the next input's sums
        bool held = false;
        for (int64_t vec = 0; vec < vectors; ++vec) {
            if (prefetch && has_ahead) {
                const int64_t l0 = vec * plane_lines / vectors, l1 = (vec + 1) * plane_lines / vectors;
                for (int q = 0; q < side_by_side; ++q)
                    for (int64_t l = l0; l < l1; ++l) {
                        const char *line = reinterpret_cast<const char *>(ahead.dd[q]) + 64 * l;
                        if constexpr (PREFETCH_NEXT) _mm_prefetch(line, _MM_HINT_T1);
                        else _mm_prefetch(line, _MM_HINT_T0);
                    }
            }
            if (PREFETCH_NEXT && tn < t1) {
                const int64_t l0 = vec * ds_lines / vectors, l1 = (vec + 1) * ds_lines / vectors;
                for (int q = 0; q < side_by_side; ++q)
                    for (int64_t l = l0; l < l1; ++l)
                        __builtin_prefetch(reinterpret_cast<const char *>(next.ds[q]) + 64 * l, 1, 3);
            }
            const int64_t i = vec * R;
            // An input whose taps repeat the previous input's (2x
            // downsampling) has its sums; with a row per vector, its
            // diff_src row too (v still holds it).
            const bool repeat = i > 0 && a.repeats[size_t(i)];
            // Level 0 from the 16-bit rows in place (direct) or from `rows`.
            const auto fold = [&](auto f) BPG_PLANE_ROWS_LAMBDA { return direct ? f(b.dd, W) : f(rows, stride); };
            const auto fold_input = [&](int64_t in, __m512 *out) BPG_PLANE_ROWS_LAMBDA {
                fold([&](const auto *const *r, int64_t st) BPG_PLANE_ROWS_LAMBDA { fold_rows(a, in, r, st, out); });
            };
            if (R == 1 && chunks == 2) {
                // Rows over 16: inputs i and i + 1 of the paired form fold
                // both halves from six shared rows (fold_sym4_pair), input
                // i + 1's sums kept for the next vector.
                if (held) {
                    for (int q = 0; q < side_by_side; ++q) s0[q] = h0[q], s1[q] = h1[q];
                    held = false;
                    gather_rows(tab, s0, s1, v);
                } else if (!repeat) {
                    held = fold([&](const auto *const *r, int64_t st) BPG_PLANE_ROWS_LAMBDA {
                        return fold_halves(a, i, h, r, st, s0, s1, h0, h1);
                    });
                    gather_rows(tab, s0, s1, v);
                }
            } else if (R == 1) {
                if (!repeat) {
                    fold_input(i, s0);
                    gather_rows(tab, s0, s0, v);
                }
            } else {
                const bool pair = i + 1 < h && a.sym4[size_t(i)] && a.sym4[size_t(i + 1)] && !a.ones[size_t(i)]
                        && !a.ones[size_t(i + 1)];
                if (pair) {
                    fold([&](const auto *const *r, int64_t st) BPG_PLANE_ROWS_LAMBDA {
                        fold_sym4_pair(a, i, r, st, s0, s1);
                    });
                } else {
                    if (repeat)
                        for (int q = 0; q < side_by_side; ++q) s0[q] = s1[q];
                    else
                        fold_input(i, s0);
                    if (i + 1 < h && !a.repeats[size_t(i + 1)])
                        fold_input(i + 1, s1);
                    else
                        for (int q = 0; q < side_by_side; ++q) s1[q] = s0[q];
                }
                gather_rows(tab, s0, s1, v);
            }
            const int64_t at = i * w, n = std::min(R * w, ds_plane - at);
            const bool full = at + lanes <= ds_plane;
            if constexpr (std::is_same_v<T, convert16::bf16_vcvtne_t>) { // one denormal test for the block
                if (!convert16::any_denormal_of<side_by_side>(v)) {
                    for (int q = 0; q < stored; ++q)
                        convert16::store_first_narrowed(b.ds[q] + at, convert16::narrow_bf16_unchecked(v[q]),
                                full ? lanes : n);
                    continue;
                }
            }
            for (int q = 0; q < stored; ++q) store_vector(b.ds[q] + at, v[q], n, full);
        }
        b = next;
    }
}

template <typename T>
void run_groups(const interp_plan &p, const inner_taps &tab, const void *dd, void *ds, int64_t g0, int64_t g1) {
    const int64_t planes = p.n_count * p.c_count;
    auto run = p.out[1] > lanes ? (p.next_group_prefetch ? run_planes<T, 2, true> : run_planes<T, 2, false>)
                                : (p.next_group_prefetch ? run_planes<T, 1, true> : run_planes<T, 1, false>);
    run(p, tab, static_cast<const T *>(dd), static_cast<T *>(ds), g0 * group_planes, std::min(planes, g1 * group_planes));
}

} // namespace

bool plane_rows_fit(const interp_plan &p) {
    // diff_dst rows of up to 32 where a diff_src row takes a vector alone.
    const bool row_fits = p.out[1] <= lanes || (p.out[1] <= 2 * lanes && 2 * p.in[1] > lanes);
    return small_planes_fit(p) && p.in[0] * p.in[1] < p.out[0] * p.out[1] && row_fits && p.in[1] <= lanes
            && p.axes[1].max_taps <= plane_rows_max_inner_taps;
}

void run_plane_rows(const interp_plan &p, const void *diff_dst, void *diff_src) {
    const int64_t groups = (p.n_count * p.c_count + group_planes - 1) / group_planes;
    auto body = p.dt == data_type::f32 ? run_groups<float>
            : p.bf16_vcvtne            ? run_groups<convert16::bf16_vcvtne_t>
            : p.dt == data_type::bf16  ? run_groups<bf16_t>
                                       : run_groups<f16_t>;
    const inner_taps tab = inner_taps_of(p);
    parallel_tasks(task_range(0, groups),
            [&](const task_range &r) { body(p, tab, diff_dst, diff_src, r.begin(), r.end()); });
}

} // namespace bpg::tbb_backend
