// The last two levels of a planar (NCX) problem in one pass: the row sum of
// the level above the last and the stride-2 gather of the innermost axis
// (row_gather.hpp), without storing the summed row for an input of one of
// the forms of tap_fold_simd.hpp (2x linear interiors, taps of weight 1 such
// as 2x nearest pairs, up to four taps of their own weights such as
// align_corners): those are summed in registers, window by window, straight
// from the source rows, so diff_dst (or the level above's scratch) is read
// once and nothing is written but diff_src.
#pragma once

#include <cstdint>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/row_gather.hpp"
#include "backends/tbb/tap_sum.hpp"

namespace bpg::tbb_backend {

// AVX-512 and a table with the stride-2 form.
bool row_sum_gather_available(const row_gather_table &t);

// For inputs i in [i0, i0 + count) of axis a (the level above the last),
// out[(i - i0) * out_stride + k] for k < g.in = the gather (t, g) of input
// i's tap sum over the rows of src (each g.out floats). Inputs of another
// form are summed into `row` (g.out floats) first; x has room for a's taps.
// Every output is the same operations in the same order as sum_taps then
// gather_rows, hence the same bits (tests/backends/test_tbb_row_sum_gather.cpp).
// prefetch_bytes > 0 (sources streaming from memory): the rows each input
// reads first are prefetched into L2 that many bytes ahead, in address order,
// so the prefetch runs on past the plane into the next one.
void sum_gather_rows(const grouped_axis &a, int64_t i0, int64_t count, const float **x, const row_source &src,
        const row_gather_table &t, const kernels::axis_gather &g, float *out, int64_t out_stride, float *row,
        int64_t prefetch_bytes = 0);

// The same over 16-bit rows of diff_dst, widened to f32 as they are loaded
// (the same bits). An input of another form has its rows converted into
// `converted` (room for the most taps of a, g.out floats each) first. With
// `pairs`, neighbouring inputs of one form go two at a time, as f32 rows
// always do (the same bits; interp_plan::row_pairs16).
void sum_gather_rows(const grouped_axis &a, int64_t i0, int64_t count, const float **x, const rows_of<bf16_t> &src,
        const row_gather_table &t, const kernels::axis_gather &g, float *out, int64_t out_stride, float *row,
        float *converted, int64_t prefetch_bytes, bool pairs);
void sum_gather_rows(const grouped_axis &a, int64_t i0, int64_t count, const float **x, const rows_of<f16_t> &src,
        const row_gather_table &t, const kernels::axis_gather &g, float *out, int64_t out_stride, float *row,
        float *converted, int64_t prefetch_bytes, bool pairs);

} // namespace bpg::tbb_backend
