#include "backends/tbb/interpolate_small_planes.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include <immintrin.h>

#include "backends/tbb/convert_lanes.hpp"
#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/simd_store.hpp"
#include "backends/tbb/transpose16.hpp"
#include "backends/tbb/tap_sum.hpp"
#include "backends/tbb/task_pool.hpp"
#include "core/allocate.hpp"

namespace bpg::tbb_backend {

namespace {

constexpr int64_t lanes = 16; // planes per group: one per AVX-512 lane

// One task's working memory: tiles of vectors of 16 floats, lane l = plane
// l of the group.
struct group_scratch {
    core::array<float> dd_tile;    // diff_dst: out[0] * out[1] vectors
    core::array<float> ds_tile;    // diff_src: in[0] * in[1] vectors
    core::array<float> sum;        // one input's level-0 sum: out[1] vectors
    core::checked_vector<const float *> x;

    explicit group_scratch(const interp_plan &p) {
        const size_t dd_plane = size_t(p.out[0] * p.out[1]), ds_plane = size_t(p.in[0] * p.in[1]);
        const char *what = "interpolate working memory";
        // Whole blocks of 16 vectors (the transposes' unit), the padding zero.
        const size_t dd_tile_floats = (dd_plane + 15) / 16 * 16 * lanes, ds_tile_floats = (ds_plane + 15) / 16 * 16 * lanes;
        dd_tile = core::allocate_array<float>(dd_tile_floats, what);
        ds_tile = core::allocate_array<float>(ds_tile_floats, what);
        std::fill(dd_tile.get(), dd_tile.get() + dd_tile_floats, 0.f);
        std::fill(ds_tile.get(), ds_tile.get() + ds_tile_floats, 0.f);
        sum = core::allocate_array<float>(size_t(p.out[1] * lanes), what);
        x.resize(size_t(std::max<int64_t>(1, p.axes[0].max_taps)));
    }
};

#define BPG_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

inline __mmask16 first_lanes(int64_t n) { return __mmask16(n >= lanes ? 0xffffu : (1u << n) - 1u); }

// x[r] block b lane c -> x[c] block b lane r, r, c < 4: the 4x4 transposes
// within each 128-bit block of four vectors.
BPG_AVX512_INLINE void transpose4_in_blocks(float16v x[4]) {
    const float16v t0 = __builtin_shufflevector(x[0], x[1], 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
    const float16v t1 = __builtin_shufflevector(x[0], x[1], 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
    const float16v t2 = __builtin_shufflevector(x[2], x[3], 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
    const float16v t3 = __builtin_shufflevector(x[2], x[3], 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
    x[0] = __builtin_shufflevector(t0, t2, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
    x[1] = __builtin_shufflevector(t0, t2, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
    x[2] = __builtin_shufflevector(t1, t3, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
    x[3] = __builtin_shufflevector(t1, t3, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
}

// Four 4-float pieces as the blocks of a vector: loads and inserts, which
// take the shuffle port half as often as a register transpose's first stage.
BPG_AVX512_INLINE float16v blocks_of(const float *b0, const float *b1, const float *b2, const float *b3) {
    __m512 v = _mm512_castps128_ps512(_mm_loadu_ps(b0));
    v = _mm512_insertf32x4(v, _mm_loadu_ps(b1), 1);
    v = _mm512_insertf32x4(v, _mm_loadu_ps(b2), 2);
    return float16v(_mm512_insertf32x4(v, _mm_loadu_ps(b3), 3));
}
// 16-bit: the same blocks for pieces m and m + 1 at once. 8-value loads
// of planes (b0, b2) and (b1, b3) as two vectors, whose in-lane 64-bit
// unpacks hold the four pieces m, then the four pieces m + 1, in block
// order; each widened to f32 in one conversion. (No cross-lane shuffle
// but the widening.)
template <typename T>
BPG_AVX512_INLINE void blocks_of(const T *b0, const T *b1, const T *b2, const T *b3, float16v &m, float16v &m1) {
    auto load8 = [](const T *p) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)); };
    const __m256i a = _mm256_set_m128i(load8(b2), load8(b0)), b = _mm256_set_m128i(load8(b3), load8(b1));
    m = float16v(convert16::widen(_mm256_unpacklo_epi64(a, b), b0));
    m1 = float16v(convert16::widen(_mm256_unpackhi_epi64(a, b), b0));
}

// Element e0 + lane of a plane as f32, the first n lanes (16: all).
// 16-bit: a whole vector where its 16 values lie inside diff_dst (`end`,
// past its last element), the lanes past n zeroed; else in pieces.
BPG_AVX512_INLINE __m512 load_first_of(const float *plane, int64_t n, const float *) {
    return _mm512_maskz_loadu_ps(first_lanes(n), plane);
}
template <typename T> BPG_AVX512_INLINE __m512 load_first_of(const T *plane, int64_t n, const T *end) {
    if (n >= lanes) return convert16::load16(plane);
    if (end - plane >= lanes) return _mm512_maskz_mov_ps(first_lanes(n), convert16::load16(plane));
    return convert16::load_first(plane, n);
}
BPG_AVX512_INLINE void store_first_of(float *plane, __m512 v, int64_t n) { store_first(plane, v, n); }
template <typename T> BPG_AVX512_INLINE void store_first_of(T *plane, __m512 v, int64_t n) {
    convert16::store_first(plane, v, n);
}

// The lines of element e0 of the next group's diff_dst planes (`next`;
// null: none, interp_plan::next_group_prefetch) into L2, for each whole
// block to_tile reads (16-bit: every other block): spread over the group's
// loads, as the hardware prefetchers do not keep 16 streams ahead.
template <typename T>
BPG_AVX512_INLINE void prefetch_next(const T *const *next, int64_t e0) {
    if (!next || (!std::is_same_v<T, float> && e0 % (2 * lanes) != 0)) return; // 32 16-bit values a line
#pragma GCC unroll 16
    for (int l = 0; l < 16; ++l) _mm_prefetch(reinterpret_cast<const char *>(next[l] + e0), _MM_HINT_T1);
}

// The tile of 16 planes of n floats (plane l at planes[l]): tile[e * 16 + l]
// = planes[l][e], for e in [e_begin, e_end) rounded up to 16 (e_begin a
// multiple of 16; past n, the tile's padding gets zeros). Whole blocks of
// 16 floats: element 4m + c of plane 4b + r goes from block b lane r of
// x[r] (the pieces m) to block b lane r of vector 4m + c. 16-bit planes are
// converted to f32 in the registers, on the way.
// Each whole block prefetches the next group's (prefetch_next).
template <typename T>
BPG_AVX512_INLINE void to_tile(const T *const *planes, int64_t n, float *tile, int64_t e_begin, int64_t e_end,
        const T *end, const T *const *next) {
    int64_t e0 = e_begin;
    if constexpr (!std::is_same_v<T, float>) { // two pieces a load, see blocks_of
        for (; e0 < e_end && e0 + lanes <= n; e0 += lanes) {
            prefetch_next(next, e0);
#pragma GCC unroll 2
            for (int m = 0; m < 4; m += 2) {
                float16v x[4], x1[4];
#pragma GCC unroll 4
                for (int r = 0; r < 4; ++r) {
                    const int64_t at = e0 + 4 * m;
                    blocks_of(planes[r] + at, planes[4 + r] + at, planes[8 + r] + at, planes[12 + r] + at, x[r], x1[r]);
                }
                transpose4_in_blocks(x);
                transpose4_in_blocks(x1);
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c) {
                    _mm512_store_ps(tile + (e0 + 4 * m + c) * lanes, __m512(x[c]));
                    _mm512_store_ps(tile + (e0 + 4 * m + 4 + c) * lanes, __m512(x1[c]));
                }
            }
        }
    } else {
        for (; e0 < e_end && e0 + lanes <= n; e0 += lanes) {
            prefetch_next(next, e0);
#pragma GCC unroll 4
            for (int m = 0; m < 4; ++m) {
                float16v x[4];
#pragma GCC unroll 4
                for (int r = 0; r < 4; ++r) {
                    const int64_t at = e0 + 4 * m;
                    x[r] = blocks_of(planes[r] + at, planes[4 + r] + at, planes[8 + r] + at, planes[12 + r] + at);
                }
                transpose4_in_blocks(x);
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c) _mm512_store_ps(tile + (e0 + 4 * m + c) * lanes, __m512(x[c]));
            }
        }
    }
    for (; e0 < e_end; e0 += lanes) { // the last, partial block
        __m512 r[16];
#pragma GCC unroll 16
        for (int l = 0; l < 16; ++l) r[l] = load_first_of(planes[l] + e0, n - e0, end);
        transpose16(r);
#pragma GCC unroll 16
        for (int k = 0; k < 16; ++k) _mm512_store_ps(tile + (e0 + k) * lanes, r[k]);
    }
}

// The lines of element e0 of the next group's diff_src planes (`next`, n
// elements each; null: none), prefetched for writing: the stores of a
// group's short planes otherwise each wait for a line's read for
// ownership. With interp_plan::next_group_prefetch, one line a plane for
// each block from_tile stores (16-bit: every other block; the last block
// also the planes' last line): a plane's lines at once stalled on the
// line fill buffers where planes are long.
template <typename T>
__attribute__((target("prfchw"), always_inline)) inline void prefetch_for_write(T *const *next, int64_t e0, int64_t n) {
    if (!next) return;
    if (std::is_same_v<T, float> || e0 % (2 * lanes) == 0) {
#pragma GCC unroll 16
        for (int l = 0; l < 16; ++l) __builtin_prefetch(next[l] + e0, 1, 3);
    }
    if (e0 + lanes >= n) {
#pragma GCC unroll 16
        for (int l = 0; l < 16; ++l) __builtin_prefetch(next[l] + n - 1, 1, 3);
    }
}

// The inverse, into the first count planes (elements below n), each block
// prefetching the next group's (`next`, prefetch_for_write).
template <typename T>
__attribute__((target("avx512f,prfchw"), always_inline)) inline void from_tile(const float *tile, int64_t count,
        int64_t n, T *const *planes, int64_t e_begin, int64_t e_end, T *const *next) {
    for (int64_t e0 = e_begin; e0 < e_end; e0 += lanes) {
        prefetch_for_write(next, e0, n);
        __m512 r[16];
#pragma GCC unroll 16
        for (int k = 0; k < 16; ++k) r[k] = _mm512_load_ps(tile + (e0 + k) * lanes);
        transpose16(r);
        // bf16 by vcvtneps2bf16: one denormal test for the 16 vectors;
        // where one holds a denormal, all 16 take the integer formula
        // (narrow_bf16_hw's choice, so the same bits).
        if constexpr (std::is_same_v<T, convert16::bf16_vcvtne_t>) {
            if (!convert16::any_denormal_of<16>(r)) {
                const int64_t n1 = std::min(lanes, n - e0);
                if (count == lanes) {
#pragma GCC unroll 16
                    for (int l = 0; l < 16; ++l)
                        convert16::store_first_narrowed(planes[l] + e0, convert16::narrow_bf16_unchecked(r[l]), n1);
                } else {
                    for (int64_t l = 0; l < count; ++l)
                        convert16::store_first_narrowed(planes[l] + e0, convert16::narrow_bf16_unchecked(r[l]), n1);
                }
                continue;
            }
        }
        const int64_t n1 = std::min(lanes, n - e0);
        if (count == lanes) {
#pragma GCC unroll 16
            for (int l = 0; l < 16; ++l) store_first_of(planes[l] + e0, r[l], n1);
        } else {
            for (int64_t l = 0; l < count; ++l) store_first_of(planes[l] + e0, r[l], n1);
        }
    }
}

// Level 1 (axis g, grouped as a) for every input j: out vector j = the FMA
// chain from zero over its taps (vectors of sum) in table order, as the row
// gather sums a lane; an input repeating the taps of the one before (2x
// downsampling) takes its result. One and two taps without a loop.
BPG_AVX512_INLINE void gather_lanes(const kernels::axis_gather &g, const grouped_axis &a, const float *sum,
        float *out) {
    const int64_t *begin = g.begin.data(), *o = g.output.data();
    const float *wt = g.weight.data();
    const __m512 zero = _mm512_setzero_ps();
    __m512 acc = zero;
    for (int64_t j = 0; j < g.in; ++j) {
        if (j > 0 && a.repeats[size_t(j)]) {
            _mm512_store_ps(out + j * lanes, acc);
            continue;
        }
        const int64_t t = begin[j], k = begin[j + 1] - t;
        acc = zero;
        if (k >= 1) acc = _mm512_fmadd_ps(_mm512_load_ps(sum + o[t] * lanes), _mm512_set1_ps(wt[t]), zero);
        if (k >= 2) acc = _mm512_fmadd_ps(_mm512_load_ps(sum + o[t + 1] * lanes), _mm512_set1_ps(wt[t + 1]), acc);
        for (int64_t u = t + 2; u < t + k; ++u)
            acc = _mm512_fmadd_ps(_mm512_load_ps(sum + o[u] * lanes), _mm512_set1_ps(wt[u]), acc);
        _mm512_store_ps(out + j * lanes, acc);
    }
}

// Without next_group_prefetch: the diff_src lines of planes [t0, t1),
// prefetched for writing, a few planes per input. Addresses as integers:
// past the last plane, they point nowhere, and a prefetch never faults.
template <typename T>
__attribute__((target("avx512f,prfchw"), always_inline)) inline void prefetch_planes_for_write(const interp_plan &p,
        T *ds, int64_t t0, int64_t t1) {
    const int64_t bytes = p.in[0] * p.in[1] * int64_t(sizeof(T));
    for (int64_t t = t0; t < t1; ++t) {
        const uintptr_t plane = reinterpret_cast<uintptr_t>(ds)
                + uintptr_t(plane_offset(t, p.c_count, p.ds_n, p.ds_c) * int64_t(sizeof(T)));
        for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(reinterpret_cast<const void *>(plane + uintptr_t(b)), 1, 3);
        __builtin_prefetch(reinterpret_cast<const void *>(plane + uintptr_t(bytes - 1)), 1, 3);
    }
}

// Planes [t0, t0 + count), count <= 16: transposed into a tile, the two
// levels on whole vectors, transposed back. Lanes past count compute on a
// copy of the last plane and are never stored. The tiles are filled and
// emptied input by input, so that what is transposed is used while in L1.
template <typename T>
__attribute__((target("avx512f,prfchw"))) void run_group(const interp_plan &p, group_scratch &s, const T *dd, T *ds,
        int64_t t0, int64_t count) {
    const int64_t W = p.out[1], w = p.in[1], dd_plane = p.out[0] * W, ds_plane = p.in[0] * w;
    const T *dd_planes[lanes]; // lanes past count read the last plane again
    T *ds_planes[lanes];
    for (int64_t l = 0; l < count; ++l) {
        dd_planes[l] = dd + plane_offset(t0 + l, p.c_count, p.dd_n, p.dd_c);
        ds_planes[l] = ds + plane_offset(t0 + l, p.c_count, p.ds_n, p.ds_c);
    }
    for (int64_t l = count; l < lanes; ++l) dd_planes[l] = dd_planes[count - 1];
    // The next group's planes, to prefetch (past the last plane: the last).
    const T *next_dd_planes[lanes];
    T *next_ds_planes[lanes];
    if (p.next_group_prefetch) {
        const int64_t last = p.n_count * p.c_count - 1;
        for (int64_t l = 0; l < lanes; ++l) {
            const int64_t t = std::min(t0 + lanes + l, last);
            next_dd_planes[l] = dd + plane_offset(t, p.c_count, p.dd_n, p.dd_c);
            next_ds_planes[l] = ds + plane_offset(t, p.c_count, p.ds_n, p.ds_c);
        }
    }
    const T *const *next = p.next_group_prefetch ? next_dd_planes : nullptr;
    T *const *next_ds = p.next_group_prefetch ? next_ds_planes : nullptr;
    // Past diff_dst's last element (the largest plane offset: strides are positive).
    const T *dd_end = dd + (p.n_count - 1) * p.dd_n + (p.c_count - 1) * p.dd_c + dd_plane;
    float *dd_tile = s.dd_tile.get(), *ds_tile = s.ds_tile.get(), *sum = s.sum.get();
    const grouped_axis &a = p.grouped[0];
    const kernels::axis_gather &g0 = p.axes[0], &g = p.axes[1];
    int64_t tiled = 0, stored = 0; // elements of diff_dst in the tile, of diff_src out of it
    const int64_t h = p.in[0];
    for (int64_t i = 0; i < h; ++i) {
        if (!p.next_group_prefetch)
            prefetch_planes_for_write(p, ds, t0 + lanes + i * lanes / h, t0 + lanes + (i + 1) * lanes / h);
        const int64_t need = g0.end_output(i, i + 1) * W; // the rows of input i
        if (need > tiled) {
            to_tile(dd_planes, dd_plane, dd_tile, tiled, need, dd_end, next);
            tiled = (need + lanes - 1) / lanes * lanes;
        }
        float *out = ds_tile + i * w * lanes;
        if (i > 0 && a.repeats[size_t(i)]) { // the same sums as input i - 1
            std::memcpy(out, out - w * lanes, size_t(w * lanes) * sizeof(float));
        } else {
            sum_taps(sum, W * lanes,
                    taps_of(a, i, s.x.data(), [&](int64_t o) -> const float * { return dd_tile + o * W * lanes; }));
            gather_lanes(g, p.grouped[1], sum, out);
        }
        const int64_t done = i + 1 == p.in[0] ? ds_plane : (i + 1) * w / lanes * lanes; // whole blocks done
        if (done > stored) {
            from_tile(ds_tile, count, ds_plane, ds_planes, stored, done, next_ds);
            stored = (done + lanes - 1) / lanes * lanes;
        }
    }
}

template <typename T>
void run_groups(const interp_plan &p, group_scratch &s, const void *dd, void *ds, int64_t g0, int64_t g1) {
    const int64_t planes = p.n_count * p.c_count;
    for (int64_t k = g0; k < g1; ++k)
        run_group(p, s, static_cast<const T *>(dd), static_cast<T *>(ds), k * lanes,
                std::min(lanes, planes - k * lanes));
}

// interp_plan::single_tap: where every input has at most one tap on either
// axis (the gradient of downsampling), a diff_src element is diff_dst's
// element at one place times two weights. Plane by plane, each vector of 16
// diff_src elements is a permute of a 32-float window of the diff_dst plane
// and two multiplications: the operations the lanes do (sum_taps' product
// by the row weight, unless all are 1, then gather_lanes' FMA from zero by
// the column weight), so the same bits, with no transposes.
struct single_tap_table {
    int64_t vectors = 0;                 // of diff_src, per plane
    bool fits = true;                    // every vector's window is within 32 floats
    std::vector<int32_t> index;          // per vector, 16 lanes: source - base
    std::vector<int32_t> index_pairs;    // the same into bf16's evens then odds (window_pairs_of)
    std::vector<float> row_weight, column_weight; // per vector, 16 lanes
    std::vector<int64_t> base, count;    // per vector: window start, diff_src elements
    std::vector<uint16_t> multiply, taps, low, high; // per vector: lanes to multiply, with taps, in the plane
};

single_tap_table single_tap_table_of(const interp_plan &p) {
    single_tap_table t;
    const grouped_axis &a = p.grouped[0];
    const kernels::axis_gather &g = p.axes[1];
    for (const kernels::axis_gather *x : {&p.axes[0], &p.axes[1]})
        for (int64_t i = 0; i < x->in; ++i)
            if (x->begin[size_t(i) + 1] - x->begin[size_t(i)] > 1) t.fits = false;
    if (!t.fits) return t;
    const int64_t W = p.out[1], w = p.in[1], dd_plane = p.out[0] * W, ds_plane = p.in[0] * w;
    t.vectors = (ds_plane + lanes - 1) / lanes;
    const size_t v16 = size_t(t.vectors * lanes);
    t.index.assign(v16, 0);
    t.index_pairs.assign(v16, 0);
    t.row_weight.assign(v16, 0.f);
    t.column_weight.assign(v16, 0.f);
    for (int64_t v = 0; v < t.vectors; ++v) {
        int64_t source[lanes], lo = dd_plane, hi = -1;
        uint16_t multiply = 0, taps = 0;
        int64_t i = v * lanes / w, j = v * lanes % w; // element v * lanes + l's row and column
        for (int64_t l = 0; l < lanes && v * lanes + l < ds_plane; ++l) {
            const int64_t e = v * lanes + l, ti = a.begin[size_t(i)], tj = g.begin[size_t(j)];
            if (a.begin[size_t(i) + 1] > ti && g.begin[size_t(j) + 1] > tj) { // else no tap: zero
                source[l] = a.output[size_t(ti)] * W + g.output[size_t(tj)];
                lo = std::min(lo, source[l]);
                hi = std::max(hi, source[l]);
                taps |= uint16_t(1u << l);
                if (!a.ones[size_t(i)]) multiply |= uint16_t(1u << l);
                t.row_weight[size_t(e)] = a.weight[size_t(ti)];
                t.column_weight[size_t(e)] = g.weight[size_t(tj)];
            }
            if (++j == w) j = 0, ++i;
        }
        if (hi < 0) lo = hi = 0;
        if (hi - lo >= 2 * lanes) t.fits = false;
        uint16_t low = 0, high = 0;
        for (int64_t l = 0; l < lanes; ++l) {
            if (taps >> l & 1u) {
                const int64_t at = source[l] - lo;
                t.index[size_t(v * lanes + l)] = int32_t(at);
                t.index_pairs[size_t(v * lanes + l)] = int32_t(at % 2 * lanes + at / 2);
            }
            if (lo + l < dd_plane) low |= uint16_t(1u << l);
            if (lo + lanes + l < dd_plane) high |= uint16_t(1u << l);
        }
        t.base.push_back(lo);
        t.count.push_back(std::min(lanes, ds_plane - v * lanes));
        t.multiply.push_back(multiply);
        t.taps.push_back(taps);
        t.low.push_back(low);
        t.high.push_back(high);
    }
    return t;
}

// A window's 16 values at b as f32: f32 in place with the lanes past the
// plane masked; 16-bit widened in registers (a staged f32 copy read
// across its stores would wait on them), whole where diff_dst goes on.
BPG_AVX512_INLINE __m512 window_of(const float *b, uint16_t in_plane, const float *) {
    return in_plane == 0xffffu ? _mm512_loadu_ps(b) : _mm512_maskz_loadu_ps(__mmask16(in_plane), b);
}
template <typename T> BPG_AVX512_INLINE __m512 window_of(const T *b, uint16_t, const T *end) {
    if (end - b >= lanes) return convert16::load16(b);
    return end > b ? convert16::load_first(b, end - b) : _mm512_setzero_ps();
}

// bf16: the window's 32 values at b as f32 in two shifts of one load, the
// even ones (lo) and the odd ones (hi); whole where diff_dst goes on.
template <typename T> BPG_AVX512_INLINE void window_pairs_of(const T *b, const T *end, __m512 &lo, __m512 &hi) {
    __m512i x;
    if (end - b >= 2 * lanes) {
        x = _mm512_loadu_si512(b);
    } else {
        alignas(64) uint16_t buf[2 * lanes] = {};
        if (end > b) std::memcpy(buf, b, size_t(end - b) * sizeof(T));
        x = _mm512_load_si512(buf);
    }
    lo = _mm512_castsi512_ps(_mm512_maskz_slli_epi32(__mmask16(0xffff), x, 16)); // (maskz: see convert_lanes.hpp)
    hi = _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32(int32_t(0xffff0000u))));
}

// One plane: src its diff_dst plane, ds its diff_src plane. (The table's
// arrays in locals: else every store reloads them, as it may alias.)
template <typename T>
__attribute__((target("avx512f"))) void single_tap_plane(const single_tap_table &t, const T *src, T *ds, const T *end) {
    const __m512 zero = _mm512_setzero_ps();
    constexpr bool bf16 = std::is_same_v<T, bf16_t> || std::is_same_v<T, convert16::bf16_vcvtne_t>;
    const int32_t *__restrict index = bf16 ? t.index_pairs.data() : t.index.data();
    const float *__restrict row_weight = t.row_weight.data(), *__restrict column_weight = t.column_weight.data();
    const int64_t *__restrict base = t.base.data(), *__restrict count = t.count.data();
    const uint16_t *__restrict multiply = t.multiply.data(), *__restrict taps = t.taps.data();
    const uint16_t *__restrict low = t.low.data(), *__restrict high = t.high.data();
    const int64_t vectors = t.vectors;
    for (int64_t v = 0; v < vectors; ++v) {
        const T *b = src + base[v];
        const int64_t at = v * lanes;
        __m512 lo, hi;
        if constexpr (bf16) {
            window_pairs_of(b, end, lo, hi);
        } else {
            lo = window_of(b, low[v], end);
            hi = window_of(b + lanes, high[v], end);
        }
        const __m512 x = _mm512_permutex2var_ps(lo, _mm512_loadu_si512(index + at), hi);
        const __m512 s = _mm512_mask_mul_ps(x, __mmask16(multiply[v]), _mm512_loadu_ps(row_weight + at), x);
        const __m512 r = _mm512_maskz_fmadd_ps(__mmask16(taps[v]), s, _mm512_loadu_ps(column_weight + at), zero);
        store_first_of(ds + at, r, count[v]);
    }
}

// Planes [t0, t1).
template <typename T>
__attribute__((target("avx512f"))) void single_tap_planes(const interp_plan &p, const single_tap_table &t,
        const T *dd, T *ds, int64_t t0, int64_t t1) {
    const int64_t dd_plane = p.out[0] * p.out[1];
    const T *dd_end = dd + (p.n_count - 1) * p.dd_n + (p.c_count - 1) * p.dd_c + dd_plane;
    int64_t n = t0 / p.c_count, c = t0 % p.c_count; // plane t0's image and channel
    for (int64_t k = t0; k < t1; ++k) {
        const T *ddp = dd + n * p.dd_n + c * p.dd_c;
        T *dsp = ds + n * p.ds_n + c * p.ds_c;
        single_tap_plane(t, ddp, dsp, dd_end);
        if (++c == p.c_count) c = 0, ++n;
    }
}

template <typename T>
void run_single_tap(const interp_plan &p, const single_tap_table &t, const void *dd, void *ds) {
    const int64_t planes = p.n_count * p.c_count, groups = (planes + lanes - 1) / lanes;
    parallel_tasks(task_range(0, groups), [&](const task_range &r) {
        single_tap_planes(p, t, static_cast<const T *>(dd), static_cast<T *>(ds), r.begin() * lanes,
                std::min(planes, r.end() * lanes));
    });
}

} // namespace

bool single_tap_fit(const interp_plan &p) { return single_tap_table_of(p).fits; }

bool small_planes_shape_fit(const interp_plan &p, int64_t group) {
    if (p.channels_last || p.nsp != 2) return false;
    const int64_t dd_plane = p.out[0] * p.out[1], ds_plane = p.in[0] * p.in[1];
    if (dd_plane > small_plane_max_dd || ds_plane > small_plane_max_ds) return false;
    // Planes are contiguous blocks (rows one after the other).
    if ((p.out[0] > 1 && p.dd_sp[0] != p.out[1]) || (p.in[0] > 1 && p.ds_sp[0] != p.in[1])) return false;
    const int64_t groups = (p.n_count * p.c_count + group - 1) / group;
    return groups >= 4 * tasks_at_once();
}

bool small_planes_fit(const interp_plan &p) { return has_avx512f() && small_planes_shape_fit(p, lanes); }

void run_small_planes(const interp_plan &p, const void *diff_dst, void *diff_src) {
    if (p.single_tap) {
        const single_tap_table t = single_tap_table_of(p);
        auto run = p.dt == data_type::f32 ? run_single_tap<float>
                : p.bf16_vcvtne           ? run_single_tap<convert16::bf16_vcvtne_t>
                : p.dt == data_type::bf16 ? run_single_tap<bf16_t>
                                          : run_single_tap<f16_t>;
        return run(p, t, diff_dst, diff_src);
    }
    const int64_t groups = (p.n_count * p.c_count + lanes - 1) / lanes;
    auto body = p.dt == data_type::f32 ? run_groups<float>
            : p.bf16_vcvtne            ? run_groups<convert16::bf16_vcvtne_t>
            : p.dt == data_type::bf16  ? run_groups<bf16_t>
                                       : run_groups<f16_t>;
    const task_pool<group_scratch> pool(groups, [&] { return group_scratch(p); });
    parallel_tasks(task_range(0, groups), [&](const task_range &r) {
        const auto s = pool.borrow();
        body(p, *s, diff_dst, diff_src, r.begin(), r.end());
    });
}

} // namespace bpg::tbb_backend
