// Catalogue rows: compiled_partition::execute with bad bindings. Outputs are
// sentinel buffers: every check runs before any kernel writes.
#include <cstring>

#include "support/bad_input.hpp"

namespace bpg::test {
namespace {

using A = op::attr;
using dt = data_type;

// Interpolate 1x2x4x4 -> 1x2x8x8 with a runtime sizes input (tensor 3).
compiled_partition interp_with_sizes_input() {
    op o(3, op::kind::InterpolateBackprop,
            {lt(0, dt::f32, {1, 2, 4, 4}), lt(1, dt::f32, {1, 2, 8, 8}), lt(3, dt::s32, {2})},
            {logical_tensor(2, dt::f32)}, "UP");
    o.set_attr(A::mode, "linear").set_attr(A::data_format, "NCX");
    return compile_single({o});
}

// BN 2x3x4x4 with three outputs: diff_src 5, diff_gamma 6, diff_beta 7.
compiled_partition bn() {
    op o(4, op::kind::BatchNormTrainingBackprop,
            {lt(0, dt::f32, {2, 3, 4, 4}), lt(1, dt::f32, {2, 3, 4, 4}), lt(2, dt::f32, {3}), lt(3, dt::f32, {3})},
            {logical_tensor(5, dt::f32), logical_tensor(6, dt::f32), logical_tensor(7, dt::f32)}, "BN");
    o.set_attr(A::epsilon, 1e-5f).set_attr(A::data_format, "NCX");
    return compile_single({o});
}

// What a row does to valid bindings before execute.
using tamper = std::function<void(const compiled_partition &, std::vector<tensor> &ins, std::vector<tensor> &outs,
        sentinel_buffers &pool)>;

bad_input row(std::string name, compiled_partition (*make)(), tamper t, status code, std::vector<std::string> has) {
    return {std::move(name),
            [make, t](sentinel_buffers &pool) {
                const compiled_partition cp = make();
                std::vector<std::vector<uint8_t>> keep;
                std::vector<tensor> ins = bind_inputs(cp, keep), outs;
                for (const logical_tensor &lt : cp.get_outputs()) outs.push_back(bind_output(pool, lt));
                for (tensor &t : ins) // a valid runtime sizes input: diff_dst's 8x8
                    if (t.get_logical_tensor().get_data_type() == dt::s32)
                        for (int i = 0; i < 2; ++i) static_cast<int32_t *>(t.get_data_handle())[i] = 8;
                t(cp, ins, outs, pool);
                cp.execute(stream(engine()), ins, outs);
            },
            code, std::move(has)};
}

tensor &by_id(std::vector<tensor> &ts, size_t id) {
    for (tensor &t : ts)
        if (t.get_logical_tensor().get_id() == id) return t;
    throw std::logic_error("no tensor " + std::to_string(id));
}

std::vector<bad_input> rows() {
    const status arg = status::invalid_argument, shape = status::invalid_shape, type = status::invalid_data_type;
    using V = std::vector<tensor>;
    using P = const compiled_partition &;
    return {
            row("exec_null_input", bn, [](P, V &in, V &, sentinel_buffers &) { by_id(in, 1).set_data_handle(nullptr); },
                    arg, {"compiled partition bn_bwd: input tensor 1 has a null data pointer"}),
            row("exec_null_output", bn, [](P, V &, V &out, sentinel_buffers &) { by_id(out, 6).set_data_handle(nullptr); },
                    arg, {"output tensor 6 has a null data pointer"}),
            row("exec_input_unbound", bn, [](P, V &in, V &, sentinel_buffers &) { in.erase(in.begin() + 2); },
                    arg, {"input tensor 2 is not bound; execute needs every port"}),
            row("exec_output_unbound", bn, [](P, V &, V &out, sentinel_buffers &) { out.pop_back(); },
                    arg, {"output tensor 7 is not bound"}),
            row("exec_input_bound_twice", bn, [](P, V &in, V &, sentinel_buffers &) { in.push_back(in[0]); },
                    arg, {"input tensor 0 is bound twice"}),
            row("exec_input_other_shape", bn, [](P, V &in, V &, sentinel_buffers &) {
                    tensor &t = by_id(in, 0);
                    t = tensor(lt(0, dt::f32, {2, 3, 4, 5}), engine(), t.get_data_handle()); },
                    shape, {"input tensor 0 is bound with shape 2x3x4x5 but was compiled with 2x3x4x4"}),
            row("exec_output_other_strides", bn, [](P cp, V &, V &out, sentinel_buffers &pool) {
                    by_id(out, 5) = tensor(logical_tensor(5, dt::f32, {2, 3, 4, 4}, {48, 1, 12, 3}), engine(),
                            pool.get(cp.query_logical_tensor(5).get_mem_size())); },
                    shape, {"output tensor 5 is bound with strides [48, 1, 12, 3] but was compiled with [48, 16, 4, 1]"}),
            row("exec_input_other_dtype", bn, [](P, V &in, V &, sentinel_buffers &) {
                    tensor &t = by_id(in, 3);
                    t = tensor(lt(3, dt::bf16, {3}), engine(), t.get_data_handle()); },
                    type, {"input tensor 3 is bf16 but was compiled as f32"}),
            row("exec_output_overlaps_input", bn, [](P, V &in, V &out, sentinel_buffers &) {
                    by_id(out, 5).set_data_handle(by_id(in, 1).get_data_handle()); },
                    arg, {"output tensor 5 overlaps input tensor 1", "in-place execution is not supported"}),
            row("exec_outputs_overlap", bn, [](P, V &, V &out, sentinel_buffers &) {
                    // diff_beta one float into diff_gamma's buffer
                    by_id(out, 7).set_data_handle(static_cast<float *>(by_id(out, 6).get_data_handle()) + 1); },
                    arg, {"output tensors 6 and 7 overlap in memory"}),
            row("exec_tensor_not_a_port", bn, [](P, V &in, V &, sentinel_buffers &) {
                    in.push_back(tensor(lt(42, dt::f32, {3}), engine(), in[0].get_data_handle())); },
                    arg, {"tensor 42 is not an input of this partition"}),
            row("exec_output_not_a_port", bn, [](P, V &in, V &out, sentinel_buffers &) {
                    out.push_back(tensor(lt(0, dt::f32, {1}), engine(), in[0].get_data_handle())); },
                    arg, {"tensor 0 is not an output of this partition"}),
            row("exec_output_bound_among_inputs", bn, [](P, V &in, V &out, sentinel_buffers &) { in.push_back(by_id(out, 5)); },
                    arg, {"compiled partition bn_bwd: tensor 5 is not an input of this partition (it is an output"}),
            row("exec_runtime_sizes_differ_from_diff_dst", interp_with_sizes_input, [](P, V &in, V &, sentinel_buffers &) {
                    static_cast<int32_t *>(by_id(in, 3).get_data_handle())[1] = 9; },
                    arg, {"InterpolateBackprop op 3: sizes input (tensor 3)[1] = 9 but diff_dst spatial axis 3 has size 8"}),
            row("exec_runtime_sizes_negative", interp_with_sizes_input, [](P, V &in, V &, sentinel_buffers &) {
                    static_cast<int32_t *>(by_id(in, 3).get_data_handle())[0] = -8; },
                    arg, {"sizes input (tensor 3)[0] = -8"}),
            row("exec_empty_compiled_partition", bn, [](P, V &, V &, sentinel_buffers &) {
                    compiled_partition().execute(stream(engine()), {}, {}); },
                    arg, {"compiled_partition: empty (not compiled)"}),
    };
}

INSTANTIATE_TEST_SUITE_P(Execute, BadInput, ::testing::ValuesIn(rows()), row_name);

} // namespace
} // namespace bpg::test
