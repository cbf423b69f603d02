#include "backends/tbb/convert_rows.hpp"

#include <immintrin.h>

#include "kernels/dtype_convert.hpp"

namespace bpg::tbb_backend {

// bf16 is the top half of an f32: widening is a shift, narrowing rounds to
// nearest even with the usual bias trick. Written branch-free so the compiler
// vectorizes it for every target clone.
__attribute__((target_clones("avx512f", "avx2", "default")))
void bf16_to_f32(const uint16_t *src, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const uint32_t u = uint32_t(src[i]) << 16;
        __builtin_memcpy(dst + i, &u, 4);
    }
}

__attribute__((target_clones("avx512f", "avx2", "default")))
void f32_to_bf16(const float *src, uint16_t *dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        uint32_t u;
        __builtin_memcpy(&u, src + i, 4);
        const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        const uint32_t nan = (u >> 16) | 0x40u; // keep NaN a (quiet) NaN
        dst[i] = uint16_t((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
    }
}

// f16 <-> f32 with the F16C instructions where the CPU has them (exact, round
// to nearest even, as the scalar functions), else the scalar functions.
namespace {

__attribute__((target("avx2,f16c"))) void f16_to_f32_f16c(const uint16_t *src, float *dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i))));
    for (; i < n; ++i) dst[i] = kernels::f16_to_f32(src[i]);
}

__attribute__((target("avx2,f16c"))) void f32_to_f16_f16c(const float *src, uint16_t *dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i),
                _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; ++i) dst[i] = kernels::f32_to_f16(src[i]);
}

void f16_to_f32_scalar(const uint16_t *src, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = kernels::f16_to_f32(src[i]);
}
void f32_to_f16_scalar(const float *src, uint16_t *dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = kernels::f32_to_f16(src[i]);
}

bool has_f16c() {
    static const bool yes = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2");
    return yes;
}

} // namespace

void f16_to_f32(const uint16_t *src, float *dst, int64_t n) {
    has_f16c() ? f16_to_f32_f16c(src, dst, n) : f16_to_f32_scalar(src, dst, n);
}
void f32_to_f16(const float *src, uint16_t *dst, int64_t n) {
    has_f16c() ? f32_to_f16_f16c(src, dst, n) : f32_to_f16_scalar(src, dst, n);
}

} // namespace bpg::tbb_backend
