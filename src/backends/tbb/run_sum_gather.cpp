#include "backends/tbb/run_sum_gather.hpp"

#include <algorithm>

#include <immintrin.h>

namespace bpg::tbb_backend {

namespace {

constexpr int64_t chunk_floats = 64; // channels per walk: four vectors of each of four columns in registers

// The weighted sum of input i's four rows at one offset, as sum_taps folds a
// sym4 input: wa * (row 2i-1 + row 2i+2) + wb * (row 2i + row 2i+1).
struct column_sum {
    const float *r0, *r1, *r2, *r3; // rows 2i - 1, 2i, 2i + 1, 2i + 2
    __m512 wa, wb;
    __attribute__((target("avx512f"), always_inline)) inline __m512 at(int64_t off) const {
        return _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(_mm512_loadu_ps(r0 + off), _mm512_loadu_ps(r3 + off))),
                _mm512_mul_ps(wb, _mm512_add_ps(_mm512_loadu_ps(r1 + off), _mm512_loadu_ps(r2 + off))));
    }
};

// Inputs [j0, j1) of b, every one sym4, channels [c, c + 16 V): columns 2j - 1
// .. 2j + 2 in registers, two new ones per input (the fold of tap_columns.cpp's
// walk, in the same order). Rows 2i + 1 and 2i + 2 are new to this input
// (the previous one read the other two): with prefetch_floats > 0 they are
// prefetched that far ahead.
template <int V>
__attribute__((target("avx512f"), always_inline)) inline void walk(const column_sum &cs, const grouped_axis &b,
        int64_t run, int64_t c, int64_t j0, int64_t j1, float *dst, int64_t dst_stride, int64_t prefetch_floats) {
    const __m512 wa = _mm512_set1_ps(b.sym4_wa), wb = _mm512_set1_ps(b.sym4_wb);
    __m512 t0[V], t1[V], t2[V], t3[V];
    for (int v = 0; v < V; ++v) {
        t0[v] = cs.at((2 * j0 - 1) * run + c + 16 * v);
        t1[v] = cs.at((2 * j0) * run + c + 16 * v);
        t2[v] = cs.at((2 * j0 + 1) * run + c + 16 * v);
        t3[v] = cs.at((2 * j0 + 2) * run + c + 16 * v);
    }
    for (int64_t j = j0; j < j1; ++j) {
        if (prefetch_floats > 0) // the lines of the next two columns' new rows, that far on (T1: into L2)
            for (int64_t col = 2 * j + 3; col <= 2 * j + 4; ++col)
                for (int v = 0; v < V; ++v) {
                    const int64_t at = col * run + c + 16 * v + prefetch_floats;
                    _mm_prefetch(reinterpret_cast<const char *>(cs.r2 + at), _MM_HINT_T1);
                    _mm_prefetch(reinterpret_cast<const char *>(cs.r3 + at), _MM_HINT_T1);
                }
        float *o = dst + j * dst_stride + c;
        for (int v = 0; v < V; ++v)
            _mm512_storeu_ps(o + 16 * v, _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(t0[v], t3[v])),
                                                 _mm512_mul_ps(wb, _mm512_add_ps(t1[v], t2[v]))));
        if (j + 1 == j1) break;
        for (int v = 0; v < V; ++v) {
            t0[v] = t2[v];
            t1[v] = t3[v];
            t2[v] = cs.at((2 * j + 3) * run + c + 16 * v);
            t3[v] = cs.at((2 * j + 4) * run + c + 16 * v);
        }
    }
}

// Input j of b of another form: the columns its taps read, summed into col,
// then its taps summed by sum_taps (the order of the final level).
template <int V>
__attribute__((target("avx512f"), always_inline)) inline void other_input(const column_sum &cs,
        const grouped_axis &b, int64_t run, int64_t c, int64_t j, const float **x, float *col, float *dst) {
    for (int64_t t = b.begin[size_t(j)]; t < b.begin[size_t(j) + 1]; ++t) {
        float *column = col + (t - b.begin[size_t(j)]) * chunk_floats;
        for (int v = 0; v < V; ++v) _mm512_storeu_ps(column + 16 * v, cs.at(b.output[size_t(t)] * run + c + 16 * v));
    }
    int64_t k = 0;
    sum_taps(dst + c, 16 * V, taps_of(b, j, x, [&](int64_t) { return col + chunk_floats * k++; }));
}

template <int V>
__attribute__((target("avx512f"))) void chunk(const column_sum &cs, const grouped_axis &b, int64_t run, int64_t c,
        const float **x, float *col, float *dst, int64_t dst_stride, int64_t prefetch_floats) {
    const int64_t in = int64_t(b.begin.size()) - 1;
    for (int64_t j = 0; j < in;) {
        if (!b.sym4[size_t(j)]) {
            other_input<V>(cs, b, run, c, j, x, col, dst + j * dst_stride);
            ++j;
            continue;
        }
        int64_t e = j + 1;
        while (e < in && b.sym4[size_t(e)]) ++e;
        walk<V>(cs, b, run, c, j, e, dst, dst_stride, prefetch_floats);
        j = e;
    }
}

} // namespace

bool run_sum_gather_available(const grouped_axis &b, int64_t run) {
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    const int64_t sym4 = std::count(b.sym4.begin(), b.sym4.end(), uint8_t(1));
    return avx512 && run > 0 && run % 16 == 0 && 2 * sym4 >= int64_t(b.sym4.size());
}

int64_t run_sum_gather_scratch(const grouped_axis &b) {
    int64_t taps = 1;
    for (size_t j = 0; j + 1 < b.begin.size(); ++j) taps = std::max(taps, b.begin[j + 1] - b.begin[j]);
    return taps * chunk_floats;
}

__attribute__((target("avx512f"))) void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src,
        const grouped_axis &b, int64_t run, const float **x, float *col, float *dst, int64_t dst_stride,
        int64_t prefetch_bytes) {
    const column_sum cs {src.row(2 * i - 1), src.row(2 * i), src.row(2 * i + 1), src.row(2 * i + 2),
            _mm512_set1_ps(a.sym4_wa), _mm512_set1_ps(a.sym4_wb)};
    const int64_t pf = prefetch_bytes / int64_t(sizeof(float));
    for (int64_t c = 0; c < run; c += chunk_floats) {
        switch (std::min(run - c, chunk_floats) / 16) {
            case 1: chunk<1>(cs, b, run, c, x, col, dst, dst_stride, pf); break;
            case 2: chunk<2>(cs, b, run, c, x, col, dst, dst_stride, pf); break;
            case 3: chunk<3>(cs, b, run, c, x, col, dst, dst_stride, pf); break;
            default: chunk<4>(cs, b, run, c, x, col, dst, dst_stride, pf); break;
        }
    }
}

} // namespace bpg::tbb_backend
