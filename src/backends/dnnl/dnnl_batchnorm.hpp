// BatchNormTrainingBackprop -> dnnl::batch_normalization_backward (oneDNN
// 2.6+ or 3.x), where the primitive computes docs/semantics.md:
//   - the reduction keeps exactly one axis, which plays oneDNN's C (axis 1);
//     the other axes are shown to oneDNN in order around it by permuting dims
//     and strides. This covers NCX and NXC [C] statistics and the DirectML
//     rank-matched statistics with one kept axis.
//   - rank 2 to 5 (oneDNN refuses more);
//   - data f32 or bf16 (src, diff_dst, diff_src of one type; 2.6 has no f16
//     batch normalization, f16 is not lowered on 3.x either); statistics, gamma, diff_gamma and
//     diff_beta f32 and dense (oneDNN takes them as dense f32 [C]);
//   - diff_dst and diff_src with the same strides: 2.6's backward takes one
//     memory descriptor for both, 3.9's CPU implementations refuse two
//     different ones;
//   - epsilon = 0 only with use_global_stats and diff_src as the only output.
//     Measured with a zero variance (1/sqrt(var) = inf): the training
//     diff_src, and diff_gamma in either mode, get another inf/NaN pattern
//     than docs/semantics.md's, because oneDNN scales the sums by 1/sqrt(var)
//     after summing (sum(dd (src - mean)) * inf is +-inf where
//     sum(dd (src - mean) * inf) is NaN); use_global_stats' diff_src =
//     gamma * inf * dd agrees element for element.
// How the flags are chosen (docs/semantics.md computes the full training gradient
// whatever the number of outputs; oneDNN's prop_kind::backward and
// backward_data both do, verified by the tests):
//   diff_gamma/diff_beta wanted -> backward, use_scale|use_shift; SCALE is
//       gamma or a vector of ones owned by the kernel, SHIFT a vector of zeros
//       (2.6 wants it bound although backward does not read it; 3.x refuses
//       it: bnorm_bwd_binds_shift);
//   only diff_src, gamma given  -> backward, use_scale; DIFF_SCALE goes to a
//       per-thread scratch vector (no backward_data with use_scale);
//   only diff_src, no gamma     -> backward_data, no flags.
//   use_global_stats            -> normalization_flags::use_global_stats.
// mean and variance are passed as given (oneDNN backward never recomputes
// them). A src with zero elements compiles to a kernel that writes
// diff_gamma = diff_beta = 0 (the sums over an empty set), as the reference.
#pragma once

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace bpg::backends::dnnl_impl {

std::string batchnorm_why_unsupported(const core::bn_bwd_problem &p);
// Throws bpg::error(unimplemented) when batchnorm_why_unsupported is not empty.
std::unique_ptr<kernel> compile_batchnorm(const core::bn_bwd_problem &p);

} // namespace bpg::backends::dnnl_impl
