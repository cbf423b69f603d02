// TORCH_LIBRARY(bpg): the schemas of docs/torch.md and their kernels.
#include <torch/library.h>

#include "bpg_capi.h"
#include "ops/ops.h"
#include "ops/settings.h"

namespace bpg_torch {

void set_num_threads_op(int64_t n) { set_num_threads(n); }
int64_t get_num_threads_op() { return get_num_threads(); }
std::vector<int64_t> cache_info() {
    int64_t info[4] = {0, 0, 0, 0};
    bpg_capi_cache_info(info);
    return std::vector<int64_t>(info, info + 4);
}

} // namespace bpg_torch

TORCH_LIBRARY(bpg, m) {
    m.def("interpolate(Tensor input, int[] output_size, str mode, bool align_corners, float[]? scales) -> Tensor");
    m.def("interpolate_backward(Tensor grad_output, int[] input_size, str mode, bool align_corners, "
          "float[]? scales) -> Tensor");
    m.def("interpolate_path(Tensor grad_output, int[] input_size, str mode, bool align_corners, "
          "float[]? scales) -> str");
    m.def("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
          "bool training, float momentum, float eps, bool fuse_relu) -> Tensor");
    m.def("batch_norm_backward(Tensor grad_output, Tensor input, Tensor mean, Tensor invstd, Tensor? weight, "
          "bool training, float eps) -> (Tensor, Tensor, Tensor)");
    m.def("batch_norm_relu_backward(Tensor grad_output, Tensor output, Tensor input, Tensor mean, Tensor invstd, "
          "Tensor? weight, bool training, float eps) -> (Tensor, Tensor, Tensor)");
    m.def("batch_norm_path(Tensor input, bool training, bool fuse_relu) -> str");
    m.def("batch_norm_forward_sums(Tensor input, Tensor shift) -> (Tensor, Tensor)");
    m.def("batch_norm_backward_sums(Tensor grad_output, Tensor input, Tensor mean) -> (Tensor, Tensor)");
    m.def("batch_norm_backward_from_sums(Tensor grad_output, Tensor input, Tensor mean, Tensor variance, "
          "Tensor? weight, Tensor sum_dy, Tensor sum_dy_xmu, int count, float eps) -> Tensor");
    m.def("set_num_threads(int n) -> ()", &bpg_torch::set_num_threads_op);
    m.def("get_num_threads() -> int", &bpg_torch::get_num_threads_op);
    m.def("cache_info() -> int[]", &bpg_torch::cache_info);
}

// The autograd-aware ops (an autograd::Function inside) for every backend;
// the backward and path ops need no autograd and fall back to torch off CPU.
TORCH_LIBRARY_IMPL(bpg, CompositeImplicitAutograd, m) {
    m.impl("interpolate", &bpg_torch::interpolate);
    m.impl("batch_norm", &bpg_torch::batch_norm);
    m.impl("interpolate_path", &bpg_torch::interpolate_path);
    m.impl("batch_norm_path", &bpg_torch::batch_norm_path);
}

TORCH_LIBRARY_IMPL(bpg, CompositeExplicitAutograd, m) {
    m.impl("interpolate_backward", &bpg_torch::interpolate_backward);
    m.impl("batch_norm_backward", &bpg_torch::batch_norm_backward);
    m.impl("batch_norm_relu_backward", &bpg_torch::batch_norm_relu_backward);
    m.impl("batch_norm_forward_sums", &bpg_torch::batch_norm_forward_sums);
    m.impl("batch_norm_backward_sums", &bpg_torch::batch_norm_backward_sums);
    m.impl("batch_norm_backward_from_sums", &bpg_torch::batch_norm_backward_from_sums);
}
