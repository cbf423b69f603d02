// The per-process parts of SyncBatchNorm (python/bpg_torch/sync_batchnorm.py
// reduces their sums across processes): bpg's BatchNormForwardSums,
// BatchNormTrainingBackpropSums and BatchNormTrainingBackpropFromSums, or
// the same formulas in torch where bpg does not run the tensors.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <vector>

#include "ops/common.h"
#include "ops/ops.h"
#include "ops/output_memory.h"
#include "ops/settings.h"

namespace bpg_torch {

namespace {

// Where bpg runs the part: CPU, a dtype of bpg, rank 2 to 8, some element.
bool bpg_runs(const at::Tensor &input) {
    return input.device().is_cpu() && dtype_code(input.scalar_type()) && input.dim() >= 2
            && input.dim() <= BPG_CAPI_MAX_RANK && input.numel() > 0;
}

// Every axis but the channel axis (1).
std::vector<int64_t> reduced_axes(const at::Tensor &t) {
    std::vector<int64_t> axes {0};
    for (int64_t a = 2; a < t.dim(); ++a) axes.push_back(a);
    return axes;
}

// A per-channel vector shaped to broadcast over NCX data.
at::Tensor per_channel(const at::Tensor &v, const at::Tensor &like) {
    std::vector<int64_t> shape(size_t(like.dim()), 1);
    shape[1] = like.size(1);
    return v.to(at::kFloat).reshape(shape);
}

void check_channels(const char *op, const at::Tensor &input, std::initializer_list<const at::Tensor *> stats) {
    TORCH_CHECK(input.dim() >= 2, "bpg.", op, ": input must have rank >= 2 (N, C, ...), got ", input.dim());
    for (const at::Tensor *s : stats)
        TORCH_CHECK(s->dim() == 1 && s->size(0) == input.size(1), "bpg.", op, ": per-channel tensors must have shape [",
                input.size(1), "], got ", s->sizes());
}

// Runs one part through the C ABI on dense data (`data` gives the layout).
void run_part(int part, const at::Tensor &data, bool has_gamma, int64_t count, double eps,
        const std::vector<const void *> &in, const std::vector<void *> &out, const char *op) {
    const bpg_capi_tensor d = describe(data);
    const bpg_capi_call call = call_settings(data.numel());
    bpg_capi_outcome outcome {};
    char message[512] = "";
    const int rc = bpg_capi_batchnorm_part(part, dtype_code(data.scalar_type()), &d, has_gamma, count, eps, in.data(),
            out.data(), &call, &outcome, message, sizeof message);
    check_capi(rc, message, op);
}

} // namespace

std::tuple<at::Tensor, at::Tensor> batch_norm_forward_sums(const at::Tensor &input, const at::Tensor &shift) {
    check_channels("batch_norm_forward_sums", input, {&shift});
    if (!bpg_runs(input)) {
        const at::Tensor d = input.to(at::kFloat) - per_channel(shift, input);
        return std::make_tuple(d.sum(reduced_axes(input)), (d * d).sum(reduced_axes(input)));
    }
    const at::Tensor x = dense(input, dense_format(input)), s = stats_f32(shift);
    at::Tensor sum = at::empty({x.size(1)}, s.options()), squares = at::empty({x.size(1)}, s.options());
    run_part(BPG_CAPI_BN_FORWARD_SUMS, x, false, 0, 0.0, {x.data_ptr(), s.data_ptr()},
            {sum.data_ptr(), squares.data_ptr()}, "batch_norm_forward_sums");
    return std::make_tuple(sum, squares);
}

std::tuple<at::Tensor, at::Tensor> batch_norm_backward_sums(const at::Tensor &grad_output, const at::Tensor &input,
        const at::Tensor &mean) {
    check_channels("batch_norm_backward_sums", input, {&mean});
    TORCH_CHECK(grad_output.sizes() == input.sizes(), "bpg.batch_norm_backward_sums: grad_output ",
            grad_output.sizes(), " and input ", input.sizes(), " differ in shape");
    if (!bpg_runs(input)) {
        const at::Tensor dy = grad_output.to(at::kFloat);
        return std::make_tuple(dy.sum(reduced_axes(input)),
                (dy * (input.to(at::kFloat) - per_channel(mean, input))).sum(reduced_axes(input)));
    }
    const at::Tensor x = dense(input, dense_format(input));
    const at::Tensor dy = with_strides_of(dense(grad_output, dense_format(input)), x), m = stats_f32(mean);
    at::Tensor sum_dy = at::empty({x.size(1)}, m.options()), sum_dy_xmu = at::empty({x.size(1)}, m.options());
    run_part(BPG_CAPI_BN_BACKWARD_SUMS, x, false, 0, 0.0, {x.data_ptr(), dy.data_ptr(), m.data_ptr()},
            {sum_dy.data_ptr(), sum_dy_xmu.data_ptr()}, "batch_norm_backward_sums");
    return std::make_tuple(sum_dy, sum_dy_xmu);
}

at::Tensor batch_norm_backward_from_sums(const at::Tensor &grad_output, const at::Tensor &input, const at::Tensor &mean,
        const at::Tensor &variance, const c10::optional<at::Tensor> &weight, const at::Tensor &sum_dy,
        const at::Tensor &sum_dy_xmu, int64_t count, double eps) {
    const bool has_weight = weight && weight->defined();
    check_channels("batch_norm_backward_from_sums", input, {&mean, &variance, &sum_dy, &sum_dy_xmu});
    if (has_weight) check_channels("batch_norm_backward_from_sums", input, {&*weight});
    TORCH_CHECK(count >= 1, "bpg.batch_norm_backward_from_sums: count must be >= 1, got ", count);
    if (!bpg_runs(input)) {
        const at::Tensor inv = per_channel(variance, input).add(eps).rsqrt();
        const at::Tensor xhat = (input.to(at::kFloat) - per_channel(mean, input)) * inv;
        const at::Tensor scale = has_weight ? per_channel(*weight, input) * inv : inv;
        const double m = double(count);
        at::Tensor gi = scale
                * (grad_output.to(at::kFloat) - per_channel(sum_dy, input) / m
                        - xhat * inv * per_channel(sum_dy_xmu, input) / m);
        return gi.to(input.scalar_type()).contiguous(dense_format(input));
    }
    const at::Tensor x = dense(input, dense_format(input));
    const at::Tensor dy = with_strides_of(dense(grad_output, dense_format(input)), x);
    const at::Tensor m = stats_f32(mean), v = stats_f32(variance), s1 = stats_f32(sum_dy), s2 = stats_f32(sum_dy_xmu);
    const at::Tensor g = has_weight ? stats_f32(*weight) : at::Tensor();
    at::Tensor gi = empty_output(x.sizes(), x.strides(), x.options());
    std::vector<const void *> in {x.data_ptr(), dy.data_ptr(), m.data_ptr(), v.data_ptr(), s1.data_ptr(), s2.data_ptr()};
    if (has_weight) in.push_back(g.data_ptr());
    run_part(BPG_CAPI_BN_FROM_SUMS, x, has_weight, count, eps, in, {gi.data_ptr()}, "batch_norm_backward_from_sums");
    return gi;
}

} // namespace bpg_torch
