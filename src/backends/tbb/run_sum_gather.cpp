#include "backends/tbb/run_sum_gather_kernel.hpp"

#include "backends/tbb/cpu.hpp"

namespace bpg::tbb_backend {

using run_sum_kernel::near_columns;
using run_sum_kernel::ring_takes;
using run_sum_kernel::sum_gather;

namespace {

// Whether chunk() computes about one column sum per column as it walks b:
// at most four taps an input, and the sums (ring: inputs of other forms with
// near columns take them from the column ring; else each sums all its
// columns) at most four more than the columns.
bool about_one_sum_per_column(const grouped_axis &b, int64_t run, bool ring) {
    if (!has_avx512f() || run <= 0 || run % 16 != 0) return false;
    const int64_t in = int64_t(b.begin.size()) - 1;
    const run_sum_kernel::axis_view view(b);
    int64_t sums = 0, lo = 0, hi = 0; // the ring's columns [lo, hi)
    for (int64_t j = 0; j < in;) {
        const int64_t t0 = b.begin[size_t(j)], k = b.begin[size_t(j) + 1] - t0;
        if (k > 4) return false;
        if (!b.sym4[size_t(j)]) {
            int64_t x0 = 0, x1 = 0;
            if (ring && near_columns(view, j, x0, x1) && ring_takes(view, j, x0, x1, lo, hi)) {
                if (x0 < lo || x0 > hi) lo = hi = x0;
                sums += std::max<int64_t>(0, x1 - hi);
                hi = std::max(hi, x1);
                lo = std::max(lo, hi - 8);
            } else {
                sums += k;
            }
            ++j;
            continue;
        }
        int64_t e = j + 1;
        while (e < in && b.sym4[size_t(e)]) ++e;
        sums += 2 * (e - j) + 2;
        j = e;
    }
    const int64_t outs = b.output.empty() ? 0 : *std::max_element(b.output.begin(), b.output.end()) + 1;
    return sums <= outs + 4;
}

} // namespace

bool run_sum_gather_available(const grouped_axis &b, int64_t run) { return about_one_sum_per_column(b, run, false); }

bool run_sum_gather_once_per_column(const grouped_axis &b, int64_t run) {
    return about_one_sum_per_column(b, run, true);
}

bool run_sum_gather_takes(const grouped_axis &a, int64_t i) {
    int64_t k = 0;
    return tap_fold::form_of(a, i, k) != 0;
}

void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src, const grouped_axis &b, int64_t run,
        float *dst, int64_t dst_stride, bool nontemporal, int64_t prefetch_bytes) {
    sum_gather(a, i, src, b, run, dst, dst_stride, nontemporal, prefetch_bytes);
}

} // namespace bpg::tbb_backend
