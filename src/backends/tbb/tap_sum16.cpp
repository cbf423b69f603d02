#include "backends/tbb/tap_sum16.hpp"

#include "backends/tbb/tap_fold_simd.hpp"

namespace bpg::tbb_backend {

namespace {

__attribute__((target("avx512f"), always_inline)) inline void put(float *p, __m512 v) { _mm512_storeu_ps(p, v); }
template <typename D> __attribute__((target("avx512f"), always_inline)) inline void put(D *p, __m512 v) {
    convert16::store16(p, v);
}

// A float of diff_src written past the caches (sum_taps_streamed).
struct streamed_float {
    float v;
};
__attribute__((target("avx512f"), always_inline)) inline void put(streamed_float *p, __m512 v) {
    _mm512_stream_ps(&p->v, v);
}

// Whole vectors of the source's sums, for tap_fold::visit.
template <typename D> struct sum_into {
    D *out;
    int64_t n;
    template <typename Rows> __attribute__((target("avx512f"))) void operator()(const Rows &rows) const {
        for (int64_t j = 0; j < n; j += 16) put(out + j, rows.full(j));
    }
};

// 16-bit diff_src past the caches: two vectors narrowed into one whole line
// (half-line streaming stores measured no faster than cached ones).
template <typename D> struct stream_lines {
    D *out;
    int64_t n;
    template <typename Rows> __attribute__((target("avx512f"))) void operator()(const Rows &rows) const {
        // (A shuffle, not _mm512_inserti64x4 of a cast: GCC's header trips
        // -Wmaybe-uninitialized on the cast.)
        typedef long long half_line __attribute__((vector_size(32)));
        typedef long long line __attribute__((vector_size(64)));
        for (int64_t j = 0; j < n; j += 32) {
            const half_line lo = half_line(convert16::narrow(rows.full(j), out)),
                            hi = half_line(convert16::narrow(rows.full(j + 16), out));
            const line both = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
            _mm512_stream_si512(reinterpret_cast<__m512i *>(out + j), __m512i(both));
        }
    }
};

template <typename T, typename D>
bool sum16(const grouped_axis &a, int64_t i, const rows_of<T> &src, int64_t n, D *out) {
    return tap_fold::visit(a, i, src, sum_into<D> {out, n});
}

} // namespace

bool sum_taps_streamed(const grouped_axis &a, int64_t i, const rows_of<float> &src, int64_t n, float *out, bool) {
    return sum16(a, i, src, n, reinterpret_cast<streamed_float *>(out));
}
bool sum_taps_streamed(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, int64_t n, bf16_t *out,
        bool vcvtne) {
    if (vcvtne) return tap_fold::visit(a, i, src, stream_lines<convert16::bf16_vcvtne_t> {reinterpret_cast<convert16::bf16_vcvtne_t *>(out), n});
    return tap_fold::visit(a, i, src, stream_lines<bf16_t> {out, n});
}
bool sum_taps_streamed(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, int64_t n, f16_t *out, bool) {
    return tap_fold::visit(a, i, src, stream_lines<f16_t> {out, n});
}

bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, int64_t n, float *out) {
    return sum16(a, i, src, n, out);
}
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, int64_t n, float *out) {
    return sum16(a, i, src, n, out);
}
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, int64_t n, bf16_t *out, bool vcvtne) {
    if (vcvtne) return sum16(a, i, src, n, reinterpret_cast<convert16::bf16_vcvtne_t *>(out));
    return sum16(a, i, src, n, out);
}
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, int64_t n, f16_t *out) {
    return sum16(a, i, src, n, out);
}
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<float> &src, int64_t n, bf16_t *out, bool vcvtne) {
    if (vcvtne) return sum16(a, i, src, n, reinterpret_cast<convert16::bf16_vcvtne_t *>(out));
    return sum16(a, i, src, n, out);
}
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<float> &src, int64_t n, f16_t *out) {
    return sum16(a, i, src, n, out);
}

} // namespace bpg::tbb_backend
