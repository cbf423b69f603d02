// The F16C row conversions of the oneTBB kernels (convert_rows.hpp) against
// the inline conversions the rest of the kernels use: the store bit for bit
// over every f32 near each f16 rounding boundary and an even sweep of the
// rest; the load over every f16 pattern, where only a signalling NaN may
// differ, and then only by coming out quiet. Row lengths that are not
// multiples of 8 check the tail.
#include <cstring>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "backends/tbb/convert_lanes.hpp"
#include "backends/tbb/convert_rows.hpp"
#include "kernels/dtype_convert.hpp"

namespace bpg::tbb_backend {
namespace {

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

bool f16_signalling_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0 && !(h & 0x200u); }

TEST(TbbConvertRows, F16LoadGivesEveryValue) {
    if (!f16c_available()) GTEST_SKIP() << "no F16C on this CPU";
    for (int64_t n : {int64_t(65536), int64_t(65535), int64_t(7)}) {
        std::vector<uint16_t> in(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) in[size_t(i)] = uint16_t(i * 9973); // every pattern when n = 65536
        std::vector<float> out(static_cast<size_t>(n) + 1, 7.f);
        f16c_load(in.data(), out.data(), n);
        EXPECT_EQ(out[size_t(n)], 7.f) << "wrote past the row";
        for (int64_t i = 0; i < n; ++i) {
            const uint16_t h = in[size_t(i)];
            const uint32_t want = bits(kernels::f16_to_f32_inline(h));
            const uint32_t got = bits(out[size_t(i)]);
            if (f16_signalling_nan(h)) ASSERT_EQ(got, want | 0x00400000u) << std::hex << h;
            else ASSERT_EQ(got, want) << std::hex << h;
        }
    }
}

TEST(TbbConvertRows, F16StoreMatchesTheInlineRounding) {
    if (!f16c_available()) GTEST_SKIP() << "no F16C on this CPU";
    std::vector<float> in;
    for (uint32_t h = 0; h < 65536; ++h) // around every f16 value and halfway point
        for (int64_t d = -40; d <= 40; ++d) {
            const uint32_t base = bits(kernels::f16_to_f32(uint16_t(h)));
            const uint32_t u = uint32_t(int64_t(base) + d * (d % 5 == 0 ? 4096 : 1));
            float f;
            std::memcpy(&f, &u, 4);
            in.push_back(f);
        }
    for (uint64_t u = 0; u < (1ull << 32); u += 65537) {
        const uint32_t v = uint32_t(u);
        float f;
        std::memcpy(&f, &v, 4);
        in.push_back(f);
    }
    in.push_back(1.f); // an odd length: the tail goes through the buffer
    const int64_t n = int64_t(in.size());
    std::vector<uint16_t> out(size_t(n) + 1, 0xabcd);
    f16c_store(in.data(), out.data(), n);
    EXPECT_EQ(out[size_t(n)], 0xabcd) << "wrote past the row";
    for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(out[size_t(i)], kernels::f32_to_f16_inline(in[size_t(i)])) << std::hex << bits(in[size_t(i)]);
}

// row_io's AVX-512 narrowing (narrow_lanes) gives the inline rounding's bits
// in both dtypes, over values around every bf16 / f16 value and an even
// sweep of the rest (NaN and inf among them), with a tail of 1 to 15.
TEST(TbbConvertRows, NarrowLanesMatchTheInlineRounding) {
    if (!narrow_lanes_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
    std::vector<float> in;
    for (uint32_t h = 0; h < 65536; h += 3)
        for (int64_t d = -3; d <= 3; ++d) {
            const uint32_t u = uint32_t(int64_t(h) << 16) + uint32_t(d * (d % 2 ? 0x8000 : 1));
            const uint32_t near_f16 = uint32_t(int64_t(bits(kernels::f16_to_f32(uint16_t(h)))) + d * 4096);
            for (uint32_t v : {u, near_f16}) {
                float f;
                std::memcpy(&f, &v, 4);
                in.push_back(f);
            }
        }
    for (uint64_t u = 0; u < (1ull << 32); u += 1000003) {
        const uint32_t v = uint32_t(u);
        float f;
        std::memcpy(&f, &v, 4);
        in.push_back(f);
    }
    for (int64_t tail = 0; tail < 16; tail += 5) {
        const int64_t n = int64_t(in.size() / 16 * 16) - 16 + tail;
        std::vector<bf16_t> b(size_t(n) + 1, bf16_t {0xabcd});
        std::vector<f16_t> h(size_t(n) + 1, f16_t {0xabcd});
        row_io<bf16_t>::store(in.data(), b.data(), n);
        row_io<f16_t>::store(in.data(), h.data(), n);
        EXPECT_EQ(b[size_t(n)].bits, 0xabcd) << "wrote past the row";
        EXPECT_EQ(h[size_t(n)].bits, 0xabcd) << "wrote past the row";
        for (int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(b[size_t(i)].bits, kernels::f32_to_bf16_inline(in[size_t(i)])) << std::hex << bits(in[size_t(i)]);
            ASSERT_EQ(h[size_t(i)].bits, kernels::f32_to_f16_inline(in[size_t(i)])) << std::hex << bits(in[size_t(i)]);
        }
    }
}

// convert16::load_first's 16 lanes for the n values at p, stored.
template <typename T> __attribute__((target("avx512f"))) void load_first_lanes(const T *p, int64_t n, float *out) {
    _mm512_storeu_ps(out, convert16::load_first(p, n));
}

// Every length under 16 at both 2-byte alignments, the values ending where
// an unreadable page begins: lanes 0 .. n - 1 are the values widened, the
// rest zero, and nothing past the values is read (it would fault).
template <typename T> void check_load_first(uint16_t (*to_bits)(float), float (*to_f32)(uint16_t)) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    void *map = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(map, MAP_FAILED);
    char *guard = static_cast<char *>(map) + page;
    ASSERT_EQ(mprotect(guard, page, PROT_NONE), 0);
    for (int64_t n = 0; n < 16; ++n)
        for (int64_t skew : {0, 1}) { // (skew: the values end 2 bytes before the page)
            T *p = reinterpret_cast<T *>(guard) - n - skew;
            for (int64_t i = 0; i < n + skew; ++i) p[i].bits = to_bits(float(i) * -1.75f + 0.375f);
            float lanes[16];
            load_first_lanes(p, n, lanes);
            for (int64_t l = 0; l < 16; ++l)
                EXPECT_EQ(bits(lanes[l]), l < n ? bits(to_f32(p[l].bits)) : 0u) << "n " << n << " lane " << l;
        }
    munmap(map, 2 * page);
}

TEST(TbbConvertRows, LoadFirstReadsOnlyItsValues) {
    if (!narrow_lanes_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
    check_load_first<bf16_t>(kernels::f32_to_bf16_inline, kernels::bf16_to_f32);
    check_load_first<f16_t>(kernels::f32_to_f16_inline, kernels::f16_to_f32_inline);
}

} // namespace
} // namespace bpg::tbb_backend
