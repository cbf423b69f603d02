// bf16 narrowing by vcvtneps2bf16 for several vectors at once: one denormal
// test for all of them, then the instruction alone on each. The test of
// convert16::narrow_bf16_hw takes two mask instructions a vector, and mask
// instructions take the shuffle port, which the small-planes paths already
// fill with transposes and permutes. Where any lane is a denormal (which
// vcvtneps2bf16 reads as zero), the caller narrows those vectors by
// narrow_bf16_hw as before: the choice per value is the same, so the bits.
// Include only from files of src/backends/tbb.
#pragma once

#include <immintrin.h>

namespace bpg::tbb_backend::bf16_batch {

#define BPG_BF16_BATCH_INLINE __attribute__((target("avx512f"), always_inline)) inline

// Whether a lane of v[0 .. N) is an f32 denormal: 0 < |x| < 2^-126, that
// is (bits << 1) - 1 below 0x00ffffff unsigned (zero wraps to the top).
// Shifts, adds and unsigned minimums (ports 0 and 5), one mask compare.
template <int N> BPG_BF16_BATCH_INLINE bool any_denormal(const __m512 *v) {
    const __mmask16 all = 0xffff; // (zero-masking forms: GCC 12 warns on the unmasked ones)
    const __m512i minus_one = _mm512_set1_epi32(-1);
    __m512i low = minus_one;
#pragma GCC unroll 16
    for (int k = 0; k < N; ++k)
        low = _mm512_maskz_min_epu32(all, low,
                _mm512_maskz_add_epi32(all, _mm512_maskz_slli_epi32(all, _mm512_castps_si512(v[k]), 1), minus_one));
    return _mm512_cmplt_epu32_mask(low, _mm512_set1_epi32(0x00ffffff)) != 0;
}

// v narrowed by vcvtneps2bf16, its lanes known not to be denormals (inline
// asm: the kernels are built for AVX512F).
BPG_BF16_BATCH_INLINE __m256i narrow_unchecked(__m512 v) {
    __m256i h;
    asm("vcvtneps2bf16 %1, %0" : "=v"(h) : "v"(v));
    return h;
}

} // namespace bpg::tbb_backend::bf16_batch
