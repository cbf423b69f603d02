// The ops of TORCH_LIBRARY(bpg): kernels registered in registration.cpp.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <tuple>
#include <vector>

namespace bpg_torch {

using scales_arg = c10::optional<at::ArrayRef<double>>;

at::Tensor interpolate(const at::Tensor &input, at::IntArrayRef output_size, c10::string_view mode,
        bool align_corners, scales_arg scales);
at::Tensor interpolate_backward(const at::Tensor &grad_output, at::IntArrayRef input_size,
        c10::string_view mode, bool align_corners, scales_arg scales);
std::string interpolate_path(const at::Tensor &grad_output, at::IntArrayRef input_size,
        c10::string_view mode, bool align_corners, scales_arg scales);

at::Tensor batch_norm(const at::Tensor &input, const c10::optional<at::Tensor> &weight,
        const c10::optional<at::Tensor> &bias, const c10::optional<at::Tensor> &running_mean,
        const c10::optional<at::Tensor> &running_var, bool training, double momentum, double eps,
        bool fuse_relu);
std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward(const at::Tensor &grad_output,
        const at::Tensor &input, const at::Tensor &mean, const at::Tensor &invstd,
        const c10::optional<at::Tensor> &weight, bool training, double eps);
std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_relu_backward(const at::Tensor &grad_output,
        const at::Tensor &output, const at::Tensor &input, const at::Tensor &mean, const at::Tensor &invstd,
        const c10::optional<at::Tensor> &weight, bool training, double eps);
std::string batch_norm_path(const at::Tensor &input, bool training, bool fuse_relu);

// SyncBatchNorm's per-process parts (sync_batch_norm.cpp).
std::tuple<at::Tensor, at::Tensor> batch_norm_forward_sums(const at::Tensor &input, const at::Tensor &shift);
std::tuple<at::Tensor, at::Tensor> batch_norm_backward_sums(const at::Tensor &grad_output, const at::Tensor &input,
        const at::Tensor &mean);
at::Tensor batch_norm_backward_from_sums(const at::Tensor &grad_output, const at::Tensor &input, const at::Tensor &mean,
        const at::Tensor &variance, const c10::optional<at::Tensor> &weight, const at::Tensor &sum_dy,
        const at::Tensor &sum_dy_xmu, int64_t count, double eps);

void set_num_threads_op(int64_t n);
int64_t get_num_threads_op();
std::vector<int64_t> cache_info();

} // namespace bpg_torch
