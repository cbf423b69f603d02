// Loading contiguous runs of the storage dtypes as f32 and storing f32 back,
// inline so the loops vectorize inside the kernels' per-ISA clones. Same bits
// as kernels/dtype_convert.hpp (round to nearest even).
#pragma once

#include <cstdint>

#include "kernels/dtype_convert_inline.hpp"

namespace bpg::tbb_backend {

struct bf16_t { uint16_t bits; };
struct f16_t { uint16_t bits; };

inline float to_f32(float v) { return v; }
inline float to_f32(bf16_t v) { return kernels::bf16_to_f32_inline(v.bits); }
inline float to_f32(f16_t v) { return kernels::f16_to_f32_inline(v.bits); }
template <typename T> T from_f32(float v);
template <> inline float from_f32<float>(float v) { return v; }
template <> inline bf16_t from_f32<bf16_t>(float v) { return {kernels::f32_to_bf16_inline(v)}; }
template <> inline f16_t from_f32<f16_t>(float v) { return {kernels::f32_to_f16_inline(v)}; }

// 16-bit data as the BN kernels' AVX2 instances see it (bn_kernels.hpp):
// the same storage and bits as f16_t and bf16_t, types of their own so that
// those loops convert 8 lanes with AVX2's and F16C's instructions
// (lanes8.hpp). Derived, so that what takes the base's pointer takes them.
struct f16c_t : f16_t {};
struct bf16_avx2_t : bf16_t {};
template <> inline f16c_t from_f32<f16c_t>(float v) { return {{kernels::f32_to_f16_inline(v)}}; }
template <> inline bf16_avx2_t from_f32<bf16_avx2_t>(float v) { return {{kernels::f32_to_bf16_inline(v)}}; }

template <typename T> struct row_io {
    static void load(const T *s, float *d, int64_t n) {
        for (int64_t i = 0; i < n; ++i) d[i] = to_f32(s[i]);
    }
    static void store(const float *s, T *d, int64_t n) {
        for (int64_t i = 0; i < n; ++i) d[i] = from_f32<T>(s[i]);
    }
};

// f16 rows through the F16C instructions where the CPU has them: one
// instruction per 8 values instead of ~10 integer operations each way. The
// store gives the bits of f32_to_f16_inline for every f32 (round to nearest
// even, overflow to inf, NaN quiet with its top payload bits); the load the
// same values, except that a signalling NaN comes out quiet, which no f16
// result computed from it can show (every NaN stored as f16 is quiet).
// Tested over every pattern (test_tbb_convert_rows.cpp).
bool f16c_available();
void f16c_load(const uint16_t *s, float *d, int64_t n);
void f16c_store(const float *s, uint16_t *d, int64_t n);

// Rows of 16 values and more are narrowed 16 lanes at a time in AVX-512
// registers where the CPU has it (convert_lanes.hpp: the same bits), a
// third of the instructions of the 8-lane loops. Tested like the F16C ones.
bool narrow_lanes_available();
void narrow_lanes(const float *s, bf16_t *d, int64_t n);
void narrow_lanes(const float *s, f16_t *d, int64_t n);

// Rows widened 16 lanes at a time in AVX-512 registers where the CPU has it
// (convert_lanes.hpp: the same values), each 64-byte line of s prefetched
// into L2 `ahead` bytes before it is read (none for ahead <= 0): the loop
// the compiler makes of row_io's load is 8 lanes wide, and F16C's is a call
// per row. Tested like narrow_lanes.
bool widen_lanes_available();
void widen_lanes(const bf16_t *s, float *d, int64_t n, int64_t ahead = 0);
void widen_lanes(const f16_t *s, float *d, int64_t n, int64_t ahead = 0);

// bf16 rows narrowed by AVX512_BF16's vcvtneps2bf16 (convert16::
// narrow_bf16_hw: narrow_lanes' bits, a vector holding a denormal through
// the formula), for the kernels whose plan says so (interp_plan::bf16_vcvtne).
void narrow_lanes_bf16_hw(const float *s, bf16_t *d, int64_t n);

template <> struct row_io<bf16_t> {
    static void load(const bf16_t *s, float *d, int64_t n) {
        for (int64_t i = 0; i < n; ++i) d[i] = to_f32(s[i]);
    }
    static void store(const float *s, bf16_t *d, int64_t n) {
        if (n >= 16 && narrow_lanes_available()) return narrow_lanes(s, d, n);
        for (int64_t i = 0; i < n; ++i) d[i] = from_f32<bf16_t>(s[i]);
    }
};

template <> struct row_io<f16_t> {
    static void load(const f16_t *s, float *d, int64_t n) {
        if (f16c_available()) return f16c_load(&s->bits, d, n);
        for (int64_t i = 0; i < n; ++i) d[i] = to_f32(s[i]);
    }
    static void store(const float *s, f16_t *d, int64_t n) {
        if (n >= 16 && narrow_lanes_available()) return narrow_lanes(s, d, n);
        if (f16c_available()) return f16c_store(s, &d->bits, n);
        for (int64_t i = 0; i < n; ++i) d[i] = from_f32<f16_t>(s[i]);
    }
};

template <> struct row_io<f16c_t> {
    static void load(const f16c_t *s, float *d, int64_t n) { row_io<f16_t>::load(s, d, n); }
    static void store(const float *s, f16c_t *d, int64_t n) { row_io<f16_t>::store(s, d, n); }
};
template <> struct row_io<bf16_avx2_t> {
    static void load(const bf16_avx2_t *s, float *d, int64_t n) { row_io<bf16_t>::load(s, d, n); }
    static void store(const float *s, bf16_avx2_t *d, int64_t n) { row_io<bf16_t>::store(s, d, n); }
};

} // namespace bpg::tbb_backend
