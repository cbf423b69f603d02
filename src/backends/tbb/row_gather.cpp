#include "backends/tbb/row_gather.hpp"

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/row_gather_avx2.hpp"
#include "backends/tbb/row_gather_stride2.hpp"
#include "backends/tbb/simd_store.hpp"

#include <algorithm>

#include <immintrin.h>

namespace bpg::tbb_backend {

row_gather_table make_row_gather(const kernels::axis_gather &g) {
    row_gather_table t;
    const int64_t nblocks = (g.in + 15) / 16;
    t.block_slots.push_back(0);
    for (int64_t b = 0; b < nblocks; ++b) {
        const int64_t i0 = 16 * b, i1 = std::min(g.in, i0 + 16);
        int64_t taps = 0;
        for (int64_t i = i0; i < i1; ++i) taps = std::max(taps, g.begin[size_t(i) + 1] - g.begin[size_t(i)]);
        for (int64_t k = 0; k < taps; ++k) {
            row_gather_table::slot sl;
            int64_t lo = INT64_MAX, hi = -1;
            for (int64_t i = i0; i < i1; ++i)
                if (g.begin[size_t(i)] + k < g.begin[size_t(i) + 1]) {
                    const int64_t o = g.output[size_t(g.begin[size_t(i)] + k)];
                    lo = std::min(lo, o);
                    hi = std::max(hi, o);
                }
            sl.first_output = lo;
            sl.window = int32_t(std::min<int64_t>(hi - lo + 1, INT32_MAX));
            for (int64_t lane = 0; lane < 16; ++lane) {
                const int64_t i = i0 + lane;
                const bool has = i < i1 && g.begin[size_t(i)] + k < g.begin[size_t(i) + 1];
                const int64_t tap = has ? g.begin[size_t(i)] + k : 0;
                t.idx.push_back(has ? int32_t(g.output[size_t(tap)] - lo) : 0);
                t.weight.push_back(has ? g.weight[size_t(tap)] : 0.f);
                sl.mask = uint16_t(sl.mask | (has ? 1u << lane : 0u));
            }
            t.slots.push_back(sl);
        }
        int64_t lo = INT64_MAX, hi = -1;
        for (int64_t k = t.block_slots.back(); k < int64_t(t.slots.size()); ++k) {
            lo = std::min(lo, t.slots[size_t(k)].first_output);
            hi = std::max(hi, t.slots[size_t(k)].first_output + t.slots[size_t(k)].window);
        }
        t.block_window.push_back(hi >= 0 && hi - lo <= 32 ? lo : -1);
        t.block_slots.push_back(int64_t(t.slots.size()));
    }
    add_stride2_form(t, g);
    if (has_avx2() && !has_avx512f()) add_avx2_form(t);
    return t;
}

namespace {

__attribute__((target("avx512f"))) void gather_avx512(const row_gather_table &t, const kernels::axis_gather &g,
        const float *src, float *out, int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
        const int64_t i0 = 16 * b, n = std::min<int64_t>(16, g.in - i0);
        __m512 acc = _mm512_setzero_ps();
        for (int64_t k = t.block_slots[size_t(b)]; k < t.block_slots[size_t(b) + 1]; ++k) {
            const row_gather_table::slot &sl = t.slots[size_t(k)];
            const __mmask16 m = __mmask16(sl.mask);
            const __m512i idx = _mm512_loadu_si512(t.idx.data() + 16 * k);
            const __m512 wt = _mm512_loadu_ps(t.weight.data() + 16 * k);
            const float *base = src + sl.first_output;
            __m512 v;
            if (sl.window <= 32) {
                // Masked loads never read past the window (nor the row).
                const int32_t hi = sl.window - 16;
                const __m512 lo16 = _mm512_maskz_loadu_ps(sl.window >= 16 ? __mmask16(0xffff) : __mmask16((1u << sl.window) - 1u), base);
                const __m512 hi16 = _mm512_maskz_loadu_ps(hi >= 16 ? __mmask16(0xffff) : hi <= 0 ? __mmask16(0) : __mmask16((1u << hi) - 1u), base + 16);
                v = _mm512_permutex2var_ps(lo16, idx, hi16);
            } else {
                v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, base, 4);
            }
            acc = _mm512_mask3_fmadd_ps(v, wt, acc, m);
        }
        store_first(out + (i0 - 16 * b0), acc, n);
    }
}

// One slot's tables, ready in registers.
struct slot_regs {
    __m512i idx;
    __m512 w;
    __mmask16 lanes, lo, hi;
    int64_t first;
};

// A whole vector to a 64-byte-aligned address: streamed past the caches
// when STREAM (a full line, so it leaves as one write); else plain stores.
template <bool STREAM>
__attribute__((target("avx512f"), always_inline)) inline void store_lanes(float *p, __m512 v, int64_t n) {
    if (STREAM && n == 16 && (reinterpret_cast<uintptr_t>(p) & 63u) == 0) _mm512_stream_ps(p, v);
    else store_first(p, v, n);
}

template <int K, bool STREAM>
__attribute__((target("avx512f"), always_inline)) inline void rows_k(const slot_regs *sl, const float *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t store) {
    for (int64_t r = 0; r < nrows; ++r) {
        const float *row = src + r * src_stride;
        __m512 acc = _mm512_setzero_ps();
        for (int k = 0; k < K; ++k) {
            const __m512 a = _mm512_maskz_loadu_ps(sl[k].lo, row + sl[k].first);
            const __m512 b = _mm512_maskz_loadu_ps(sl[k].hi, row + sl[k].first + 16);
            acc = _mm512_mask3_fmadd_ps(_mm512_permutex2var_ps(a, sl[k].idx, b), sl[k].w, acc, sl[k].lanes);
        }
        store_lanes<STREAM>(out + r * out_stride, acc, store);
    }
}

// The same for a block whose slots share one window of 32 outputs
// (row_gather_table::block_window), at src: each row loads it once, plainly
// where it lies inside the row (FULL), else masked by lo and hi; idx[k] is
// slot k's index table from the window's start. The same FMAs in the same
// order.
template <int K, bool FULL, bool STREAM>
__attribute__((target("avx512f"), always_inline)) inline void rows_window(const __m512i *idx, const __m512 *w,
        const __mmask16 *lanes, __mmask16 lo, __mmask16 hi, const float *src, int64_t src_stride, float *out,
        int64_t out_stride, int64_t nrows, int64_t store) {
    for (int64_t r = 0; r < nrows; ++r) {
        const float *row = src + r * src_stride;
        const __m512 a = FULL ? _mm512_loadu_ps(row) : _mm512_maskz_loadu_ps(lo, row);
        const __m512 b = FULL ? _mm512_loadu_ps(row + 16) : _mm512_maskz_loadu_ps(hi, row + 16);
        __m512 acc = _mm512_setzero_ps();
        for (int k = 0; k < K; ++k) acc = _mm512_mask3_fmadd_ps(_mm512_permutex2var_ps(a, idx[k], b), w[k], acc, lanes[k]);
        store_lanes<STREAM>(out + r * out_stride, acc, store);
    }
}

// Block b of every row in the window form, K slots.
template <int K, bool STREAM>
__attribute__((target("avx512f"), always_inline)) inline void block_window(const row_gather_table &t,
        const kernels::axis_gather &g, int64_t b, const float *src, int64_t src_stride, float *out, int64_t out_stride,
        int64_t nrows, int64_t store) {
    const int64_t k0 = t.block_slots[size_t(b)], first = t.block_window[size_t(b)];
    __m512i idx[K];
    __m512 w[K];
    __mmask16 lanes[K];
    for (int k = 0; k < K; ++k) {
        const row_gather_table::slot &s = t.slots[size_t(k0 + k)];
        idx[k] = _mm512_add_epi32(_mm512_loadu_si512(t.idx.data() + 16 * (k0 + k)),
                _mm512_set1_epi32(int32_t(s.first_output - first)));
        w[k] = _mm512_loadu_ps(t.weight.data() + 16 * (k0 + k));
        lanes[k] = __mmask16(s.mask);
    }
    const float *at = src + first;
    float *o = out + 16 * b;
    const int64_t left = g.out - first; // the row's outputs from the window's start on
    if (left >= 32) return rows_window<K, true, STREAM>(idx, w, lanes, 0, 0, at, src_stride, o, out_stride, nrows, store);
    const __mmask16 lo = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1u);
    const __mmask16 hi = left <= 16 ? __mmask16(0) : __mmask16((1u << (left - 16)) - 1u);
    rows_window<K, false, STREAM>(idx, w, lanes, lo, hi, at, src_stride, o, out_stride, nrows, store);
}

template <bool STREAM>
__attribute__((target("avx512f"))) void gather_rows_avx512(const row_gather_table &t, const kernels::axis_gather &g,
        const float *src, int64_t src_stride, float *out, int64_t out_stride, int64_t nrows) {
    const int64_t nblocks = int64_t(t.block_slots.size()) - 1;
    for (int64_t b = 0; b < nblocks; ++b) {
        const int64_t k0 = t.block_slots[size_t(b)], nk = t.block_slots[size_t(b) + 1] - k0;
        const int64_t n = std::min<int64_t>(16, g.in - 16 * b);
        const int64_t store = n; // lanes stored
        if (t.block_window[size_t(b)] >= 0 && nk >= 1 && nk <= 6) {
            switch (nk) {
                case 1: block_window<1, STREAM>(t, g, b, src, src_stride, out, out_stride, nrows, store); break;
                case 2: block_window<2, STREAM>(t, g, b, src, src_stride, out, out_stride, nrows, store); break;
                case 3: block_window<3, STREAM>(t, g, b, src, src_stride, out, out_stride, nrows, store); break;
                case 4: block_window<4, STREAM>(t, g, b, src, src_stride, out, out_stride, nrows, store); break;
                case 5: block_window<5, STREAM>(t, g, b, src, src_stride, out, out_stride, nrows, store); break;
                default: block_window<6, STREAM>(t, g, b, src, src_stride, out, out_stride, nrows, store); break;
            }
            continue;
        }
        bool narrow = nk <= 8;
        for (int64_t k = 0; k < nk && narrow; ++k) narrow = t.slots[size_t(k0 + k)].window <= 32;
        if (!narrow) { // rare: many taps or a slot wider than 32 outputs
            for (int64_t r = 0; r < nrows; ++r) gather_avx512(t, g, src + r * src_stride, out + r * out_stride + 16 * b, b, b + 1);
            continue;
        }
        slot_regs sl[8];
        for (int64_t k = 0; k < nk; ++k) {
            const row_gather_table::slot &s = t.slots[size_t(k0 + k)];
            const int32_t w = s.window, hi = w - 16;
            sl[k] = {_mm512_loadu_si512(t.idx.data() + 16 * (k0 + k)), _mm512_loadu_ps(t.weight.data() + 16 * (k0 + k)),
                    __mmask16(s.mask), w >= 16 ? __mmask16(0xffff) : __mmask16((1u << w) - 1u),
                    hi >= 16 ? __mmask16(0xffff) : hi <= 0 ? __mmask16(0) : __mmask16((1u << hi) - 1u), s.first_output};
        }
        float *o = out + 16 * b;
        switch (nk) { // a fixed tap count keeps the loop over rows in registers
            case 1: rows_k<1, STREAM>(sl, src, src_stride, o, out_stride, nrows, store); break;
            case 2: rows_k<2, STREAM>(sl, src, src_stride, o, out_stride, nrows, store); break;
            case 3: rows_k<3, STREAM>(sl, src, src_stride, o, out_stride, nrows, store); break;
            case 4: rows_k<4, STREAM>(sl, src, src_stride, o, out_stride, nrows, store); break;
            case 5: rows_k<5, STREAM>(sl, src, src_stride, o, out_stride, nrows, store); break;
            case 6: rows_k<6, STREAM>(sl, src, src_stride, o, out_stride, nrows, store); break;
            case 7: rows_k<7, STREAM>(sl, src, src_stride, o, out_stride, nrows, store); break;
            case 8: rows_k<8, STREAM>(sl, src, src_stride, o, out_stride, nrows, store); break;
            default: // no taps: zeros
                for (int64_t r = 0; r < nrows; ++r) store_lanes<STREAM>(o + r * out_stride, _mm512_setzero_ps(), store);
        }
    }
    if (STREAM) _mm_sfence(); // the streamed lines are visible before the task ends
}

} // namespace

bool gather_rows_streams(const row_gather_table &t) { return has_avx512f() && !t.stride2; }

void gather_rows(const row_gather_table &t, const kernels::axis_gather &g, const float *src, int64_t src_stride,
        float *out, int64_t out_stride, int64_t nrows, bool stream) {
    if (has_avx512f() && t.stride2)
        return gather_rows_stride2(t, g, src, src_stride, out, out_stride, nrows, 0, int64_t(t.block_slots.size()) - 1);
    if (has_avx512f() && stream) return gather_rows_avx512<true>(t, g, src, src_stride, out, out_stride, nrows);
    if (has_avx512f()) return gather_rows_avx512<false>(t, g, src, src_stride, out, out_stride, nrows);
    const int64_t nblocks = int64_t(t.block_slots.size()) - 1;
    if (t.avx2_form) return gather_rows_avx2(t, g, src, src_stride, out, out_stride, nrows, 0, nblocks);
    gather_rows_scalar(g, src, src_stride, out, out_stride, nrows, 0, nblocks);
}

void gather_row(const row_gather_table &t, const kernels::axis_gather &g, const float *src, float *out,
        int64_t b0, int64_t b1) {
    if (has_avx512f() && t.stride2) return gather_rows_stride2(t, g, src, 0, out, 0, 1, b0, b1);
    if (has_avx512f()) return gather_avx512(t, g, src, out, b0, b1);
    if (t.avx2_form) return gather_rows_avx2(t, g, src, 0, out, 0, 1, b0, b1);
    gather_rows_scalar(g, src, 0, out, 0, 1, b0, b1);
}

} // namespace bpg::tbb_backend
