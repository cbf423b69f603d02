// The weighted sum of one input's taps over runs of floats: the inner loop
// of every level of the oneTBB interpolate kernel except the planar row
// gather.
//
// Taps of equal weight are added first, then each such group's sum is
// multiplied by its weight once: for 2x linear upsampling an interior input
// reads rows (a, b, c, e) with weights (1/4, 3/4, 3/4, 1/4) and is summed as
// 1/4 * (a + e) + 3/4 * (b + c), two multiplications instead of four (the
// multiply ports bound these loops); 2x nearest is a plain a + b. The order
// comes from the tap table alone (groups in the order of their first tap,
// members in output order; built once at compile by group_axis), so results
// do not depend on the work split. A weight of exactly 1 is not multiplied
// (1 * s == s, NaN and -0 included).
#pragma once

#include <cstdint>
#include <vector>

#include "backends/tbb/kernel_attributes.hpp"
#include "backends/tbb/prefetch.hpp"
#include "kernels/interp_tables.hpp"

namespace bpg::tbb_backend {

// An axis's taps in summation order.
struct grouped_axis {
    std::vector<int64_t> begin;    // taps of input i are [begin[i], begin[i + 1]), as in the axis table
    std::vector<int64_t> output;   // output index of each tap, in summation order
    std::vector<float> weight;     // weight of the tap's group
    std::vector<uint32_t> starts;  // per input: bit t set when its tap t starts a group (inputs of <= 32 taps)
    std::vector<uint8_t> ones;     // per input: every weight is 1
    std::vector<uint8_t> start;    // per tap: starts a group (any number of taps)
    // 2x linear interiors: input i reads outputs 2i - 1 .. 2i + 2 with
    // weights (wa, wb, wb, wa), summed wa * (x[2i-1] + x[2i+2]) + wb *
    // (x[2i] + x[2i+1]). Runs of such inputs share half their rows with the
    // next input, so sum_sym4_columns loads each row once (tap_columns.cpp).
    std::vector<uint8_t> sym4;     // per input: has that form with the axis' weights
    float sym4_wa = 0.f, sym4_wb = 0.f;
    // Per input: the same taps, groups and weights, in the same order, as
    // input i - 1, so the same sums: the gradient of a 2x linear
    // downsampling gives inputs 2o and 2o + 1 output o alone, weight 0.5.
    std::vector<uint8_t> repeats;
    // Per input i: the highest output row of the last input <= i with taps,
    // -1 before the first (prefetch_rows_ahead's bounds without a walk
    // over the taps: it runs once an input on rows in the L1).
    std::vector<int64_t> reach;
};

grouped_axis group_axis(const kernels::axis_gather &g);

// Where the runs of outputs o >= first are: base + (o - first) * stride.
struct row_source {
    const float *base;
    int64_t stride;
    int64_t first = 0;
    const float *row(int64_t o) const { return base + (o - first) * stride; }
};
// The same over rows of another element type (16-bit diff_dst read in place).
template <typename T> struct rows_of {
    const T *base;
    int64_t stride;
    const T *row(int64_t o) const { return base + o * stride; }
};

// Software prefetch for rows streaming from memory: the source rows inputs
// [i0, i1) read first (those past the highest row of input i0 - 1; rows of
// row_floats floats), `bytes` further on, into L2. In a dense tensor that is
// the stream of diff_dst itself, running on into the next plane. T1, not T0:
// into L1 they evict the rows being summed (measured slower than none).
void prefetch_rows_ahead(const grouped_axis &a, const row_source &src, int64_t row_floats, int64_t i0, int64_t i1,
        int64_t bytes);
// The same in bytes: row o at row0 + o * row_step, row_bytes long.
void prefetch_rows_ahead(const grouped_axis &a, const char *row0, int64_t row_step, int64_t row_bytes, int64_t i0,
        int64_t i1, int64_t bytes);

// For inputs [i0, i1), every one sym4 (needs AVX-512: sym4_columns_available):
// out[(i - i0) * out_stride + j] = the grouped sum over the rows of src, j < n.
// prefetch_bytes > 0: each column step prefetches every row of the run that
// far ahead into L2 (long rows streaming from memory, see sum_rows).
bool sym4_columns_available();
void sum_sym4_columns(const grouped_axis &a, const row_source &src, int64_t n, float *out, int64_t out_stride,
        int64_t i0, int64_t i1, int64_t prefetch_bytes = 0);

// Input i's taps ready to sum: x[t] is the run tap t reads.
struct tap_run {
    const float *const *x;
    const float *w;
    const uint8_t *start;
    int64_t k;
    uint32_t starts;
    bool ones;
};

// Fills x (room for every tap of the axis) from source(output) and returns
// input i's taps.
template <typename Source>
BPG_ALWAYS_INLINE tap_run taps_of(const grouped_axis &a, int64_t i, const float **x, Source &&source) {
    const int64_t t0 = a.begin[size_t(i)], k = a.begin[size_t(i) + 1] - t0;
    for (int64_t t = 0; t < k; ++t) x[t] = source(a.output[size_t(t0 + t)]);
    return {x, a.weight.data() + t0, a.start.data() + t0, k, a.starts[size_t(i)], a.ones[size_t(i)] != 0};
}

namespace detail {

// The sum at j of taps T.. of K, whose groups start at the bits of STARTS:
// s is the open group's sum so far, acc the closed groups' (none if FIRST).
// A compile-time fold, so each K and STARTS is one straight-line expression
// the loop over j vectorizes.
template <int K, uint32_t STARTS, bool ONES, int T, bool FIRST>
BPG_ALWAYS_INLINE float fold(const float *const *x, const float *w, int64_t j, float acc, float s) {
    if constexpr (T == K || (STARTS >> T & 1u)) { // the group ending at T - 1 is complete
        const float term = ONES ? s : w[T - 1] * s;
        const float sum = FIRST ? term : acc + term;
        if constexpr (T == K) return sum;
        else return fold<K, STARTS, ONES, T + 1, false>(x, w, j, sum, x[T][j]);
    } else {
        return fold<K, STARTS, ONES, T + 1, FIRST>(x, w, j, acc, s + x[T][j]);
    }
}

template <int K, uint32_t STARTS, bool ONES>
BPG_ALWAYS_INLINE void sum_fixed(float *__restrict out, int64_t n, const tap_run &r) {
    const float *x[K];
    float w[K];
    for (int t = 0; t < K; ++t) {
        x[t] = r.x[t];
        w[t] = r.w[t];
    }
    // The runs never overlap out (out is scratch or diff_src, they are
    // diff_dst or scratch): ivdep spares the vectorized loop a run-time
    // overlap check.
#pragma GCC ivdep
    for (int64_t j = 0; j < n; ++j) out[j] = fold<K, STARTS, ONES, 1, true>(x, w, j, 0.f, x[0][j]);
}

template <int K, uint32_t S = 1>
BPG_ALWAYS_INLINE void sum_k(float *__restrict out, int64_t n, const tap_run &r) {
    if constexpr (S < (1u << K)) {
        if (r.starts != S) return sum_k<K, S + 2>(out, n, r); // bit 0 is always set
        if (r.ones) return sum_fixed<K, S, true>(out, n, r);
        return sum_fixed<K, S, false>(out, n, r);
    }
}

} // namespace detail

// out[j] = the grouped sum of r's taps at j, for j < n. One out-of-line copy
// per instruction set (tap_sum.cpp): inlined at every call site of every
// kernel clone, its thirty unrolled loops made the kernel take minutes to
// compile.
void sum_taps(float *out, int64_t n, const tap_run &r);

BPG_ALWAYS_INLINE void sum_taps_inline(float *__restrict out, int64_t n, const tap_run &r) {
    switch (r.k) {
        case 0: for (int64_t j = 0; j < n; ++j) out[j] = 0.f; return;
        case 1: return detail::sum_k<1>(out, n, r);
        case 2: return detail::sum_k<2>(out, n, r);
        case 3: return detail::sum_k<3>(out, n, r);
        case 4: return detail::sum_k<4>(out, n, r);
        default: break;
    }
    // Many taps (strong downsampling): the same order, a group at a time
    // over chunks of j (simple loops the compiler vectorizes).
    constexpr int64_t chunk = 64;
    float group[chunk];
    for (int64_t j0 = 0; j0 < n; j0 += chunk) {
        const int64_t m = n - j0 < chunk ? n - j0 : chunk;
        float *o = out + j0;
        for (int64_t t = 0; t < r.k;) {
            for (int64_t j = 0; j < m; ++j) group[j] = r.x[t][j0 + j];
            int64_t e = t + 1;
            for (; e < r.k && !r.start[e]; ++e)
                for (int64_t j = 0; j < m; ++j) group[j] = group[j] + r.x[e][j0 + j];
            const float w = r.w[t];
            if (!r.ones)
                for (int64_t j = 0; j < m; ++j) group[j] = w * group[j];
            if (t == 0)
                for (int64_t j = 0; j < m; ++j) o[j] = group[j];
            else
                for (int64_t j = 0; j < m; ++j) o[j] = o[j] + group[j];
            t = e;
        }
    }
}

// Rows [ia, ia + count) of an axis: out[(i - ia) * out_stride + j] for j < n,
// from the runs of src; x has room for every tap of the axis. Out of line
// like sum_taps, one call per batch of rows. prefetch_bytes: passed to
// sum_sym4_columns, whose column walk reads ten rows of a batch of four
// inputs at once: with rows of hundreds of KB streaming from memory the
// hardware prefetchers do not keep ten streams ahead.
void sum_rows(const grouped_axis &a, int64_t ia, int64_t count, const float **x, const row_source &src, int64_t n,
        float *out, int64_t out_stride, int64_t prefetch_bytes = 0);

} // namespace bpg::tbb_backend
