#include "backends/tbb/row_sum_gather.hpp"

#include "backends/tbb/stride2_simd.hpp"

namespace bpg::tbb_backend {

using namespace stride2;

namespace {

// Window sources summing an input's taps on the fly (the folds of sum_taps
// for these two forms, in the same order).
// 2x nearest: taps (x0, x1) of weight 1, one group: x0 + x1.
struct pair_rows {
    const float *x0, *x1;
    BPG_AVX512 __m512 half(__mmask16 m, int64_t at) const {
        return _mm512_add_ps(_mm512_maskz_loadu_ps(m, x0 + at), _mm512_maskz_loadu_ps(m, x1 + at));
    }
    BPG_AVX512 __m512 full(int64_t at) const { return _mm512_add_ps(_mm512_loadu_ps(x0 + at), _mm512_loadu_ps(x1 + at)); }
};
// 2x linear interior: taps (x0, x1) of weight wa, then (x2, x3) of weight wb.
struct sym4_rows {
    const float *x0, *x1, *x2, *x3;
    __m512 wa, wb;
    BPG_AVX512 __m512 combine(__m512 r0, __m512 r1, __m512 r2, __m512 r3) const {
        return _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(r0, r1)), _mm512_mul_ps(wb, _mm512_add_ps(r2, r3)));
    }
    BPG_AVX512 __m512 half(__mmask16 m, int64_t at) const {
        return combine(_mm512_maskz_loadu_ps(m, x0 + at), _mm512_maskz_loadu_ps(m, x1 + at),
                _mm512_maskz_loadu_ps(m, x2 + at), _mm512_maskz_loadu_ps(m, x3 + at));
    }
    BPG_AVX512 __m512 full(int64_t at) const {
        return combine(_mm512_loadu_ps(x0 + at), _mm512_loadu_ps(x1 + at), _mm512_loadu_ps(x2 + at), _mm512_loadu_ps(x3 + at));
    }
};

// An input of K taps each with its own weight (align_corners and other
// scales): the fold of sum_taps for that form, w0 x0 + w1 x1 + ... in order.
template <int K> struct weighted_rows {
    const float *x[K];
    __m512 w[K];
    template <bool FULL> BPG_AVX512 __m512 load(int t, __mmask16 m, int64_t at) const {
        return FULL ? _mm512_loadu_ps(x[t] + at) : _mm512_maskz_loadu_ps(m, x[t] + at);
    }
    template <bool FULL> BPG_AVX512 __m512 fold(__mmask16 m, int64_t at) const {
        __m512 acc = _mm512_mul_ps(w[0], load<FULL>(0, m, at));
        for (int t = 1; t < K; ++t) acc = _mm512_add_ps(acc, _mm512_mul_ps(w[t], load<FULL>(t, m, at)));
        return acc;
    }
    BPG_AVX512 __m512 half(__mmask16 m, int64_t at) const { return fold<false>(m, at); }
    BPG_AVX512 __m512 full(int64_t at) const { return fold<true>(__mmask16(0xffff), at); }
};

bool is_pair(const grouped_axis &a, int64_t i) {
    return a.begin[size_t(i) + 1] - a.begin[size_t(i)] == 2 && a.starts[size_t(i)] == 1u && a.ones[size_t(i)];
}

struct fused_rows {
    const grouped_axis &a;
    int64_t i0, count;
    const float **x;
    const row_source &src;
    const row_gather_table &t;
    const kernels::axis_gather &g;
    float *out;
    int64_t out_stride;
    float *row;
    int64_t prefetch_bytes;
    template <int DLO, int K> __attribute__((target("avx512f"))) void operator()() const {
        const common_weights<K> cw(t);
        const int64_t blocks = (g.in + 15) / 16;
        const __m512 wa = _mm512_set1_ps(a.sym4_wa), wb = _mm512_set1_ps(a.sym4_wb);
        for (int64_t i = i0; i < i0 + count; ++i) {
            if (prefetch_bytes > 0) prefetch_rows_ahead(a, src, g.out, i, i + 1, prefetch_bytes);
            float *dst = out + (i - i0) * out_stride;
            const float *const *r = x;
            const int64_t t0 = a.begin[size_t(i)];
            for (int64_t k = t0; k < a.begin[size_t(i) + 1]; ++k) x[k - t0] = src.row(a.output[size_t(k)]);
            if (a.sym4[size_t(i)]) {
                row_stride2<DLO, K>(t, g, sym4_rows {r[0], r[1], r[2], r[3], wa, wb}, dst, cw.w, 0, blocks);
            } else if (is_pair(a, i)) {
                row_stride2<DLO, K>(t, g, pair_rows {r[0], r[1]}, dst, cw.w, 0, blocks);
            } else if (const int64_t k = a.begin[size_t(i) + 1] - t0;
                       (k == 3 || k == 4) && a.starts[size_t(i)] == (1u << k) - 1u && !a.ones[size_t(i)]) {
                const float *w = a.weight.data() + t0;
                if (k == 4)
                    row_stride2<DLO, K>(t, g, weighted_rows<4> {{r[0], r[1], r[2], r[3]},
                            {_mm512_set1_ps(w[0]), _mm512_set1_ps(w[1]), _mm512_set1_ps(w[2]), _mm512_set1_ps(w[3])}},
                            dst, cw.w, 0, blocks);
                else
                    row_stride2<DLO, K>(t, g, weighted_rows<3> {{r[0], r[1], r[2]},
                            {_mm512_set1_ps(w[0]), _mm512_set1_ps(w[1]), _mm512_set1_ps(w[2])}}, dst, cw.w, 0, blocks);
            } else {
                sum_taps(row, g.out, taps_of(a, i, x, [&](int64_t o) { return src.row(o); }));
                row_stride2<DLO, K>(t, g, memory_row {row}, dst, cw.w, 0, blocks);
            }
        }
    }
};

} // namespace

bool row_sum_gather_available(const row_gather_table &t) {
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    return avx512 && t.stride2;
}

void sum_gather_rows(const grouped_axis &a, int64_t i0, int64_t count, const float **x, const row_source &src,
        const row_gather_table &t, const kernels::axis_gather &g, float *out, int64_t out_stride, float *row,
        int64_t prefetch_bytes) {
    with_form(t, fused_rows {a, i0, count, x, src, t, g, out, out_stride, row, prefetch_bytes});
}

} // namespace bpg::tbb_backend
