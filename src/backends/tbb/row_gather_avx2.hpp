// The row gather of row_gather.hpp on CPUs with AVX2 and without AVX-512, and
// the scalar loop under both. The AVX2 form takes each block of 16 inputs as
// two halves of 8 lanes; a slot loads the (at most 16) outputs its lanes read
// with two masked loads and permutes them into place, or gathers a wider
// window; a table of the stride-2 form (2x upsampling) takes two taps from
// the even and odd outputs of one window of 16. All give the same bits:
// each input's taps in increasing output order, a multiply then an add,
// lanes without the tap untouched.
#pragma once

#include <cstdint>

#include "backends/tbb/row_gather.hpp"

namespace bpg::tbb_backend {

// Fills the tables gather_rows_avx2 reads for t (the s2_half_* ones where
// t.stride2, else the half_* ones; again after t.stride2 changes) and sets
// t.avx2_form.
void add_avx2_form(row_gather_table &t);

// Inputs of blocks [b0, b1) of nrows rows: out[r * out_stride + i - 16 * b0].
void gather_rows_scalar(const kernels::axis_gather &g, const float *src, int64_t src_stride, float *out,
        int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1);
void gather_rows_avx2(const row_gather_table &t, const kernels::axis_gather &g, const float *src, int64_t src_stride,
        float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1);

} // namespace bpg::tbb_backend
