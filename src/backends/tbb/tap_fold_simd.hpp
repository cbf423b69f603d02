// An input's taps summed in AVX-512 registers, straight from its source rows,
// with the fold of sum_taps (tap_sum.hpp): the same operations in the same
// order, hence the same bits as summing the row into memory first. Shared by
// the fused kernels (row_sum_gather_kernel.hpp for NCX rows, run_sum_gather.cpp for
// NXC runs), for the forms that cover almost every input in practice:
//   sym4      2x linear interior: wa * (x0 + x1) + wb * (x2 + x3)
//   ones<K>   K taps of weight 1 (2x nearest pairs, ...): x0 + x1 + ...
//   weighted<K> K taps each of its own weight (align_corners, other
//             scales, a downsampling's single tap): w0 x0 + w1 x1 + ...
// Each source gives full(at), the 16 floats at `at` of every row summed, and
// half(m, at), the same with lanes outside m zero (masked loads). Rows of
// bf16/f16 are widened to f32 as they are loaded, exactly (half(): m a
// prefix of the lanes, as at the end of a row).
// Include only from files of src/backends/tbb.
#pragma once

#include <cstdint>
#include <type_traits>

#include <immintrin.h>

#include "backends/tbb/convert_lanes.hpp"
#include "backends/tbb/tap_sum.hpp"

namespace bpg::tbb_backend::tap_fold {

#define BPG_FOLD_AVX512 __attribute__((target("avx512f"), always_inline)) inline

template <bool FULL> BPG_FOLD_AVX512 __m512 load(const float *x, __mmask16 m, int64_t at) {
    return FULL ? _mm512_loadu_ps(x + at) : _mm512_maskz_loadu_ps(m, x + at);
}
// 16-bit: masks are prefixes (the lanes up to a row's end) here.
template <bool FULL, typename T> BPG_FOLD_AVX512 __m512 load(const T *x, __mmask16 m, int64_t at) {
    return FULL ? convert16::load16(x + at) : convert16::load_prefix(x + at, m);
}

// How a source loads each of its rows: 16 values (FULL, or the lanes of m),
// or phase P of 32 bf16 values (convert16::load_phase, for the stride-2
// windows: stride2_simd.hpp). Every form folds the loaded vectors the same
// way, element by element, so the phases keep the bits.
template <bool FULL> struct lanes_at {
    __mmask16 m;
    int64_t at;
    template <typename E> BPG_FOLD_AVX512 __m512 operator()(const E *x) const { return load<FULL>(x, m, at); }
};
template <int P> struct phase_at {
    int64_t at;
    BPG_FOLD_AVX512 __m512 operator()(const bf16_t *x) const { return convert16::load_phase<P>(x + at); }
};

// half, full and phase of a source from its fold over a loader.
#define BPG_FOLD_LOADS \
    static constexpr bool bf16_phases = std::is_same_v<E, bf16_t>; \
    BPG_FOLD_AVX512 auto half(__mmask16 m, int64_t at) const { return fold(lanes_at<false> {m, at}); } \
    BPG_FOLD_AVX512 auto full(int64_t at) const { return fold(lanes_at<true> {__mmask16(0xffff), at}); } \
    template <int P> BPG_FOLD_AVX512 auto phase(int64_t at) const { return fold(phase_at<P> {at}); }

template <typename E = float> struct sym4_rows {
    const E *x[4];
    __m512 wa, wb;
    template <typename L> BPG_FOLD_AVX512 __m512 fold(const L &ld) const {
        return _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(ld(x[0]), ld(x[1]))),
                _mm512_mul_ps(wb, _mm512_add_ps(ld(x[2]), ld(x[3]))));
    }
    BPG_FOLD_LOADS
};

// Inputs i and i + 1, both sym4: their six rows 2i - 1 .. 2i + 4 (x[k] is
// row 2i - 1 + k) loaded once for both, each input folded as sym4_rows
// folds it: input i wa * (x0 + x3) + wb * (x1 + x2), input i + 1 wa * (x2 +
// x5) + wb * (x3 + x4). Each load gives both inputs' vectors (v0, v1).
struct two_vectors {
    __m512 v0, v1;
};
template <typename E = float> struct sym4_pair_rows {
    const E *x[6];
    __m512 wa, wb;
    template <typename L> BPG_FOLD_AVX512 two_vectors fold(const L &ld) const {
        const __m512 x0 = ld(x[0]), x1 = ld(x[1]), x2 = ld(x[2]), x3 = ld(x[3]), x4 = ld(x[4]), x5 = ld(x[5]);
        return {_mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(x0, x3)), _mm512_mul_ps(wb, _mm512_add_ps(x1, x2))),
                _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(x2, x5)), _mm512_mul_ps(wb, _mm512_add_ps(x3, x4)))};
    }
    BPG_FOLD_LOADS
};

// Inputs i and i + 1, four taps each of their own weights, on rows o .. o +
// 3 and o + 2 .. o + 5 (align_corners near 2x): the six rows loaded once
// for both, each input folded as weighted_rows<4> folds it (w: input i's
// weights, v: input i + 1's).
template <typename E = float> struct weighted4_pair_rows {
    const E *x[6];
    __m512 w[4], v[4];
    template <typename L> BPG_FOLD_AVX512 two_vectors fold(const L &ld) const {
        const __m512 x0 = ld(x[0]), x1 = ld(x[1]), x2 = ld(x[2]), x3 = ld(x[3]), x4 = ld(x[4]), x5 = ld(x[5]);
        __m512 a = _mm512_mul_ps(w[0], x0), b = _mm512_mul_ps(v[0], x2);
        a = _mm512_add_ps(a, _mm512_mul_ps(w[1], x1));
        b = _mm512_add_ps(b, _mm512_mul_ps(v[1], x3));
        a = _mm512_add_ps(a, _mm512_mul_ps(w[2], x2));
        b = _mm512_add_ps(b, _mm512_mul_ps(v[2], x4));
        a = _mm512_add_ps(a, _mm512_mul_ps(w[3], x3));
        b = _mm512_add_ps(b, _mm512_mul_ps(v[3], x5));
        return {a, b};
    }
    BPG_FOLD_LOADS
};

template <int K, typename E = float> struct ones_rows {
    const E *x[K];
    template <typename L> BPG_FOLD_AVX512 __m512 fold(const L &ld) const {
        __m512 s = ld(x[0]);
        for (int t = 1; t < K; ++t) s = _mm512_add_ps(s, ld(x[t]));
        return s;
    }
    BPG_FOLD_LOADS
};

template <int K, typename E = float> struct weighted_rows {
    const E *x[K];
    __m512 w[K];
    template <typename L> BPG_FOLD_AVX512 __m512 fold(const L &ld) const {
        __m512 acc = _mm512_mul_ps(w[0], ld(x[0]));
        for (int t = 1; t < K; ++t) acc = _mm512_add_ps(acc, _mm512_mul_ps(w[t], ld(x[t])));
        return acc;
    }
    BPG_FOLD_LOADS
};

#undef BPG_FOLD_LOADS

// Input i's form: 0 another (no source), 1 sym4, 2 ones, 3 weighted; k = its taps.
inline int form_of(const grouped_axis &a, int64_t i, int64_t &k) {
    const size_t n = size_t(i);
    k = a.begin[n + 1] - a.begin[n];
    if (a.sym4[n]) return 1;
    if (k < 1 || k > 4) return 0;
    if (a.ones[n] && a.starts[n] == 1u) return 2;
    if (!a.ones[n] && a.starts[n] == (1u << k) - 1u) return 3;
    return 0;
}

// Inputs i and i + 1, four taps each (in output order), on rows o .. o + 3
// and o + 2 .. o + 5: the rows of weighted4_pair_rows.
inline bool shares_two_rows(const grouped_axis &a, int64_t i) {
    const int64_t *x = a.output.data() + a.begin[size_t(i)], *y = a.output.data() + a.begin[size_t(i) + 1];
    bool rows = true;
    for (int64_t k = 0; k < 4; ++k) rows = rows && x[k] == x[0] + k && y[k] == x[0] + 2 + k;
    return rows;
}

// Calls f(source) with input i's taps (rows at src: a row_source, or a
// rows_of<T> of 16-bit rows) as the source of its form and returns true;
// false, f not called, for another form. f is an object whose operator() is
// a template with the avx512f target (GCC does not give a lambda its
// enclosing function's target).
template <typename Src, typename F>
__attribute__((target("avx512f"))) bool visit(const grouped_axis &a, int64_t i, const Src &src, const F &f) {
    using E = std::remove_cv_t<std::remove_pointer_t<decltype(src.row(0))>>;
    int64_t k = 0;
    const int form = form_of(a, i, k);
    if (form == 0) return false;
    const int64_t t0 = a.begin[size_t(i)];
    const E *x[4];
    __m512 w[4];
    for (int64_t t = 0; t < k; ++t) {
        x[t] = src.row(a.output[size_t(t0 + t)]);
        w[t] = _mm512_set1_ps(a.weight[size_t(t0 + t)]);
    }
    if (form == 1) {
        f(sym4_rows<E> {{x[0], x[1], x[2], x[3]}, _mm512_set1_ps(a.sym4_wa), _mm512_set1_ps(a.sym4_wb)});
    } else if (form == 2) {
        switch (k) {
            case 1: f(ones_rows<1, E> {{x[0]}}); break;
            case 2: f(ones_rows<2, E> {{x[0], x[1]}}); break;
            case 3: f(ones_rows<3, E> {{x[0], x[1], x[2]}}); break;
            default: f(ones_rows<4, E> {{x[0], x[1], x[2], x[3]}}); break;
        }
    } else {
        switch (k) {
            case 1: f(weighted_rows<1, E> {{x[0]}, {w[0]}}); break;
            case 2: f(weighted_rows<2, E> {{x[0], x[1]}, {w[0], w[1]}}); break;
            case 3: f(weighted_rows<3, E> {{x[0], x[1], x[2]}, {w[0], w[1], w[2]}}); break;
            default: f(weighted_rows<4, E> {{x[0], x[1], x[2], x[3]}, {w[0], w[1], w[2], w[3]}}); break;
        }
    }
    return true;
}

} // namespace bpg::tbb_backend::tap_fold
