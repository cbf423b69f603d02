// interp_levels::planar_plane_rows_2d: small planes whose rows (of diff_dst
// and of diff_src) fit in one 16-lane vector each, 7x7 <- 14x14 among
// them. A plane is run alone, a row per vector: level 0
// sums an input's rows of diff_dst in registers, level 1 gathers each
// diff_src row from its row sums with one permute per tap, so nothing is
// transposed (the lanes-of-planes path, interpolate_small_planes.hpp, spends
// most of its shuffles on its two transposes). Four planes are run side by
// side so that each tap's table entry is read once for four of them.
//
// The operations on each element are those of the small-planes path and of
// the row paths: level 0 is sum_taps' grouped fold (tap_sum.hpp), level 1
// the chain of FMAs from zero over the axis table's taps; so the bits are
// theirs, for any grouping of planes and any number of threads
// (tests/backends/test_tbb_interpolate_plane_rows.cpp).
#pragma once

#include <cstdint>

#include "backends/tbb/interpolate_plan.hpp"

namespace bpg::tbb_backend {

// Most taps of one diff_src element along the inner axis the path takes
// (each a permute and a masked FMA per vector).
constexpr int64_t plane_rows_max_inner_taps = 8;

// Smallest diff_dst plane, in bytes, for interp_plan::next_group_prefetch
// on this path: 16-bit 28x28 planes (1568 bytes) gain from it, f32 16x16
// ones (1 KB) lose (bench/NOTES.md).
constexpr int64_t plane_rows_prefetch_min_bytes = 1536;

// Whether a plan the small-planes path fits (small_planes_fit) runs a row
// per vector: diff_src planes smaller than diff_dst's, diff_dst and
// diff_src rows of at most 16 elements, at most plane_rows_max_inner_taps
// taps per element of the inner axis. (The gradient of downsampling, whose
// stores outnumber its loads, measured no faster, slower in 16 bits, than
// the lanes path with its write prefetches: docs/short-rows.md.)
bool plane_rows_fit(const interp_plan &p);

// Runs such a plan with oneTBB on the current task arena: a task per group
// of 16 planes.
void run_plane_rows(const interp_plan &p, const void *diff_dst, void *diff_src);

} // namespace bpg::tbb_backend
