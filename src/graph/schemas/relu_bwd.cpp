// ReLUBackprop (supporting op of the fusion pattern): inputs 0 src (or dst
// when use_dst), 1 diff_dst; output 0 diff_src = diff_dst where input > 0.
#include "graph/op_schema.hpp"
#include "graph/resolve.hpp"
#include "graph/schemas/checks.hpp"

namespace bpg::graph_impl {

namespace {

void check_relu(const op &o, const std::vector<logical_tensor> &in, const std::vector<logical_tensor> &out) {
    const std::string in_l = port_label(o, true, 0, "src/dst");
    check_dtype_in(o, in[0], in_l, {data_type::f32, data_type::bf16, data_type::f16});
    check_rank(o, in[0], in_l, 1, 8);
    const std::string dd_l = port_label(o, true, 1, "diff_dst"), ds_l = port_label(o, false, 0, "diff_src");
    check_same_dtype(o, in[0], in_l, in[1], dd_l);
    check_same_dtype(o, in[0], in_l, out[0], ds_l);
    check_same_shape(o, in[0], in_l, in[1], dd_l);
    check_same_shape(o, in[0], in_l, out[0], ds_l);
}

std::vector<dims> infer_relu(const op &, const std::vector<logical_tensor> &in) {
    return {in[0].get_dims()};
}

} // namespace

const op_schema &relu_bwd_schema() {
    static const op_schema s {op::kind::ReLUBackprop, {{"src", false}, {"diff_dst", false}},
            {{"diff_src", false}}, {{op::attr::use_dst, attr_type::boolean, false, true, {}}}, check_relu,
            infer_relu};
    return s;
}

core::relu_bwd_problem resolve_relu_bwd(const op &o, const std::vector<logical_tensor> &inputs,
        const std::vector<logical_tensor> &outputs) {
    core::relu_bwd_problem p;
    p.op_id = o.get_id();
    p.use_dst = *attr_or_default<bool>(o, op::attr::use_dst);
    p.input = core::desc_of(inputs[0]);
    p.diff_dst = core::desc_of(inputs[1]);
    p.diff_src = core::desc_of(outputs[0]);
    return p;
}

} // namespace bpg::graph_impl
