// One input's taps summed straight from 16-bit runs of diff_dst, widened to
// f32 as they are loaded (tap_fold_simd.hpp, convert_lanes.hpp): the
// channels-last levels of interp_source::converted_in_registers, without the
// ring of converted slices. The fold is sum_taps's, the same operations in
// the same order, so the same bits (tests/backends/test_tbb_interpolate_16bit.cpp).
#pragma once

#include <cstdint>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/tap_sum.hpp"

namespace bpg::tbb_backend {

// out[j] for j < n (n a multiple of 16; AVX-512) = input i of axis a summed
// over its rows of src, when i has one of tap_fold's forms; false (nothing
// written) otherwise. A 16-bit out is narrowed as it is stored (one axis:
// the sum is diff_src itself); vcvtne as in sum_taps_streamed below.
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, int64_t n, float *out);
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, int64_t n, float *out);
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, int64_t n, bf16_t *out,
        bool vcvtne = false);
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, int64_t n, f16_t *out);
// f32 rows (a level's scratch) into 16-bit diff_src, narrowed as stored:
// the last level of channels-last converted_in_registers, without a row of
// f32 sums converted apart.
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<float> &src, int64_t n, bf16_t *out,
        bool vcvtne = false);
bool sum_taps16(const grouped_axis &a, int64_t i, const rows_of<float> &src, int64_t n, f16_t *out);

// The same (channels-last 1-D: diff_dst into diff_src) with non-temporal
// stores straight from the registers, in whole lines: out 64-byte aligned,
// n * sizeof(element) a multiple of 64. No store fence:
// the caller fences once after its last input (a fence an input of a short
// run held up the loop; store_fence(), narrow_stream.hpp).
// vcvtne (bf16 only; the plan's bf16_vcvtne): narrowed by vcvtneps2bf16,
// the same bits (convert_lanes.hpp narrow_bf16_hw).
bool sum_taps_streamed(const grouped_axis &a, int64_t i, const rows_of<float> &src, int64_t n, float *out,
        bool vcvtne = false);
bool sum_taps_streamed(const grouped_axis &a, int64_t i, const rows_of<bf16_t> &src, int64_t n, bf16_t *out,
        bool vcvtne = false);
bool sum_taps_streamed(const grouped_axis &a, int64_t i, const rows_of<f16_t> &src, int64_t n, f16_t *out,
        bool vcvtne = false);

} // namespace bpg::tbb_backend
