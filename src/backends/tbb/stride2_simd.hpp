// The AVX-512 pieces of the stride-2 row gather (row_gather.hpp explains the
// form), shared by the gather of rows in memory (row_gather_stride2.cpp) and
// the gather fused with the level above's row sum (row_sum_gather_kernel.hpp), so
// both compute every output with the same operations in the same order.
// Include only from files of src/backends/tbb.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <immintrin.h>

#include "backends/tbb/convert_lanes.hpp"
#include "backends/tbb/row_gather.hpp"
#include "backends/tbb/simd_store.hpp"

namespace bpg::tbb_backend::stride2 {

constexpr int32_t min_d = -2, max_d = 3; // shifts of at most one input either way
// The first tap's shift: at most 0. (No coordinate mode gives a form whose
// taps of input i all lie past output 2i: such tables take the generic
// gather, and the kernels are not compiled for them.)
constexpr int32_t max_dlo = 0;

#define BPG_AVX512 __attribute__((target("avx512f"), always_inline)) inline

BPG_AVX512 __mmask16 valid16(int64_t n) {
    return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u);
}

// A source row held in memory: the 16 floats at `at`, lanes outside m zero.
struct memory_row {
    const float *row;
    BPG_AVX512 __m512 half(__mmask16 m, int64_t at) const { return _mm512_maskz_loadu_ps(m, row + at); }
    BPG_AVX512 __m512 full(int64_t at) const { return _mm512_loadu_ps(row + at); }
};

// A 16-bit source row in memory, widened as loaded (m: a prefix of lanes,
// as window() gives).
template <typename T> struct memory_row16 {
    const T *row;
    static constexpr bool bf16_phases = std::is_same_v<T, bf16_t>;
    BPG_AVX512 __m512 half(__mmask16 m, int64_t at) const { return convert16::load_prefix(row + at, m); }
    BPG_AVX512 __m512 full(int64_t at) const { return convert16::load16(row + at); }
    template <int P> BPG_AVX512 __m512 phase(int64_t at) const { return convert16::load_phase<P>(row + at); }
};

// Even and odd outputs of block b's window (outputs [32b, 32b + 32) of a row
// of `outs`, from a source such as memory_row). Outputs outside the row read
// as zero; they only meet lanes without a tap there, which the masked FMAs
// leave alone.
struct phases {
    __m512 e, o;
};
BPG_AVX512 phases split_phases(__m512 lo, __m512 hi) {
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return {_mm512_permutex2var_ps(lo, even, hi), _mm512_permutex2var_ps(lo, odd, hi)};
}
template <typename Source> BPG_AVX512 phases window(const Source &row, int64_t outs, int64_t b) {
    const int64_t n = outs - 32 * b;
    if (b < 0 || n <= 0) return {_mm512_setzero_ps(), _mm512_setzero_ps()};
    return split_phases(row.half(valid16(n), 32 * b), row.half(valid16(n - 16), 32 * b + 16));
}

// (a:b) shifted down by S lanes: lanes S.. of b, then the first lanes of a.
// (The masked form with a full mask: GCC 12's unmasked one warns about its
// own undefined pass-through operand.)
template <int S> BPG_AVX512 __m512 align(__m512 a, __m512 b) {
    const __m512i ai = _mm512_castps_si512(a);
    return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(ai, __mmask16(0xffff), ai, _mm512_castps_si512(b), S));
}

// Output 2i + D for the 16 inputs i of the current block.
template <int D> BPG_AVX512 __m512 source(const phases &prev, const phases &cur, const phases &next) {
    if constexpr (D == -2) return align<15>(cur.e, prev.e);
    else if constexpr (D == -1) return align<15>(cur.o, prev.o);
    else if constexpr (D == 0) return cur.e;
    else if constexpr (D == 1) return cur.o;
    else if constexpr (D == 2) return align<1>(next.e, cur.e);
    else return align<1>(next.o, cur.o);
}

// Taps d = DLO .. DLO + K - 1 of one block: common weights from registers,
// or the block's own (masked) from the table.
template <int DLO, int K, int k = 0>
BPG_AVX512 __m512 sum_common(__m512 acc, const __m512 *w, const phases &prev, const phases &cur, const phases &next) {
    if constexpr (k == K) return acc;
    else return sum_common<DLO, K, k + 1>(_mm512_fmadd_ps(source<DLO + k>(prev, cur, next), w[k], acc), w, prev, cur, next);
}
template <int DLO, int K, int k = 0>
BPG_AVX512 __m512 sum_block(__m512 acc, const float *w, const uint16_t *mask, const phases &prev, const phases &cur,
        const phases &next) {
    if constexpr (k == K) return acc;
    else
        return sum_block<DLO, K, k + 1>(
                _mm512_mask3_fmadd_ps(source<DLO + k>(prev, cur, next), _mm512_loadu_ps(w + 16 * k), acc, __mmask16(mask[k])),
                w, mask, prev, cur, next);
}

// Sources of bf16 rows (bf16_phases) give each phase of 32 values at
// once (convert16::load_phase): no permutes.
template <typename S, typename = void> struct phased : std::false_type {};
template <typename S> struct phased<S, std::void_t<decltype(S::bf16_phases)>> : std::bool_constant<S::bf16_phases> {};

// The even and odd outputs of a window wholly inside the row: plain loads.
template <typename Source> BPG_AVX512 phases full_window(const Source &row, int64_t b) {
    if constexpr (phased<Source>::value) return {row.template phase<0>(32 * b), row.template phase<1>(32 * b)};
    else return split_phases(row.full(32 * b), row.full(32 * b + 16));
}


// Block b's 16 sums: common weights from registers, or the block's own
// (masked) from the table.
template <int DLO, int K>
BPG_AVX512 __m512 block_sum(const row_gather_table &t, const __m512 *cw, int64_t b, const phases &prev,
        const phases &cur, const phases &next) {
    return t.s2_common[size_t(b)]
            ? sum_common<DLO, K>(_mm512_setzero_ps(), cw, prev, cur, next)
            : sum_block<DLO, K>(_mm512_setzero_ps(), t.s2_weight.data() + 16 * K * b, t.s2_mask.data() + K * b, prev,
                    cur, next);
}

// Block b's outputs stored: all 16 (FULL) or those of the row.
template <bool FULL> BPG_AVX512 void store_block(const kernels::axis_gather &g, float *o, int64_t b, __m512 acc) {
    if constexpr (FULL) _mm512_storeu_ps(o + 16 * b, acc);
    else store_first(o + 16 * b, acc, g.in - 16 * b);
}

// Block b of one row: its 16 outputs from the windows around it. FULL: the
// window after b lies inside the row and all 16 outputs exist (no masks).
template <int DLO, int K, bool FULL, typename Source>
BPG_AVX512 void block_stride2(const row_gather_table &t, const kernels::axis_gather &g, const Source &row, float *o,
        const __m512 *cw, int64_t b, phases &prev, phases &cur, phases &next) {
    constexpr bool reads_next = DLO + K - 1 >= 2;
    if constexpr (reads_next) next = FULL ? full_window(row, b + 1) : window(row, g.out, b + 1);
    store_block<FULL>(g, o, b, block_sum<DLO, K>(t, cw, b, prev, cur, next));
    prev = cur;
    if constexpr (reads_next) cur = next;
    else cur = FULL ? full_window(row, b + 1) : window(row, g.out, b + 1);
}

// One row of the gather, blocks [b0, b1), from a window source (with
// half(mask, at): 16 floats at `at`, lanes outside the mask zero; and
// full(at): all 16). The interior blocks go without masks; both kinds do the
// same arithmetic, so the same bits.
template <int DLO, int K, typename Source>
BPG_AVX512 void row_stride2(const row_gather_table &t, const kernels::axis_gather &g, const Source &row, float *o,
        const __m512 *cw, int64_t b0, int64_t b1) {
    o -= 16 * b0;
    phases prev = window(row, g.out, b0 - 1), cur = window(row, g.out, b0), next = cur;
    const int64_t b_full = std::min(b1, std::min(g.out / 32 - 1, g.in / 16));
    int64_t b = b0;
    for (; b < b_full; ++b) block_stride2<DLO, K, true>(t, g, row, o, cw, b, prev, cur, next);
    for (; b < b1; ++b) block_stride2<DLO, K, false>(t, g, row, o, cw, b, prev, cur, next);
}

// Two rows' windows from two window sources.
template <typename Source> struct two_rows {
    Source r0, r1;
    BPG_AVX512 void windows(int64_t outs, int64_t b, phases &p0, phases &p1) const {
        p0 = window(r0, outs, b);
        p1 = window(r1, outs, b);
    }
    BPG_AVX512 void full_windows(int64_t b, phases &p0, phases &p1) const {
        p0 = full_window(r0, b);
        p1 = full_window(r1, b);
    }
};

// Two rows' windows from one source of both (P: tap_fold::sym4_pair_rows or
// weighted4_pair_rows), whose half, full and phase give both rows' vectors.
template <typename P> struct folded_pair {
    P rows;
    BPG_AVX512 void windows(int64_t outs, int64_t b, phases &p0, phases &p1) const {
        const int64_t n = outs - 32 * b;
        if (b < 0 || n <= 0) {
            p0 = p1 = {_mm512_setzero_ps(), _mm512_setzero_ps()};
            return;
        }
        const auto lo = rows.half(valid16(n), 32 * b), hi = rows.half(valid16(n - 16), 32 * b + 16);
        p0 = split_phases(lo.v0, hi.v0);
        p1 = split_phases(lo.v1, hi.v1);
    }
    BPG_AVX512 void full_windows(int64_t b, phases &p0, phases &p1) const {
        if constexpr (phased<P>::value) {
            const auto e = rows.template phase<0>(32 * b), o = rows.template phase<1>(32 * b);
            p0 = {e.v0, o.v0};
            p1 = {e.v1, o.v1};
        } else {
            const auto lo = rows.full(32 * b), hi = rows.full(32 * b + 16);
            p0 = split_phases(lo.v0, hi.v0);
            p1 = split_phases(lo.v1, hi.v1);
        }
    }
};

// Two rows in step (two inputs of the level above; Pair: two_rows, or a
// source of both rows at once, folded_pair): the same operations for each
// as row_stride2, the blocks of both in one loop, so that the chains of
// FMAs of one row overlap those of the other.
template <int DLO, int K, typename Pair>
BPG_AVX512 void row_stride2_pair(const row_gather_table &t, const kernels::axis_gather &g, const Pair &rows, float *o0,
        float *o1, const __m512 *cw, int64_t b0, int64_t b1) {
    o0 -= 16 * b0;
    o1 -= 16 * b0;
    phases prev0, prev1, cur0, cur1, next0, next1;
    rows.windows(g.out, b0 - 1, prev0, prev1);
    rows.windows(g.out, b0, cur0, cur1);
    const int64_t b_full = std::min(b1, std::min(g.out / 32 - 1, g.in / 16));
    const auto block = [&](auto full, int64_t b) __attribute__((target("avx512f"), always_inline)) {
        constexpr bool FULL = decltype(full)::value;
        if constexpr (FULL) rows.full_windows(b + 1, next0, next1);
        else rows.windows(g.out, b + 1, next0, next1);
        // (Both sums before either store: one read of the block's table.)
        const __m512 acc0 = block_sum<DLO, K>(t, cw, b, prev0, cur0, next0);
        const __m512 acc1 = block_sum<DLO, K>(t, cw, b, prev1, cur1, next1);
        store_block<FULL>(g, o0, b, acc0);
        store_block<FULL>(g, o1, b, acc1);
        prev0 = cur0, prev1 = cur1, cur0 = next0, cur1 = next1;
    };
    int64_t b = b0;
    for (; b < b_full; ++b) block(std::true_type {}, b);
    for (; b < b1; ++b) block(std::false_type {}, b);
}

// The common weights of the table's interior blocks, in registers.
template <int K> struct common_weights {
    __m512 w[K];
    BPG_AVX512 explicit common_weights(const row_gather_table &t) {
        for (int k = 0; k < K; ++k) w[k] = _mm512_set1_ps(t.s2_common_weight.empty() ? 0.f : t.s2_common_weight[size_t(k)]);
    }
};

// Calls f.template operator()<DLO, K>() for the table's form (DLO in [-2, 0],
// K in [1, 4], DLO + K - 1 <= 3).
template <typename F> void with_form(const row_gather_table &t, F &&f) {
    switch ((t.s2_dlo - min_d) * 4 + (t.s2_k - 1)) {
#define BPG_FORM(DLO, K) \
    case (DLO - min_d) * 4 + (K - 1): \
        if constexpr (DLO + K - 1 <= max_d) return f.template operator()<DLO, K>(); \
        break;
#define BPG_FORMS(DLO) BPG_FORM(DLO, 1) BPG_FORM(DLO, 2) BPG_FORM(DLO, 3) BPG_FORM(DLO, 4)
        BPG_FORMS(-2) BPG_FORMS(-1) BPG_FORMS(0)
#undef BPG_FORMS
#undef BPG_FORM
    }
}

} // namespace bpg::tbb_backend::stride2
