// Storing the first lanes of a vector without a masked store. On AMD Zen 4 a
// masked AVX-512 store is several times slower than a plain one when its line
// is not in the cache. Partial vectors therefore leave in plain pieces of 8,
// 4, 2 and 1 floats, which write exactly the same bytes.
#pragma once

#include <cstdint>

#include <immintrin.h>

namespace bpg::tbb_backend {

// GCC vector types for the halves (its _mm512_castps512_ps256 trips
// -Wmaybe-uninitialized inside its own header).
typedef float bpg_f8 __attribute__((vector_size(32)));
typedef float bpg_f4 __attribute__((vector_size(16)));

__attribute__((target("avx512f"), always_inline)) inline void store_first(float *dst, __m512 v, int64_t n) {
    if (n >= 16) return _mm512_storeu_ps(dst, v);
    if (n <= 0) return;
    typedef float f16v __attribute__((vector_size(64)));
    const f16v x = reinterpret_cast<f16v>(v);
    bpg_f8 h8 = __builtin_shufflevector(x, x, 0, 1, 2, 3, 4, 5, 6, 7);
    if (n & 8) {
        __builtin_memcpy(dst, &h8, 32);
        h8 = __builtin_shufflevector(x, x, 8, 9, 10, 11, 12, 13, 14, 15);
        dst += 8;
    }
    bpg_f4 h4 = __builtin_shufflevector(h8, h8, 0, 1, 2, 3);
    if (n & 4) {
        __builtin_memcpy(dst, &h4, 16);
        h4 = __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
        dst += 4;
    }
    if (n & 2) {
        __builtin_memcpy(dst, &h4, 8);
        h4 = __builtin_shufflevector(h4, h4, 2, 3, 2, 3);
        dst += 2;
    }
    if (n & 1) __builtin_memcpy(dst, &h4, 4);
}

// The same for the first n of 16 16-bit values (n < 16 only: a full vector
// is one plain store at the caller).
typedef uint16_t bpg_u16x16 __attribute__((vector_size(32)));
__attribute__((target("avx512f"), always_inline)) inline void store_first(uint16_t *dst, bpg_u16x16 v, int64_t n) {
    typedef uint16_t u8v __attribute__((vector_size(16)));
    typedef uint16_t u4v __attribute__((vector_size(8)));
    if (n <= 0) return;
    u8v h8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
    if (n & 8) {
        __builtin_memcpy(dst, &h8, 16);
        h8 = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
        dst += 8;
    }
    u4v h4 = __builtin_shufflevector(h8, h8, 0, 1, 2, 3);
    if (n & 4) {
        __builtin_memcpy(dst, &h4, 8);
        h4 = __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
        dst += 4;
    }
    if (n & 2) {
        __builtin_memcpy(dst, &h4, 4);
        h4 = __builtin_shufflevector(h4, h4, 2, 3, 2, 3);
        dst += 2;
    }
    if (n & 1) __builtin_memcpy(dst, &h4, 2);
}

} // namespace bpg::tbb_backend
