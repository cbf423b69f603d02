// The last two levels of a vector-mode (NXC) problem in one pass, for an
// input of the level above the last whose taps have the 2x linear interior
// form (tap_sum.hpp, sym4): its four source rows are summed one column (a run
// of C floats) at a time, and the columns go straight into the gather of the
// innermost axis. The summed row (the innermost axis at output resolution,
// times C) is never stored: where the two levels ran apart, it went out to L2
// and came back, and each task read 2.5 source rows per input from memory
// (level-0 batches of four inputs read rows 2i - 1 .. 2i + 8); here it reads
// two new rows per input and meets the two it shares with the previous input
// still in L2.
#pragma once

#include <cstdint>

#include "backends/tbb/tap_sum.hpp"

namespace bpg::tbb_backend {

// AVX-512, runs of whole vectors, and an innermost axis b at least half of
// whose inputs are 2x linear interiors (their column sums slide through
// registers; other inputs recompute the columns they read).
bool run_sum_gather_available(const grouped_axis &b, int64_t run);

// Floats of the `col` scratch sum_gather_runs needs for axis b.
int64_t run_sum_gather_scratch(const grouped_axis &b);

// For input i of axis a (a.sym4[i]): a row of src holds the outputs of the
// innermost axis b, runs of `run` floats one after another; writes
// dst[j * dst_stride + c] for every input j of b and c < run. x has room for
// b's taps. Every output is the same operations in the same order as
// sum_rows over a, then sum_rows over b: the same bits
// (tests/backends/test_tbb_run_sum_gather.cpp). prefetch_bytes > 0 (rows
// streaming from memory): the two rows new to input i are prefetched into L2
// that far ahead of the columns being summed.
void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src, const grouped_axis &b, int64_t run,
        const float **x, float *col, float *dst, int64_t dst_stride, int64_t prefetch_bytes = 0);

} // namespace bpg::tbb_backend
