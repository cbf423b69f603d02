// interp_levels::planar_small_planes_2d: planar 2-D problems whose planes are
// a few vectors each (7x7 from 14x14, the bottleneck upsampling of UNet and
// FPN). Row by row, such planes leave most of a 16-lane vector idle and pay
// the per-plane and per-row setup hundreds of times per megabyte; here 16
// planes run at once, one per vector lane, so every instruction does 16
// planes' work and the rows need no masks or permutes.
//
// A group of 16 planes runs the two levels of the planar 2-D path on
// "transposed" data: row o of diff_dst, gathered from the 16 planes, is
// out[1] vectors (ring slots of the rows one input reads); level 0 sums an
// input's rows with sum_taps (tap_sum.hpp), level 1 is the chain of FMAs
// from zero of row_gather.hpp in the axis table's order, and the result is
// scattered back. Each lane does the very operations the row-wise fused path
// does on its element, so the bits are those of planar_fused_row_gather_2d,
// for any grouping of planes and any number of threads.
#pragma once

#include <cstdint>

#include "backends/tbb/interpolate_plan.hpp"

namespace bpg::tbb_backend {

// Largest plane (of diff_dst or diff_src, in elements) the path takes: a
// group's ring of rows and its 16-bit staging stay within L1/L2.
constexpr int64_t small_plane_max_elements = 1024;

// Whether a planar 2-D plan (geometry set, threads known) runs well this
// way: AVX-512, contiguous planes of at most small_plane_max_elements, and
// enough planes for every thread to take several groups of 16.
bool small_planes_fit(const interp_plan &p);

// Runs such a plan with oneTBB on the current task arena: a task per group
// of 16 planes.
void run_small_planes(const interp_plan &p, const void *diff_dst, void *diff_src);

} // namespace bpg::tbb_backend
