// The reference backend's kernels: naive, obviously correct, f64 accumulation,
// any strides, any dtype. They define what every other backend must compute.
#pragma once

#include "core/problems.hpp"

namespace bpg::reference {

// diff_src = sum over outputs of weight(o -> i) * diff_dst[o].
void interpolate_bwd(const core::interpolate_bwd_problem &p, const void *diff_dst,
        void *diff_src);

// gamma may be null (gamma = 1); diff_gamma and diff_beta both null or both set.
void batchnorm_bwd(const core::bn_bwd_problem &p, const void *src, const void *diff_dst,
        const void *mean, const void *variance, const void *gamma, void *diff_src,
        void *diff_gamma, void *diff_beta);

// Every part of the BN backward (p.part): null where the part has no such
// tensor. local_sums writes the sums; from_sums reads them.
struct bn_buffers {
    const void *src = nullptr, *diff_dst = nullptr, *mean = nullptr, *variance = nullptr, *gamma = nullptr;
    void *sum_diff_dst = nullptr, *sum_diff_dst_centered = nullptr;
    void *diff_src = nullptr, *diff_gamma = nullptr, *diff_beta = nullptr;
};
void batchnorm_bwd(const core::bn_bwd_problem &p, const bn_buffers &b);

// diff_src = diff_dst where input > 0, else 0.
void relu_bwd(const core::relu_bwd_problem &p, const void *input, const void *diff_dst,
        void *diff_src);

} // namespace bpg::reference
