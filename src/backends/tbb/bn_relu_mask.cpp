#include "backends/tbb/bn_relu_mask.hpp"

#include <immintrin.h>
#include <type_traits>

#include "backends/tbb/channel_blocks.hpp"
#include "backends/tbb/cpu.hpp"
#include "kernels/bn_math.hpp"

namespace bpg::tbb_backend {

namespace {

#define BPG_AVX512_INLINE __attribute__((target("avx512f"), always_inline)) inline

// The lanes (of 16 channels from element `at`, those in `lanes`) as BN sees
// them: the ReLU's value (r where the ReLU passed, else +0) into the input it
// feeds, the other tensor as it is. IntoSrc and Whole (all 16 lanes) are
// template flags: as run-time tests the loops kept their sums on the stack.
template <bool IntoSrc, bool Whole>
BPG_AVX512_INLINE void operands(const relu_mask_rows &t, int64_t at, __mmask16 lanes, __mmask16 passed, __m512 &dd,
        __m512 &src) {
    const __m512 relu = Whole ? _mm512_maskz_mov_ps(passed, _mm512_loadu_ps(t.r + at))
                              : _mm512_maskz_loadu_ps(passed, t.r + at);
    const __m512 other = Whole ? _mm512_loadu_ps(t.other + at) : _mm512_maskz_loadu_ps(lanes, t.other + at);
    dd = IntoSrc ? other : relu;
    src = IntoSrc ? relu : other;
}

// Recomputes the ReLU's decisions for those lanes (compared ordered, so a NaN
// relu input gives 0, as reader::relu in bn_lanes.hpp) and keeps them.
template <bool Whole>
BPG_AVX512_INLINE __mmask16 decide(const relu_mask_rows &t, int64_t at, __mmask16 lanes, uint16_t &word) {
    const __m512 x = Whole ? _mm512_loadu_ps(t.x + at) : _mm512_maskz_loadu_ps(lanes, t.x + at);
    const __mmask16 passed = _mm512_mask_cmp_ps_mask(lanes, x, _mm512_setzero_ps(), _CMP_GT_OQ);
    word = passed;
    return passed;
}

// The channel lanes of bit word v of a row: all but in a last, partial word.
BPG_AVX512_INLINE __mmask16 lanes_of(int64_t v, int64_t K) {
    const int64_t left = K - 16 * v;
    return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
}

// K = 16 * NB channels (NB <= 4): sums and coefficients in registers.
template <int NB, bool IntoSrc>
__attribute__((target("avx512f"))) void sums_nb(const relu_mask_rows t, const float *mean, int64_t a0, int64_t a1,
        uint16_t *mask, float *s1, float *s2) {
    constexpr int64_t K = 16 * NB;
    __m512 v1[NB], v2[NB], m[NB];
    for (int b = 0; b < NB; ++b) {
        v1[b] = _mm512_setzero_ps();
        v2[b] = _mm512_setzero_ps();
        m[b] = _mm512_loadu_ps(mean + 16 * b);
    }
    for (int64_t a = a0; a < a1; ++a)
        for (int b = 0; b < NB; ++b) {
            const int64_t at = a * K + 16 * b;
            __m512 dd, src;
            operands<IntoSrc, true>(t, at, 0xffff, decide<true>(t, at, 0xffff, mask[a * NB + b]), dd, src);
            kernels::bn_accumulate(v1[b], v2[b], dd, src, m[b]);
        }
    for (int b = 0; b < NB; ++b) {
        _mm512_storeu_ps(s1 + 16 * b, v1[b]);
        _mm512_storeu_ps(s2 + 16 * b, v2[b]);
    }
}

// Any K: the sums stay in s1, s2 (in L1) between rows.
template <bool IntoSrc>
__attribute__((target("avx512f"))) void sums_any(const relu_mask_rows t, const float *mean, int64_t a0, int64_t a1,
        uint16_t *mask, float *s1, float *s2) {
    const int64_t W = relu_mask_words(t.K);
    for (int64_t j = 0; j < 16 * W; ++j) s1[j] = s2[j] = 0.f;
    for (int64_t a = a0; a < a1; ++a)
        for (int64_t v = 0; v < W; ++v) {
            const int64_t at = a * t.K + 16 * v;
            const __mmask16 lanes = lanes_of(v, t.K);
            __m512 dd, src;
            operands<IntoSrc, false>(t, at, lanes, decide<false>(t, at, lanes, mask[a * W + v]), dd, src);
            __m512 v1 = _mm512_loadu_ps(s1 + 16 * v), v2 = _mm512_loadu_ps(s2 + 16 * v);
            kernels::bn_accumulate(v1, v2, dd, src, _mm512_maskz_loadu_ps(lanes, mean + 16 * v));
            _mm512_storeu_ps(s1 + 16 * v, v1);
            _mm512_storeu_ps(s2 + 16 * v, v2);
        }
}

// (t by value: the stores cannot alias a local copy, so its pointers stay in
// registers.)
template <int NB, bool IntoSrc, bool STREAM>
__attribute__((target("avx512f"))) void update_nb(const relu_mask_rows t, const uint16_t *mask, const float *ak,
        const float *c2, const float *c0, const float *mm, int64_t a0, int64_t a1, float *out, int64_t out_row0) {
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
            __m512 dd, src, r;
            operands<IntoSrc, true>(t, at, 0xffff, __mmask16(mask[a * NB + b]), dd, src);
            kernels::bn_folded_diff_src(r, false, A[b], dd, C2[b], src, M[b], C0[b]);
            if (STREAM) _mm512_stream_ps(out + (a - out_row0) * K + 16 * b, r);
            else _mm512_storeu_ps(out + (a - out_row0) * K + 16 * b, r);
        }
    if (STREAM) _mm_sfence(); // the streamed lines are visible before the task ends
}

// Any K: the coefficients from memory (L1) for each vector.
template <bool IntoSrc, bool STREAM>
__attribute__((target("avx512f"))) void update_any(const relu_mask_rows t, const uint16_t *mask, const float *ak,
        const float *c2, const float *c0, const float *mm, int64_t a0, int64_t a1, float *out, int64_t out_row0) {
    const int64_t W = relu_mask_words(t.K);
    for (int64_t a = a0; a < a1; ++a)
        for (int64_t v = 0; v < W; ++v) {
            const int64_t at = a * t.K + 16 * v, c = 16 * v;
            const __mmask16 lanes = lanes_of(v, t.K);
            __m512 dd, src, r;
            operands<IntoSrc, false>(t, at, lanes, __mmask16(mask[a * W + v]), dd, src);
            kernels::bn_folded_diff_src(r, false, _mm512_maskz_loadu_ps(lanes, ak + c), dd,
                    _mm512_maskz_loadu_ps(lanes, c2 + c), src, _mm512_maskz_loadu_ps(lanes, mm + c),
                    _mm512_maskz_loadu_ps(lanes, c0 + c));
            float *o = out + (a - out_row0) * t.K + c;
            // Not streamed: into the stage or a small diff_src, lines in the cache, where a
            // masked store is cheap (cheaper than store_first of simd_store.hpp).
            if (STREAM) _mm512_stream_ps(o, r); // K % 16 == 0: whole vectors
            else _mm512_mask_storeu_ps(o, lanes, r);
        }
    if (STREAM) _mm_sfence(); // the streamed lines are visible before the task ends
}

// f(std::bool_constant<b>): a run-time choice made once, outside the loops.
template <typename F> void with_flag(bool b, const F &f) {
    if (b) f(std::true_type {});
    else f(std::false_type {});
}

} // namespace

__attribute__((target("avx512f"))) void relu_mask_sums(const relu_mask_rows &t, const float *mean, int64_t a0,
        int64_t a1, uint16_t *mask, float *s1, float *s2) {
    with_flag(t.into_src, [&](auto into_src) {
        if (!fits_blocks(t.K)) return sums_any<into_src.value>(t, mean, a0, a1, mask, s1, s2);
        with_blocks(t.K, [&](auto nb) { sums_nb<nb.value, into_src.value>(t, mean, a0, a1, mask, s1, s2); });
    });
}

__attribute__((target("avx512f"))) void relu_mask_update(const relu_mask_rows &t, const uint16_t *mask,
        const float *ak, const float *c2, const float *c0, const float *m, int64_t a0, int64_t a1, float *out,
        int64_t out_row0, bool stream) {
    with_flag(t.into_src, [&](auto into_src) {
        with_flag(stream, [&](auto streamed) {
            constexpr bool IntoSrc = into_src.value, Stream = streamed.value;
            if (!fits_blocks(t.K))
                return update_any<IntoSrc, Stream>(t, mask, ak, c2, c0, m, a0, a1, out, out_row0);
            with_blocks(t.K, [&](auto nb) {
                update_nb<nb.value, IntoSrc, Stream>(t, mask, ak, c2, c0, m, a0, a1, out, out_row0);
            });
        });
    });
}

} // namespace bpg::tbb_backend
