#include "bench_case.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace bpg::bench {

namespace {

[[noreturn]] void bad(const std::string &msg) { throw error(status::invalid_argument, msg); }

bool one_of(const std::string &v, std::initializer_list<const char *> allowed) {
    return std::any_of(allowed.begin(), allowed.end(), [&](const char *a) { return v == a; });
}

// Axis of N is 0 in both formats; C is 1 (NCX) or last (NXC).
int channel_axis(const std::string &format, int rank) { return format == "NCX" ? 1 : rank - 1; }

dims spatial(const dims &d, const std::string &format) {
    const int r = int(d.size());
    const int first = format == "NCX" ? 2 : 1;
    return dims(d.begin() + first, d.begin() + first + (r - 2));
}

} // namespace

const char *to_string(bench_op o) { return o == bench_op::interpolate ? "interpolate" : "batchnorm"; }

const char *to_string(bench_kind k) {
    switch (k) {
        case bench_kind::overhead: return "overhead";
        case bench_kind::first_call: return "first_call";
        default: return "throughput";
    }
}

dims parse_shape(const std::string &text, const std::string &option) {
    const std::string what = option + " " + (text.empty() ? "''" : text);
    dims d;
    size_t pos = 0;
    while (true) {
        const size_t x = text.find('x', pos);
        const std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
        if (part.empty() || !std::all_of(part.begin(), part.end(), [](unsigned char ch) { return std::isdigit(ch); }))
            bad(what + ": a shape is positive integers joined by 'x', e.g. 16x64x56x56");
        if (part.size() > 12) bad(what + ": dimension " + part + " is too large");
        const int64_t v = std::stoll(part);
        if (v <= 0) bad(what + ": every dimension must be >= 1");
        d.push_back(v);
        if (x == std::string::npos) break;
        pos = x + 1;
    }
    // Keep every byte count far from int64 overflow (and from this machine).
    int64_t n = 1;
    for (dim v : d) {
        if (n > (int64_t(1) << 40) / v) bad(what + ": more than 2^40 elements");
        n *= v;
    }
    return d;
}

int64_t element_count(const dims &d) {
    int64_t n = 1;
    for (dim x : d) n *= x;
    return n;
}

std::string shape_string(const dims &d) {
    std::string s;
    for (dim v : d) s += (s.empty() ? "" : "x") + std::to_string(v);
    return s;
}

void validate(const bench_case &c) {
    if (!one_of(c.format, {"NCX", "NXC"})) bad("--format " + c.format + " is not one of NCX, NXC");
    if (c.op == bench_op::interpolate) {
        if (!one_of(c.mode, {"nearest", "linear", "bilinear", "trilinear"}))
            bad("--mode " + c.mode + " is not one of nearest, linear, bilinear, trilinear");
        if (!one_of(c.coord, {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                    "tf_half_pixel_for_nn"}))
            bad("--coord " + c.coord
                    + " is not one of half_pixel, align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn");
        if (!c.nearest_mode.empty()
                && !one_of(c.nearest_mode, {"round_prefer_ceil", "round_prefer_floor", "floor", "ceil"}))
            bad("--nearest-mode " + c.nearest_mode
                    + " is not one of round_prefer_ceil, round_prefer_floor, floor, ceil");
        if (c.src.empty() || c.dst.empty()) bad("interpolate needs both --src and --dst");
        const int r = int(c.src.size());
        if (r != int(c.dst.size()))
            bad("--src " + shape_string(c.src) + " has rank " + std::to_string(r) + " but --dst "
                    + shape_string(c.dst) + " has rank " + std::to_string(c.dst.size()));
        if (r < 3 || r > 6)
            bad("--src " + shape_string(c.src) + ": interpolate needs rank 3 to 6 (1 to 4 spatial axes)");
        const int ca = channel_axis(c.format, r);
        if (c.src[0] != c.dst[0] || c.src[ca] != c.dst[ca])
            bad("--src " + shape_string(c.src) + " and --dst " + shape_string(c.dst)
                    + " must have the same N and C (axes 0 and " + std::to_string(ca) + " in " + c.format + ")");
    } else {
        if (c.shape.empty()) bad("batchnorm needs --shape");
        if (c.shape.size() < 2 || c.shape.size() > 8)
            bad("--shape " + shape_string(c.shape) + ": batchnorm needs rank 2 to 8");
        if (c.outputs != 1 && c.outputs != 3) bad("--outputs " + std::to_string(c.outputs) + " is not 1 or 3");
    }
}

std::string describe(const bench_case &c) {
    std::string s;
    if (c.op == bench_op::interpolate) {
        s = "interp " + c.mode;
        if (c.coord != "half_pixel") s += " " + c.coord;
        if (!c.nearest_mode.empty()) s += " " + c.nearest_mode;
        s += " " + c.format + " " + to_string(c.dtype) + " " + shape_string(c.src) + "->" + shape_string(c.dst);
    } else {
        s = std::string("bn ") + (c.global_stats ? "global_stats" : "training") + " " + c.format + " "
                + to_string(c.dtype) + " " + shape_string(c.shape);
        if (c.outputs == 1) s += " 1 output";
        if (!c.gamma) s += " no gamma";
        if (c.relu) s += c.apart ? " + relu_bwd apart" : " + relu_bwd fused";
    }
    if (c.kind == bench_kind::overhead) s += " per call";
    if (c.kind == bench_kind::first_call) s += " first call";
    return s;
}

int64_t bytes_moved(const bench_case &c) {
    const int64_t e = int64_t(size_of(c.dtype));
    if (c.op == bench_op::interpolate) return e * (element_count(c.dst) + element_count(c.src));
    const int64_t n = e * element_count(c.shape);
    // With a ReLUBackprop fused in front, its input is one more tensor read
    // where its decisions are first needed; they are kept as bits after that
    // (stream_kernel.hpp).
    const int64_t relu = c.relu ? n : 0;
    if (!c.global_stats) return 2 * (n + n) + relu + n;
    // use_global_stats: diff_src = gamma * inv * diff_dst needs no src; only
    // diff_gamma reads it.
    return (c.outputs == 3 ? 3 * n : 2 * n) + relu;
}

int64_t largest_tensor_elements(const bench_case &c) {
    if (c.op == bench_op::batchnorm) return element_count(c.shape);
    return std::max(element_count(c.src), element_count(c.dst));
}

case_graph build_graph(const bench_case &c) {
    const data_type dt = c.dtype, f32 = data_type::f32;
    case_graph cg;
    if (c.op == bench_op::interpolate) {
        // Tensor ids: 0 src, 1 diff_dst, 2 diff_src.
        cg.inputs = {logical_tensor(0, dt, c.src), logical_tensor(1, dt, c.dst)};
        cg.outputs = {logical_tensor(2, dt, c.src)};
        op o(0, op::kind::InterpolateBackprop, cg.inputs, cg.outputs, "interpolate_bwd");
        o.set_attr(op::attr::mode, c.mode)
                .set_attr(op::attr::data_format, c.format)
                .set_attr(op::attr::coordinate_transformation_mode, c.coord)
                .set_attr(op::attr::sizes, spatial(c.dst, c.format));
        if (!c.nearest_mode.empty()) o.set_attr(op::attr::nearest_mode, c.nearest_mode);
        cg.g.add_op(o);
    } else {
        // Tensor ids: 0 src, 1 diff_dst, 2 mean, 3 variance, 4 gamma;
        // 5 diff_src, 6 diff_gamma, 7 diff_beta. Statistics are f32 [C].
        const dims ch {c.shape[size_t(channel_axis(c.format, int(c.shape.size())))]};
        cg.inputs = {logical_tensor(0, dt, c.shape), logical_tensor(1, dt, c.shape), logical_tensor(2, f32, ch),
                logical_tensor(3, f32, ch)};
        if (c.gamma) cg.inputs.emplace_back(4, f32, ch);
        cg.outputs = {logical_tensor(5, dt, c.shape)};
        if (c.outputs == 3) {
            cg.outputs.emplace_back(6, f32, ch);
            cg.outputs.emplace_back(7, f32, ch);
        }
        op o(0, op::kind::BatchNormTrainingBackprop, cg.inputs, cg.outputs, "bn_bwd");
        o.set_attr(op::attr::epsilon, 1e-5f)
                .set_attr(op::attr::data_format, c.format)
                .set_attr(op::attr::use_global_stats, c.global_stats);
        cg.g.add_op(o);
        if (c.relu) {
            // diff_dst (1) is the output of ReLUBackprop(10: its forward
            // output, 11: its diff_dst); the graph inputs change accordingly.
            const logical_tensor x(10, dt, c.shape), g(11, dt, c.shape);
            op r(1, op::kind::ReLUBackprop, {x, g}, {cg.inputs[1]}, "relu_bwd");
            cg.g.add_op(r);
            cg.inputs[1] = x;
            cg.inputs.push_back(g);
        }
    }
    cg.g.finalize();
    return cg;
}

} // namespace bpg::bench
