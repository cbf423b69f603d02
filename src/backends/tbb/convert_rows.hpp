// Converting contiguous runs between the storage dtypes and f32, fast: the
// fast kernels convert each 16-bit element once, into f32 scratch, and
// convert results once on the way out. Same results as
// kernels/dtype_convert.hpp (round to nearest even; tests compare them).
#pragma once

#include <cstdint>

namespace bpg::tbb_backend {

void bf16_to_f32(const uint16_t *src, float *dst, int64_t n);
void f32_to_bf16(const float *src, uint16_t *dst, int64_t n);
void f16_to_f32(const uint16_t *src, float *dst, int64_t n);
void f32_to_f16(const float *src, uint16_t *dst, int64_t n);

template <typename T> struct row_io; // load: T -> f32, store: f32 -> T
template <> struct row_io<float> {
    static void load(const float *s, float *d, int64_t n) { for (int64_t i = 0; i < n; ++i) d[i] = s[i]; }
    static void store(const float *s, float *d, int64_t n) { for (int64_t i = 0; i < n; ++i) d[i] = s[i]; }
};
struct bf16_t { uint16_t bits; };
struct f16_t { uint16_t bits; };
template <> struct row_io<bf16_t> {
    static void load(const bf16_t *s, float *d, int64_t n) { bf16_to_f32(&s->bits, d, n); }
    static void store(const float *s, bf16_t *d, int64_t n) { f32_to_bf16(s, &d->bits, n); }
};
template <> struct row_io<f16_t> {
    static void load(const f16_t *s, float *d, int64_t n) { f16_to_f32(&s->bits, d, n); }
    static void store(const float *s, f16_t *d, int64_t n) { f32_to_f16(s, &d->bits, n); }
};

} // namespace bpg::tbb_backend
