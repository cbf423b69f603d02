#include "backends/tbb/convert_rows.hpp"

#include <cpuid.h>
#include <cstring>
#include <immintrin.h>

namespace bpg::tbb_backend {

// F16C from CPUID leaf 1 (not every compiler's __builtin_cpu_supports knows
// it); "avx" also checks that the OS saves the YMM registers.
bool f16c_available() {
    static const bool yes = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
    }();
    return yes;
}

namespace {

__attribute__((target("f16c,avx"))) inline void load8(const uint16_t *s, float *d) {
    _mm256_storeu_ps(d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(s))));
}
__attribute__((target("f16c,avx"))) inline void store8(const float *s, uint16_t *d) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(d),
            _mm256_cvtps_ph(_mm256_loadu_ps(s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

} // namespace

// The last n % 8 values go through an 8-value buffer, so that every value is
// converted by the same instruction.
__attribute__((target("f16c,avx"))) void f16c_load(const uint16_t *s, float *d, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) load8(s + i, d + i);
    if (i == n) return;
    uint16_t in[8] = {};
    float out[8];
    std::memcpy(in, s + i, size_t(n - i) * sizeof *s);
    load8(in, out);
    std::memcpy(d + i, out, size_t(n - i) * sizeof *d);
}

__attribute__((target("f16c,avx"))) void f16c_store(const float *s, uint16_t *d, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) store8(s + i, d + i);
    if (i == n) return;
    float in[8] = {};
    uint16_t out[8];
    std::memcpy(in, s + i, size_t(n - i) * sizeof *s);
    store8(in, out);
    std::memcpy(d + i, out, size_t(n - i) * sizeof *d);
}

} // namespace bpg::tbb_backend
