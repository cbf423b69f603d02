// interp_levels::planar_small_planes_2d: planar 2-D problems whose planes are
// a few vectors each (7x7 from 14x14, the bottleneck upsampling of UNet and
// FPN). Row by row, such planes leave most of a 16-lane vector idle and pay
// the per-plane and per-row setup hundreds of times per megabyte; here 16
// planes run at once, one per vector lane, so every instruction does 16
// planes' work and the rows need no masks or permutes.
//
// A group of 16 planes is transposed, 16x16 floats at a time in registers,
// into a tile of vectors (lane l = plane l), just before each input needs
// its rows; level 0 sums an input's rows of the tile with sum_taps
// (tap_sum.hpp), level 1 is the chain of FMAs from zero of row_gather.hpp in
// the axis table's order, and each finished block of 16 diff_src elements
// is transposed back out. Each lane does the very operations the row-wise
// paths (planar_fused_row_gather_2d, planar_rows_then_gather_2d) do on its
// element, so the bits are theirs, for any grouping of planes and any
// number of threads (tests/backends/test_tbb_interpolate_small_planes.cpp).
#pragma once

#include <cstdint>

#include "backends/tbb/interpolate_plan.hpp"

namespace bpg::tbb_backend {

// Largest planes the path takes, in elements: up to 32x32 (14x14 <- 28x28,
// the FPN and UNet 2x steps) it beats the row-wise paths, whose rows of 28
// or 32 floats still leave the vectors part idle (docs/short-rows.md).
constexpr int64_t small_plane_max_dd = 1024, small_plane_max_ds = 1024;

// Element offset of plane t of N * C (image t / c_count, channel t % c_count).
inline int64_t plane_offset(int64_t t, int64_t c_count, int64_t n_stride, int64_t c_stride) {
    return t / c_count * n_stride + t % c_count * c_stride;
}

// Whether a planar 2-D plan's planes (geometry set, threads known) suit a
// small-planes path of `lanes` planes a group: contiguous planes of at most
// those sizes, and enough of them for every thread to take several groups.
bool small_planes_shape_fit(const interp_plan &p, int64_t lanes);

// Whether a planar 2-D plan runs well this way: AVX-512, and planes that
// fit groups of 16.
bool small_planes_fit(const interp_plan &p);

// Whether such a plan has at most one tap per input on either axis, each
// vector of 16 diff_src elements reading a window of 32 diff_dst elements
// (the gradient of 2x downsampling): interp_plan::single_tap.
bool single_tap_fit(const interp_plan &p);

// Runs such a plan with oneTBB on the current task arena: a task per group
// of 16 planes.
void run_small_planes(const interp_plan &p, const void *diff_dst, void *diff_src);

// The same for CPUs without AVX-512 (interp_levels::planar_small_planes8_2d,
// interpolate_small_planes8.cpp): planes of those sizes, groups of 8, in
// generic loops.
bool small_planes8_fit(const interp_plan &p);
void run_small_planes8(const interp_plan &p, const void *diff_dst, void *diff_src);

} // namespace bpg::tbb_backend
