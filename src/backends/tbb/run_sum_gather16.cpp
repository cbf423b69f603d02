// The fused channels-last run kernel over 16-bit data (run_sum_gather.hpp),
// a file of its own so that a build spreads the kernel's instantiations over
// its cores.
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
void sum_gather_runs(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, const grouped_axis &b,
        int64_t run, f16_t *dst, int64_t dst_stride, int64_t prefetch_bytes) {
    sum_gather(a, i, src, b, run, dst, dst_stride, false, prefetch_bytes);
}
void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src, const grouped_axis &b, int64_t run,
        bf16_t *dst, int64_t dst_stride, bool vcvtne) {
    if (vcvtne)
        return sum_gather(a, i, src, b, run, reinterpret_cast<convert16::bf16_vcvtne_t *>(dst), dst_stride, false, 0);
    sum_gather(a, i, src, b, run, dst, dst_stride, false, 0);
}
void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src, const grouped_axis &b, int64_t run,
        f16_t *dst, int64_t dst_stride) {
    sum_gather(a, i, src, b, run, dst, dst_stride, false, 0);
}

} // namespace bpg::tbb_backend
