#include "backends/tbb/bn_relu_mask.hpp"

#include <immintrin.h>

#include "backends/tbb/channel_blocks.hpp"
#include "backends/tbb/cpu.hpp"
#include "kernels/bn_math.hpp"

namespace bpg::tbb_backend {

bool relu_mask_available() { return has_avx512f(); }

namespace {

template <int NB>
__attribute__((target("avx512f"))) void sums_nb(const float *x, const float *g, const float *src,
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
            const __m512 x = _mm512_loadu_ps(src + at);
            kernels::bn_accumulate(v1[b], v2[b], ge, x, m[b]);
        }
    for (int b = 0; b < NB; ++b) {
        _mm512_storeu_ps(s1 + 16 * b, v1[b]);
        _mm512_storeu_ps(s2 + 16 * b, v2[b]);
    }
}

template <int NB, bool STREAM>
__attribute__((target("avx512f"))) void update_nb(const uint16_t *mask, const float *g,
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
            const __m512 x = _mm512_loadu_ps(src + at);
            __m512 r;
            kernels::bn_folded_diff_src(r, false, A[b], ge, C2[b], x, M[b], C0[b]);
            if (STREAM) _mm512_stream_ps(out + (a - out_row0) * K + 16 * b, r);
            else _mm512_storeu_ps(out + (a - out_row0) * K + 16 * b, r);
        }
    if (STREAM) _mm_sfence(); // the streamed lines are visible before the task ends
}

} // namespace

__attribute__((target("avx512f"))) void relu_mask_sums(const float *x, const float *g, const float *src,
        const float *mean, int64_t K, int64_t a0, int64_t a1, uint16_t *mask, float *s1, float *s2) {
    with_blocks(K, [&](auto nb) { sums_nb<nb.value>(x, g, src, mean, a0, a1, mask, s1, s2); });
}

__attribute__((target("avx512f"))) void relu_mask_update(const uint16_t *mask, const float *g, const float *src,
        const float *ak, const float *c2, const float *c0, const float *m, int64_t K, int64_t a0, int64_t a1, float *out,
        int64_t out_row0, bool stream) {
    with_blocks(K, [&](auto nb) {
        if (stream) update_nb<nb.value, true>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
        else update_nb<nb.value, false>(mask, g, src, ak, c2, c0, m, a0, a1, out, out_row0);
    });
}

} // namespace bpg::tbb_backend
