// The fused channels-last run kernel (run_sum_gather.hpp) from bf16 rows
// into bf16: a file of its own, as each dtype pair of the kernel's
// instantiations, so that a build spreads them over its cores.
#include "backends/tbb/run_sum_gather_kernel.hpp"

namespace bpg::tbb_backend {

using run_sum_kernel::sum_gather;

void sum_gather_runs(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, const grouped_axis &b,
        int64_t run, bf16_t *dst, int64_t dst_stride, int64_t prefetch_bytes, bool vcvtne) {
    if (vcvtne)
        return sum_gather(a, i, src, b, run, reinterpret_cast<convert16::bf16_vcvtne_t *>(dst), dst_stride, false,
                prefetch_bytes);
    sum_gather(a, i, src, b, run, dst, dst_stride, false, prefetch_bytes);
}

} // namespace bpg::tbb_backend
