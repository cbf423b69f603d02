// ReLUBackprop fused into one of BN's inputs, channels-last f32 rows of K
// contiguous channels: pass 1 keeps the ReLU decision (relu input > 0) as one
// bit per element, and pass 2 reads those bits instead of reading the relu
// input again (1/32 of its bytes). Row a's channels [16 v, 16 v + 16) have
// bit word a * ceil(K / 16) + v. AVX-512 only (the comparisons go straight to
// mask registers); the arithmetic is bn_accumulate / bn_folded_diff_src of
// kernels/bn_math.hpp, in the order of every loop of bn_channels_last.cpp (each
// channel summed in row order in f32), so results are bit-identical to them.
#pragma once

#include <cstdint>

namespace bpg::tbb_backend {

// Bit words per row of K channels.
inline int64_t relu_mask_words(int64_t K) { return (K + 15) / 16; }

// The tensors of one execute: the relu input x and diff_dst r, and the BN
// input the ReLU does not feed (src when it feeds diff_dst, else diff_dst).
struct relu_mask_rows {
    const float *x, *r, *other;
    bool into_src; // the ReLU's output is BN's src (else its diff_dst)
    int64_t K;
};

// Rows [a0, a1): per channel, sums of diff_dst and diff_dst*(src - mean) as
// BN sees them into s1, s2 (each relu_mask_words(K) * 16 floats, padding
// included); the mask bits of every row.
void relu_mask_sums(const relu_mask_rows &t, const float *mean, int64_t a0, int64_t a1, uint16_t *mask, float *s1,
        float *s2);

// Rows [a0, a1): out[(a - out_row0)*K + k] = ak*dd + c2*(src - m) + c0, the
// ReLU's value from the bits. stream (out 64-byte aligned, K % 16 == 0):
// non-temporal stores, then a store fence.
void relu_mask_update(const relu_mask_rows &t, const uint16_t *mask, const float *ak, const float *c2,
        const float *c0, const float *m, int64_t a0, int64_t a1, float *out, int64_t out_row0, bool stream = false);

} // namespace bpg::tbb_backend
