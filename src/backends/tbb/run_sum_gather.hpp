// The last two levels of a vector-mode (NXC) problem in one pass, for an
// input of the level above the last whose taps have one of the forms of
// tap_fold_simd.hpp (2x linear interiors, taps of weight 1, up to four taps
// of their own weights): its source rows are summed one column (a run of C
// floats) at a time in registers, and the columns go straight into the
// gather of the innermost axis. The summed row (the innermost axis at output
// resolution, times C) is never stored: where the two levels ran apart, it
// went out to L2 and came back, and each task read 2.5 source rows per 2x
// linear input from memory (level-0 batches of four inputs read rows 2i - 1
// .. 2i + 8); here an input reads the rows new to it from memory and meets
// the ones it shares with the previous input still in L2.
#pragma once

#include <cstdint>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/tap_sum.hpp"

namespace bpg::tbb_backend {

// AVX-512, runs of whole vectors, at most four taps per input of the
// innermost axis b, and about one column sum per column. b's 2x linear
// interiors, and runs of inputs of four weighted taps on consecutive columns
// two apart (align_corners near 2x), slide their column sums through
// registers (two new columns per input); other inputs sum the columns their taps read, each column once
// where their taps lie within eight columns (a ring of the last eight), else
// a column two of them share is summed twice. Counted without the ring:
// where inputs share columns all along the axis (align_corners, the gradient
// of downsampling) the fused pass was slower than the two levels apart.
bool run_sum_gather_available(const grouped_axis &b, int64_t run);

// The same, counting the columns the ring keeps as summed once: true also
// for align_corners and other scales (the plan takes it where it measured
// faster: interpolate_path.cpp).
bool run_sum_gather_once_per_column(const grouped_axis &b, int64_t run);

// Inputs of b in weighted walks: four taps of their own weights on
// consecutive columns, two on from the previous input's (align_corners near
// 2x), their columns slid through registers as 2x linear interiors' are.
int64_t run_sum_gather_weighted_walks(const grouped_axis &b);

// Input i of axis a has a form sum_gather_runs takes.
bool run_sum_gather_takes(const grouped_axis &a, int64_t i);

// For input i of axis a (run_sum_gather_takes): a row of src holds the
// outputs of the innermost axis b, runs of `run` floats one after another;
// writes dst[j * dst_stride + c] for every input j of b and c < run. Every
// output is the same operations in the same order as sum_rows over a, then
// sum_rows over b: the same bits (tests/backends/test_tbb_run_sum_gather.cpp).
// nontemporal: streaming stores (dst and dst_stride * 4 bytes 64-byte
// aligned), then a store fence. prefetch_bytes > 0 (rows streaming from
// memory): the rows new to input i are prefetched into L2 that far ahead of
// the columns being summed.
void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src, const grouped_axis &b, int64_t run,
        float *dst, int64_t dst_stride, bool nontemporal = false, int64_t prefetch_bytes = 0);

// The same over 16-bit rows of diff_dst into 16-bit diff_src, widened to f32
// as they are loaded and narrowed as they are stored (convert_lanes.hpp):
// the f32 sums are the ones above, rounded once. Cached stores. vcvtne (bf16,
// a CPU with AVX512_BF16: the plan's bf16_vcvtne): rounded by vcvtneps2bf16,
// the same bits in fewer instructions (convert16::narrow_bf16_hw).
void sum_gather_runs(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, const grouped_axis &b,
        int64_t run, bf16_t *dst, int64_t dst_stride, int64_t prefetch_bytes = 0, bool vcvtne = false);
void sum_gather_runs(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, const grouped_axis &b,
        int64_t run, f16_t *dst, int64_t dst_stride, int64_t prefetch_bytes = 0);
// f32 rows (a level's scratch, three axes and more) into 16-bit diff_src.
void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src, const grouped_axis &b, int64_t run,
        bf16_t *dst, int64_t dst_stride, bool vcvtne = false);
void sum_gather_runs(const grouped_axis &a, int64_t i, const row_source &src, const grouped_axis &b, int64_t run,
        f16_t *dst, int64_t dst_stride);

} // namespace bpg::tbb_backend
