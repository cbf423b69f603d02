#include "backends/tbb/row_sum_gather.hpp"

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/stride2_simd.hpp"
#include "backends/tbb/tap_fold_simd.hpp"

namespace bpg::tbb_backend {

using namespace stride2;

namespace {

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

struct fused_rows {
    const grouped_axis &a;
    int64_t i0, count;
    const float **x;
    const row_source &src;
    const row_gather_table &t;
    const kernels::axis_gather &g;
    float *out;
    int64_t out_stride;
    float *row;
    int64_t prefetch_bytes;
    template <int DLO, int K> __attribute__((target("avx512f"))) void operator()() const {
        const common_weights<K> cw(t);
        const int64_t blocks = (g.in + 15) / 16;
        for (int64_t i = i0; i < i0 + count; ++i) {
            if (prefetch_bytes > 0) prefetch_rows_ahead(a, src, g.out, i, i + 1, prefetch_bytes);
            float *dst = out + (i - i0) * out_stride;
            if (tap_fold::visit(a, i, src, gather_from<DLO, K> {t, g, dst, cw.w, blocks})) continue;
            sum_taps(row, g.out, taps_of(a, i, x, [&](int64_t o) { return src.row(o); }));
            row_stride2<DLO, K>(t, g, memory_row {row}, dst, cw.w, 0, blocks);
        }
    }
};

} // namespace

bool row_sum_gather_available(const row_gather_table &t) {
    return has_avx512f() && t.stride2;
}

void sum_gather_rows(const grouped_axis &a, int64_t i0, int64_t count, const float **x, const row_source &src,
        const row_gather_table &t, const kernels::axis_gather &g, float *out, int64_t out_stride, float *row,
        int64_t prefetch_bytes) {
    with_form(t, fused_rows {a, i0, count, x, src, t, g, out, out_stride, row, prefetch_bytes});
}

} // namespace bpg::tbb_backend
