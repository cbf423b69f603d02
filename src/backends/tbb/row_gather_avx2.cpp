#include "backends/tbb/row_gather_avx2.hpp"

#include <algorithm>
#include <climits>

#include <immintrin.h>

namespace bpg::tbb_backend {

void add_avx2_form(row_gather_table &t) {
    t.avx2_form = true;
    t.s2_half_weight.clear();
    t.s2_half_lanes.clear();
    t.half_begin.assign(1, 0);
    t.half_first.clear();
    t.half_gather.clear();
    t.half_idx.clear();
    t.half_weight.clear();
    t.half_lanes.clear();
    t.half_window.clear();
    if (t.stride2) {
        // The stride-2 tables in the lane order its shuffles leave (stride2_rows).
        constexpr int shuffled[16] = {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};
        for (size_t k = 0; k < t.s2_mask.size(); ++k)
            for (int lane : shuffled) {
                t.s2_half_weight.push_back(t.s2_weight[16 * k + size_t(lane)]);
                t.s2_half_lanes.push_back(t.s2_mask[k] >> lane & 1u ? -1 : 0);
            }
        return;
    }
    const int64_t nblocks = int64_t(t.block_slots.size()) - 1;
    for (int64_t b = 0; b < nblocks; ++b)
        for (int h = 0; h < 2; ++h) {
            for (int64_t k = t.block_slots[size_t(b)]; k < t.block_slots[size_t(b) + 1]; ++k) {
                const unsigned mask = (t.slots[size_t(k)].mask >> (8 * h)) & 0xffu;
                if (mask == 0) continue;
                const int32_t *idx = t.idx.data() + 16 * k + 8 * h;
                int32_t lo = INT32_MAX, hi = -1;
                for (int j = 0; j < 8; ++j)
                    if (mask >> j & 1u) {
                        lo = std::min(lo, idx[j]);
                        hi = std::max(hi, idx[j]);
                    }
                const int64_t window = int64_t(hi) - lo + 1;
                t.half_first.push_back(t.slots[size_t(k)].first_output + lo);
                t.half_gather.push_back(window > 16);
                t.half_window.push_back(int32_t(std::min<int64_t>(window, 16)));
                for (int j = 0; j < 8; ++j) {
                    const bool has = mask >> j & 1u;
                    t.half_idx.push_back(has ? idx[j] - lo : 0);
                    t.half_weight.push_back(t.weight[size_t(16 * k + 8 * h + j)]);
                    t.half_lanes.push_back(has ? -1 : 0);
                }
            }
            t.half_begin.push_back(int64_t(t.half_first.size()));
        }
}

namespace {

__attribute__((target("avx2"), always_inline)) inline __m256i load8(const int32_t *p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
}

// The first n (1 to 8) lanes of v to o, nothing past them.
__attribute__((target("avx2"), always_inline)) inline void store_first8(float *o, __m256 v, int64_t n) {
    if (n == 8) return _mm256_storeu_ps(o, v);
    _mm256_maskstore_ps(o, _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), v);
}

// The rows of one half, its half-slots [s0, s1): per slot, the window's
// outputs permuted into lanes (or gathered), times the weights, added where
// the lane has the tap; the scalar loop's operations in its order.
__attribute__((target("avx2"))) void half_rows(const row_gather_table &t, int64_t s0, int64_t s1, const float *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t n) {
    const __m256i seven = _mm256_set1_epi32(7);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), iota8 = _mm256_add_epi32(iota, _mm256_set1_epi32(8));
    for (int64_t r = 0; r < nrows; ++r) {
        const float *row = src + r * src_stride;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t s = s0; s < s1; ++s) {
            const float *base = row + t.half_first[size_t(s)];
            const __m256i idx = load8(t.half_idx.data() + 8 * s);
            const __m256 lanes = _mm256_castsi256_ps(load8(t.half_lanes.data() + 8 * s));
            __m256 v;
            if (!t.half_gather[size_t(s)]) {
                const __m256i window = _mm256_set1_epi32(t.half_window[size_t(s)]);
                const __m256 a = _mm256_maskload_ps(base, _mm256_cmpgt_epi32(window, iota));
                const __m256 b = _mm256_maskload_ps(base + 8, _mm256_cmpgt_epi32(window, iota8));
                const __m256 upper = _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, seven));
                v = _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, idx), _mm256_permutevar8x32_ps(b, idx), upper);
            } else {
                v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), base, idx, lanes, 4);
            }
            const __m256 w = _mm256_loadu_ps(t.half_weight.data() + 8 * s);
            acc = _mm256_blendv_ps(acc, _mm256_add_ps(acc, _mm256_mul_ps(v, w)), lanes);
        }
        store_first8(out + r * out_stride, acc, n);
    }
}

// The stride-2 form (row_gather.hpp: every tap of input i on output 2i + d,
// d from t.s2_dlo on, t.s2_k of them): outputs 2i + d and 2i + d + 1 of a
// half's 8 inputs are the even and odd ones of 16 consecutive outputs, so
// two taps take two loads and two shuffles. The shuffles leave the inputs
// in lane order 0 1 4 5 2 3 6 7 (64-bit quarters 0 2 1 3); the tables are
// kept in that order (add_avx2_form) and each sum is put back in order once.
struct even_odd {
    __m256 even, odd;
};

__attribute__((target("avx2"), always_inline)) inline even_odd split_even_odd(__m256 lo, __m256 hi) {
    return {_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))};
}
__attribute__((target("avx2"), always_inline)) inline __m256 in_lane_order(__m256 v) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}

// The windows of a half at the ends of a row: per window (at `at` and
// at + 2), load masks of its two vectors for the outputs inside the row.
// Those outside read as zero; only lanes without a tap meet them, and the
// blend leaves those. The address is formed without pointer arithmetic: it
// may lie before the row, where no lane of the masked load reads.
struct edge_window {
    __m256i lo[2], hi[2];
};

__attribute__((target("avx2"), always_inline)) inline edge_window edge_masks(int64_t outs, int64_t at) {
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), iota8 = _mm256_add_epi32(iota, _mm256_set1_epi32(8));
    edge_window e;
    for (int w = 0; w < 2; ++w) {
        const int64_t first = std::clamp<int64_t>(-(at + 2 * w), 0, 16), end = std::clamp<int64_t>(outs - (at + 2 * w), 0, 16);
        const __m256i f = _mm256_set1_epi32(int32_t(first) - 1), l = _mm256_set1_epi32(int32_t(end));
        e.lo[w] = _mm256_and_si256(_mm256_cmpgt_epi32(iota, f), _mm256_cmpgt_epi32(l, iota));
        e.hi[w] = _mm256_and_si256(_mm256_cmpgt_epi32(iota8, f), _mm256_cmpgt_epi32(l, iota8));
    }
    return e;
}

__attribute__((target("avx2"), always_inline)) inline even_odd edge_outputs16(const float *row, int64_t at,
        const edge_window &e, int w) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(row) + uintptr_t(at + 2 * w) * sizeof(float);
    return split_even_odd(_mm256_maskload_ps(reinterpret_cast<const float *>(p), e.lo[w]),
            _mm256_maskload_ps(reinterpret_cast<const float *>(p + 8 * sizeof(float)), e.hi[w]));
}

// The K taps of 8 inputs of one row from the windows at `at` (taps 0 and 1)
// and at + 2 (taps 2 and 3): tap k from the even (k even) or odd outputs,
// times its weight, added where the lane has it; taps in increasing output
// order, as the scalar loop. Masked: weights and lanes from the table (16
// a tap); else the common weights (registers) in every lane, which is the
// same arithmetic where every lane has every tap.
template <int K, bool Masked, bool Inside>
__attribute__((target("avx2"), always_inline)) inline __m256 stride2_sum(const float *row, int64_t at,
        const edge_window &edge, const __m256 *common, const float *w, const int32_t *lanes) {
    __m256 acc = _mm256_setzero_ps();
    for (int k = 0; k < K; k += 2) {
        const even_odd v = Inside ? split_even_odd(_mm256_loadu_ps(row + at + k), _mm256_loadu_ps(row + at + k + 8))
                                  : edge_outputs16(row, at, edge, k / 2);
        for (int e = 0; e < 2 && k + e < K; ++e) {
            const int j = k + e;
            const __m256 x = e ? v.odd : v.even;
            if (Masked) {
                const __m256 sum = _mm256_add_ps(acc, _mm256_mul_ps(x, _mm256_loadu_ps(w + 16 * j)));
                acc = _mm256_blendv_ps(acc, sum, _mm256_castsi256_ps(load8(lanes + 16 * j)));
            } else {
                acc = _mm256_add_ps(acc, _mm256_mul_ps(x, common[j]));
            }
        }
    }
    return in_lane_order(acc);
}

// Blocks [b0, b1) of nrows rows in the stride-2 form. Interior blocks whose
// every lane has every tap with the common weights (t.s2_common) read no
// table; the others take their halves' weights and lanes from it.
template <int K>
__attribute__((target("avx2"))) void stride2_rows(const row_gather_table &t, const kernels::axis_gather &g,
        const float *src, int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1) {
    __m256 common[K];
    for (int k = 0; k < K; ++k) common[k] = _mm256_set1_ps(t.s2_common_weight.empty() ? 0.f : t.s2_common_weight[size_t(k)]);
    const int64_t outs = g.out, last_window = (K - 1) / 2 * 2;
    for (int64_t b = b0; b < b1; ++b) {
        float *o = out + 16 * (b - b0);
        const int64_t at = 32 * b + t.s2_dlo; // half h: at + 16 h
        if (t.s2_common[size_t(b)] && at >= 0 && at + 16 + last_window + 16 <= outs) {
            const edge_window none {};
            for (int64_t r = 0; r < nrows; ++r) {
                const float *row = src + r * src_stride;
                _mm256_storeu_ps(o + r * out_stride, stride2_sum<K, false, true>(row, at, none, common, nullptr, nullptr));
                _mm256_storeu_ps(o + r * out_stride + 8,
                        stride2_sum<K, false, true>(row, at + 16, none, common, nullptr, nullptr));
            }
            continue;
        }
        for (int h = 0; h < 2; ++h) {
            const int64_t n = std::min<int64_t>(8, g.in - 16 * b - 8 * h), at_h = at + 16 * h;
            if (n <= 0) break;
            const bool inside = at_h >= 0 && at_h + last_window + 16 <= outs;
            const float *w = t.s2_half_weight.data() + 16 * K * b + 8 * h;
            const int32_t *lanes = t.s2_half_lanes.data() + 16 * K * b + 8 * h;
            const edge_window edge = inside ? edge_window {} : edge_masks(outs, at_h);
            for (int64_t r = 0; r < nrows; ++r) {
                const float *row = src + r * src_stride;
                const __m256 acc = inside ? stride2_sum<K, true, true>(row, at_h, edge, common, w, lanes)
                                          : stride2_sum<K, true, false>(row, at_h, edge, common, w, lanes);
                store_first8(o + r * out_stride + 8 * h, acc, n);
            }
        }
    }
}

} // namespace

void gather_rows_scalar(const kernels::axis_gather &g, const float *src, int64_t src_stride, float *out,
        int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1) {
    const int64_t i0 = 16 * b0, i1 = std::min(g.in, 16 * b1);
    for (int64_t r = 0; r < nrows; ++r)
        for (int64_t i = i0; i < i1; ++i) {
            const float *row = src + r * src_stride;
            float acc = 0.f;
            for (int64_t k = g.begin[size_t(i)]; k < g.begin[size_t(i) + 1]; ++k)
                acc += g.weight[size_t(k)] * row[g.output[size_t(k)]];
            out[r * out_stride + i - i0] = acc;
        }
}

void gather_rows_avx2(const row_gather_table &t, const kernels::axis_gather &g, const float *src, int64_t src_stride,
        float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1) {
    if (t.stride2) {
        switch (t.s2_k) {
            case 1: return stride2_rows<1>(t, g, src, src_stride, out, out_stride, nrows, b0, b1);
            case 2: return stride2_rows<2>(t, g, src, src_stride, out, out_stride, nrows, b0, b1);
            case 3: return stride2_rows<3>(t, g, src, src_stride, out, out_stride, nrows, b0, b1);
            default: return stride2_rows<4>(t, g, src, src_stride, out, out_stride, nrows, b0, b1);
        }
    }
    for (int64_t b = b0; b < b1; ++b)
        for (int h = 0; h < 2; ++h) {
            const int64_t i0 = 16 * b + 8 * h, n = std::min<int64_t>(8, g.in - i0);
            if (n <= 0) break;
            const int64_t j = 2 * b + h;
            half_rows(t, t.half_begin[size_t(j)], t.half_begin[size_t(j) + 1], src, src_stride, out + (i0 - 16 * b0),
                    out_stride, nrows, n);
        }
}

} // namespace bpg::tbb_backend
