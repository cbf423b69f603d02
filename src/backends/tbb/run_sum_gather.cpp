#include "backends/tbb/run_sum_gather_kernel.hpp"

#include "backends/tbb/cpu.hpp"

namespace bpg::tbb_backend {

using run_sum_kernel::near_columns;
using run_sum_kernel::ring_takes;
using run_sum_kernel::sum_gather;

namespace {

// The column sums chunk() computes as it walks b (ring: inputs of other forms
// with near columns take them from the column ring; else each sums all its
// columns), and the inputs weighted walks take; none for an input of more
// than four taps (chunk() does not take b then).
struct column_count {
    int64_t sums = 0, walked = 0;
    bool taken = true;
};

column_count count_columns(const grouped_axis &b, bool ring) {
    const int64_t in = int64_t(b.begin.size()) - 1;
    const run_sum_kernel::axis_view view(b);
    column_count n;
    int64_t lo = 0, hi = 0; // the ring's columns [lo, hi)
    for (int64_t j = 0; j < in;) {
        const int64_t t0 = b.begin[size_t(j)], k = b.begin[size_t(j) + 1] - t0;
        if (k > 4) return {0, 0, false};
        int64_t e = j + 1, x0 = 0, x1 = 0;
        if (b.sym4[size_t(j)]) {
            while (e < in && b.sym4[size_t(e)]) ++e;
        } else {
            e = run_sum_kernel::weighted_walk_end(view, j, x0);
        }
        if (b.sym4[size_t(j)]) { // four new columns, then two an input
            n.sums += 2 * (e - j) + 2;
            j = e;
            continue;
        }
        if (e > j) { // the same, the first four from the ring where it holds them, the last four left in it
            const int64_t held = ring ? std::max<int64_t>(0, std::min(x0 + 4, hi) - std::max(x0, lo)) : 0;
            n.sums += 2 * (e - j) + 2 - held;
            n.walked += e - j;
            if (ring) {
                lo = x0 + 2 * (e - j - 1);
                hi = lo + 4;
            }
            j = e;
            continue;
        }
        if (ring && near_columns(view, j, x0, x1) && ring_takes(view, j, x0, x1, lo, hi)) {
            if (x0 < lo || x0 > hi) lo = hi = x0;
            n.sums += std::max<int64_t>(0, x1 - hi);
            hi = std::max(hi, x1);
            lo = std::max(lo, hi - 8);
        } else {
            n.sums += k;
        }
        ++j;
    }
    return n;
}

// Whether chunk() computes about one column sum per column: at most four
// taps an input, and the sums at most four more than the columns.
bool about_one_sum_per_column(const grouped_axis &b, int64_t run, bool ring) {
    if (!has_avx512f() || run <= 0 || run % 16 != 0) return false;
    const column_count n = count_columns(b, ring);
    const int64_t outs = b.output.empty() ? 0 : *std::max_element(b.output.begin(), b.output.end()) + 1;
    return n.taken && n.sums <= outs + 4;
}

} // namespace

bool run_sum_gather_available(const grouped_axis &b, int64_t run) { return about_one_sum_per_column(b, run, false); }

bool run_sum_gather_once_per_column(const grouped_axis &b, int64_t run) {
    return about_one_sum_per_column(b, run, true);
}

int64_t run_sum_gather_weighted_walks(const grouped_axis &b) { return count_columns(b, true).walked; }

bool run_sum_gather_takes(const grouped_axis &a, int64_t i) {
    int64_t k = 0;
    return tap_fold::form_of(a, i, k) != 0;
}

void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src, const grouped_axis &b, int64_t run,
        float *dst, int64_t dst_stride, bool nontemporal, int64_t prefetch_bytes) {
    sum_gather(a, i, src, b, run, dst, dst_stride, nontemporal, prefetch_bytes);
}

} // namespace bpg::tbb_backend
