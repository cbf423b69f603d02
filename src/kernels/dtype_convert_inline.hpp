// Branch-free forms of the conversions of dtype_convert.hpp, written so the
// compiler vectorizes them inside the fast kernels' loops (no calls, no
// branches, no intrinsics). Bit-identical to the scalar functions, which
// tests check over every 16-bit pattern and a sweep of f32 patterns.
#pragma once

#include <cstdint>

namespace bpg::kernels {

inline float bits_f32(uint32_t u) { return __builtin_bit_cast(float, u); }
inline uint32_t f32_bits_of(float f) { return __builtin_bit_cast(uint32_t, f); }

inline float bf16_to_f32_inline(uint16_t h) { return bits_f32(uint32_t(h) << 16); }

// f32 bits -> bf16 bits in the low half (round to nearest even, a NaN kept
// quiet). U is uint32_t or a GCC vector of them (the kernels convert 16
// lanes at a time with it), so both use this one formula. By reference: a
// 64-byte vector by value changes the ABI between instruction sets.
template <typename U> inline __attribute__((always_inline)) void bf16_bits_of_f32_bits(U &bits, const U &u) {
    const U rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const U nan = (u >> 16) | 0x40u;
    bits = (u & 0x7fffffffu) > 0x7f800000u ? nan : rounded;
}

inline uint16_t f32_to_bf16_inline(float f) {
    uint32_t bits;
    bf16_bits_of_f32_bits(bits, f32_bits_of(f));
    return uint16_t(bits);
}

// f16 -> f32: placing the 15 magnitude bits at the top of an f32's exponent
// and mantissa gives the value times 2^-112 (subnormals included), so one
// exact multiply by 2^112 finishes normals and subnormals alike; inf/NaN
// (exponent 31) are built directly.
// Selects are written as masks (all ones or zero) so the loops have no
// control flow for the vectorizer to give up on.
inline uint32_t mask_if(bool c) { return 0u - uint32_t(c); }
inline uint32_t select(uint32_t m, uint32_t a, uint32_t b) { return (a & m) | (b & ~m); }

inline float f16_to_f32_inline(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t em = h & 0x7fffu;
    const uint32_t scaled = f32_bits_of(bits_f32(em << 13) * 0x1p112f);
    const uint32_t special = 0x7f800000u | ((em & 0x3ffu) << 13);
    return bits_f32(sign | select(mask_if(em >= 0x7c00u), special, scaled));
}

// f32 -> f16, round to nearest even: normals by the usual bias-and-shift,
// results below 2^-14 by adding 0.5 in f32 (which rounds the value to a
// multiple of 2^-24 with the FPU's round-to-nearest-even) and reading the
// mantissa bits; overflow becomes inf, NaN stays a quiet NaN.
inline uint16_t f32_to_f16_inline(float f) {
    const uint32_t u = f32_bits_of(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t a = u & 0x7fffffffu;
    const uint32_t normal = (a + 0xfffu + ((a >> 13) & 1u) - (112u << 23)) >> 13;
    const uint32_t sub = f32_bits_of(bits_f32(a) + 0.5f) - 0x3f000000u;
    uint32_t r = select(mask_if(a < 0x38800000u), sub, normal);
    r = select(mask_if(a >= 0x477ff000u), 0x7c00u, r);                          // rounds to >= 65520: inf
    r = select(mask_if(a > 0x7f800000u), 0x7e00u | ((a >> 13) & 0x3ffu), r);   // NaN
    return uint16_t(sign | r);
}

} // namespace bpg::kernels
