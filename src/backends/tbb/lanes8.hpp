// 8 consecutive values of a storage dtype to and from the f32 lanes of a
// 32-byte vector, for the generic loops (built for every instruction set):
// written as vector operations, so that each instruction set's code converts
// 8 at once (GCC assembled the per-element forms lane by lane, vinsertps
// after vinsertps). The bits of convert_rows.hpp's to_f32 and from_f32.
//
// f16c_t and bf16_avx2_t (the BN kernels' AVX2 instances, built for
// "avx2,f16c", bn_kernels.hpp) convert with those instructions: f16 by
// F16C's vcvtph2ps and vcvtps2ph (round to nearest even: the same values, a
// signalling NaN coming out quiet, which no result computed from it can
// show, see convert_rows.hpp, and the same bits), bf16 by one widening load
// and a shift, and packed by vpackusdw. Inline asm, not intrinsics: the
// generic loops these sit in are written once for every instance, without
// that target, and GCC inlines an intrinsic only into its own target.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backends/tbb/convert_rows.hpp"

namespace bpg::tbb_backend {

typedef float f32x8 __attribute__((vector_size(32)));
typedef uint32_t u32x8 __attribute__((vector_size(32)));
typedef uint16_t u16x8 __attribute__((vector_size(16)));
typedef uint16_t u16x8_unaligned __attribute__((vector_size(16), may_alias, aligned(2)));

#define BPG_LANES8 inline __attribute__((always_inline))

// T is the storage type of an AVX2 instance.
template <typename T> constexpr bool avx2_instance = std::is_same_v<T, f16c_t> || std::is_same_v<T, bf16_avx2_t>;

// 8 16-bit values as the high (High) or low halves of 32-bit lanes, the
// other halves zero: interleaved with zeros (AVX2: two unpacks and a lane
// permute; GCC widened a __builtin_convertvector 4 lanes at a time).
template <bool High> BPG_LANES8 void spread8(const void *p, u32x8 &w) {
    u16x8 h;
    __builtin_memcpy(&h, p, sizeof h);
    const u16x8 z = {};
    if constexpr (High) w = u32x8(__builtin_shufflevector(z, h, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
    else w = u32x8(__builtin_shufflevector(h, z, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
}

BPG_LANES8 void widen8(const float *p, f32x8 &v) { __builtin_memcpy(&v, p, sizeof v); }
BPG_LANES8 void widen8(const bf16_t *p, f32x8 &v) {
    u32x8 w;
    spread8<true>(p, w);
    v = f32x8(w);
}
BPG_LANES8 void widen8(const f16_t *p, f32x8 &v) {
    u32x8 h, bits;
    spread8<false>(p, h);
    kernels::f32_bits_of_f16_bits(bits, h);
    v = f32x8(bits);
}
BPG_LANES8 void widen8(const f16c_t *p, f32x8 &v) {
    asm("vcvtph2ps %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const u16x8_unaligned *>(p)));
}
BPG_LANES8 void widen8(const bf16_avx2_t *p, f32x8 &v) {
    asm("vpmovzxwd %1, %0\n\tvpslld $16, %0, %0" : "=x"(v) : "m"(*reinterpret_cast<const u16x8_unaligned *>(p)));
}

// v's 8 values as the 16-bit bits of T.
BPG_LANES8 void narrow8_bits(const f32x8 &v, const bf16_t *, u16x8 &h) {
    u32x8 bits;
    kernels::bf16_bits_of_f32_bits(bits, u32x8(v));
    h = __builtin_convertvector(bits, u16x8);
}
BPG_LANES8 void narrow8_bits(const f32x8 &v, const f16_t *, u16x8 &h) {
    u32x8 bits;
    kernels::f16_bits_of_f32_bits(bits, u32x8(v));
    h = __builtin_convertvector(bits, u16x8);
}
BPG_LANES8 void narrow8_bits(const f32x8 &v, const f16c_t *, u16x8 &h) {
    // imm 0: round to nearest even, whatever MXCSR says.
    asm("vcvtps2ph $0, %1, %0" : "=x"(h) : "x"(v));
}
// kernels::bf16_bits_of_f32_bits's bits, its NaN test a float compare and its
// select before the shift ((u >> 16) | 0x40 is (u | 0x400000) >> 16); the
// lanes (all under 2^16) packed without a mask.
BPG_LANES8 void narrow8_bits(const f32x8 &v, const bf16_avx2_t *, u16x8 &h) {
    const u32x8 u = u32x8(v);
    const u32x8 nan = u32x8(v != v);
    const u32x8 bits = (((u | 0x400000u) & nan) | ((u + 0x7fffu + ((u >> 16) & 1u)) & ~nan)) >> 16;
    asm("vextracti128 $1, %1, %0\n\tvpackusdw %0, %x1, %0" : "=&x"(h) : "x"(bits));
}

BPG_LANES8 void narrow8(float *p, const f32x8 &v) { __builtin_memcpy(p, &v, sizeof v); }
template <typename T> BPG_LANES8 void narrow8(T *p, const f32x8 &v) {
    u16x8 h;
    narrow8_bits(v, p, h);
    __builtin_memcpy(p, &h, sizeof h);
}

#undef BPG_LANES8

} // namespace bpg::tbb_backend
