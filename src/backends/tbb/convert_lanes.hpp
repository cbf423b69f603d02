// 16 values of a 16-bit dtype to and from the 16 f32 lanes of an AVX-512
// register, so that a kernel reads and writes bf16/f16 tensors directly
// rather than converting them through f32 rows in memory first. The bits
// are row_io's (convert_rows.hpp): f16 by vcvtph2ps / vcvtps2ph rounding to
// nearest even (F16C's instructions, 16 lanes wide), bf16 by a shift up and
// kernels::bf16_bits_of_f32_bits down (tests/backends/test_tbb_convert_rows.cpp).
// Include only from files of src/backends/tbb.
#pragma once

#include <cstdint>

#include <immintrin.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/simd_store.hpp"

namespace bpg::tbb_backend::convert16 {

#define BPG_LANES_AVX512 __attribute__((target("avx512f"), always_inline)) inline

typedef uint32_t u32x16 __attribute__((vector_size(64)));

// (Zero-masking forms and vector extensions: GCC 12's unmasked intrinsics
// warn of their own undefined operands.)
BPG_LANES_AVX512 __m512 widen(__m256i h, const f16_t *) { return _mm512_maskz_cvtph_ps(__mmask16(0xffff), h); }
BPG_LANES_AVX512 __m512 widen(__m256i h, const bf16_t *) {
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(__mmask16(0xffff), _mm512_maskz_cvtepu16_epi32(__mmask16(0xffff), h), 16));
}
BPG_LANES_AVX512 __m256i narrow(__m512 v, const f16_t *) {
    return _mm512_maskz_cvtps_ph(__mmask16(0xffff), v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
BPG_LANES_AVX512 __m256i narrow(__m512 v, const bf16_t *) {
    u32x16 bits;
    kernels::bf16_bits_of_f32_bits(bits, (u32x16)v);
    return _mm512_maskz_cvtepi32_epi16(__mmask16(0xffff), __m512i(bits));
}

// Whether a lane of v is an f32 denormal (AVX512F's mask tests).
BPG_LANES_AVX512 bool any_denormal(__m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __mmask16 exponent_zero = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_test_epi32_mask(exponent_zero, u, _mm512_set1_epi32(0x007fffff)) != 0;
}

// Whether a lane of v[0 .. N) is an f32 denormal, one test for them all:
// 0 < |x| < 2^-126, that is (bits << 1) - 1 below 0x00ffffff unsigned (zero
// wraps to the top). Shifts, adds and unsigned minimums, then one mask
// compare: for loops whose shuffle port (where the mask tests of
// any_denormal go) is already full of transposes and permutes.
template <int N> BPG_LANES_AVX512 bool any_denormal_of(const __m512 *v) {
    const __mmask16 all = 0xffff;
    const __m512i minus_one = _mm512_set1_epi32(-1);
    __m512i low = minus_one;
#pragma GCC unroll 16
    for (int k = 0; k < N; ++k)
        low = _mm512_maskz_min_epu32(all, low,
                _mm512_maskz_add_epi32(all, _mm512_maskz_slli_epi32(all, _mm512_castps_si512(v[k]), 1), minus_one));
    return _mm512_cmplt_epu32_mask(low, _mm512_set1_epi32(0x00ffffff)) != 0;
}

// v as bf16 by AVX512_BF16's vcvtneps2bf16, its lanes known not to be
// denormals, which the instruction reads as zero (inline asm: the kernels
// are built for AVX512F).
BPG_LANES_AVX512 __m256i narrow_bf16_unchecked(__m512 v) {
    __m256i r;
    asm("vcvtneps2bf16 %1, %0" : "=v"(r) : "v"(v));
    return r;
}

// v as bf16 by vcvtneps2bf16, for the loops the plan names so where the CPU
// has it: one instruction instead of the integer formula's several. A
// vector holding a denormal takes the formula: the same bits either way
// (both round to nearest even and quiet a NaN the same way).
BPG_LANES_AVX512 __m256i narrow_bf16_hw(__m512 v) {
    if (__builtin_expect(any_denormal(v), 0)) return narrow(v, static_cast<const bf16_t *>(nullptr));
    return narrow_bf16_unchecked(v);
}

// Two vectors as 32 bf16 (lo the low half) by AVX512_BF16's vcvtne2ps2bf16:
// one instruction and one denormal test for both (one vcvtneps2bf16 and test
// a vector, then a shuffle, held up a stream of them); the formula where a
// lane of either is a denormal, as narrow_bf16_hw.
BPG_LANES_AVX512 __m512i narrow_pair_bf16_hw(__m512 lo, __m512 hi) {
    if (__builtin_expect(any_denormal(lo) || any_denormal(hi), 0)) {
        typedef long long v4di __attribute__((vector_size(32))); // (GCC 12's insert intrinsic warns)
        const bf16_t *formula = nullptr;
        return __m512i(__builtin_shufflevector(v4di(narrow(lo, formula)), v4di(narrow(hi, formula)), 0, 1, 2, 3, 4, 5,
                6, 7));
    }
    __m512i v;
    asm("vcvtne2ps2bf16 %1, %2, %0" : "=v"(v) : "v"(lo), "v"(hi));
    return v;
}

// bf16 data of a kernel instantiated for a CPU with AVX512_BF16: read as
// bf16, narrowed by narrow_bf16_hw.
struct bf16_vcvtne_t {
    uint16_t bits;
};
BPG_LANES_AVX512 __m512 widen(__m256i h, const bf16_vcvtne_t *) {
    return widen(h, static_cast<const bf16_t *>(nullptr));
}
BPG_LANES_AVX512 __m256i narrow(__m512 v, const bf16_vcvtne_t *) { return narrow_bf16_hw(v); }

// The 16 values at p as f32.
template <typename T> BPG_LANES_AVX512 __m512 load16(const T *p) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)), p);
}

// The first n (< 16) values at p as f32, the other lanes zero; reads nothing
// past them. No AVX512BW for a 16-bit masked load: the n / 2 whole 32-bit
// words by a masked load, an odd last value put in by a masked broadcast.
// (Pieces stored to a buffer and read back as one vector stalled each call
// on the failed store forwarding: rows with such a tail ran up to 2x slower.)
template <typename T> BPG_LANES_AVX512 __m512 load_first(const T *p, int64_t n) {
    const uint16_t *s = &p->bits;
    const int64_t words = n / 2;
    __m512i w = _mm512_maskz_loadu_epi32(__mmask16((1u << words) - 1u), s);
    if (n & 1) w = _mm512_mask_set1_epi32(w, __mmask16(1u << words), int(s[n - 1]));
    return widen(_mm512_maskz_extracti64x4_epi64(__mmask8(0xf), w, 0), p);
}

// The lanes of a prefix mask m (lanes 0 .. k - 1) at p as f32, the others
// zero; reads nothing past them.
template <typename T> BPG_LANES_AVX512 __m512 load_prefix(const T *p, __mmask16 m) {
    if (m == 0) return _mm512_setzero_ps(); // (a window past the row's end)
    const int64_t k = 32 - __builtin_clz(unsigned(m));
    return k >= 16 ? load16(p) : load_first(p, k);
}

// Values 2j + P (j < 16) of the 32 bf16 at p, as f32: the 32 values are 16
// words of 32 bits, the even one in the low half, so a shift or a mask
// widens one phase (the values of load16, without the permutes that would
// take them apart).
template <int P> BPG_LANES_AVX512 __m512 load_phase(const bf16_t *p) {
    const __m512i w = _mm512_loadu_si512(p);
    if constexpr (P == 0) return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(__mmask16(0xffff), w, 16));
    else return _mm512_castsi512_ps(_mm512_maskz_and_epi32(__mmask16(0xffff), w, _mm512_set1_epi32(int(0xffff0000u))));
}

template <typename T> BPG_LANES_AVX512 void store16(T *p, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), narrow(v, p));
}

// The first n lanes of v to p (all 16 when n >= 16), in plain stores.
template <typename T> BPG_LANES_AVX512 void store_first(T *p, __m512 v, int64_t n) {
    if (n >= 16) return store16(p, v);
    tbb_backend::store_first(&p->bits, bpg_u16x16(narrow(v, p)), n);
}

// store_first for a vector already narrowed to bf16 (narrow_bf16_unchecked).
BPG_LANES_AVX512 void store_first_narrowed(bf16_vcvtne_t *p, __m256i h, int64_t n) {
    if (n >= 16) return _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), h);
    tbb_backend::store_first(&p->bits, bpg_u16x16(h), n);
}

} // namespace bpg::tbb_backend::convert16
