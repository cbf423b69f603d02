// The fused channels-last run kernel (run_sum_gather.hpp) into f16, from f16
// rows and from f32 rows (a level's scratch): a file of its own, as each
// dtype pair of the kernel's instantiations, so that a build spreads them
// over its cores.
#include "backends/tbb/run_sum_gather_kernel.hpp"

namespace bpg::tbb_backend {

using run_sum_kernel::sum_gather;

void sum_gather_runs(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, const grouped_axis &b,
        int64_t run, f16_t *dst, int64_t dst_stride, int64_t prefetch_bytes) {
    sum_gather(a, i, src, b, run, dst, dst_stride, false, prefetch_bytes);
}
void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src, const grouped_axis &b, int64_t run,
        f16_t *dst, int64_t dst_stride) {
    sum_gather(a, i, src, b, run, dst, dst_stride, false, 0);
}

} // namespace bpg::tbb_backend
