#include "backends/tbb/row_gather_avx2.hpp"

#include <algorithm>
#include <climits>

#include <immintrin.h>

namespace bpg::tbb_backend {

void add_avx2_form(row_gather_table &t) {
    const int64_t nblocks = int64_t(t.block_slots.size()) - 1;
    t.half_begin.assign(1, 0);
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

// The rows of one half, its half-slots [s0, s1): per slot, the window's
// outputs permuted into lanes (or gathered), times the weights, added where
// the lane has the tap; the scalar loop's operations in its order.
__attribute__((target("avx2"))) void half_rows(const row_gather_table &t, int64_t s0, int64_t s1, const float *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t n) {
    const __m256i seven = _mm256_set1_epi32(7);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), iota8 = _mm256_add_epi32(iota, _mm256_set1_epi32(8));
    const __m256i store = _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n)), iota);
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
        float *o = out + r * out_stride;
        if (n == 8) _mm256_storeu_ps(o, acc);
        else _mm256_maskstore_ps(o, store, acc);
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
