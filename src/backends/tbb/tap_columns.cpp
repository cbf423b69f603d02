// sum_sym4_columns (tap_sum.hpp): a run of 2x linear interior inputs, one
// 16-float column at a time down the run, the four rows of an input in
// registers; the next input reuses two of them and loads two. Same
// operations in the same order as sum_taps, so the same bits.
#include <immintrin.h>

#include "backends/tbb/simd_store.hpp"
#include "backends/tbb/tap_sum.hpp"

namespace bpg::tbb_backend {

namespace {
__attribute__((target("avx512f"), always_inline)) inline __m512 load_row(const row_source &src, int64_t o, int64_t j,
        __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, src.row(o) + j);
}
} // namespace

bool sym4_columns_available() { return __builtin_cpu_supports("avx512f"); }

__attribute__((target("avx512f"))) void sum_sym4_columns(const grouped_axis &a, const row_source &src, int64_t n,
        float *out, int64_t out_stride, int64_t i0, int64_t i1) {
    const __m512 wa = _mm512_set1_ps(a.sym4_wa), wb = _mm512_set1_ps(a.sym4_wb);
    for (int64_t j = 0; j < n; j += 16) {
        const __mmask16 m = n - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - j)) - 1u);
        // Rows 2i - 1, 2i, 2i + 1, 2i + 2 of the current input i.
        __m512 r0 = load_row(src, 2 * i0 - 1, j, m), r1 = load_row(src, 2 * i0, j, m),
               r2 = load_row(src, 2 * i0 + 1, j, m), r3 = load_row(src, 2 * i0 + 2, j, m);
        for (int64_t i = i0; i < i1; ++i) {
            const __m512 acc = _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(r0, r3)), _mm512_mul_ps(wb, _mm512_add_ps(r1, r2)));
            store_first(out + (i - i0) * out_stride + j, acc, n - j);
            if (i + 1 == i1) break;
            r0 = r2;
            r1 = r3;
            r2 = load_row(src, 2 * i + 3, j, m);
            r3 = load_row(src, 2 * i + 4, j, m);
        }
    }
}

} // namespace bpg::tbb_backend
