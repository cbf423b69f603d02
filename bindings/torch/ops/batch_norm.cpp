// batch_norm (torch's native_batch_norm forward, bpg's backward) and the
// backward ops, plain and with the fused ReLU.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <c10/util/Exception.h>
#include <torch/autograd.h>

#include <chrono>

#include "ops/common.h"
#include "ops/ops.h"
#include "ops/output_memory.h"
#include "ops/settings.h"

namespace bpg_torch {

namespace {

using clock_type = std::chrono::steady_clock;

std::string torch_reason(const at::Tensor &input) {
    if (!input.device().is_cpu()) return "torch: tensors on " + input.device().str() + ", bpg runs on CPU";
    if (!dtype_code(input.scalar_type()))
        return std::string("torch: ") + c10::toString(input.scalar_type())
                + " is not run by bpg (Float, BFloat16, Half are)";
    if (input.dim() < 2 || input.dim() > BPG_CAPI_MAX_RANK)
        return "torch: rank " + std::to_string(input.dim()) + " (bpg runs rank 2 to 8)";
    if (input.numel() == 0) return "torch: empty tensor";
    return {};
}

void check_args(const char *op, const at::Tensor &grad_output, const at::Tensor &input, const at::Tensor &mean,
        const at::Tensor &invstd, const c10::optional<at::Tensor> &weight) {
    TORCH_CHECK(input.dim() >= 2, "bpg.", op, ": input must have rank >= 2 (N, C, ...), got ", input.dim());
    TORCH_CHECK(grad_output.sizes() == input.sizes(), "bpg.", op, ": grad_output ", grad_output.sizes(),
            " and input ", input.sizes(), " differ in shape");
    const int64_t C = input.size(1);
    TORCH_CHECK(mean.dim() == 1 && mean.size(0) == C, "bpg.", op, ": mean must have shape [", C, "], got ",
            mean.sizes());
    TORCH_CHECK(invstd.dim() == 1 && invstd.size(0) == C, "bpg.", op, ": invstd must have shape [", C, "], got ",
            invstd.sizes());
    if (weight && weight->defined())
        TORCH_CHECK(weight->dim() == 1 && weight->size(0) == C, "bpg.", op, ": weight must have shape [", C,
                "], got ", weight->sizes());
}


// torch's own backward (the fallback): relu's gradient first when fused.
std::tuple<at::Tensor, at::Tensor, at::Tensor> torch_backward(at::Tensor go, const at::Tensor &output,
        const at::Tensor &input, const at::Tensor &mean, const at::Tensor &variance, const at::Tensor &invstd,
        const c10::optional<at::Tensor> &weight, bool training, double eps) {
    if (output.defined()) go = go.masked_fill(output <= 0, 0);
    const at::Tensor w = weight && weight->defined() ? *weight
                                                     : at::ones({input.size(1)}, mean.options().dtype(at::kFloat));
    return at::native_batch_norm_backward(go, input, w, training ? at::Tensor() : mean,
            training ? at::Tensor() : variance.to(mean.scalar_type()), training ? mean : at::Tensor(),
            training ? invstd : at::Tensor(), training, eps, {true, true, true});
}

// The backward with the statistics as bpg takes them (mean, variance, f32).
// output defined: the fused ReLU (output = relu(bn(input))).
std::tuple<at::Tensor, at::Tensor, at::Tensor> backward(const char *op, const at::Tensor &grad_output,
        const at::Tensor &output, const at::Tensor &input, const at::Tensor &mean, const at::Tensor &variance,
        const at::Tensor &invstd, const c10::optional<at::Tensor> &weight, bool training, double eps,
        at::MemoryFormat format) {
    const clock_type::time_point start = verbose() ? clock_type::now() : clock_type::time_point();
    const std::string reason = torch_reason(input);
    const bpg_capi_call call = call_settings(input.numel());
    const at::ScalarType weight_type = weight && weight->defined() ? weight->scalar_type() : at::kFloat;
    if (reason.empty()) {
        const at::Tensor x = dense(input, format);
        const at::Tensor go = with_strides_of(dense(grad_output, format), x);
        const at::Tensor y = output.defined() ? with_strides_of(dense(output, format), x) : at::Tensor();
        const at::Tensor m = stats_f32(mean), v = stats_f32(variance);
        const at::Tensor g = weight && weight->defined() ? stats_f32(*weight) : at::Tensor();
        at::Tensor gi = empty_output(x.sizes(), x.strides(), x.options());
        at::Tensor gw = at::empty({x.size(1)}, m.options()), gb = at::empty({x.size(1)}, m.options());
        const bpg_capi_tensor d = describe(x);
        bpg_capi_outcome outcome {};
        char message[512] = "";
        const int rc = bpg_capi_batchnorm_backward(dtype_code(x.scalar_type()), &d, y.defined(), g.defined(),
                x.data_ptr(), go.data_ptr(), y.defined() ? y.data_ptr() : nullptr, m.data_ptr<float>(),
                v.data_ptr<float>(), g.defined() ? g.data_ptr<float>() : nullptr, eps, !training, gi.data_ptr(),
                gw.data_ptr<float>(), gb.data_ptr<float>(), &call, &outcome, message, sizeof message);
        if (rc == BPG_CAPI_OK) {
            if (verbose()) {
                const double us = std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
                verbose_line(std::string(op) + ",bpg " + outcome.backend + "," + c10::toString(x.scalar_type())
                        + "," + shape_text(x.sizes()) + (training ? ",training" : ",eval")
                        + ",threads=" + std::to_string(call.max_threads) + ",runtime=" + runtime_name(call.runtime)
                        + ",cache=" + (outcome.cache_hit ? "hit" : "miss") + "," + std::to_string(us) + "us");
            }
            return std::make_tuple(gi, as_type(gw, weight_type), as_type(gb, weight_type));
        }
        TORCH_CHECK(rc == BPG_CAPI_UNIMPLEMENTED, "bpg.", op, ": ", message);
        if (verbose()) verbose_line(std::string(op) + ",torch: bpg cannot run it: " + message);
    } else if (verbose()) {
        verbose_line(std::string(op) + "," + reason + "," + shape_text(input.sizes()));
    }
    auto r = torch_backward(grad_output, output, input, mean, variance, invstd, weight, training, eps);
    return std::make_tuple(std::get<0>(r), as_type(std::get<1>(r), weight_type), as_type(std::get<2>(r), weight_type));
}

// variance = 1/invstd^2 - eps, per channel in double (bpg takes variances);
// a plain loop: C values, no dispatcher calls.
at::Tensor variance_of(const at::Tensor &invstd, double eps) {
    at::Tensor v = at::empty({invstd.numel()}, at::TensorOptions().dtype(at::kFloat));
    const at::Tensor s = invstd.device().is_cpu() ? invstd.contiguous() : invstd.cpu().contiguous();
    float *out = v.data_ptr<float>();
    AT_DISPATCH_FLOATING_TYPES_AND(at::kBFloat16, s.scalar_type(), "bpg_torch_variance_of", [&] {
        const scalar_t *in = s.data_ptr<scalar_t>();
        for (int64_t c = 0; c < s.numel(); ++c) {
            const double i = double(in[c]);
            out[c] = float(1.0 / (i * i) - eps);
        }
    });
    return invstd.device().is_cpu() ? v : v.to(invstd.device());
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor value_or_undefined(const c10::optional<at::Tensor> &t) { return t ? *t : at::Tensor(); }

struct batch_norm_function : public torch::autograd::Function<batch_norm_function> {
    // Optional tensors stay optionals: autograd records no input for them
    // (an undefined at::Tensor input has no device and is refused).
    static at::Tensor forward(AutogradContext *ctx, const at::Tensor &input,
            const c10::optional<at::Tensor> &weight_arg, const c10::optional<at::Tensor> &bias_arg,
            const c10::optional<at::Tensor> &running_mean_arg, const c10::optional<at::Tensor> &running_var_arg,
            bool training, double momentum, double eps, bool fuse_relu) {
        const at::Tensor weight = value_or_undefined(weight_arg), bias = value_or_undefined(bias_arg),
                         running_mean = value_or_undefined(running_mean_arg),
                         running_var = value_or_undefined(running_var_arg);
        TORCH_CHECK(training || (running_mean.defined() && running_var.defined()),
                "bpg.batch_norm: running_mean and running_var are required when training is False");
        at::Tensor out, save_mean, save_invstd;
        {
            at::AutoDispatchBelowADInplaceOrView guard;
            std::tie(out, save_mean, save_invstd) =
                    at::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
            if (fuse_relu) out = at::relu(out);
        }
        at::Tensor mean, variance;
        if (training) {
            mean = save_mean;
            variance = variance_of(save_invstd, eps);
        } else { // eval: the running statistics as they are now, as torch's backward reads them
            mean = running_mean.clone();
            variance = running_var.to(at::kFloat).clone();
            save_invstd = (running_var.to(at::kDouble) + eps).rsqrt().to(at::kFloat);
        }
        ctx->save_for_backward({input, weight, fuse_relu ? out : at::Tensor(), mean, variance, save_invstd});
        ctx->saved_data["training"] = training;
        ctx->saved_data["eps"] = eps;
        ctx->saved_data["has_bias"] = bias.defined();
        ctx->saved_data["format"] = int64_t(dense_format(input));
        return out;
    }
    static variable_list backward(AutogradContext *ctx, variable_list grads) {
        const variable_list saved = ctx->get_saved_variables();
        const at::Tensor &input = saved[0], &weight = saved[1], &output = saved[2];
        const bool training = ctx->saved_data["training"].toBool();
        auto r = bpg_torch::backward(output.defined() ? "batch_norm_relu_backward" : "batch_norm_backward", grads[0],
                output, input, saved[3], saved[4], saved[5],
                weight.defined() ? c10::optional<at::Tensor>(weight) : c10::nullopt, training,
                ctx->saved_data["eps"].toDouble(), static_cast<at::MemoryFormat>(ctx->saved_data["format"].toInt()));
        return {std::get<0>(r), weight.defined() ? std::get<1>(r) : at::Tensor(),
                ctx->saved_data["has_bias"].toBool() ? std::get<2>(r) : at::Tensor(), at::Tensor(), at::Tensor(),
                at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

} // namespace

at::Tensor batch_norm(const at::Tensor &input, const c10::optional<at::Tensor> &weight,
        const c10::optional<at::Tensor> &bias, const c10::optional<at::Tensor> &running_mean,
        const c10::optional<at::Tensor> &running_var, bool training, double momentum, double eps, bool fuse_relu) {
    auto defined_or_none = [](const c10::optional<at::Tensor> &t) {
        return t && t->defined() ? t : c10::optional<at::Tensor>();
    };
    return batch_norm_function::apply(input, defined_or_none(weight), defined_or_none(bias),
            defined_or_none(running_mean), defined_or_none(running_var), training, momentum, eps, fuse_relu);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward(const at::Tensor &grad_output,
        const at::Tensor &input, const at::Tensor &mean, const at::Tensor &invstd,
        const c10::optional<at::Tensor> &weight, bool training, double eps) {
    check_args("batch_norm_backward", grad_output, input, mean, invstd, weight);
    return backward("batch_norm_backward", grad_output, at::Tensor(), input, mean, variance_of(invstd, eps), invstd,
            weight, training, eps, dense_format(input));
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_relu_backward(const at::Tensor &grad_output,
        const at::Tensor &output, const at::Tensor &input, const at::Tensor &mean, const at::Tensor &invstd,
        const c10::optional<at::Tensor> &weight, bool training, double eps) {
    check_args("batch_norm_relu_backward", grad_output, input, mean, invstd, weight);
    TORCH_CHECK(output.sizes() == input.sizes(), "bpg.batch_norm_relu_backward: output ", output.sizes(),
            " and input ", input.sizes(), " differ in shape");
    return backward("batch_norm_relu_backward", grad_output, output, input, mean, variance_of(invstd, eps), invstd,
            weight, training, eps, dense_format(input));
}

std::string batch_norm_path(const at::Tensor &input, bool training, bool fuse_relu) {
    const std::string reason = torch_reason(input);
    if (!reason.empty()) return reason;
    const at::Tensor x = at::empty(input.sizes(), input.options().memory_format(dense_format(input)));
    const bpg_capi_tensor d = describe(x);
    const bpg_capi_call call = call_settings(x.numel());
    bpg_capi_outcome outcome {};
    char message[512] = "";
    const int rc = bpg_capi_batchnorm_backward(dtype_code(x.scalar_type()), &d, fuse_relu, 1, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, 1e-5, !training, nullptr, nullptr, nullptr, &call, &outcome, message,
            sizeof message);
    if (rc == BPG_CAPI_UNIMPLEMENTED) return std::string("torch: bpg cannot run it: ") + message;
    check_capi(rc, message, "batch_norm_path");
    return std::string("bpg ") + outcome.backend + ": " + (fuse_relu ? "fused ReLUBackprop -> " : "")
            + "BatchNormTrainingBackprop" + (training ? "" : " with use_global_stats");
}

} // namespace bpg_torch
