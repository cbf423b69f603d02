#include "backends/tbb/tap_sum16.hpp"

#include "backends/tbb/tap_fold_simd.hpp"

namespace bpg::tbb_backend {

namespace {

__attribute__((target("avx512f"), always_inline)) inline void put(float *p, __m512 v) { _mm512_storeu_ps(p, v); }
template <typename D> __attribute__((target("avx512f"), always_inline)) inline void put(D *p, __m512 v) {
    convert16::store16(p, v);
}

// Whole vectors of the source's sums, for tap_fold::visit.
template <typename D> struct sum_into {
    D *out;
    int64_t n;
    template <typename Rows> __attribute__((target("avx512f"))) void operator()(const Rows &rows) const {
        for (int64_t j = 0; j < n; j += 16) put(out + j, rows.full(j));
    }
};

template <typename T, typename D>
bool sum16(const grouped_axis &a, int64_t i, const rows_of<T> &src, int64_t n, D *out) {
    return tap_fold::visit(a, i, src, sum_into<D> {out, n});
}

} // namespace

bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, int64_t n, float *out) {
    return sum16(a, i, src, n, out);
}
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, int64_t n, float *out) {
    return sum16(a, i, src, n, out);
}
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, int64_t n, bf16_t *out) {
    return sum16(a, i, src, n, out);
}
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, int64_t n, f16_t *out) {
    return sum16(a, i, src, n, out);
}

} // namespace bpg::tbb_backend
