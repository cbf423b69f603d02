// BatchNormTrainingBackprop and its split for SyncBatchNorm
// (BatchNormTrainingBackpropSums, BatchNormTrainingBackpropFromSums):
// schemas, checks, shape inference, resolution; ports in the schemas below.
// Per-channel tensors ("statistics": mean, variance, gamma, the sums and the
// gradients of gamma and beta) are [C] (channel of data_format) or,
// DirectML style, of src's rank with size 1 on every reduced axis. See
// docs/semantics.md.
#include <algorithm>
#include <cmath>

#include "graph/op_schema.hpp"
#include "graph/resolve.hpp"
#include "graph/schemas/checks.hpp"

namespace bpg::graph_impl {

namespace {

using A = op::attr;

// A port of an op of these schemas: a data tensor (src's shape) or a
// per-channel one, with its label for messages.
struct bn_port {
    logical_tensor lt;
    std::string label;
    bool data;
    bool sum; // one of the split's sums (f32 only)
};

bool is_data_port(op::kind k, bool input, size_t i) {
    if (k == op::kind::BatchNormForwardSums) return input && i == 0; // src (input 1: shift)
    if (input) return i <= 1; // src, diff_dst
    return i == 0 && k != op::kind::BatchNormTrainingBackpropSums; // diff_src
}

std::vector<bn_port> ports_of(const op &o, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out) {
    const op_schema &s = schema_of(o.get_kind());
    std::vector<bn_port> v;
    for (bool input : {true, false}) {
        const std::vector<logical_tensor> &lts = input ? in : out;
        const std::vector<port_spec> &specs = input ? s.inputs : s.outputs;
        for (size_t i = 0; i < lts.size(); ++i) {
            const std::string name = specs[i].name;
            v.push_back({lts[i], port_label(o, input, i, specs[i].name), is_data_port(o.get_kind(), input, i),
                    name.rfind("sum_", 0) == 0});
        }
    }
    return v;
}

bool channels_last_of(const op &o) {
    return *attr_or_default<std::string>(o, A::data_format) == "NXC";
}

void check_epsilon(const op &o) {
    const float eps = std::get<float>(*o.find_attr(A::epsilon));
    if (!std::isfinite(eps) || eps < 0.f)
        fail(o, status::invalid_argument,
                "attribute 'epsilon' = " + list_text(std::vector<float>{eps})
                        + " must be finite and >= 0");
}

void check_dtypes(const op &o, const std::vector<bn_port> &ports) {
    const bn_port &src = ports.front();
    check_dtype_in(o, src.lt, src.label, {data_type::f32, data_type::bf16, data_type::f16});
    const bool bf16_data = src.lt.get_data_type() == data_type::bf16;
    for (const bn_port &p : ports) {
        if (p.data) check_same_dtype(o, src.lt, src.label, p.lt, p.label);
        else if (bf16_data && !p.sum) check_dtype_in(o, p.lt, p.label, {data_type::f32, data_type::bf16});
        else check_dtype_in(o, p.lt, p.label, {data_type::f32});
    }
}

// Shapes: data tensors equal, rank 2..8; statistics [C] or rank-matched.
void check_shapes(const op &o, const std::vector<bn_port> &ports) {
    const logical_tensor &src = ports.front().lt;
    const std::string &src_l = ports.front().label;
    check_rank(o, src, src_l, 2, 8);
    std::vector<std::pair<logical_tensor, std::string>> stats;
    for (const bn_port &p : ports) {
        if (p.data) check_same_shape(o, src, src_l, p.lt, p.label);
        else stats.push_back({p.lt, p.label});
    }
    const int rank = src.ndims();
    for (const auto &[lt, label] : stats) {
        if (lt.ndims() == unknown_rank) continue;
        check_same_shape(o, stats.front().first, stats.front().second, lt, label);
        if (rank == unknown_rank) continue;
        if (lt.ndims() == 1) {
            const int c = channel_axis(channels_last_of(o), rank);
            const dim cd = src.get_dims()[c], sd = lt.get_dims()[0];
            if (known(cd) && known(sd) && cd != sd)
                fail(o, status::invalid_shape,
                        label + " has " + std::to_string(sd) + " elements but src "
                                + shape_text(src.get_dims()) + " has C = " + std::to_string(cd)
                                + " on axis " + std::to_string(c) + " (data_format "
                                + (channels_last_of(o) ? "NXC" : "NCX") + ")");
        } else if (lt.ndims() == rank) {
            for (int a = 0; a < rank; ++a) {
                const dim s = lt.get_dims()[a], x = src.get_dims()[a];
                if (known(s) && known(x) && s != 1 && s != x)
                    fail(o, status::invalid_shape,
                            label + " has shape " + shape_text(lt.get_dims()) + " against src "
                                    + shape_text(src.get_dims()) + ": axis " + std::to_string(a)
                                    + " must be 1 (reduced) or " + std::to_string(x) + " (kept)");
            }
        } else {
            fail(o, status::invalid_shape,
                    label + " has rank " + std::to_string(lt.ndims()) + "; statistics are [C] "
                            + "(rank 1) or have src's rank " + std::to_string(rank)
                            + " with size 1 on reduced axes");
        }
    }
}

// src's elements in one reduction (over the local batch), or -1 if unknown.
int64_t local_count(const op &o, const logical_tensor &src, const logical_tensor &stat) {
    if (src.ndims() == unknown_rank || stat.ndims() == unknown_rank) return -1;
    const int rank = src.ndims(), c = channel_axis(channels_last_of(o), rank);
    int64_t m = 1;
    for (int a = 0; a < rank; ++a) {
        const dim x = src.get_dims()[a];
        const bool kept = stat.ndims() == 1 ? a == c : stat.get_dims()[a] != 1;
        if (kept) continue;
        if (!known(x)) return -1;
        m *= x;
    }
    return m;
}

void check_global_count(const op &o, const logical_tensor &src, const logical_tensor &mean) {
    const int64_t global = std::get<int64_t>(*o.find_attr(A::global_count));
    const int64_t local = local_count(o, src, mean);
    if (global < 1 || global < local)
        fail(o, status::invalid_argument,
                "attribute 'global_count' = " + std::to_string(global) + " must be >= 1 and >= the "
                        + std::to_string(std::max<int64_t>(local, 0))
                        + " elements of src in one channel's reduction (it counts them over every process)");
}

void check_batchnorm(const op &o, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out) {
    const bool sums = o.get_kind() == op::kind::BatchNormTrainingBackpropSums
            || o.get_kind() == op::kind::BatchNormForwardSums;
    if (!sums && out.size() == 2)
        fail(o, status::invalid_graph,
                "has 2 outputs; diff_gamma and diff_beta go together: give 1 output (diff_src) "
                "or 3 (diff_src, diff_gamma, diff_beta)");
    if (!sums) check_epsilon(o);
    const std::vector<bn_port> ports = ports_of(o, in, out);
    check_dtypes(o, ports);
    check_shapes(o, ports);
    if (o.get_kind() == op::kind::BatchNormTrainingBackpropFromSums) check_global_count(o, in[0], in[2]);
}

std::vector<dims> infer_batchnorm(const op &o, const std::vector<logical_tensor> &in) {
    if (o.get_kind() == op::kind::BatchNormTrainingBackpropSums) return {in[2].get_dims(), in[2].get_dims()};
    if (o.get_kind() == op::kind::BatchNormForwardSums) return {in[1].get_dims(), in[1].get_dims()};
    std::vector<dims> out {in[0].get_dims()};
    for (size_t i = 1; i < o.get_outputs().size(); ++i) out.push_back(in[2].get_dims());
    return out;
}

// Statistics strides seen with src's rank (0 on reduced axes).
dims stat_strides(const core::tensor_desc &stat, const std::vector<bool> &reduced, int c_axis) {
    const int rank = int(reduced.size());
    dims s(rank, 0);
    if (stat.ndims() == 1) {
        s[c_axis] = stat.strides[0];
    } else {
        for (int a = 0; a < rank; ++a)
            if (!reduced[a]) s[a] = stat.strides[a];
    }
    return s;
}

} // namespace

const op_schema &batchnorm_bwd_schema() {
    static const op_schema s {op::kind::BatchNormTrainingBackprop,
            {{"src", false}, {"diff_dst", false}, {"mean", false}, {"variance", false},
                    {"gamma", true}},
            {{"diff_src", false}, {"diff_gamma", true}, {"diff_beta", true}},
            {
                    {A::epsilon, attr_type::f32, true, std::nullopt, {}},
                    {A::data_format, attr_type::string, false, std::string("NXC"), {"NXC", "NCX"}},
                    {A::use_global_stats, attr_type::boolean, false, false, {}},
            },
            check_batchnorm, infer_batchnorm};
    return s;
}

const op_schema &batchnorm_bwd_sums_schema() {
    static const op_schema s {op::kind::BatchNormTrainingBackpropSums,
            {{"src", false}, {"diff_dst", false}, {"mean", false}},
            {{"sum_diff_dst", false}, {"sum_diff_dst_centered", false}},
            {{A::data_format, attr_type::string, false, std::string("NXC"), {"NXC", "NCX"}}}, check_batchnorm,
            infer_batchnorm};
    return s;
}

const op_schema &batchnorm_fwd_sums_schema() {
    static const op_schema s {op::kind::BatchNormForwardSums, {{"src", false}, {"shift", false}},
            {{"sum_src", false}, {"sum_squares", false}},
            {{A::data_format, attr_type::string, false, std::string("NXC"), {"NXC", "NCX"}}}, check_batchnorm,
            infer_batchnorm};
    return s;
}

const op_schema &batchnorm_bwd_from_sums_schema() {
    static const op_schema s {op::kind::BatchNormTrainingBackpropFromSums,
            {{"src", false}, {"diff_dst", false}, {"mean", false}, {"variance", false}, {"sum_diff_dst", false},
                    {"sum_diff_dst_centered", false}, {"gamma", true}},
            {{"diff_src", false}, {"diff_gamma", true}, {"diff_beta", true}},
            {
                    {A::epsilon, attr_type::f32, true, std::nullopt, {}},
                    {A::data_format, attr_type::string, false, std::string("NXC"), {"NXC", "NCX"}},
                    {A::global_count, attr_type::s64, true, std::nullopt, {}},
            },
            check_batchnorm, infer_batchnorm};
    return s;
}

core::bn_bwd_problem resolve_batchnorm_bwd(const op &o,
        const std::vector<logical_tensor> &inputs, const std::vector<logical_tensor> &outputs) {
    core::bn_bwd_problem p;
    p.op_id = o.get_id();
    p.src = core::desc_of(inputs[0]);
    if (o.get_kind() == op::kind::BatchNormForwardSums) {
        p.part = core::bn_bwd_part::forward_sums;
        p.diff_dst = p.src; // the sums of the backward with diff_dst = src and mean = shift
        p.mean = core::desc_of(inputs[1]);
        p.sum_diff_dst = core::desc_of(outputs[0]);
        p.sum_diff_dst_centered = core::desc_of(outputs[1]);
    } else if (o.get_kind() == op::kind::BatchNormTrainingBackpropSums) {
        p.diff_dst = core::desc_of(inputs[1]);
        p.mean = core::desc_of(inputs[2]);
        p.part = core::bn_bwd_part::local_sums;
        p.sum_diff_dst = core::desc_of(outputs[0]);
        p.sum_diff_dst_centered = core::desc_of(outputs[1]);
    } else {
        p.diff_dst = core::desc_of(inputs[1]);
        p.mean = core::desc_of(inputs[2]);
        p.epsilon = std::get<float>(*o.find_attr(A::epsilon));
        if (o.get_kind() == op::kind::BatchNormTrainingBackprop)
            p.use_global_stats = *attr_or_default<bool>(o, A::use_global_stats);
        p.variance = core::desc_of(inputs[3]);
        size_t gamma_port = 4;
        if (o.get_kind() == op::kind::BatchNormTrainingBackpropFromSums) {
            p.part = core::bn_bwd_part::from_sums;
            p.sum_diff_dst = core::desc_of(inputs[4]);
            p.sum_diff_dst_centered = core::desc_of(inputs[5]);
            gamma_port = 6;
        }
        if (inputs.size() > gamma_port) p.gamma = core::desc_of(inputs[gamma_port]);
        p.diff_src = core::desc_of(outputs[0]);
        if (outputs.size() == 3) {
            p.diff_gamma = core::desc_of(outputs[1]);
            p.diff_beta = core::desc_of(outputs[2]);
        }
    }
    const int rank = p.src.ndims();
    const int c = channel_axis(channels_last_of(o), rank);
    p.reduced.assign(rank, true);
    if (p.mean.ndims() == 1) {
        p.reduced[c] = false;
    } else { // rank-matched (DirectML): reduce where the statistics have size 1
        for (int a = 0; a < rank; ++a) p.reduced[a] = p.mean.shape[a] == 1;
    }
    p.reduce_count = 1;
    for (int a = 0; a < rank; ++a)
        if (p.reduced[a]) p.reduce_count *= p.src.shape[a];
    if (p.part == core::bn_bwd_part::from_sums) p.reduce_count = std::get<int64_t>(*o.find_attr(A::global_count));
    p.mean_strides = stat_strides(p.mean, p.reduced, c);
    if (!core::ends_with_sums(p.part)) p.variance_strides = stat_strides(p.variance, p.reduced, c);
    if (p.sum_diff_dst) {
        p.sum_diff_dst_strides = stat_strides(*p.sum_diff_dst, p.reduced, c);
        p.sum_diff_dst_centered_strides = stat_strides(*p.sum_diff_dst_centered, p.reduced, c);
    }
    if (p.gamma) p.gamma_strides = stat_strides(*p.gamma, p.reduced, c);
    if (p.diff_gamma) {
        p.diff_gamma_strides = stat_strides(*p.diff_gamma, p.reduced, c);
        p.diff_beta_strides = stat_strides(*p.diff_beta, p.reduced, c);
    }
    return p;
}

} // namespace bpg::graph_impl
