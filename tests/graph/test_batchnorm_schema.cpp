// Every BatchNormTrainingBackprop and ReLUBackprop rule: a row that breaks it
// and rows that show the valid forms are accepted.
#include <cmath>
#include <limits>

#include "graph/op_spec.hpp"

namespace bpg::test {
namespace {

using A = op::attr;
using K = op::kind;
constexpr data_type f32 = data_type::f32;
constexpr data_type bf16 = data_type::bf16;
constexpr data_type f16 = data_type::f16;

// NCX src 2x3x4x5, statistics [3], gamma, three outputs.
op_spec base() {
    op_spec s;
    s.id = 3;
    s.kind = K::BatchNormTrainingBackprop;
    s.name = "bn";
    s.in = {lt(0, f32, {2, 3, 4, 5}), lt(1, f32, {2, 3, 4, 5}), lt(2, f32, {3}), lt(3, f32, {3}),
            lt(4, f32, {3})};
    s.out = {lt(5, f32, {2, 3, 4, 5}), lt(6, f32, {3}), lt(7, f32, {3})};
    s.set(A::epsilon, 1e-5f).set(A::data_format, std::string("NCX"));
    return s;
}

void data_dtype(op_spec &s, data_type dt) {
    for (size_t i : {0, 1}) s.in[i] = lt(s.in[i].get_id(), dt, s.in[i].get_dims());
    s.out[0] = lt(5, dt, s.out[0].get_dims());
}
void stats_dtype(op_spec &s, data_type dt) {
    for (size_t i = 2; i < s.in.size(); ++i) s.in[i] = lt(s.in[i].get_id(), dt, s.in[i].get_dims());
    for (size_t i = 1; i < s.out.size(); ++i) s.out[i] = lt(s.out[i].get_id(), dt, s.out[i].get_dims());
}
void data_shape(op_spec &s, dims d) {
    for (size_t i : {0, 1}) s.in[i] = lt(s.in[i].get_id(), f32, d);
    s.out[0] = lt(5, f32, d);
}
void stats_shape(op_spec &s, dims d) {
    for (size_t i = 2; i < s.in.size(); ++i) s.in[i] = lt(s.in[i].get_id(), f32, d);
    for (size_t i = 1; i < s.out.size(); ++i) s.out[i] = lt(s.out[i].get_id(), f32, d);
}

std::vector<verdict_row> bn_rows() {
    const auto S = status::invalid_argument;
    const auto SH = status::invalid_shape;
    const auto DT = status::invalid_data_type;
    const auto G = status::invalid_graph;
    const float inf = std::numeric_limits<float>::infinity();
    return {
            {"valid base", [](op_spec &) {}, true},
            {"no gamma", [](op_spec &s) { s.in.pop_back(); }, true},
            {"one output", [](op_spec &s) { s.out.resize(1); }, true},
            {"use_global_stats", [](op_spec &s) { s.set(A::use_global_stats, true); }, true},
            {"epsilon 0", [](op_spec &s) { s.set(A::epsilon, 0.f); }, true},
            {"NXC, channel last",
                    [](op_spec &s) { s.set(A::data_format, std::string("NXC")); stats_shape(s, {5}); }, true},
            {"default data_format is NXC",
                    [](op_spec &s) { s.erase(A::data_format); stats_shape(s, {5}); }, true},
            {"rank-matched statistics (DirectML)", [](op_spec &s) { stats_shape(s, {1, 3, 1, 5}); }, true},
            {"rank 2 (N, C)", [](op_spec &s) { data_shape(s, {4, 3}); }, true},
            {"rank 8", [](op_spec &s) { data_shape(s, {1, 3, 1, 1, 1, 1, 1, 2}); }, true},
            {"bf16 data, bf16 statistics", [](op_spec &s) { data_dtype(s, bf16); stats_dtype(s, bf16); }, true},
            {"bf16 data, f32 statistics", [](op_spec &s) { data_dtype(s, bf16); }, true},
            {"f16 data, f32 statistics", [](op_spec &s) { data_dtype(s, f16); }, true},

            {"epsilon missing", [](op_spec &s) { s.erase(A::epsilon); }, false, S, {"required attribute 'epsilon'"}},
            {"epsilon negative", [](op_spec &s) { s.set(A::epsilon, -1.f); }, false, S, {"'epsilon'", ">= 0"}},
            {"epsilon infinite", [=](op_spec &s) { s.set(A::epsilon, inf); }, false, S, {"'epsilon'", "finite"}},
            {"epsilon NaN", [](op_spec &s) { s.set(A::epsilon, std::nanf("")); }, false, S, {"'epsilon'"}},
            {"epsilon of type s64", [](op_spec &s) { s.set(A::epsilon, int64_t(0)); }, false, S, {"'epsilon' must be of type f32"}},
            {"data_format not allowed", [](op_spec &s) { s.set(A::data_format, std::string("NCHW")); }, false, S, {"'data_format'"}},
            {"use_global_stats of type string", [](op_spec &s) { s.set(A::use_global_stats, std::string("yes")); }, false, S,
                    {"'use_global_stats' must be of type bool"}},
            {"attribute of another op", [](op_spec &s) { s.set(A::mode, std::string("linear")); }, false, S, {"'mode'", "does not apply"}},
            {"two outputs", [](op_spec &s) { s.out.resize(2); }, false, G, {"diff_gamma and diff_beta go together"}},
            {"three inputs", [](op_spec &s) { s.in.resize(3); }, false, G, {"expects 4 to 5 inputs"}},
            {"six inputs", [](op_spec &s) { s.in.push_back(lt(9, f32, {3})); }, false, G, {"got 6"}},
            {"four outputs", [](op_spec &s) { s.out.push_back(lt(9, f32, {3})); }, false, G, {"expects 1 to 3 outputs"}},
            {"s32 data", [](op_spec &s) { data_dtype(s, data_type::s32); }, false, DT, {"src (input 0, tensor 0)", "s32"}},
            {"diff_dst dtype differs", [](op_spec &s) { s.in[1] = lt(1, bf16, {2, 3, 4, 5}); }, false, DT, {"diff_dst (input 1, tensor 1)"}},
            {"f16 statistics", [](op_spec &s) { data_dtype(s, f16); stats_dtype(s, f16); }, false, DT,
                    {"mean (input 2, tensor 2)", "f16", "allowed: f32"}},
            {"bf16 statistics with f32 data", [](op_spec &s) { s.in[3] = lt(3, bf16, {3}); }, false, DT,
                    {"variance (input 3, tensor 3)", "bf16"}},
            {"bf16 diff_beta with f32 data", [](op_spec &s) { s.out[2] = lt(7, bf16, {3}); }, false, DT,
                    {"diff_beta (output 2, tensor 7)"}},
            {"rank 1", [](op_spec &s) { data_shape(s, {3}); }, false, SH, {"rank 1", "allowed ranks: 2 to 8"}},
            {"rank 9", [](op_spec &s) { data_shape(s, dims(9, 1)); }, false, SH, {"rank 9"}},
            {"mean of the wrong length", [](op_spec &s) { s.in[2] = lt(2, f32, {4}); }, false, SH,
                    {"mean (input 2, tensor 2)", "4 elements", "C = 3"}},
            {"all statistics [C] of the wrong length", [](op_spec &s) { stats_shape(s, {4}); }, false, SH, {"C = 3"}},
            {"NXC statistics of NCX length",
                    [](op_spec &s) { s.set(A::data_format, std::string("NXC")); }, false, SH, {"C = 5 on axis 3", "NXC"}},
            {"statistics of rank 2 for rank-4 data", [](op_spec &s) { stats_shape(s, {3, 1}); }, false, SH,
                    {"rank 2", "[C]"}},
            {"rank-matched statistics with a wrong kept axis", [](op_spec &s) { stats_shape(s, {1, 3, 2, 5}); }, false, SH,
                    {"axis 2 must be 1 (reduced) or 4"}},
            {"variance shape differs from mean", [](op_spec &s) { s.in[3] = lt(3, f32, {1, 3, 1, 1}); }, false, SH,
                    {"variance (input 3, tensor 3) has shape 1x3x1x1"}},
            {"diff_gamma shape differs", [](op_spec &s) { s.out[1] = lt(6, f32, {2}); }, false, SH, {"diff_gamma (output 1, tensor 6)"}},
            {"diff_dst shape differs", [](op_spec &s) { s.in[1] = lt(1, f32, {2, 3, 4, 6}); }, false, SH, {"diff_dst (input 1, tensor 1)"}},
            {"diff_src shape differs", [](op_spec &s) { s.out[0] = lt(5, f32, {2, 3, 5, 4}); }, false, SH, {"diff_src (output 0, tensor 5)"}},
    };
}

TEST(BatchNormSchema, EveryRuleRejectsAndAccepts) {
    const op_spec b = base();
    for (const verdict_row &row : bn_rows()) expect_verdict(b, row);
}

op_spec relu_base() {
    op_spec s;
    s.id = 11;
    s.kind = K::ReLUBackprop;
    s.in = {lt(0, f32, {2, 3}), lt(1, f32, {2, 3})};
    s.out = {lt(2, f32, {2, 3})};
    return s;
}

TEST(ReluSchema, EveryRuleRejectsAndAccepts) {
    const auto DT = status::invalid_data_type;
    const auto SH = status::invalid_shape;
    const std::vector<verdict_row> rows = {
            {"valid base", [](op_spec &) {}, true},
            {"use_dst false", [](op_spec &s) { s.set(A::use_dst, false); }, true},
            {"use_dst of type s64", [](op_spec &s) { s.set(A::use_dst, int64_t(0)); }, false, status::invalid_argument,
                    {"'use_dst' must be of type bool"}},
            {"attribute of another op", [](op_spec &s) { s.set(A::epsilon, 1.f); }, false, status::invalid_argument, {"does not apply"}},
            {"diff_dst dtype differs", [](op_spec &s) { s.in[1] = lt(1, f16, {2, 3}); }, false, DT, {"diff_dst"}},
            {"s32 data", [](op_spec &s) { for (auto *v : {&s.in, &s.out}) for (auto &t : *v) t = lt(t.get_id(), data_type::s32, {2, 3}); },
                    false, DT, {"s32"}},
            {"diff_dst shape differs", [](op_spec &s) { s.in[1] = lt(1, f32, {3, 2}); }, false, SH, {"diff_dst (input 1, tensor 1) has shape 3x2"}},
            {"one input", [](op_spec &s) { s.in.pop_back(); }, false, status::invalid_graph, {"expects 2 inputs"}},
    };
    const op_spec b = relu_base();
    for (const verdict_row &row : rows) expect_verdict(b, row);
}

TEST(BatchNormSchema, AliasesAreAcceptedKinds) {
    op::kind k;
    for (const char *name : {"BatchNormTrainingBackprop", "BatchNormTrainingBackward", "BatchNormBackprop"}) {
        ASSERT_TRUE(op_kind_from_string(name, k)) << name;
        EXPECT_EQ(k, op::kind::BatchNormTrainingBackprop);
    }
    ASSERT_TRUE(op_kind_from_string("ReLUBackward", k));
    EXPECT_EQ(k, op::kind::ReLUBackprop);
}

} // namespace
} // namespace bpg::test
