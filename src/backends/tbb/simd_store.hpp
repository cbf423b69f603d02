// Storing the first lanes of a vector without a masked store. On AMD Zen 4 a
// masked AVX-512 store is several times slower than a plain one when its line
// is not in the cache. Partial vectors therefore leave in plain pieces of 8,
// 4, 2 and 1 floats, which write exactly the same bytes.
#pragma once

#include <cstdint>

#include <immintrin.h>

namespace bpg::tbb_backend {

// The first n (0 < n < 16) of the 16 elements E of x (a GCC vector type)
// at dst: pieces of 8, 4, 2 and 1 elements, each half taken by a shuffle
// (GCC's _mm512_castps512_ps256 trips -Wmaybe-uninitialized inside its own
// header).
template <typename E, typename V16>
__attribute__((target("avx512f"), always_inline)) inline void store_pieces(E *dst, V16 x, int64_t n) {
    typedef E v8 __attribute__((vector_size(8 * sizeof(E))));
    typedef E v4 __attribute__((vector_size(4 * sizeof(E))));
    v8 h8 = __builtin_shufflevector(x, x, 0, 1, 2, 3, 4, 5, 6, 7);
    if (n & 8) {
        __builtin_memcpy(dst, &h8, sizeof h8);
        h8 = __builtin_shufflevector(x, x, 8, 9, 10, 11, 12, 13, 14, 15);
        dst += 8;
    }
    v4 h4 = __builtin_shufflevector(h8, h8, 0, 1, 2, 3);
    if (n & 4) {
        __builtin_memcpy(dst, &h4, sizeof h4);
        h4 = __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
        dst += 4;
    }
    if (n & 2) {
        __builtin_memcpy(dst, &h4, 2 * sizeof(E));
        h4 = __builtin_shufflevector(h4, h4, 2, 3, 2, 3);
        dst += 2;
    }
    if (n & 1) __builtin_memcpy(dst, &h4, sizeof(E));
}

// The first n of 16 floats (all from 16 on, none from 0 on).
__attribute__((target("avx512f"), always_inline)) inline void store_first(float *dst, __m512 v, int64_t n) {
    if (n >= 16) return _mm512_storeu_ps(dst, v);
    if (n <= 0) return;
    typedef float f16v __attribute__((vector_size(64)));
    store_pieces(dst, reinterpret_cast<f16v>(v), n);
}

// The same for the first n of 16 16-bit values (n < 16 only: a full vector
// is one plain store at the caller).
typedef uint16_t bpg_u16x16 __attribute__((vector_size(32)));
__attribute__((target("avx512f"), always_inline)) inline void store_first(uint16_t *dst, bpg_u16x16 v, int64_t n) {
    if (n > 0) store_pieces(dst, v, n);
}

} // namespace bpg::tbb_backend
