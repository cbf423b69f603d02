// The innermost-axis gather of planar (NCX) rows, vectorized: out[i] = sum of
// the taps of input i over a contiguous source row. With AVX-512, inputs go in
// blocks of 16: the outputs a block reads (a window of at most 64 floats) are
// loaded into registers once, and each tap slot is a permute plus a masked
// FMA (masked, not zero-weighted, so NaN/inf never reach a lane that does not
// read them). Blocks with a wider window, and CPUs without AVX-512, use the
// scalar loop. Both sum the taps of an input in increasing output order.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/interp_tables.hpp"

namespace bpg::tbb_backend {

struct row_gather_table {
    struct block {
        int64_t first_output = 0; // window start in the source row
        int32_t window = 0;       // floats to load (<= 64), or -1: scalar fallback
        int32_t taps = 0;         // tap slots
        int64_t at = 0;           // first slot in idx / weight / mask
    };
    std::vector<block> blocks;   // ceil(in / 16)
    std::vector<int32_t> idx;    // 16 per slot: index in the window
    std::vector<float> weight;   // 16 per slot
    std::vector<uint16_t> mask;  // 1 per slot: lanes with a tap
};

row_gather_table make_row_gather(const kernels::axis_gather &g);

// out[i - 16*b0] for the inputs of blocks [b0, b1); src holds g.out floats.
void gather_row(const row_gather_table &t, const kernels::axis_gather &g, const float *src, float *out,
        int64_t b0, int64_t b1);

} // namespace bpg::tbb_backend
