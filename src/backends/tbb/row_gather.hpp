// The innermost-axis gather of planar (NCX) rows, vectorized: out[i] = sum of
// the taps of input i over a contiguous source row. With AVX-512, inputs go in
// blocks of 16 and taps in slots (slot t = the t-th tap of each input). The
// outputs one slot reads usually lie within 32 floats (2x upsampling: o = 2i +
// t - 1), so a slot loads those 32 floats and permutes them into lanes; a
// wider slot uses a hardware gather. Every tap is a masked FMA (masked, not
// zero-weighted, so NaN/inf never reach a lane that does not read them).
// Without AVX-512, the AVX2 form of row_gather_avx2.hpp or the scalar loop.
// All sum the taps of an input in increasing output order.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/interp_tables.hpp"

namespace bpg::tbb_backend {

struct row_gather_table {
    struct slot {
        int64_t first_output = 0; // window start in the source row
        int32_t window = 0;       // outputs spanned: <= 32 permute, else gather
        uint16_t mask = 0;        // lanes with a tap
    };
    std::vector<int64_t> block_slots; // ceil(in / 16) + 1: slots of block b are [b], [b+1])
    std::vector<slot> slots;
    std::vector<int32_t> idx;         // 16 per slot: index from first_output
    std::vector<float> weight;        // 16 per slot
    // Per block: the first of 32 outputs that hold every slot's window, or
    // -1. Such a block loads those 32 floats of a row once for all its slots
    // (the slots' own loads, masked each, and their masks held up the loop).
    std::vector<int64_t> block_window;
    // Stride-2 form (2x upsampling rows), filled when every block has it:
    // each tap of input i reads output 2i + d, d in [s2_dlo, s2_dlo + s2_k)
    // within [-2, 3], s2_dlo <= 0 (stride2_simd.hpp). Every block has s2_k
    // slots, one per d in increasing order (still each lane's taps in
    // increasing output order, so the sums are the slot path's, bit for
    // bit); a slot reads the even or odd outputs of the block's 32-output
    // window, shifted by at most one input: two loads and two permutes per
    // block and row instead of two loads and a permute per slot.
    bool stride2 = false;
    int32_t s2_dlo = 0, s2_k = 0;
    std::vector<uint16_t> s2_mask;       // s2_k per block: lanes with that tap
    std::vector<float> s2_weight;        // 16 per slot
    std::vector<uint8_t> s2_common;      // per block: every lane has every tap, with common_weight
    std::vector<float> s2_common_weight; // s2_k weights of the interior blocks (kept in registers)
    // AVX2 form (row_gather_avx2.hpp), 8 lanes per table row, built on CPUs
    // with AVX2 and without AVX-512 (else the scalar loop runs where the
    // AVX-512 paths do not): each block's two halves of 8 inputs and the
    // slots with a tap in one of their lanes; of a stride-2 table only the
    // s2_half_* ones.
    bool avx2_form = false;
    std::vector<int64_t> half_begin;     // 2 * blocks + 1: half-slots of half j are [j], [j + 1])
    std::vector<int64_t> half_first;     // per half-slot: the lowest output its lanes read
    std::vector<uint8_t> half_gather;    // per half-slot: window over 16 outputs (hardware gather)
    std::vector<int32_t> half_idx;       // from half_first
    std::vector<float> half_weight;
    std::vector<int32_t> half_lanes;     // -1 where the lane has the tap, else 0
    std::vector<int32_t> half_window;    // per half-slot: outputs its two masked loads read (<= 16)
    std::vector<float> s2_half_weight;   // stride-2 form: s2_weight, lanes in the order of its shuffles
    std::vector<int32_t> s2_half_lanes;  // the same of s2_mask: -1 where the lane has the tap, else 0
};

row_gather_table make_row_gather(const kernels::axis_gather &g);

// out[i - 16*b0] for the inputs of blocks [b0, b1); src holds g.out floats.
void gather_row(const row_gather_table &t, const kernels::axis_gather &g, const float *src, float *out,
        int64_t b0, int64_t b1);

// The same for nrows rows at once (row r of src at src + r * src_stride, of
// out at out + r * out_stride, all inputs): a block's tap tables are loaded
// into registers once and applied to every row.
// stream (where gather_rows_streams(t)): whole vectors at 64-byte-aligned
// addresses are written with non-temporal stores, then a store fence.
void gather_rows(const row_gather_table &t, const kernels::axis_gather &g, const float *src, int64_t src_stride,
        float *out, int64_t out_stride, int64_t nrows, bool stream = false);
bool gather_rows_streams(const row_gather_table &t);

} // namespace bpg::tbb_backend
