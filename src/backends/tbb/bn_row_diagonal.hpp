// One element of each of 16 planar rows as a vector, row i in lane i: pass
// 1 of the short-rows loops (bn_short_rows.cpp) adds the rows' last B % 16
// elements this way to the columns of the rows' lanes.
#pragma once

#include <cstdint>
#include <immintrin.h>
#include <type_traits>

#include "backends/tbb/bn_lanes.hpp"

namespace bpg::tbb_backend::bn {

#define BPG_DIAGONAL_AVX512 __attribute__((target("avx512f"), always_inline)) inline

// One tensor's element of 16 rows as f32 lanes (row i in lane i), put lane
// by lane: a masked load (f32) or a masked widening of the 16 elements that
// put it in lane i (16-bit: AVX512F has no masked 16-bit load), or, where
// those 16 would reach past the memory the caller knows it may read, the
// element alone.
template <typename T> struct row_diagonal {
    __m512 v {}; // bf16: the bits, shifted up by f32()
    BPG_DIAGONAL_AVX512 void put(int i, const T *e, bool read_16) {
        const __mmask16 k = __mmask16(1u << i);
        if constexpr (std::is_same_v<T, float>) {
            v = _mm512_mask_loadu_ps(v, k, e - i); // (masked lanes are not read)
        } else if (read_16) {
            const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(e - i));
            if constexpr (std::is_base_of_v<bf16_t, T>)
                v = _mm512_castsi512_ps(_mm512_mask_cvtepu16_epi32(_mm512_castps_si512(v), k, h));
            else
                v = _mm512_mask_cvtph_ps(v, k, h);
        } else {
            if constexpr (std::is_base_of_v<bf16_t, T>)
                v = _mm512_castsi512_ps(_mm512_mask_set1_epi32(_mm512_castps_si512(v), k, e->bits));
            else
                v = _mm512_mask_cvtph_ps(v, k, _mm256_set1_epi16(short(e->bits)));
        }
    }
    // (The same as lanes_f32 of these elements.)
    BPG_DIAGONAL_AVX512 __m512 f32() const {
        if constexpr (std::is_base_of_v<bf16_t, T>)
            return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_castps_si512(v), 16));
        else
            return v;
    }
};

// The element b of 16 rows as BN sees it (diff_dst g, src x), a fused ReLU
// computed as load_lanes does (relu_of_lanes).
template <typename T, bn_fusion F> struct rows_element {
    row_diagonal<T> dd, src, relu_in, relu_dd;
    BPG_DIAGONAL_AVX512 void put(const data &d, int i, int64_t dd_at, int64_t src_at, int64_t relu_at, bool read_16) {
        if constexpr (F != bn_fusion::relu_into_dd) dd.put(i, tensor<T>(d.dd, dd_at), read_16);
        if constexpr (F != bn_fusion::relu_into_src) src.put(i, tensor<T>(d.src, src_at), read_16);
        if constexpr (F != bn_fusion::none) {
            relu_in.put(i, tensor<T>(d.relu_in, relu_at), read_16);
            relu_dd.put(i, tensor<T>(d.relu_dd, relu_at), read_16);
        }
    }
    BPG_DIAGONAL_AVX512 void values(lanes16 &g, lanes16 &x) const {
        __m512 relu = _mm512_setzero_ps();
        if constexpr (F != bn_fusion::none) {
            __mmask16 passed;
            relu = relu_of_lanes(relu_in.f32(), relu_dd.f32(), passed);
        }
        g = lanes16(F == bn_fusion::relu_into_dd ? relu : dd.f32());
        x = lanes16(F == bn_fusion::relu_into_src ? relu : src.f32());
    }
};

#undef BPG_DIAGONAL_AVX512

} // namespace bpg::tbb_backend::bn
