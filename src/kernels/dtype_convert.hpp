// Element conversions between f32 and the 16-bit float formats, written out so
// results are the same on every compiler and CPU: round-to-nearest-even, NaN
// stays NaN (widening keeps the payload; narrowing makes it quiet so it cannot
// turn into an infinity), infinities and f16 subnormals are exact.
#pragma once

#include <cstdint>
#include <cstring>

namespace bpg::kernels {

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float f32_from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline float bf16_to_f32(uint16_t h) { return f32_from_bits(uint32_t(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u); // quiet NaN
    uint32_t lsb = (u >> 16) & 1u;
    u += 0x7fffu + lsb; // ties go to the even mantissa
    return uint16_t(u >> 16);
}

inline float f16_to_f32(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (man << 13)); // inf / NaN
    if (exp == 0) {
        if (man == 0) return f32_from_bits(sign);
        // Subnormal: value = man * 2^-24, exact in f32.
        float v = float(man) * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

inline uint16_t f32_to_f16(float f) {
    uint32_t u = f32_bits(f);
    uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); // NaN, quiet
    if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u); // rounds to >= 65520: inf
    if (a < 0x38800000u) {
        // Result is an f16 subnormal or zero: value / 2^-24, rounded to even.
        if (a < 0x33000000u) return sign; // below half the smallest subnormal
        uint32_t exp = a >> 23;
        uint32_t man = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - exp; // 14..24 for the range reaching here
        uint32_t q = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) ++q;
        return uint16_t(sign | q);
    }
    uint32_t lsb = (a >> 13) & 1u;
    a += 0xfffu + lsb;                 // round the 13 dropped bits to even
    a -= (112u << 23);                 // rebias the exponent: 127 -> 15
    return uint16_t(sign | (a >> 13)); // a carry into the exponent is right
}

} // namespace bpg::kernels
