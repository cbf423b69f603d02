// The fused row kernel over f32 rows (row_sum_gather.hpp; 16-bit rows: the
// files beside it).
#include "backends/tbb/row_sum_gather.hpp"

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/row_sum_gather_kernel.hpp"

namespace bpg::tbb_backend {

using fused_row_kernel::fused_rows;
using stride2::with_form;

bool row_sum_gather_available(const row_gather_table &t) {
    return has_avx512f() && t.stride2;
}

void sum_gather_rows(const grouped_axis &a, int64_t i0, int64_t count, const float **x, const row_source &src,
        const row_gather_table &t, const kernels::axis_gather &g, float *out, int64_t out_stride, float *row,
        int64_t prefetch_bytes) {
    with_form(t, fused_rows<row_source> {a, i0, count, x, src, t, g, out, out_stride, row, prefetch_bytes, nullptr, true});
}

} // namespace bpg::tbb_backend
