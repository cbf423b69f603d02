// The fused row kernel of row_sum_gather.hpp as a template over its source
// rows (f32 rows, or 16-bit rows widened as loaded), shared by the entry of
// each (row_sum_gather.cpp, row_sum_gather_bf16.cpp, row_sum_gather_f16.cpp):
// one translation unit a dtype, so that a build spreads the instantiations
// over its cores. Include only from those three files.
#pragma once

#include <type_traits>

#include "backends/tbb/row_sum_gather.hpp"
#include "backends/tbb/stride2_simd.hpp"
#include "backends/tbb/tap_fold_simd.hpp"

namespace bpg::tbb_backend::fused_row_kernel {

using namespace stride2;

// Gathers one row from a window source (stride2_simd.hpp), for tap_fold::visit.
template <int DLO, int K> struct gather_from {
    const row_gather_table &t;
    const kernels::axis_gather &g;
    float *dst;
    const __m512 *cw;
    int64_t blocks;
    template <typename Source> __attribute__((target("avx512f"))) void operator()(const Source &rows) const {
        row_stride2<DLO, K>(t, g, rows, dst, cw, 0, blocks);
    }
};

// Src: a row_source of f32 rows, or rows_of<T> of 16-bit rows (widened
// as loaded; an input of no tap_fold form has its rows converted into
// `converted` first, then summed as f32 rows are).
template <typename Src> struct fused_rows {
    const grouped_axis &a;
    int64_t i0, count;
    const float **x;
    const Src &src;
    const row_gather_table &t;
    const kernels::axis_gather &g;
    float *out;
    int64_t out_stride;
    float *row;
    int64_t prefetch_bytes;
    float *converted;
    bool pairs; // inputs in step where two have one form (f32 rows: always)
    template <int DLO, int K> __attribute__((target("avx512f"))) void operator()() const {
        const common_weights<K> cw(t);
        const int64_t blocks = (g.in + 15) / 16;
        for (int64_t i = i0; i < i0 + count; ++i) {
            if (prefetch_bytes > 0) prefetch(i);
            float *dst = out + (i - i0) * out_stride;
            if (i + 1 < i0 + count && pair<DLO, K>(i, dst, cw.w, blocks)) {
                ++i;
                continue;
            }
            if (tap_fold::visit(a, i, src, gather_from<DLO, K> {t, g, dst, cw.w, blocks})) continue;
            if constexpr (std::is_same_v<Src, row_source>) {
                sum_taps(row, g.out, taps_of(a, i, x, [&](int64_t o) { return src.row(o); }));
            } else {
                float *c = converted;
                sum_taps(row, g.out, taps_of(a, i, x, [&](int64_t o) {
                    row_io<std::remove_cv_t<std::remove_pointer_t<decltype(src.row(0))>>>::load(src.row(o), c, g.out);
                    c += g.out;
                    return c - g.out;
                }));
            }
            row_stride2<DLO, K>(t, g, memory_row {row}, dst, cw.w, 0, blocks);
        }
    }
    // Inputs i and i + 1 in step (row_stride2_pair) where both are 2x linear
    // interiors, both two taps of weight 1 (2x nearest), or both have their
    // own weights for the same number of taps (align_corners; four taps on
    // rows shared two by two read once); false, nothing done, otherwise or
    // without `pairs`.
    template <int DLO, int K>
    __attribute__((target("avx512f"), always_inline)) bool pair(int64_t i, float *dst, const __m512 *cw,
            int64_t blocks) const {
        if (!pairs) return false;
        int64_t k0 = 0, k1 = 0;
        const int f0 = tap_fold::form_of(a, i, k0), f1 = tap_fold::form_of(a, i + 1, k1);
        if (f0 != f1 || k0 != k1 || f0 == 0 || (f0 == 2 && k0 != 2)) return false;
        if (prefetch_bytes > 0) prefetch(i + 1);
        float *dst1 = dst + out_stride;
        if (f0 == 1) row_stride2_pair<DLO, K>(t, g, folded_pair<decltype(sym4_pair_of(i))> {sym4_pair_of(i)}, dst, dst1, cw, 0, blocks);
        else if (f0 == 2) row_stride2_pair<DLO, K>(t, g, both(ones_of(i), ones_of(i + 1)), dst, dst1, cw, 0, blocks);
        else if (k0 == 1) row_stride2_pair<DLO, K>(t, g, both(weighted_of<1>(i), weighted_of<1>(i + 1)), dst, dst1, cw, 0, blocks);
        else if (k0 == 2) row_stride2_pair<DLO, K>(t, g, both(weighted_of<2>(i), weighted_of<2>(i + 1)), dst, dst1, cw, 0, blocks);
        else if (k0 == 3) row_stride2_pair<DLO, K>(t, g, both(weighted_of<3>(i), weighted_of<3>(i + 1)), dst, dst1, cw, 0, blocks);
        else if (tap_fold::shares_two_rows(a, i)) row_stride2_pair<DLO, K>(t, g, folded_pair<decltype(weighted4_pair_of(i))> {weighted4_pair_of(i)}, dst, dst1, cw, 0, blocks);
        else row_stride2_pair<DLO, K>(t, g, both(weighted_of<4>(i), weighted_of<4>(i + 1)), dst, dst1, cw, 0, blocks);
        return true;
    }
    // Input i's rows as tap_fold::visit gives a weighted input's.
    template <int N> __attribute__((target("avx512f"), always_inline)) auto weighted_of(int64_t i) const {
        using E = std::remove_cv_t<std::remove_pointer_t<decltype(src.row(0))>>;
        const int64_t t0 = a.begin[size_t(i)];
        tap_fold::weighted_rows<N, E> r;
        for (int t = 0; t < N; ++t) {
            r.x[t] = src.row(a.output[size_t(t0 + t)]);
            r.w[t] = _mm512_set1_ps(a.weight[size_t(t0 + t)]);
        }
        return r;
    }
    // Inputs i and i + 1 of four taps each on rows o .. o + 3 and o + 2 .. o +
    // 5 (tap_fold::shares_two_rows) as one source.
    __attribute__((target("avx512f"), always_inline)) auto weighted4_pair_of(int64_t i) const {
        using E = std::remove_cv_t<std::remove_pointer_t<decltype(src.row(0))>>;
        const int64_t t0 = a.begin[size_t(i)], t1 = a.begin[size_t(i) + 1];
        tap_fold::weighted4_pair_rows<E> r;
        for (int k = 0; k < 6; ++k) r.x[k] = src.row(a.output[size_t(t0)] + k);
        for (int k = 0; k < 4; ++k) {
            r.w[k] = _mm512_set1_ps(a.weight[size_t(t0 + k)]);
            r.v[k] = _mm512_set1_ps(a.weight[size_t(t1 + k)]);
        }
        return r;
    }
    // Input i's two rows as tap_fold::visit gives a ones input's.
    __attribute__((target("avx512f"), always_inline)) auto ones_of(int64_t i) const {
        using E = std::remove_cv_t<std::remove_pointer_t<decltype(src.row(0))>>;
        const int64_t t0 = a.begin[size_t(i)];
        return tap_fold::ones_rows<2, E> {{src.row(a.output[size_t(t0)]), src.row(a.output[size_t(t0 + 1)])}};
    }
    // Inputs i and i + 1 (both sym4: rows 2i - 1 .. 2i + 4) as one source.
    __attribute__((target("avx512f"), always_inline)) auto sym4_pair_of(int64_t i) const {
        using E = std::remove_cv_t<std::remove_pointer_t<decltype(src.row(0))>>;
        tap_fold::sym4_pair_rows<E> r;
        for (int k = 0; k < 6; ++k) r.x[k] = src.row(2 * i - 1 + k);
        r.wa = _mm512_set1_ps(a.sym4_wa);
        r.wb = _mm512_set1_ps(a.sym4_wb);
        return r;
    }
    template <typename S>
    __attribute__((target("avx512f"), always_inline)) static two_rows<S> both(const S &r0, const S &r1) {
        return {r0, r1};
    }
    void prefetch(int64_t i) const {
        if constexpr (std::is_same_v<Src, row_source>) {
            prefetch_rows_ahead(a, src, g.out, i, i + 1, prefetch_bytes);
        } else {
            const int64_t size = int64_t(sizeof(*src.base));
            prefetch_rows_ahead(a, reinterpret_cast<const char *>(src.base), src.stride * size, g.out * size, i, i + 1,
                    prefetch_bytes);
        }
    }
};

} // namespace bpg::tbb_backend::fused_row_kernel
