// The stride-2 form of the planar row gather (see row_gather.hpp): 2x
// upsampling, the common case of decoders and feature pyramids.
#include "backends/tbb/row_gather_stride2.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include <immintrin.h>

namespace bpg::tbb_backend {

namespace {

constexpr int32_t min_d = -2, max_d = 3; // shifts of at most one input either way

// The tap of input i on output 2i + d, or 0 with has = false.
float tap_at(const kernels::axis_gather &g, int64_t i, int64_t d, bool &has) {
    has = false;
    if (i >= g.in) return 0.f;
    for (int64_t t = g.begin[size_t(i)]; t < g.begin[size_t(i) + 1]; ++t)
        if (g.output[size_t(t)] == 2 * i + d) {
            has = true;
            return g.weight[size_t(t)];
        }
    return 0.f;
}

} // namespace

void add_stride2_form(row_gather_table &t, const kernels::axis_gather &g) {
    int64_t lo = max_d + 1, hi = min_d - 1;
    for (int64_t i = 0; i < g.in; ++i)
        for (int64_t k = g.begin[size_t(i)]; k < g.begin[size_t(i) + 1]; ++k) {
            lo = std::min(lo, g.output[size_t(k)] - 2 * i);
            hi = std::max(hi, g.output[size_t(k)] - 2 * i);
        }
    if (lo < min_d || hi > max_d || hi - lo >= 4) return; // not the form (or no taps at all)
    t.s2_dlo = int32_t(lo);
    t.s2_k = int32_t(hi - lo + 1);
    const int64_t nblocks = (g.in + 15) / 16;
    for (int64_t b = 0; b < nblocks; ++b) {
        bool full = true;
        for (int64_t d = lo; d <= hi; ++d) {
            uint16_t mask = 0;
            for (int64_t lane = 0; lane < 16; ++lane) {
                bool has = false;
                t.s2_weight.push_back(tap_at(g, 16 * b + lane, d, has));
                mask = uint16_t(mask | (has ? 1u << lane : 0u));
            }
            t.s2_mask.push_back(mask);
            const float *w = t.s2_weight.data() + t.s2_weight.size() - 16;
            full = full && mask == 0xffff && std::all_of(w, w + 16, [&](float x) { return x == w[0]; });
        }
        t.s2_common.push_back(full);
    }
    // The common weights: those of the first full block; a full block with
    // other weights is not common.
    const auto first = std::find(t.s2_common.begin(), t.s2_common.end(), uint8_t(1));
    if (first != t.s2_common.end()) {
        const size_t b0 = size_t(first - t.s2_common.begin());
        for (int32_t k = 0; k < t.s2_k; ++k) t.s2_common_weight.push_back(t.s2_weight[16 * (b0 * size_t(t.s2_k) + size_t(k))]);
        for (size_t b = 0; b < t.s2_common.size(); ++b)
            for (int32_t k = 0; k < t.s2_k && t.s2_common[b]; ++k)
                t.s2_common[b] = t.s2_weight[16 * (b * size_t(t.s2_k) + size_t(k))] == t.s2_common_weight[size_t(k)];
    }
    t.stride2 = true;
}

namespace {

#define BPG_AVX512 __attribute__((target("avx512f"), always_inline)) inline

BPG_AVX512 __mmask16 valid16(int64_t n) {
    return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u);
}

// Even and odd outputs of block b's window (outputs [32b, 32b + 32) of a row
// of `outs`). Outputs outside the row read as zero; they only meet lanes
// without a tap there, which the masked FMAs leave alone.
struct phases {
    __m512 e, o;
};
BPG_AVX512 phases window(const float *row, int64_t outs, int64_t b) {
    const int64_t n = outs - 32 * b;
    if (b < 0 || n <= 0) return {_mm512_setzero_ps(), _mm512_setzero_ps()};
    const __m512 lo = _mm512_maskz_loadu_ps(valid16(n), row + 32 * b);
    const __m512 hi = _mm512_maskz_loadu_ps(valid16(n - 16), row + 32 * b + 16);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return {_mm512_permutex2var_ps(lo, even, hi), _mm512_permutex2var_ps(lo, odd, hi)};
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

template <int DLO, int K>
__attribute__((target("avx512f"))) void rows_stride2(const row_gather_table &t, const kernels::axis_gather &g,
        const float *src, int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1) {
    constexpr bool reads_next = DLO + K - 1 >= 2;
    __m512 cw[K];
    for (int k = 0; k < K; ++k) cw[k] = _mm512_set1_ps(t.s2_common_weight.empty() ? 0.f : t.s2_common_weight[size_t(k)]);
    for (int64_t r = 0; r < nrows; ++r) {
        const float *row = src + r * src_stride;
        float *o = out + r * out_stride - 16 * b0;
        phases prev = window(row, g.out, b0 - 1), cur = window(row, g.out, b0), next = cur;
        for (int64_t b = b0; b < b1; ++b) {
            if constexpr (reads_next) next = window(row, g.out, b + 1);
            const __m512 acc = t.s2_common[size_t(b)]
                    ? sum_common<DLO, K>(_mm512_setzero_ps(), cw, prev, cur, next)
                    : sum_block<DLO, K>(_mm512_setzero_ps(), t.s2_weight.data() + 16 * K * b, t.s2_mask.data() + K * b,
                            prev, cur, next);
            _mm512_mask_storeu_ps(o + 16 * b, valid16(g.in - 16 * b), acc);
            prev = cur;
            if constexpr (reads_next) cur = next;
            else cur = window(row, g.out, b + 1);
        }
    }
}

using rows_fn = void (*)(const row_gather_table &, const kernels::axis_gather &, const float *, int64_t, float *,
        int64_t, int64_t, int64_t, int64_t);

// rows_stride2<DLO, K> for every DLO in [-2, 3] and K in [1, 4] with DLO + K - 1 <= 3.
template <int DLO, int K> constexpr rows_fn pick() {
    if constexpr (DLO + K - 1 <= max_d) return rows_stride2<DLO, K>;
    else return nullptr;
}
template <int DLO> constexpr std::array<rows_fn, 4> row_of() { return {pick<DLO, 1>(), pick<DLO, 2>(), pick<DLO, 3>(), pick<DLO, 4>()}; }
constexpr std::array<std::array<rows_fn, 4>, 6> kernels_by_form {
        row_of<-2>(), row_of<-1>(), row_of<0>(), row_of<1>(), row_of<2>(), row_of<3>()};

} // namespace

void gather_rows_stride2(const row_gather_table &t, const kernels::axis_gather &g, const float *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1) {
    kernels_by_form[size_t(t.s2_dlo - min_d)][size_t(t.s2_k - 1)](t, g, src, src_stride, out, out_stride, nrows, b0, b1);
}

} // namespace bpg::tbb_backend
