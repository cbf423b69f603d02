// The fused row kernel over bf16 rows (row_sum_gather.hpp), a file of its
// own so that a build spreads the kernel's instantiations over its cores.
#include "backends/tbb/row_sum_gather_kernel.hpp"

namespace bpg::tbb_backend {

using fused_row_kernel::fused_rows;
using stride2::with_form;

void sum_gather_rows(const grouped_axis &a, int64_t i0, int64_t count, const float **x, const rows_of<bf16_t> &src,
        const row_gather_table &t, const kernels::axis_gather &g, float *out, int64_t out_stride, float *row,
        float *converted, int64_t prefetch_bytes, bool pairs) {
    with_form(t,
            fused_rows<rows_of<bf16_t>> {a, i0, count, x, src, t, g, out, out_stride, row, prefetch_bytes, converted, pairs});
}

} // namespace bpg::tbb_backend
