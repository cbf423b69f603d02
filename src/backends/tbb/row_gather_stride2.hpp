// The stride-2 form of the planar row gather (row_gather.hpp explains it).
#pragma once

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/row_gather.hpp"

namespace bpg::tbb_backend {

// Fills t's stride-2 tables when every block of g has the form.
void add_stride2_form(row_gather_table &t, const kernels::axis_gather &g);

// As gather_rows, for blocks [b0, b1) (out[r * out_stride + i - 16 * b0]);
// needs t.stride2 and AVX-512.
void gather_rows_stride2(const row_gather_table &t, const kernels::axis_gather &g, const float *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1);
// The same from 16-bit rows, widened as loaded (f32 out, same bits).
void gather_rows_stride2(const row_gather_table &t, const kernels::axis_gather &g, const bf16_t *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1);
void gather_rows_stride2(const row_gather_table &t, const kernels::axis_gather &g, const f16_t *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1);

} // namespace bpg::tbb_backend
