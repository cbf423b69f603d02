// Forward ops for gradient checks, in f64 on dense row-major data. They are
// written in gather form, structured unlike the backward kernels, so that
// checking backward = adjoint (Interpolate) or backward = finite difference
// of forward (BatchNorm) compares two independent computations.
#pragma once

#include <vector>

#include "core/problems.hpp"

namespace bpg::test {

// dst = Interpolate(src): src_dense in the shape of p.src, dst_dense gets the
// shape of p.diff_dst. Applied one spatial axis at a time, each axis as an
// out x in weight matrix built from the shared coordinate functions.
void interpolate_fwd(const core::interpolate_bwd_problem &p, const std::vector<double> &src_dense,
        std::vector<double> &dst_dense);

// Biased batch statistics over the problem's reduction axes; mean and var are
// dense in bn_group_shape(p).
void bn_batch_stats(const core::bn_bwd_problem &p, const std::vector<double> &src_dense,
        std::vector<double> &mean, std::vector<double> &var);

// y = gamma * (x - mean) / sqrt(var + eps) + beta. Training mode (mean and var
// null) uses the batch statistics of src; otherwise the given (global) ones.
// gamma / beta empty mean 1 / 0. Statistics vectors are dense in
// bn_group_shape(p); epsilon is p.epsilon.
void batchnorm_fwd(const core::bn_bwd_problem &p, const std::vector<double> &src_dense,
        const std::vector<double> &gamma, const std::vector<double> &beta,
        std::vector<double> &dst_dense, const std::vector<double> *mean = nullptr,
        const std::vector<double> *var = nullptr);

} // namespace bpg::test
