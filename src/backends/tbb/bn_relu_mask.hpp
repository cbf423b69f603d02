// ReLUBackprop fused into BN's diff_dst, channels-last f32 rows of K = 16*NB
// channels (NB <= 4): pass 1 keeps the ReLU decision (relu input > 0) as one
// bit per element, and pass 2 reads those bits instead of reading the relu
// input again (1/32 of its bytes). AVX-512 only (the comparisons go straight
// to mask registers); the arithmetic is bn_accumulate / bn_folded_diff_src
// of kernels/bn_math.hpp, as in every loop of bn_run.cpp, so results are
// bit-identical to them.
#pragma once

#include <cstdint>

namespace bpg::tbb_backend {

bool relu_mask_available();

// Rows [a0, a1) of K contiguous floats: sums of g_eff and g_eff*(src - mean)
// per channel (in row order) into s1[K], s2[K]; mask bits of every row.
void relu_mask_sums(const float *x, const float *g, const float *src, const float *mean, int64_t K, int64_t a0,
        int64_t a1, uint16_t *mask, float *s1, float *s2);

// Rows [a0, a1): out[(a - out_row0)*K + k] = ak*g_eff + c2*(src - m) + c0,
// g_eff from the bits. stream (out 64-byte aligned): non-temporal stores,
// then a store fence.
void relu_mask_update(const uint16_t *mask, const float *g, const float *src, const float *ak, const float *c2,
        const float *c0, const float *m, int64_t K, int64_t a0, int64_t a1, float *out, int64_t out_row0,
        bool stream = false);

} // namespace bpg::tbb_backend
