// How the BN loops write diff_src from f32 lanes: converted to 16 bits 16
// lanes at a time, and streamed past the caches in whole lines when large.
#pragma once

#include "backends/tbb/bn_lanes.hpp"

namespace bpg::tbb_backend::bn {

// 16 f32 lanes as diff_src's 16-bit T, 16 lanes at a time by
// convert16::narrow (convert_lanes.hpp: the bits of f32_to_bf16_inline and
// f32_to_f16_inline). Per lane, GCC's code for from_f32 left NXC bf16 pass 2
// at twice the time of the reads and writes it does.
template <typename T> __attribute__((target("avx512f"), always_inline)) inline u16x16 to_16bit(T *out, const lanes16 &r) {
    return u16x16(convert16::narrow(__m512(r), out));
}

// The same in the generic 16-bit loops (built for every instruction set),
// 16 lanes as two vectors of 8: GCC 12 lowers the compares, selects and
// shuffles of 64-byte vectors lane by lane through the stack where it has no
// 512-bit registers (AVX2 pass 2 converted and stored one lane at a time),
// 32-byte ones in registers.
// (The f16c instances: by F16C, the same bits.)
template <typename T> BPG_ALWAYS_INLINE void store_halves(T *out, const f32x8 &lo, const f32x8 &hi) {
    if constexpr (std::is_same_v<T, f16c_t>) {
        narrow8(out, lo);
        narrow8(out + 8, hi);
        return;
    }
    typedef uint32_t u32x8 __attribute__((vector_size(32)));
    u32x8 half[2] = {u32x8(lo), u32x8(hi)};
    for (u32x8 &h : half) {
        if constexpr (std::is_same_v<T, bf16_t>) kernels::bf16_bits_of_f32_bits(h, u32x8(h));
        else kernels::f16_bits_of_f32_bits(h, u32x8(h));
    }
    const u16x16 v = __builtin_shufflevector(u16x16(half[0]), u16x16(half[1]), 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
            22, 24, 26, 28, 30);
    __builtin_memcpy(out, &v, sizeof v);
}

// Two consecutive vectors of lanes out to diff_src at `out` (64-byte
// aligned) with non-temporal stores of whole lines: a 16-bit pair fills one
// line (Zen 4 runs half-line non-temporal stores several times slower).
__attribute__((target("avx512f"), always_inline)) inline void stream_pair(float *out, const lanes16 &r0, const lanes16 &r1) {
    _mm512_stream_ps(out, __m512(r0));
    _mm512_stream_ps(out + 16, __m512(r1));
}
template <typename T>
__attribute__((target("avx512f"), always_inline)) inline void stream_pair(T *out, const lanes16 &r0, const lanes16 &r1) {
    const u16x16 lo = to_16bit(out, r0), hi = to_16bit(out, r1);
    const u16x32 line = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
            18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    _mm512_stream_si512(reinterpret_cast<__m512i *>(out), __m512i(line));
}
// One vector alone (the last of an odd count), with an ordinary store.
__attribute__((target("avx512f"), always_inline)) inline void store_one(float *out, const lanes16 &r) {
    _mm512_storeu_ps(out, __m512(r));
}
template <typename T>
__attribute__((target("avx512f"), always_inline)) inline void store_one(T *out, const lanes16 &r) {
    const u16x16 v = to_16bit(out, r);
    __builtin_memcpy(out, &v, sizeof v);
}

// One vector as bf16 rounded by AVX512_BF16's vcvtneps2bf16
// (convert16::narrow_bf16_hw: the same bits as to_16bit), for the loops the
// plan names so where the CPU has it.
__attribute__((target("avx512f"), always_inline)) inline void store_one_bf16_hw(bf16_t *out, const lanes16 &r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(out), convert16::narrow_bf16_hw(__m512(r)));
}

// stream_pair for bf16 by AVX512_BF16's vcvtne2ps2bf16, both vectors in one
// instruction (r0 the low half), the integer formula where a lane is a
// denormal, as store_one_bf16_hw. The integer formula's shifts, masks and
// shuffles held up the channels-last pass 2 where the hardware's do not.
__attribute__((target("avx512f"), always_inline)) inline void stream_pair_bf16_hw(bf16_t *out, const lanes16 &r0,
        const lanes16 &r1) {
    _mm512_stream_si512(reinterpret_cast<__m512i *>(out), convert16::narrow_pair_bf16_hw(__m512(r0), __m512(r1)));
}

// Two consecutive vectors at out (anywhere) with one ordinary store, rounded
// as stream_pair_bf16_hw: one conversion and one denormal test for both.
__attribute__((target("avx512f"), always_inline)) inline void store_pair_bf16_hw(bf16_t *out, const lanes16 &r0,
        const lanes16 &r1) {
    _mm512_storeu_si512(out, convert16::narrow_pair_bf16_hw(__m512(r0), __m512(r1)));
}

// stream_pair / store_one, bf16 through the hardware when HwBf16 (the plan's
// *_bf16_avx512 loops; T is then bf16_t).
template <bool HwBf16, typename T>
__attribute__((target("avx512f"), always_inline)) inline void stream_pair_as(T *out, const lanes16 &r0, const lanes16 &r1) {
    if constexpr (HwBf16) stream_pair_bf16_hw(out, r0, r1);
    else stream_pair(out, r0, r1);
}
template <bool HwBf16, typename T>
__attribute__((target("avx512f"), always_inline)) inline void store_one_as(T *out, const lanes16 &r) {
    if constexpr (HwBf16) store_one_bf16_hw(out, r);
    else store_one(out, r);
}

// The lanes of `keep` of one vector to out[0..16) with a masked store (the
// others left as they are in memory): a run's edges around its streamed
// lines, whole vectors instead of element by element. 16-bit through
// vpmovdw's masked store, which needs only AVX512F.
__attribute__((target("avx512f"), always_inline)) inline void store_lanes(float *out, __mmask16 keep,
        const lanes16 &r) {
    _mm512_mask_storeu_ps(out, keep, __m512(r));
}
__attribute__((target("avx512f"), always_inline)) inline void store_lanes(bf16_t *out, __mmask16 keep,
        const lanes16 &r) {
    u32x16 bits;
    kernels::bf16_bits_of_f32_bits(bits, (u32x16)r);
    _mm512_mask_cvtepi32_storeu_epi16(out, keep, __m512i(bits));
}
__attribute__((target("avx512f"), always_inline)) inline void store_lanes(f16_t *out, __mmask16 keep,
        const lanes16 &r) {
    _mm512_mask_cvtepi32_storeu_epi16(out, keep, _mm512_maskz_cvtepu16_epi32(0xffff, __m256i(to_16bit(out, r))));
}

// diff_src vectors leaving in memory order (put() at consecutive places from
// a 64-byte-aligned start when streaming): with `stream`, straight from the
// registers with non-temporal stores of whole lines, f32 a vector a line,
// 16-bit a pair held until its second vector comes (channels-last: even from
// the next row, K = 112 has 7 vectors a row); else ordinary stores.
// finish(): a vector still held goes out with an ordinary store, then the
// store fence; flush(): the same without the fence, for a caller that writes
// more runs and fences once at the end (a fence waits for every streamed
// line to reach memory). HwBf16: bf16 rounded by the hardware (stream_pair_as).
template <typename T, bool HwBf16 = false> struct vector_out {
    bool stream;
    lanes16 held = {};
    T *held_at = nullptr;
    __attribute__((target("avx512f"), always_inline)) void put(T *at, const lanes16 &r) {
        if (!stream) return store_one_as<HwBf16>(at, r);
        if constexpr (std::is_same_v<T, float>) {
            _mm512_stream_ps(at, __m512(r));
        } else if (held_at) {
            stream_pair_as<HwBf16>(held_at, held, r);
            held_at = nullptr;
        } else {
            held = r;
            held_at = at;
        }
    }
    __attribute__((target("avx512f"), always_inline)) void flush() {
        if (held_at) store_one_as<HwBf16>(held_at, held);
        held_at = nullptr;
    }
    __attribute__((target("avx512f"), always_inline)) void finish() {
        flush();
        if (stream) _mm_sfence(); // the streamed lines are visible before the task ends
    }
};

} // namespace bpg::tbb_backend::bn
