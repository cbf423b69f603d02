// BatchNormTrainingBackprop: schema, checks, shape inference, resolution.
// Inputs: 0 src, 1 diff_dst, 2 mean, 3 variance, 4 gamma (optional).
// Outputs: 0 diff_src, 1 diff_gamma, 2 diff_beta (1 and 2 both or neither).
// Statistics are [C] (channel of data_format) or, DirectML style, of src's
// rank with size 1 on every reduced axis. See docs/semantics.md.
#include <cmath>

#include "graph/op_schema.hpp"
#include "graph/resolve.hpp"
#include "graph/schemas/checks.hpp"

namespace bpg::graph_impl {

namespace {

using A = op::attr;

const char *const stat_names[] = {"mean", "variance", "gamma", "diff_gamma", "diff_beta"};

// The statistics tensors present, with their labels.
std::vector<std::pair<logical_tensor, std::string>> stat_ports(const op &o,
        const std::vector<logical_tensor> &in, const std::vector<logical_tensor> &out) {
    std::vector<std::pair<logical_tensor, std::string>> v;
    for (size_t i = 2; i < in.size(); ++i)
        v.push_back({in[i], port_label(o, true, i, stat_names[i - 2])});
    for (size_t i = 1; i < out.size(); ++i)
        v.push_back({out[i], port_label(o, false, i, stat_names[i + 2])});
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

void check_dtypes(const op &o, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out) {
    const std::string src_l = port_label(o, true, 0, "src");
    check_dtype_in(o, in[0], src_l, {data_type::f32, data_type::bf16, data_type::f16});
    check_same_dtype(o, in[0], src_l, in[1], port_label(o, true, 1, "diff_dst"));
    check_same_dtype(o, in[0], src_l, out[0], port_label(o, false, 0, "diff_src"));
    const bool bf16_data = in[0].get_data_type() == data_type::bf16;
    for (const auto &[lt, label] : stat_ports(o, in, out)) {
        if (bf16_data) check_dtype_in(o, lt, label, {data_type::f32, data_type::bf16});
        else check_dtype_in(o, lt, label, {data_type::f32});
    }
}

// Shapes: data tensors equal, rank 2..8; statistics [C] or rank-matched.
void check_shapes(const op &o, const logical_tensor &src, const logical_tensor &dd,
        const logical_tensor &ds, const std::vector<std::pair<logical_tensor, std::string>> &stats) {
    const std::string src_l = port_label(o, true, 0, "src");
    check_rank(o, src, src_l, 2, 8);
    check_same_shape(o, src, src_l, dd, port_label(o, true, 1, "diff_dst"));
    check_same_shape(o, src, src_l, ds, port_label(o, false, 0, "diff_src"));
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

void check_batchnorm(const op &o, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out) {
    if (out.size() == 2)
        fail(o, status::invalid_graph,
                "has 2 outputs; diff_gamma and diff_beta go together: give 1 output (diff_src) "
                "or 3 (diff_src, diff_gamma, diff_beta)");
    check_epsilon(o);
    check_dtypes(o, in, out);
    check_shapes(o, in[0], in[1], out[0], stat_ports(o, in, out));
}

std::vector<dims> infer_batchnorm(const op &o, const std::vector<logical_tensor> &in) {
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

core::bn_bwd_problem resolve_batchnorm_bwd(const op &o,
        const std::vector<logical_tensor> &inputs, const std::vector<logical_tensor> &outputs) {
    core::bn_bwd_problem p;
    p.op_id = o.get_id();
    p.epsilon = std::get<float>(*o.find_attr(A::epsilon));
    p.use_global_stats = *attr_or_default<bool>(o, A::use_global_stats);
    p.src = core::desc_of(inputs[0]);
    p.diff_dst = core::desc_of(inputs[1]);
    p.mean = core::desc_of(inputs[2]);
    p.variance = core::desc_of(inputs[3]);
    if (inputs.size() == 5) p.gamma = core::desc_of(inputs[4]);
    p.diff_src = core::desc_of(outputs[0]);
    if (outputs.size() == 3) {
        p.diff_gamma = core::desc_of(outputs[1]);
        p.diff_beta = core::desc_of(outputs[2]);
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
    p.mean_strides = stat_strides(p.mean, p.reduced, c);
    p.variance_strides = stat_strides(p.variance, p.reduced, c);
    if (p.gamma) p.gamma_strides = stat_strides(*p.gamma, p.reduced, c);
    if (p.diff_gamma) {
        p.diff_gamma_strides = stat_strides(*p.diff_gamma, p.reduced, c);
        p.diff_beta_strides = stat_strides(*p.diff_beta, p.reduced, c);
    }
    return p;
}

} // namespace bpg::graph_impl
