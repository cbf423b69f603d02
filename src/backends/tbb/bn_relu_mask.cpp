#include "backends/tbb/bn_relu_mask.hpp"

#include <immintrin.h>

namespace bpg::tbb_backend {

bool relu_mask_available() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}

namespace {

template <int NB>
__attribute__((target("avx512f"), always_inline)) inline void sums_nb(const float *x, const float *g, const float *src,
        const float *mean, int64_t a0, int64_t a1, uint16_t *mask, float *s1, float *s2) {
    constexpr int64_t K = 16 * NB;
    __m512 v1[NB], v2[NB], m[NB];
    for (int b = 0; b < NB; ++b) {
        v1[b] = _mm512_setzero_ps();
        v2[b] = _mm512_setzero_ps();
        m[b] = _mm512_loadu_ps(mean + 16 * b);
    }
    const __m512 zero = _mm512_setzero_ps();
    for (int64_t a = a0; a < a1; ++a)
        for (int b = 0; b < NB; ++b) {
            const int64_t at = a * K + 16 * b;
            const __mmask16 k = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + at), zero, _CMP_GT_OQ);
            mask[at / 16] = k;
            const __m512 ge = _mm512_maskz_mov_ps(k, _mm512_loadu_ps(g + at)); // relu: g where x > 0, else 0
            v1[b] = _mm512_add_ps(v1[b], ge);
            v2[b] = _mm512_add_ps(v2[b], _mm512_mul_ps(ge, _mm512_sub_ps(_mm512_loadu_ps(src + at), m[b])));
        }
    for (int b = 0; b < NB; ++b) {
        _mm512_storeu_ps(s1 + 16 * b, v1[b]);
        _mm512_storeu_ps(s2 + 16 * b, v2[b]);
    }
}

template <int NB, bool STREAM>
__attribute__((target("avx512f"), always_inline)) inline void update_nb(const uint16_t *mask, const float *g,
        const float *src, const float *ak, const float *c2, const float *c0, const float *mm, int64_t a0, int64_t a1,
        float *out, int64_t out_row0) {
    constexpr int64_t K = 16 * NB;
    __m512 A[NB], C2[NB], C0[NB], M[NB];
    for (int b = 0; b < NB; ++b) {
        A[b] = _mm512_loadu_ps(ak + 16 * b);
        C2[b] = _mm512_loadu_ps(c2 + 16 * b);
        C0[b] = _mm512_loadu_ps(c0 + 16 * b);
        M[b] = _mm512_loadu_ps(mm + 16 * b);
    }
    for (int64_t a = a0; a < a1; ++a)
        for (int b = 0; b < NB; ++b) {
            const int64_t at = a * K + 16 * b;
            const __m512 ge = _mm512_maskz_mov_ps(__mmask16(mask[at / 16]), _mm512_loadu_ps(g + at));
            const __m512 r = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(A[b], ge),
                                                   _mm512_mul_ps(C2[b], _mm512_sub_ps(_mm512_loadu_ps(src + at), M[b]))),
                    C0[b]);
            if (STREAM) _mm512_stream_ps(out + (a - out_row0) * K + 16 * b, r);
            else _mm512_storeu_ps(out + (a - out_row0) * K + 16 * b, r);
        }
    if (STREAM) _mm_sfence(); // the streamed lines are visible before the task ends
}

} // namespace

__attribute__((target("avx512f"))) void relu_mask_sums(const float *x, const float *g, const float *src,
        const float *mean, int64_t K, int64_t a0, int64_t a1, uint16_t *mask, float *s1, float *s2) {
    switch (K / 16) {
        case 1: return sums_nb<1>(x, g, src, mean, a0, a1, mask, s1, s2);
        case 2: return sums_nb<2>(x, g, src, mean, a0, a1, mask, s1, s2);
        case 3: return sums_nb<3>(x, g, src, mean, a0, a1, mask, s1, s2);
        default: return sums_nb<4>(x, g, src, mean, a0, a1, mask, s1, s2);
    }
}

__attribute__((target("avx512f"))) void relu_mask_update(const uint16_t *mask, const float *g, const float *src,
        const float *ak, const float *c2, const float *c0, const float *m, int64_t K, int64_t a0, int64_t a1, float *out,
        int64_t out_row0, bool stream) {
    if (stream) switch (K / 16) {
            case 1: return update_nb<1, true>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
            case 2: return update_nb<2, true>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
            case 3: return update_nb<3, true>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
            default: return update_nb<4, true>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
        }
    switch (K / 16) {
        case 1: return update_nb<1, false>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
        case 2: return update_nb<2, false>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
        case 3: return update_nb<3, false>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
        default: return update_nb<4, false>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
    }
}

} // namespace bpg::tbb_backend
