// The branch-free conversions used inside the fast kernels give the same bits
// as the scalar reference conversions: every f16 and bf16 pattern, and a
// sweep of f32 patterns dense around every f16 rounding boundary. (An
// exhaustive run over all 2^32 f32 patterns found no difference; it takes
// seconds, so the suite samples.)
#include <vector>

#include <gtest/gtest.h>

#include "kernels/dtype_convert.hpp"
#include "kernels/dtype_convert_inline.hpp"

namespace bpg::kernels {
namespace {

TEST(DtypeConvertInline, WideningMatchesEveryPattern) {
    for (uint32_t h = 0; h < 65536; ++h) {
        ASSERT_EQ(f32_bits(f16_to_f32(uint16_t(h))), f32_bits(f16_to_f32_inline(uint16_t(h)))) << std::hex << h;
        ASSERT_EQ(f32_bits(bf16_to_f32(uint16_t(h))), f32_bits(bf16_to_f32_inline(uint16_t(h)))) << std::hex << h;
    }
}

TEST(DtypeConvertInline, NarrowingMatchesAroundEveryBoundary) {
    // For each 16-bit result r, f32 patterns near the f32 image of r and of
    // the halfway points between r and its neighbours.
    for (uint32_t h = 0; h < 65536; ++h) {
        for (uint32_t base : {f32_bits(f16_to_f32(uint16_t(h))), uint32_t(h) << 16}) {
            for (int64_t d = -300; d <= 300; ++d) {
                const uint32_t u = uint32_t(int64_t(base) + d * (d % 7 == 0 ? 4096 : 1));
                const float f = f32_from_bits(u);
                ASSERT_EQ(f32_to_f16(f), f32_to_f16_inline(f)) << std::hex << u;
                ASSERT_EQ(f32_to_bf16(f), f32_to_bf16_inline(f)) << std::hex << u;
            }
        }
    }
    for (uint64_t u = 0; u < (1ull << 32); u += 65537) { // an even sweep of the rest
        const float f = f32_from_bits(uint32_t(u));
        ASSERT_EQ(f32_to_f16(f), f32_to_f16_inline(f)) << std::hex << u;
        ASSERT_EQ(f32_to_bf16(f), f32_to_bf16_inline(f)) << std::hex << u;
    }
}

// The same formulas on GCC vectors of 8 lanes (how the generic loops
// convert 16-bit data where the CPU has no 512-bit registers) give the bits
// of the scalar ones, lane by lane.
typedef uint32_t u32x8 __attribute__((vector_size(32)));
TEST(DtypeConvertInline, VectorFormsGiveTheScalarBits) {
    std::vector<uint32_t> f32_patterns;
    for (uint32_t h = 0; h < 65536; ++h)
        for (int64_t d = -20; d <= 20; ++d) f32_patterns.push_back(uint32_t(int64_t(f32_bits(f16_to_f32(uint16_t(h)))) + d));
    for (uint64_t u = 0; u < (1ull << 32); u += 65537) f32_patterns.push_back(uint32_t(u));
    for (size_t i = 0; i + 8 <= f32_patterns.size(); i += 8) {
        u32x8 u, f16, bf16;
        __builtin_memcpy(&u, &f32_patterns[i], sizeof u);
        f16_bits_of_f32_bits(f16, u);
        bf16_bits_of_f32_bits(bf16, u);
        for (int l = 0; l < 8; ++l) {
            ASSERT_EQ(f16[l], f32_to_f16_inline(f32_from_bits(u[l]))) << std::hex << u[l];
            ASSERT_EQ(bf16[l], f32_to_bf16_inline(f32_from_bits(u[l]))) << std::hex << u[l];
        }
    }
    for (uint32_t h = 0; h < 65536; h += 8) {
        u32x8 bits = {h, h + 1, h + 2, h + 3, h + 4, h + 5, h + 6, h + 7}, wide;
        f32_bits_of_f16_bits(wide, bits);
        for (int l = 0; l < 8; ++l) ASSERT_EQ(wide[l], f32_bits(f16_to_f32_inline(uint16_t(h + l)))) << std::hex << h + l;
    }
}

} // namespace
} // namespace bpg::kernels
