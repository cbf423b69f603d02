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
template <typename T> BPG_ALWAYS_INLINE void store_halves(T *out, const f32x8 &lo, const f32x8 &hi) {
    narrow8(out, lo);
    narrow8(out + 8, hi);
}

// 8 f32 lanes of diff_src to out (16-byte aligned) past the caches, for the
// generic loops: SSE2's non-temporal stores of 16 bytes (every instruction
// set they are built for has them), 16-bit narrowed first (narrow8's bits).
template <typename T> BPG_ALWAYS_INLINE void stream8(T *out, const f32x8 &v) {
    if constexpr (std::is_same_v<T, float>) {
        _mm_stream_ps(out, __m128(__builtin_shufflevector(v, v, 0, 1, 2, 3)));
        _mm_stream_ps(out + 4, __m128(__builtin_shufflevector(v, v, 4, 5, 6, 7)));
    } else {
        u16x8 h;
        narrow8_bits(v, out, h);
        _mm_stream_si128(reinterpret_cast<__m128i *>(out), __m128i(h));
    }
}

// Pass 2's constants of a run's elements (diff_src_run): one channel's, as
// floats (a planar row), or per channel, as arrays indexed by the element
// (a channels-last row).
BPG_ALWAYS_INLINE float constant_at(float c, int64_t) { return c; }
BPG_ALWAYS_INLINE float constant_at(const float *c, int64_t j) { return c[j]; }
BPG_ALWAYS_INLINE void constants_at(const float *c, int64_t j, f32x8 &v) { __builtin_memcpy(&v, c + j, sizeof v); }

// Pass 2's diff_src of the consecutive elements [j0, j1) of a run (element j
// at offsets d0 + j, s0 + j, x0 + j) into out[j0 .. j1), use_global_stats'
// formula when Global: 8 at a time in the AVX2 instances (diff_src_block),
// else one by one (diff_src_one, which GCC vectorizes); the same arithmetic
// on each element, so the same bits. Stream: the blocks of 8 from the first
// 16-byte boundary on go out past the caches (stream8), in every dtype; the
// caller fences (end_of_streamed_rows) after its last run.
template <bool Global, bool Stream = false, typename T, bn_fusion F, typename C>
BPG_ALWAYS_INLINE void diff_src_run(const reader<T, F> &rd, int64_t d0, int64_t s0, int64_t x0, T *out, int64_t j0,
        int64_t j1, const C &ak, const C &c2, const C &m, const C &c0) {
    const auto one = [&](int64_t j) BPG_LAMBDA_INLINE {
        out[j] = from_f32<T>(diff_src_one(rd, Global, d0 + j, s0 + j, x0 + j, constant_at(ak, j), constant_at(c2, j),
                constant_at(m, j), constant_at(c0, j)));
    };
    const auto block = [&](int64_t j, f32x8 &r) BPG_LAMBDA_INLINE {
        if constexpr (std::is_same_v<C, float>) { // (broadcast by the vector arithmetic; built lane by lane, not hoisted)
            diff_src_block(rd, Global, d0 + j, s0 + j, x0 + j, ak, c2, m, c0, r);
        } else {
            f32x8 a8, c28, m8, c08;
            constants_at(ak, j, a8), constants_at(c2, j, c28), constants_at(m, j, m8), constants_at(c0, j, c08);
            diff_src_block(rd, Global, d0 + j, s0 + j, x0 + j, a8, c28, m8, c08, r);
        }
    };
    int64_t j = j0;
    if constexpr (Stream) {
        for (; j < j1 && reinterpret_cast<uintptr_t>(out + j) % 16 != 0; ++j) one(j);
        for (; j + 8 <= j1; j += 8) {
            f32x8 r;
            block(j, r);
            stream8(out + j, r);
        }
    } else if constexpr (avx2_instance<T>) {
        for (; j + 8 <= j1; j += 8) {
            f32x8 r;
            block(j, r);
            narrow8(out + j, r);
        }
    }
    for (; j < j1; ++j) one(j);
}
// use_global_stats' diff_src = a * diff_dst of such a run (src not read).
template <typename T, bn_fusion F, typename C>
BPG_ALWAYS_INLINE void global_diff_src_run(const reader<T, F> &rd, int64_t d0, int64_t x0, T *out, int64_t j0,
        int64_t j1, const C &ak) {
    diff_src_run<true>(rd, d0, 0, x0, out, j0, j1, ak, ak, ak, ak);
}

// Calls f(std::bool_constant<S> {}) with S = stream (diff_src_run's Stream).
template <typename Fn> BPG_ALWAYS_INLINE void with_stream(bool stream, Fn &&f) {
    if (stream) f(std::true_type {});
    else f(std::false_type {});
}

// After a task's last streamed row: its lines are visible before it ends.
inline void end_of_streamed_rows(const data &d) {
    if (d.nontemporal) _mm_sfence();
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
