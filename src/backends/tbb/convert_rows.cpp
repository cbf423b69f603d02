#include "backends/tbb/convert_rows.hpp"

#include <cpuid.h>
#include <cstring>
#include <immintrin.h>

#include "backends/tbb/convert_lanes.hpp"
#include "backends/tbb/cpu.hpp"

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

namespace {

template <typename T> __attribute__((target("avx512f"))) void widen_lanes_avx512(const T *s, float *d, int64_t n, int64_t ahead) {
    int64_t k = 0;
    if (ahead > 0)
        for (; k + 32 <= n; k += 32) { // one line of s a step (s is 2-byte aligned: a line may be split)
            _mm_prefetch(reinterpret_cast<const char *>(reinterpret_cast<uintptr_t>(s + k) + uintptr_t(ahead)), _MM_HINT_T1);
            _mm512_storeu_ps(d + k, convert16::load16(s + k));
            _mm512_storeu_ps(d + k + 16, convert16::load16(s + k + 16));
        }
    for (; k + 16 <= n; k += 16) _mm512_storeu_ps(d + k, convert16::load16(s + k));
    if (k < n) store_first(d + k, convert16::load_first(s + k, n - k), n - k);
}

__attribute__((target("avx512f"))) void narrow_lanes_bf16_hw_avx512(const float *s, bf16_t *d, int64_t n) {
    auto *o = reinterpret_cast<convert16::bf16_vcvtne_t *>(d);
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) convert16::store16(o + k, _mm512_loadu_ps(s + k));
    if (k < n) convert16::store_first(o + k, _mm512_maskz_loadu_ps(__mmask16((1u << (n - k)) - 1u), s + k), n - k);
}

} // namespace

void narrow_lanes_bf16_hw(const float *s, bf16_t *d, int64_t n) { narrow_lanes_bf16_hw_avx512(s, d, n); }

bool widen_lanes_available() { return has_avx512f(); }
void widen_lanes(const bf16_t *s, float *d, int64_t n, int64_t ahead) { widen_lanes_avx512(s, d, n, ahead); }
void widen_lanes(const f16_t *s, float *d, int64_t n, int64_t ahead) { widen_lanes_avx512(s, d, n, ahead); }

} // namespace bpg::tbb_backend
