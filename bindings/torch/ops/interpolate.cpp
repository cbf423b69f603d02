// interpolate (torch's forward, bpg's backward) and interpolate_backward.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <c10/util/accumulate.h>

#include <algorithm>
#include <chrono>

#include "ops/common.h"
#include "ops/interpolate_maps.h"
#include "ops/ops.h"
#include "ops/output_memory.h"
#include "ops/settings.h"

namespace bpg_torch {

namespace {

struct interp_problem {
    int nsp = 0;
    bool nearest = false;
    int64_t in[3] {}, out[3] {};
};

// Checks the arguments (every bad one a clear error) and reads the problem.
interp_problem read_problem(const char *op, const at::Tensor &grad_output, at::IntArrayRef input_size,
        c10::string_view mode, scales_arg scales) {
    interp_problem p;
    TORCH_CHECK(mode == "nearest" || mode == "linear", "bpg.", op, ": mode must be 'nearest' or 'linear', got '",
            std::string(mode.data(), mode.size()), "'");
    p.nearest = mode == "nearest";
    TORCH_CHECK(grad_output.dim() >= 3 && grad_output.dim() <= 5, "bpg.", op,
            ": grad_output must have 1 to 3 spatial axes (rank 3 to 5), got rank ", grad_output.dim());
    TORCH_CHECK(int64_t(input_size.size()) == grad_output.dim(), "bpg.", op, ": input_size has ",
            input_size.size(), " values but grad_output has rank ", grad_output.dim());
    TORCH_CHECK(input_size[0] == grad_output.size(0) && input_size[1] == grad_output.size(1), "bpg.", op,
            ": input_size ", input_size, " and grad_output ", grad_output.sizes(), " differ in N or C");
    p.nsp = int(grad_output.dim()) - 2;
    if (scales)
        TORCH_CHECK(int64_t(scales->size()) == p.nsp, "bpg.", op, ": scales has ", scales->size(),
                " values for ", p.nsp, " spatial axes");
    for (int k = 0; k < p.nsp; ++k) {
        p.in[k] = input_size[size_t(k + 2)];
        p.out[k] = grad_output.size(k + 2);
        TORCH_CHECK(p.in[k] >= 0, "bpg.", op, ": input_size ", input_size, " has a negative size");
    }
    return p;
}

// Why torch runs this call, or empty when bpg may (subject to the maps).
std::string torch_reason(const at::Tensor &grad_output, const interp_problem &p) {
    if (!grad_output.device().is_cpu()) return "torch: tensors on " + grad_output.device().str() + ", bpg runs on CPU";
    if (!dtype_code(grad_output.scalar_type()))
        return std::string("torch: ") + c10::toString(grad_output.scalar_type())
                + " is not run by bpg (Float, BFloat16, Half are)";
    if (grad_output.numel() == 0) return "torch: empty tensor";
    for (int k = 0; k < p.nsp; ++k)
        if (p.in[k] == 0) return "torch: empty tensor";
    return {};
}

at::Tensor torch_backward(const at::Tensor &go, at::IntArrayRef input_size, const interp_problem &p,
        bool align_corners, scales_arg scales) {
    auto s = [&](int k) -> c10::optional<double> {
        if (!scales) return c10::nullopt;
        return (*scales)[size_t(k)];
    };
    const at::IntArrayRef out_size(p.out, size_t(p.nsp));
    if (p.nearest) {
        if (p.nsp == 1) return at::upsample_nearest1d_backward(go, out_size, input_size, s(0));
        if (p.nsp == 2) return at::upsample_nearest2d_backward(go, out_size, input_size, s(0), s(1));
        return at::upsample_nearest3d_backward(go, out_size, input_size, s(0), s(1), s(2));
    }
    if (p.nsp == 1) return at::upsample_linear1d_backward(go, out_size, input_size, align_corners, s(0));
    if (p.nsp == 2) return at::upsample_bilinear2d_backward(go, out_size, input_size, align_corners, s(0), s(1));
    return at::upsample_trilinear3d_backward(go, out_size, input_size, align_corners, s(0), s(1), s(2));
}

using clock_type = std::chrono::steady_clock;

void log_call(const char *path, const std::string &why, const at::Tensor &go, at::IntArrayRef input_size,
        const bpg_capi_call &call, int hit, clock_type::time_point start) {
    const double us = std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
    verbose_line(std::string("interpolate_backward,") + path + why + "," + c10::toString(go.scalar_type()) + ","
            + shape_text(go.sizes()) + "->" + shape_text(input_size) + ",threads=" + std::to_string(call.max_threads)
            + ",runtime=" + runtime_name(call.runtime) + ",cache=" + (hit < 0 ? "-" : hit ? "hit" : "miss") + ","
            + std::to_string(us) + "us");
}

// The backward in a given dense memory format (grad_output is made dense in it).
at::Tensor backward_in_format(const at::Tensor &grad_output, at::IntArrayRef input_size, c10::string_view mode,
        bool align_corners, scales_arg scales, at::MemoryFormat format) {
    const clock_type::time_point start = verbose() ? clock_type::now() : clock_type::time_point();
    const interp_problem p = read_problem("interpolate_backward", grad_output, input_size, mode, scales);
    const std::string reason = torch_reason(grad_output, p);
    std::shared_ptr<const interp_decision> d;
    if (reason.empty()) d = decide_interpolate(p.nsp, p.in, p.out, p.nearest, align_corners, scales);
    const at::Tensor go = grad_output.contiguous(format);
    const bpg_capi_call call = call_settings(std::max(go.numel(), c10::multiply_integers(input_size)));
    if (d && d->use_bpg) {
        at::Tensor gi = empty_output(input_size, format, go.options());
        const bpg_capi_tensor dd = describe(go), ds = describe(gi);
        bpg_capi_outcome outcome {};
        char message[512] = "";
        const int rc = bpg_capi_interpolate_backward(dtype_code(go.scalar_type()), &d->attrs, &dd, &ds,
                go.data_ptr(), gi.data_ptr(), &call, &outcome, message, sizeof message);
        if (rc == BPG_CAPI_OK) {
            if (verbose()) log_call("bpg ", std::string(outcome.backend) + ": " + d->why, go, input_size, call,
                    outcome.cache_hit, start);
            return gi;
        }
        TORCH_CHECK(rc == BPG_CAPI_UNIMPLEMENTED, "bpg.interpolate_backward: ", message);
        at::Tensor r = torch_backward(go, input_size, p, align_corners, scales);
        if (verbose()) log_call("torch: bpg cannot run it: ", message, go, input_size, call, -1, start);
        return r;
    }
    at::Tensor r = torch_backward(go, input_size, p, align_corners, scales);
    if (verbose()) log_call(reason.empty() ? "torch: " : "", reason.empty() ? d->why : reason, go, input_size, call, -1, start);
    return r;
}

at::Tensor forward(const at::Tensor &input, at::IntArrayRef output_size, bool nearest, bool align_corners,
        scales_arg scales) {
    const int64_t nsp = input.dim() - 2;
    TORCH_CHECK(nsp >= 1 && nsp <= 3, "bpg.interpolate: input must have 1 to 3 spatial axes (rank 3 to 5), got rank ",
            input.dim());
    TORCH_CHECK(int64_t(output_size.size()) == nsp, "bpg.interpolate: output_size has ", output_size.size(),
            " values for ", nsp, " spatial axes");
    if (scales)
        TORCH_CHECK(int64_t(scales->size()) == nsp, "bpg.interpolate: scales has ", scales->size(), " values for ",
                nsp, " spatial axes");
    auto s = [&](int k) -> c10::optional<double> {
        if (!scales) return c10::nullopt;
        return (*scales)[size_t(k)];
    };
    if (nearest) {
        if (nsp == 1) return at::upsample_nearest1d(input, output_size, s(0));
        if (nsp == 2) return at::upsample_nearest2d(input, output_size, s(0), s(1));
        return at::upsample_nearest3d(input, output_size, s(0), s(1), s(2));
    }
    if (nsp == 1) return at::upsample_linear1d(input, output_size, align_corners, s(0));
    if (nsp == 2) return at::upsample_bilinear2d(input, output_size, align_corners, s(0), s(1));
    return at::upsample_trilinear3d(input, output_size, align_corners, s(0), s(1), s(2));
}

// The autograd node of interpolate: backward through bpg, the gradient in the
// input's memory format (as torch's autograd gives it). A plain Node as
// torch's own generated ones are, holding its attributes as C++ values: an
// autograd::Function keeps them as IValues in a string-keyed map and wraps
// its outputs, a few microseconds per call on tiny tensors (bench/NOTES.md).
struct interpolate_backward_node : public torch::autograd::Node {
    std::vector<int64_t> input_size;
    std::string mode;
    bool align_corners = false;
    c10::optional<std::vector<double>> scales;
    at::MemoryFormat format = at::MemoryFormat::Contiguous;

    std::string name() const override { return "bpg::InterpolateBackward"; }
    torch::autograd::variable_list apply(torch::autograd::variable_list &&grads) override {
        if (!grads[0].defined()) return {at::Tensor()}; // a zero gradient
        return {backward_in_format(grads[0], input_size, mode, align_corners,
                scales ? scales_arg(*scales) : scales_arg(), format)};
    }
};

} // namespace

at::Tensor interpolate(const at::Tensor &input, at::IntArrayRef output_size, c10::string_view mode,
        bool align_corners, scales_arg scales) {
    TORCH_CHECK(mode == "nearest" || mode == "linear", "bpg.interpolate: mode must be 'nearest' or 'linear', got '",
            std::string(mode.data(), mode.size()), "'");
    TORCH_CHECK(!input._fw_grad(/*level=*/0).defined(), "bpg.interpolate: forward-mode AD is not supported");
    at::Tensor out;
    {
        at::AutoDispatchBelowADInplaceOrView guard;
        out = forward(input, output_size, mode == "nearest", align_corners, scales);
    }
    if (torch::autograd::compute_requires_grad(input)) {
        std::shared_ptr<interpolate_backward_node> node(new interpolate_backward_node(), torch::autograd::deleteNode);
        node->set_next_edges(torch::autograd::collect_next_edges(input));
        node->input_size = input.sizes().vec();
        node->mode.assign(mode.data(), mode.size());
        node->align_corners = align_corners;
        if (scales) node->scales = scales->vec();
        node->format = dense_format(input);
        torch::autograd::set_history(out, node);
    }
    return out;
}

at::Tensor interpolate_backward(const at::Tensor &grad_output, at::IntArrayRef input_size, c10::string_view mode,
        bool align_corners, scales_arg scales) {
    return backward_in_format(grad_output, input_size, mode, align_corners, scales, dense_format(grad_output));
}

std::string interpolate_path(const at::Tensor &grad_output, at::IntArrayRef input_size, c10::string_view mode,
        bool align_corners, scales_arg scales) {
    const interp_problem p = read_problem("interpolate_path", grad_output, input_size, mode, scales);
    const std::string reason = torch_reason(grad_output, p);
    if (!reason.empty()) return reason;
    const auto d = decide_interpolate(p.nsp, p.in, p.out, p.nearest, align_corners, scales);
    if (!d->use_bpg) return "torch: " + d->why;
    const at::MemoryFormat format = dense_format(grad_output);
    const at::Tensor go = at::empty(grad_output.sizes(), grad_output.options().memory_format(format));
    const at::Tensor gi = at::empty(input_size, grad_output.options().memory_format(format));
    const bpg_capi_tensor dd = describe(go), ds = describe(gi);
    const bpg_capi_call call = call_settings(std::max(go.numel(), gi.numel()));
    bpg_capi_outcome outcome {};
    char message[512] = "";
    const int rc = bpg_capi_interpolate_backward(dtype_code(go.scalar_type()), &d->attrs, &dd, &ds, nullptr,
            nullptr, &call, &outcome, message, sizeof message);
    if (rc == BPG_CAPI_UNIMPLEMENTED) return std::string("torch: bpg cannot run it: ") + message;
    check_capi(rc, message, "interpolate_path");
    return std::string("bpg ") + outcome.backend + ": " + d->why;
}

} // namespace bpg_torch
