// A 16x16 transpose of f32 lanes in registers (interpolate_small_planes.cpp,
// bn_short_rows.cpp): pure moves, so the values are unchanged.
#pragma once

#include <immintrin.h>

namespace bpg::tbb_backend {

// GCC's vector type: its shuffles carry no undefined passthrough, which
// the unpack intrinsics do (GCC 12 then warns -Wmaybe-uninitialized).
typedef float float16v __attribute__((vector_size(64)));

// The first two stages of transpose16, r into u: pairs, then pairs of
// pairs (u[4q + m]'s 128-bit block c: lane 4c + m of rows 4q..4q+3).
__attribute__((target("avx512f"), always_inline)) inline void transpose16_quads(const __m512 r[16], float16v u[16]) {
    float16v t[16];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
        const float16v a = float16v(r[2 * k]), b = float16v(r[2 * k + 1]);
        t[2 * k] = __builtin_shufflevector(a, b, 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29);
        t[2 * k + 1] = __builtin_shufflevector(a, b, 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
    }
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q)
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const float16v a = t[4 * q + h], c = t[4 * q + 2 + h];
            u[4 * q + 2 * h] = __builtin_shufflevector(a, c, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
            u[4 * q + 2 * h + 1] = __builtin_shufflevector(a, c, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
        }
}

// r[k] lane l <- r[l] lane k: pairs, pairs of pairs, then 128-bit blocks.
__attribute__((target("avx512f"), always_inline)) inline void transpose16(__m512 r[16]) {
    float16v u[16];
    transpose16_quads(r, u);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        const float16v w0 = __builtin_shufflevector(u[j], u[4 + j], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
        const float16v w1 = __builtin_shufflevector(u[j], u[4 + j], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
        const float16v w2 = __builtin_shufflevector(u[8 + j], u[12 + j], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
        const float16v w3 = __builtin_shufflevector(u[8 + j], u[12 + j], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
        r[j] = __m512(__builtin_shufflevector(w0, w2, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27));
        r[4 + j] = __m512(__builtin_shufflevector(w0, w2, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31));
        r[8 + j] = __m512(__builtin_shufflevector(w1, w3, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27));
        r[12 + j] = __m512(__builtin_shufflevector(w1, w3, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31));
    }
}

} // namespace bpg::tbb_backend
