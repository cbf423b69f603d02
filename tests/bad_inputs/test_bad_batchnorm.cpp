// Catalogue rows: BatchNormTrainingBackprop and ReLUBackprop ops that add_op
// must refuse.
#include <limits>

#include "support/bad_input.hpp"

namespace bpg::test {
namespace {

using A = op::attr;
using dt = data_type;

// A valid op: NCX f32 2x3x4x4 with [C] statistics; ids 0 src, 1 diff_dst,
// 2 mean, 3 variance, 4 gamma; 5 diff_src, 6 diff_gamma, 7 diff_beta.
op_spec bn_base() {
    op_spec s;
    s.id = 4;
    s.name = "BN";
    s.kind = op::kind::BatchNormTrainingBackprop;
    s.in = {lt(0, dt::f32, {2, 3, 4, 4}), lt(1, dt::f32, {2, 3, 4, 4}), lt(2, dt::f32, {3}), lt(3, dt::f32, {3}),
            lt(4, dt::f32, {3})};
    s.out = {lt(5, dt::f32, {2, 3, 4, 4}), lt(6, dt::f32, {3}), lt(7, dt::f32, {3})};
    s.attrs = {{A::epsilon, 1e-5f}, {A::data_format, std::string("NCX")}};
    return s;
}

op_spec relu_base() {
    op_spec s;
    s.id = 9;
    s.name = "RELU";
    s.kind = op::kind::ReLUBackprop;
    s.in = {lt(0, dt::f32, {2, 3}), lt(1, dt::f32, {2, 3})};
    s.out = {lt(2, dt::f32, {2, 3})};
    return s;
}

bad_input row(std::string name, op_spec (*base)(), std::function<void(op_spec &)> change, status code,
        std::vector<std::string> has) {
    return add_op_row(std::move(name), base(), std::move(change), code, std::move(has));
}

std::vector<bad_input> rows() {
    const status arg = status::invalid_argument, shape = status::invalid_shape,
                 type = status::invalid_data_type, structure = status::invalid_graph;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    return {
            row("bn_three_inputs", bn_base, [](op_spec &s) { s.in.resize(3); }, structure,
                    {"expects 4 to 5 inputs (src, diff_dst, mean, variance, gamma?), got 3"}),
            row("bn_two_outputs", bn_base, [](op_spec &s) { s.out.pop_back(); }, structure,
                    {"has 2 outputs", "diff_gamma and diff_beta go together"}),
            row("bn_four_outputs", bn_base, [](op_spec &s) { s.out.push_back(lt(8, dt::f32, {3})); }, structure,
                    {"expects 1 to 3 outputs", "got 4"}),
            row("bn_mean_wrong_length", bn_base, [](op_spec &s) { s.in[2] = lt(2, dt::f32, {4}); }, shape,
                    {"mean (input 2, tensor 2) has 4 elements", "C = 3 on axis 1"}),
            row("bn_statistics_wrong_length", bn_base, [](op_spec &s) {
                    for (size_t i = 2; i < 5; ++i) s.in[i] = lt(i, dt::f32, {4});
                    s.out[1] = lt(6, dt::f32, {4}); s.out[2] = lt(7, dt::f32, {4}); },
                    shape, {"mean (input 2, tensor 2) has 4 elements", "C = 3 on axis 1 (data_format NCX)"}),
            row("bn_variance_wrong_length_nxc", bn_base, [](op_spec &s) {
                    s.set(A::data_format, std::string("NXC")); // C is axis 3 = 4
                    for (size_t i = 2; i < 5; ++i) s.in[i] = lt(i, dt::f32, {3});
                    s.out[1] = lt(6, dt::f32, {3}); s.out[2] = lt(7, dt::f32, {3}); },
                    shape, {"has 3 elements", "C = 4 on axis 3 (data_format NXC)"}),
            row("bn_gamma_rank_2", bn_base, [](op_spec &s) { s.in[4] = lt(4, dt::f32, {1, 3}); }, shape,
                    {"gamma (input 4, tensor 4)", "has shape 1x3"}),
            row("bn_rank_matched_stats_wrong_axis", bn_base, [](op_spec &s) {
                    for (size_t i = 2; i < 5; ++i) s.in[i] = lt(i, dt::f32, {1, 3, 2, 1});
                    s.out[1] = lt(6, dt::f32, {1, 3, 2, 1}); s.out[2] = lt(7, dt::f32, {1, 3, 2, 1}); },
                    shape, {"mean (input 2, tensor 2) has shape 1x3x2x1", "axis 2 must be 1 (reduced) or 4 (kept)"}),
            row("bn_statistics_rank_3_of_4", bn_base, [](op_spec &s) {
                    for (size_t i = 2; i < 5; ++i) s.in[i] = lt(i, dt::f32, {1, 3, 1});
                    s.out[1] = lt(6, dt::f32, {1, 3, 1}); s.out[2] = lt(7, dt::f32, {1, 3, 1}); },
                    shape, {"has rank 3; statistics are [C] (rank 1) or have src's rank 4"}),
            row("bn_mean_f16_data_f32", bn_base, [](op_spec &s) { s.in[2] = lt(2, dt::f16, {3}); }, type,
                    {"mean (input 2, tensor 2) has data type f16; allowed: f32"}),
            row("bn_src_s32", bn_base, [](op_spec &s) { s.in[0] = lt(0, dt::s32, {2, 3, 4, 4}); }, type,
                    {"src (input 0, tensor 0) has data type s32"}),
            row("bn_diff_dst_shape_differs", bn_base, [](op_spec &s) { s.in[1] = lt(1, dt::f32, {2, 3, 4, 5}); }, shape,
                    {"diff_dst (input 1, tensor 1) has shape 2x3x4x5", "2x3x4x4"}),
            row("bn_epsilon_nan", bn_base, [nan](op_spec &s) { s.set(A::epsilon, nan); }, arg,
                    {"'epsilon' = [nan] must be finite and >= 0"}),
            row("bn_epsilon_negative", bn_base, [](op_spec &s) { s.set(A::epsilon, -1e-3f); }, arg,
                    {"'epsilon' = [-0.001]", ">= 0"}),
            row("bn_epsilon_as_s64", bn_base, [](op_spec &s) { s.set(A::epsilon, int64_t(0)); }, arg,
                    {"'epsilon' must be of type f32, got s64 0"}),
            row("bn_epsilon_missing", bn_base, [](op_spec &s) { s.erase(A::epsilon); }, arg,
                    {"required attribute 'epsilon' is missing"}),
            row("bn_attr_of_other_op", bn_base, [](op_spec &s) { s.set(A::mode, std::string("linear")); }, arg,
                    {"attribute 'mode' does not apply", "epsilon, data_format, use_global_stats"}),
            row("bn_use_global_stats_string", bn_base, [](op_spec &s) { s.set(A::use_global_stats, std::string("true")); }, arg,
                    {"'use_global_stats' must be of type bool, got string \"true\""}),
            row("bn_rank_1", bn_base, [](op_spec &s) { s.in[0] = lt(0, dt::f32, {3}); s.in[1] = lt(1, dt::f32, {3}); s.out[0] = lt(5, dt::f32, {3}); },
                    shape, {"src (input 0, tensor 0) has rank 1", "allowed ranks: 2 to 8"}),
            row("bn_rank_9", bn_base, [](op_spec &s) { s.in[1] = lt(1, dt::f32, dims(9, 2)); }, shape,
                    {"inputs[1] (tensor 1) has rank 9; at most 8 is supported"}),
            row("bn_outputs_share_id", bn_base, [](op_spec &s) { s.out[2] = lt(6, dt::f32, {3}); }, structure,
                    {"outputs[1] and outputs[2] share tensor id 6"}),
            row("relu_one_input", relu_base, [](op_spec &s) { s.in.pop_back(); }, structure,
                    {"expects 2 inputs (src, diff_dst), got 1"}),
            row("relu_diff_dst_f16", relu_base, [](op_spec &s) { s.in[1] = lt(1, dt::f16, {2, 3}); }, type,
                    {"diff_dst (input 1, tensor 1) has data type f16 but src/dst (input 0, tensor 0) has f32"}),
            row("relu_shape_differs", relu_base, [](op_spec &s) { s.out[0] = lt(2, dt::f32, {3, 2}); }, shape,
                    {"diff_src (output 0, tensor 2) has shape 3x2"}),
            row("relu_use_dst_as_s64", relu_base, [](op_spec &s) { s.set(A::use_dst, int64_t(1)); }, arg,
                    {"'use_dst' must be of type bool"}),
    };
}

INSTANTIATE_TEST_SUITE_P(BatchNormAndReLU, BadInput, ::testing::ValuesIn(rows()), row_name);

} // namespace
} // namespace bpg::test
