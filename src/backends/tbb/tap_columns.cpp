// sum_sym4_columns (tap_sum.hpp): a run of 2x linear interior inputs. Short
// rows: a column group at a time down the run, the four rows of an input in
// registers; the next input reuses two of them and loads two. Long rows: a
// column vector of four inputs at a time, their ten rows loaded before any
// sum is stored. Same operations in the same order as sum_taps, so the same
// bits.
#include <immintrin.h>

#include <algorithm>

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/simd_store.hpp"
#include "backends/tbb/tap_sum.hpp"

namespace bpg::tbb_backend {

namespace {
__attribute__((target("avx512f"), always_inline)) inline __m512 load_row(const row_source &src, int64_t o, int64_t j,
        __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, src.row(o) + j);
}
} // namespace

bool sym4_columns_available() { return has_avx512f(); }

namespace {

// (Not a lambda: GCC does not give a lambda its enclosing function's target.)
template <bool FULL>
__attribute__((target("avx512f"), always_inline)) inline __m512 load_at(const row_source &src, int64_t o, int64_t j,
        __mmask16 m) {
    return FULL ? _mm512_loadu_ps(src.row(o) + j) : load_row(src, o, j, m);
}

// Columns [j, j + 16 V) down the run, V vectors of each of the four rows in
// registers. FULL: no lane past n (plain loads and stores).
template <int V, bool FULL>
__attribute__((target("avx512f"), always_inline)) inline void walk(const grouped_axis &a, const row_source &src,
        int64_t n, int64_t j, float *out, int64_t out_stride, int64_t i0, int64_t i1) {
    const __m512 wa = _mm512_set1_ps(a.sym4_wa), wb = _mm512_set1_ps(a.sym4_wb);
    __mmask16 m[V];
    for (int v = 0; v < V; ++v) {
        const int64_t left = n - j - 16 * v;
        m[v] = FULL || left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1u);
    }
    // Rows 2i - 1, 2i, 2i + 1, 2i + 2 of the current input i.
    __m512 r0[V], r1[V], r2[V], r3[V];
    for (int v = 0; v < V; ++v) {
        r0[v] = load_at<FULL>(src, 2 * i0 - 1, j + 16 * v, m[v]);
        r1[v] = load_at<FULL>(src, 2 * i0, j + 16 * v, m[v]);
        r2[v] = load_at<FULL>(src, 2 * i0 + 1, j + 16 * v, m[v]);
        r3[v] = load_at<FULL>(src, 2 * i0 + 2, j + 16 * v, m[v]);
    }
    for (int64_t i = i0; i < i1; ++i) {
        float *o = out + (i - i0) * out_stride + j;
        for (int v = 0; v < V; ++v) {
            const __m512 acc = _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(r0[v], r3[v])),
                    _mm512_mul_ps(wb, _mm512_add_ps(r1[v], r2[v])));
            if (FULL) _mm512_storeu_ps(o + 16 * v, acc);
            else store_first(o + 16 * v, acc, n - j - 16 * v);
        }
        if (i + 1 == i1) break;
        for (int v = 0; v < V; ++v) {
            r0[v] = r2[v];
            r1[v] = r3[v];
            r2[v] = load_at<FULL>(src, 2 * i + 3, j + 16 * v, m[v]);
            r3[v] = load_at<FULL>(src, 2 * i + 4, j + 16 * v, m[v]);
        }
    }
}

// Inputs [i, i + K) at columns [j, j + 16): all 2K + 2 rows loaded before
// any sum is stored. Interleaved, each store at column j came before the
// loads of the next rows at column j: with rows a multiple of 4 KiB apart
// those alias it in the address bits the CPU compares first, and wait.
template <int K, bool FULL>
__attribute__((target("avx512f"), always_inline)) inline void block(const grouped_axis &a, const float *const *rows,
        int64_t n, int64_t j, float *out, int64_t out_stride, __mmask16 m) {
    const __m512 wa = _mm512_set1_ps(a.sym4_wa), wb = _mm512_set1_ps(a.sym4_wb);
    __m512 r[2 * K + 2], acc[K];
    for (int t = 0; t < 2 * K + 2; ++t) r[t] = FULL ? _mm512_loadu_ps(rows[t] + j) : _mm512_maskz_loadu_ps(m, rows[t] + j);
    for (int q = 0; q < K; ++q)
        acc[q] = _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(r[2 * q], r[2 * q + 3])),
                _mm512_mul_ps(wb, _mm512_add_ps(r[2 * q + 1], r[2 * q + 2])));
    for (int q = 0; q < K; ++q) {
        if (FULL) _mm512_storeu_ps(out + q * out_stride + j, acc[q]);
        else store_first(out + q * out_stride + j, acc[q], n - j);
    }
}

// Inputs [i, i + K), K <= 4, every column vector of the row; rows shared by
// two blocks are loaded by both (the second time from the cache).
template <int K>
__attribute__((target("avx512f"))) void blocks(const grouped_axis &a, const row_source &src, int64_t n, float *out,
        int64_t out_stride, int64_t i, int64_t prefetch_bytes) {
    const float *rows[2 * K + 2]; // rows 2i - 1 .. 2i + 2K, found once
    for (int t = 0; t < 2 * K + 2; ++t) rows[t] = src.row(2 * i - 1 + t);
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
        if (prefetch_bytes > 0)
            for (int t = 0; t < 2 * K + 2; ++t) prefetch_l2_ahead(rows[t] + j, prefetch_bytes);
        block<K, true>(a, rows, n, j, out, out_stride, __mmask16(0xffff));
    }
    if (j < n) block<K, false>(a, rows, n, j, out, out_stride, __mmask16((1u << (n - j)) - 1u));
}

} // namespace

// A run of up to 64 floats (the channels of NXC data) in one walk, all its
// vectors in registers; longer rows one vector at a time, four inputs at a
// time, since more vectors per walk slowed the memory-bound cases
// (bench/NOTES.md).
__attribute__((target("avx512f"))) void sum_sym4_columns(const grouped_axis &a, const row_source &src, int64_t n,
        float *out, int64_t out_stride, int64_t i0, int64_t i1, int64_t prefetch_bytes) {
    if (n <= 64 && n % 16 == 0) {
        switch (n / 16) {
            case 1: return walk<1, true>(a, src, n, 0, out, out_stride, i0, i1);
            case 2: return walk<2, true>(a, src, n, 0, out, out_stride, i0, i1);
            case 3: return walk<3, true>(a, src, n, 0, out, out_stride, i0, i1);
            case 4: return walk<4, true>(a, src, n, 0, out, out_stride, i0, i1);
        }
    }
    for (int64_t i = i0; i < i1; i += 4) {
        float *o = out + (i - i0) * out_stride;
        switch (std::min<int64_t>(4, i1 - i)) {
            case 1: blocks<1>(a, src, n, o, out_stride, i, prefetch_bytes); break;
            case 2: blocks<2>(a, src, n, o, out_stride, i, prefetch_bytes); break;
            case 3: blocks<3>(a, src, n, o, out_stride, i, prefetch_bytes); break;
            default: blocks<4>(a, src, n, o, out_stride, i, prefetch_bytes); break;
        }
    }
}

} // namespace bpg::tbb_backend
