// Branch-free forms of the conversions of dtype_convert.hpp, written so the
// compiler vectorizes them inside the fast kernels' loops (no calls, no
// branches, no intrinsics). Bit-identical to the scalar functions, which
// tests check over every 16-bit pattern and a sweep of f32 patterns.
#pragma once

#include <cstdint>
#include <type_traits>

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

// Selects are written as masks (all ones or zero) so the loops have no
// control flow for the vectorizer to give up on. U (below) is uint32_t or a
// GCC vector of them: mask_of(a < b) is the mask of a comparison of either,
// f32_lanes<U> the f32 type of U's shape. (Vectors by reference and no
// function returning one: that would change the ABI between instruction sets.)
inline uint32_t mask_if(bool c) { return 0u - uint32_t(c); }
template <typename U> struct f32_lanes_of {
    typedef float type __attribute__((vector_size(sizeof(U))));
};
template <> struct f32_lanes_of<uint32_t> {
    typedef float type;
};
template <typename U> using f32_lanes = typename f32_lanes_of<U>::type;
template <typename U, typename C> inline __attribute__((always_inline)) void mask_of(U &m, const C &c) {
    if constexpr (std::is_same_v<C, bool>) m = mask_if(c);
    else m = (U)c;
}

// f16 -> f32: placing the 15 magnitude bits at the top of an f32's exponent
// and mantissa gives the value times 2^-112 (subnormals included), so one
// exact multiply by 2^112 finishes normals and subnormals alike; inf/NaN
// (exponent 31) are built directly. h: f16 bits in the low half of each
// uint32_t.
template <typename U> inline __attribute__((always_inline)) void f32_bits_of_f16_bits(U &bits, const U &h) {
    const U sign = (h & 0x8000u) << 16;
    const U em = h & 0x7fffu;
    const U scaled = __builtin_bit_cast(U, __builtin_bit_cast(f32_lanes<U>, U(em << 13)) * 0x1p112f);
    const U special = 0x7f800000u | ((em & 0x3ffu) << 13);
    U m;
    mask_of(m, em >= 0x7c00u);
    bits = sign | (special & m) | (scaled & ~m);
}

inline float f16_to_f32_inline(uint16_t h) {
    uint32_t bits;
    f32_bits_of_f16_bits(bits, uint32_t(h));
    return bits_f32(bits);
}

// f32 -> f16, round to nearest even: normals by the usual bias-and-shift,
// results below 2^-14 by adding 0.5 in f32 (which rounds the value to a
// multiple of 2^-24 with the FPU's round-to-nearest-even) and reading the
// mantissa bits; overflow becomes inf, NaN stays a quiet NaN.
template <typename U> inline __attribute__((always_inline)) void f16_bits_of_f32_bits(U &bits, const U &u) {
    const U sign = (u >> 16) & 0x8000u;
    const U a = u & 0x7fffffffu;
    const U normal = (a + 0xfffu + ((a >> 13) & 1u) - (112u << 23)) >> 13;
    const U sub = __builtin_bit_cast(U, __builtin_bit_cast(f32_lanes<U>, a) + 0.5f) - 0x3f000000u;
    U tiny, inf, nan;
    mask_of(tiny, a < 0x38800000u);
    mask_of(inf, a >= 0x477ff000u); // rounds to >= 65520
    mask_of(nan, a > 0x7f800000u);
    U r = (sub & tiny) | (normal & ~tiny);
    r = (0x7c00u & inf) | (r & ~inf);
    r = ((0x7e00u | ((a >> 13) & 0x3ffu)) & nan) | (r & ~nan);
    bits = sign | r;
}

inline uint16_t f32_to_f16_inline(float f) {
    uint32_t bits;
    f16_bits_of_f32_bits(bits, f32_bits_of(f));
    return uint16_t(bits);
}

} // namespace bpg::kernels
