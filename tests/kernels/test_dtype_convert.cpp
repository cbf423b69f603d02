// kernels/dtype_convert.hpp: round-to-nearest-even ties, subnormals, overflow
// to infinity, NaN, and exhaustive round trips of every 16-bit pattern.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/dtype_convert.hpp"

namespace bpg::kernels {
namespace {

uint16_t bf16_of_bits(uint32_t f32) { return f32_to_bf16(f32_from_bits(f32)); }
uint16_t f16_of_bits(uint32_t f32) { return f32_to_f16(f32_from_bits(f32)); }
uint16_t f16_of(float f) { return f32_to_f16(f); }

TEST(DtypeConvert, Bf16RoundsToNearestEven) {
    // bf16 keeps the top 16 bits; the dropped half is the rounding decision.
    EXPECT_EQ(bf16_of_bits(0x3f808000u), 0x3f80u); // 1 + 2^-8: tie, to even (down)
    EXPECT_EQ(bf16_of_bits(0x3f818000u), 0x3f82u); // 1 + 3 * 2^-8: tie, to even (up)
    EXPECT_EQ(bf16_of_bits(0x3f808001u), 0x3f81u); // just above the tie: up
    EXPECT_EQ(bf16_of_bits(0x3f807fffu), 0x3f80u); // just below: down
    EXPECT_EQ(bf16_of_bits(0xbf818000u), 0xbf82u); // negative ties mirror
    EXPECT_EQ(bf16_of_bits(0x3fff8000u), 0x4000u); // a carry into the exponent
}

TEST(DtypeConvert, Bf16OverflowSubnormalsAndSpecials) {
    EXPECT_EQ(bf16_of_bits(0x7f7fffffu), 0x7f80u); // FLT_MAX rounds to +inf
    EXPECT_EQ(bf16_of_bits(0xff7fffffu), 0xff80u);
    EXPECT_EQ(bf16_of_bits(0x7f7f7fffu), 0x7f7fu); // below the tie: the largest bf16
    EXPECT_EQ(bf16_of_bits(0x7f800000u), 0x7f80u); // inf stays inf
    EXPECT_EQ(bf16_of_bits(0x00000001u), 0x0000u); // f32 subnormals round like any value
    EXPECT_EQ(bf16_of_bits(0x00008000u), 0x0000u); // tie to even
    EXPECT_EQ(bf16_of_bits(0x00018000u), 0x0002u);
    EXPECT_EQ(bf16_of_bits(0x80000000u), 0x8000u); // -0 keeps its sign
    EXPECT_EQ(bf16_to_f32(0x0001u), f32_from_bits(0x00010000u)); // a bf16 subnormal
    // NaN stays NaN, also a signalling NaN whose payload is all in the
    // dropped bits (truncation alone would turn it into inf).
    for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
        const uint16_t h = bf16_of_bits(nan);
        EXPECT_TRUE(std::isnan(bf16_to_f32(h))) << std::hex << nan;
        EXPECT_EQ(h & 0x8000u, (nan >> 16) & 0x8000u);
    }
}

TEST(DtypeConvert, F16RoundsToNearestEven) {
    const float ulp = std::ldexp(1.f, -10); // f16 spacing in [1, 2)
    EXPECT_EQ(f16_of(1.f + ulp / 2), 0x3c00u);     // tie, to even (down)
    EXPECT_EQ(f16_of(1.f + 3 * ulp / 2), 0x3c02u); // tie, to even (up)
    EXPECT_EQ(f16_of(std::nextafter(1.f + ulp / 2, 2.f)), 0x3c01u);
    EXPECT_EQ(f16_of(std::nextafter(1.f + ulp / 2, 0.f)), 0x3c00u);
    EXPECT_EQ(f16_of(-(1.f + 3 * ulp / 2)), 0xbc02u);
    EXPECT_EQ(f16_of(2047.5f), 0x6800u); // tie between 2047 (odd) and 2048: 2048
}

TEST(DtypeConvert, F16OverflowToInfinity) {
    EXPECT_EQ(f16_of(65504.f), 0x7bffu);             // the largest f16
    EXPECT_EQ(f16_of(65519.f), 0x7bffu);             // below the tie at 65520
    EXPECT_EQ(f16_of(std::nextafter(65520.f, 0.f)), 0x7bffu);
    EXPECT_EQ(f16_of(65520.f), 0x7c00u);             // the tie rounds to even: inf
    EXPECT_EQ(f16_of(-65520.f), 0xfc00u);
    EXPECT_EQ(f16_of(1e10f), 0x7c00u);
    EXPECT_EQ(f16_of(std::numeric_limits<float>::max()), 0x7c00u);
    EXPECT_EQ(f16_of(std::numeric_limits<float>::infinity()), 0x7c00u);
    EXPECT_EQ(f16_of(-std::numeric_limits<float>::infinity()), 0xfc00u);
}

TEST(DtypeConvert, F16Subnormals) {
    const float tiny = std::ldexp(1.f, -24); // the smallest f16 subnormal
    EXPECT_EQ(f16_of(tiny), 0x0001u);
    EXPECT_EQ(f16_to_f32(0x0001u), tiny);
    EXPECT_EQ(f16_to_f32(0x83ffu), -1023 * tiny); // the largest, negative
    EXPECT_EQ(f16_of(tiny / 2), 0x0000u);                        // tie, to even (0)
    EXPECT_EQ(f16_of(std::nextafter(tiny / 2, 1.f)), 0x0001u);  // above the tie
    EXPECT_EQ(f16_of(3 * tiny / 2), 0x0002u);                    // tie, to even (2)
    EXPECT_EQ(f16_of(5 * tiny / 2), 0x0002u);                    // tie, to even (2)
    EXPECT_EQ(f16_of(std::ldexp(1.f, -14) - tiny / 2), 0x0400u); // rounds up to the smallest normal
    EXPECT_EQ(f16_of(std::ldexp(1.f, -30)), 0x0000u);
    EXPECT_EQ(f16_of(-std::ldexp(1.f, -30)), 0x8000u);            // underflow keeps the sign
    EXPECT_EQ(f16_of(f32_from_bits(0x00000001u)), 0x0000u);       // f32 subnormal input
}

TEST(DtypeConvert, F16NanStaysNan) {
    for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, 0x7f802000u}) {
        const uint16_t h = f16_of_bits(nan);
        EXPECT_EQ(h & 0x7c00u, 0x7c00u) << std::hex << nan;
        EXPECT_NE(h & 0x03ffu, 0u) << std::hex << nan;
        EXPECT_TRUE(std::isnan(f16_to_f32(h)));
    }
    EXPECT_TRUE(std::isnan(f16_to_f32(0x7e00u)));
    EXPECT_TRUE(std::isnan(f16_to_f32(0xfc01u)));
}

bool is_f16_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0; }
bool is_bf16_nan(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x007fu) != 0; }

TEST(DtypeConvert, EveryF16RoundTripsThroughF32) {
    int checked = 0;
    for (uint32_t h = 0; h <= 0xffffu; ++h) {
        if (is_f16_nan(uint16_t(h))) continue;
        ASSERT_EQ(f32_to_f16(f16_to_f32(uint16_t(h))), h) << std::hex << h;
        ++checked;
    }
    EXPECT_EQ(checked, 65536 - 2 * 1023);
}

TEST(DtypeConvert, EveryBf16RoundTripsThroughF32) {
    for (uint32_t h = 0; h <= 0xffffu; ++h) {
        if (is_bf16_nan(uint16_t(h))) continue;
        ASSERT_EQ(f32_to_bf16(bf16_to_f32(uint16_t(h))), h) << std::hex << h;
    }
}

// f16 -> f32 is exact, so the f32 value must equal the one the bit fields spell.
TEST(DtypeConvert, F16ToF32MatchesTheFormula) {
    for (uint32_t h = 0; h <= 0xffffu; ++h) {
        const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
        if (e == 0x1f) continue;
        const double mag = e == 0 ? std::ldexp(double(m), -24)
                                  : std::ldexp(1.0 + double(m) / 1024.0, int(e) - 15);
        ASSERT_EQ(double(f16_to_f32(uint16_t(h))), (h & 0x8000u) ? -mag : mag) << std::hex << h;
    }
}

#if defined(__FLT16_MANT_DIG__)
// Where the compiler has _Float16, its conversion (IEEE round-to-nearest-even)
// is an independent judge of f32_to_f16 on random and boundary bit patterns.
TEST(DtypeConvert, F32ToF16AgreesWithCompilerFloat16) {
    std::mt19937 rng(42);
    std::uniform_int_distribution<uint32_t> bits;
    for (int i = 0; i < 200000; ++i) {
        uint32_t u = bits(rng);
        // Half the draws get an exponent from 2^-25 to 2^16, from below the
        // f16 subnormals to past its overflow.
        if (i & 1) u = (u & 0x80000000u) | ((102u + (u >> 23) % 42u) << 23) | (u & 0x7fffffu);
        const float f = f32_from_bits(u);
        if (std::isnan(f)) continue;
        const _Float16 ref = static_cast<_Float16>(f);
        uint16_t want;
        std::memcpy(&want, &ref, 2);
        ASSERT_EQ(f32_to_f16(f), want) << std::hex << u;
    }
}
#endif

} // namespace
} // namespace bpg::kernels
