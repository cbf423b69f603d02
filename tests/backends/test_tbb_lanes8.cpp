// lanes8.hpp's 8-lane conversions, in the target_clones form (bf16_t,
// f16_t) and the AVX2 instances' (bf16_avx2_t, f16c_t, inline asm), against
// the scalar to_f32 / from_f32 of convert_rows.hpp: widening over every
// 16-bit pattern (an f16 signalling NaN may only come out quiet by F16C),
// narrowing over every f32 near each 16-bit value and halfway point, NaNs of
// every payload, infinities, denormals, and an even sweep of the rest.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/lanes8.hpp"

namespace bpg::tbb_backend {
namespace {

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
float of_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

bool avx2_here() { return has_avx2() && f16c_available(); }

// Each group of 8 of `in` (16-bit patterns) widened by widen8 as T.
template <typename T> void widen_all(const std::vector<uint16_t> &in, std::vector<float> &out) {
    for (size_t i = 0; i < in.size(); i += 8) {
        f32x8 v;
        widen8(reinterpret_cast<const T *>(in.data() + i), v);
        std::memcpy(out.data() + i, &v, sizeof v);
    }
}
__attribute__((target("avx2,f16c"))) void widen_all_avx2(const std::vector<uint16_t> &in, std::vector<float> &out,
        bool bf16) {
    if (bf16) widen_all<bf16_avx2_t>(in, out);
    else widen_all<f16c_t>(in, out);
}

// Each group of 8 of `in` narrowed by narrow8_bits as T.
template <typename T> void narrow_all(const std::vector<float> &in, std::vector<uint16_t> &out) {
    for (size_t i = 0; i < in.size(); i += 8) {
        f32x8 v;
        std::memcpy(&v, in.data() + i, sizeof v);
        u16x8 h;
        narrow8_bits(v, static_cast<const T *>(nullptr), h);
        std::memcpy(out.data() + i, &h, sizeof h);
    }
}
__attribute__((target("avx2,f16c"))) void narrow_all_avx2(const std::vector<float> &in, std::vector<uint16_t> &out,
        bool bf16) {
    if (bf16) narrow_all<bf16_avx2_t>(in, out);
    else narrow_all<f16c_t>(in, out);
}

bool f16_signalling_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0 && !(h & 0x200u); }

TEST(TbbLanes8, WidenGivesEveryValue) {
    std::vector<uint16_t> in(65536);
    for (size_t i = 0; i < in.size(); ++i) in[i] = uint16_t(i * 9973); // every pattern
    std::vector<float> out(in.size());
    for (const bool bf16 : {true, false})
        for (const bool avx2 : {false, true}) {
            if (avx2 && !avx2_here()) continue;
            SCOPED_TRACE(std::string(bf16 ? "bf16" : "f16") + (avx2 ? " avx2" : " clones"));
            if (avx2) widen_all_avx2(in, out, bf16);
            else if (bf16) widen_all<bf16_t>(in, out);
            else widen_all<f16_t>(in, out);
            for (size_t i = 0; i < in.size(); ++i) {
                const uint16_t h = in[i];
                const uint32_t want = bits(bf16 ? to_f32(bf16_t {h}) : to_f32(f16_t {h}));
                if (avx2 && !bf16 && f16_signalling_nan(h)) ASSERT_EQ(bits(out[i]), want | 0x00400000u) << std::hex << h;
                else ASSERT_EQ(bits(out[i]), want) << std::hex << h;
            }
        }
}

TEST(TbbLanes8, NarrowMatchesTheScalarRounding) {
    for (const bool bf16 : {true, false}) {
        std::vector<float> in;
        for (uint32_t h = 0; h < 65536; ++h) { // around every 16-bit value and halfway point
            const uint32_t base = bits(bf16 ? to_f32(bf16_t {uint16_t(h)}) : to_f32(f16_t {uint16_t(h)}));
            for (int64_t d = -12; d <= 12; ++d)
                in.push_back(of_bits(uint32_t(int64_t(base) + d * (d % 3 == 0 ? 4096 : 1)) ^ (d == 4 ? 0x8000u : 0u)));
        }
        for (uint64_t u = 0; u < (1ull << 32); u += 65537) in.push_back(of_bits(uint32_t(u)));
        for (const uint32_t sign : {0u, 0x80000000u}) // NaNs of every kind, infinities
            for (const uint32_t m : {0x1u, 0x7fffu, 0x8000u, 0xffffu, 0x3fffffu, 0x400000u, 0x400001u, 0x7fffffu, 0x7f8000u})
                in.push_back(of_bits(sign | 0x7f800000u | m)), in.push_back(of_bits(sign | 0x7f800000u));
        while (in.size() % 8) in.push_back(0.f);
        std::vector<uint16_t> out(in.size());
        for (const bool avx2 : {false, true}) {
            if (avx2 && !avx2_here()) continue;
            SCOPED_TRACE(std::string(bf16 ? "bf16" : "f16") + (avx2 ? " avx2" : " clones"));
            if (avx2) narrow_all_avx2(in, out, bf16);
            else if (bf16) narrow_all<bf16_t>(in, out);
            else narrow_all<f16_t>(in, out);
            for (size_t i = 0; i < in.size(); ++i) {
                const uint16_t want = bf16 ? from_f32<bf16_t>(in[i]).bits : from_f32<f16_t>(in[i]).bits;
                ASSERT_EQ(out[i], want) << std::hex << bits(in[i]);
            }
        }
    }
}

} // namespace
} // namespace bpg::tbb_backend
