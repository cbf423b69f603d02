// Every InterpolateBackprop rule of docs/semantics.md: one row that breaks it (the
// error names the op id, the attribute or tensor, and the rule) and rows that
// show the valid forms are accepted.
#include <cmath>
#include <limits>

#include "graph/op_spec.hpp"

namespace bpg::test {
namespace {

using A = op::attr;
using K = op::kind;
constexpr data_type f32 = data_type::f32;

// NCX, src 1x2x4x6 -> diff_dst 1x2x8x12, linear, sizes [8, 12].
op_spec base() {
    op_spec s;
    s.id = 7;
    s.kind = K::InterpolateBackprop;
    s.name = "interp";
    s.in = {lt(0, f32, {1, 2, 4, 6}), lt(1, f32, {1, 2, 8, 12})};
    s.out = {lt(2, f32, {1, 2, 4, 6})};
    s.set(A::mode, std::string("linear"))
            .set(A::data_format, std::string("NCX"))
            .set(A::sizes, std::vector<int64_t> {8, 12});
    return s;
}

void use_scales(op_spec &s, std::vector<float> v) {
    s.erase(A::sizes).set(A::scales, std::move(v));
}

const float inf = std::numeric_limits<float>::infinity();
const float nan = std::numeric_limits<float>::quiet_NaN();

std::vector<verdict_row> rows() {
    const auto S = status::invalid_argument;
    const auto SH = status::invalid_shape;
    const auto DT = status::invalid_data_type;
    const auto G = status::invalid_graph;
    std::vector<verdict_row> r = {
            {"valid base", [](op_spec &) {}, true},
            {"scales instead of sizes", [](op_spec &s) { use_scales(s, {2.f, 2.f}); }, true},
            {"sizes input instead of the attribute",
                    [](op_spec &s) { s.erase(A::sizes).in.push_back(lt(3, data_type::s32, {2})); }, true},
            {"mode nearest", [](op_spec &s) { s.set(A::mode, std::string("nearest")); }, true},
            {"mode bilinear", [](op_spec &s) { s.set(A::mode, std::string("bilinear")); }, true},
            {"mode trilinear on 2-D data", [](op_spec &s) { s.set(A::mode, std::string("trilinear")); }, true},
            {"default data_format NXC",
                    [](op_spec &s) {
                        s.erase(A::data_format);
                        s.in = {lt(0, f32, {1, 4, 6, 2}), lt(1, f32, {1, 8, 12, 2})};
                        s.out = {lt(2, f32, {1, 4, 6, 2})};
                    },
                    true},
            {"pixel offsets with scales",
                    [](op_spec &s) {
                        use_scales(s, {2.f, 2.f});
                        s.set(A::input_pixel_offsets, std::vector<float> {0.5f, 0.5f})
                                .set(A::output_pixel_offsets, std::vector<float> {-0.5f, -0.5f});
                    },
                    true},
            {"unknown shapes at add_op",
                    [](op_spec &s) {
                        s.in = {logical_tensor(0, f32), logical_tensor(1, f32)};
                        s.out = {logical_tensor(2, f32)};
                    },
                    true},
            {"rank 3, one spatial axis",
                    [](op_spec &s) {
                        s.in = {lt(0, f32, {1, 2, 4}), lt(1, f32, {1, 2, 8})};
                        s.out = {lt(2, f32, {1, 2, 4})};
                        s.set(A::sizes, std::vector<int64_t> {8});
                    },
                    true},
            {"rank 6, four spatial axes",
                    [](op_spec &s) {
                        s.in = {lt(0, f32, {1, 2, 2, 2, 2, 2}), lt(1, f32, {1, 2, 3, 3, 3, 3})};
                        s.out = {lt(2, f32, {1, 2, 2, 2, 2, 2})};
                        s.set(A::sizes, std::vector<int64_t> {3, 3, 3, 3});
                    },
                    true},
            {"bf16", [](op_spec &s) { for (auto *v : {&s.in, &s.out}) for (auto &t : *v) t = lt(t.get_id(), data_type::bf16, t.get_dims()); }, true},
            {"f16", [](op_spec &s) { for (auto *v : {&s.in, &s.out}) for (auto &t : *v) t = lt(t.get_id(), data_type::f16, t.get_dims()); }, true},

            // attributes: required, types, allowed values
            {"mode missing", [](op_spec &s) { s.erase(A::mode); }, false, S, {"required attribute 'mode'"}},
            {"mode not allowed", [](op_spec &s) { s.set(A::mode, std::string("cubic")); }, false, S, {"'mode'", "cubic", "not one of"}},
            {"coordinate_transformation_mode not allowed",
                    [](op_spec &s) { s.set(A::coordinate_transformation_mode, std::string("half")); }, false, S,
                    {"'coordinate_transformation_mode'", "half", "not one of"}},
            {"nearest_mode not allowed", [](op_spec &s) { s.set(A::nearest_mode, std::string("round")); }, false, S,
                    {"'nearest_mode'", "not one of"}},
            {"data_format not allowed", [](op_spec &s) { s.set(A::data_format, std::string("NHWC")); }, false, S,
                    {"'data_format'", "NHWC"}},
            {"sizes of type f32[]", [](op_spec &s) { s.set(A::sizes, std::vector<float> {8.f, 12.f}); }, false, S,
                    {"'sizes'", "must be of type s64[]", "got f32[]"}},
            {"mode of type s64", [](op_spec &s) { s.set(A::mode, int64_t(1)); }, false, S, {"'mode'", "string"}},
            {"attribute of another op", [](op_spec &s) { s.set(A::epsilon, 0.1f); }, false, S,
                    {"'epsilon'", "does not apply"}},
            // output size: exactly one source
            {"neither sizes nor scales", [](op_spec &s) { s.erase(A::sizes); }, false, S, {"not given", "'sizes'", "'scales'"}},
            {"sizes and scales", [](op_spec &s) { s.set(A::scales, std::vector<float> {2.f, 2.f}); }, false, S,
                    {"given twice", "exclusive"}},
            {"sizes attribute and sizes input",
                    [](op_spec &s) { s.in.push_back(lt(3, data_type::s32, {2})); }, false, S, {"given twice", "sizes input"}},
            {"scales and sizes input",
                    [](op_spec &s) { use_scales(s, {2.f, 2.f}); s.in.push_back(lt(3, data_type::s32, {2})); }, false, S,
                    {"given twice"}},
            // values
            {"zero size", [](op_spec &s) { s.set(A::sizes, std::vector<int64_t> {0, 12}); }, false, S, {"'sizes'", "positive"}},
            {"negative size", [](op_spec &s) { s.set(A::sizes, std::vector<int64_t> {8, -12}); }, false, S, {"sizes[1]", "positive"}},
            {"zero scale", [](op_spec &s) { use_scales(s, {0.f, 2.f}); }, false, S, {"'scales'", "finite and > 0"}},
            {"negative scale", [](op_spec &s) { use_scales(s, {2.f, -2.f}); }, false, S, {"scales[1]"}},
            {"infinite scale", [](op_spec &s) { use_scales(s, {inf, 2.f}); }, false, S, {"'scales'", "finite"}},
            {"NaN scale", [](op_spec &s) { use_scales(s, {nan, 2.f}); }, false, S, {"'scales'", "finite"}},
            {"NaN pixel offset",
                    [](op_spec &s) {
                        use_scales(s, {2.f, 2.f});
                        s.set(A::input_pixel_offsets, std::vector<float> {nan, 0.f})
                                .set(A::output_pixel_offsets, std::vector<float> {0.f, 0.f});
                    },
                    false, S, {"'input_pixel_offsets'", "finite"}},
            // list lengths
            {"sizes too long", [](op_spec &s) { s.set(A::sizes, std::vector<int64_t> {8, 12, 3}); }, false, S,
                    {"'sizes' has 3 values", "one per spatial axis (2"}},
            {"scales too short", [](op_spec &s) { use_scales(s, {2.f}); }, false, S, {"'scales' has 1 values"}},
            {"offsets of another length",
                    [](op_spec &s) {
                        use_scales(s, {2.f, 2.f});
                        s.set(A::input_pixel_offsets, std::vector<float> {0.5f})
                                .set(A::output_pixel_offsets, std::vector<float> {0.5f, 0.5f});
                    },
                    false, S, {"'input_pixel_offsets' has 1 values"}},
            {"five sizes with unknown rank",
                    [](op_spec &s) {
                        s.in = {logical_tensor(0, f32), logical_tensor(1, f32)};
                        s.out = {logical_tensor(2, f32)};
                        s.set(A::sizes, std::vector<int64_t> {2, 2, 2, 2, 2});
                    },
                    false, S, {"1 to 4 spatial axes"}},
            // pixel offsets
            {"pixel offsets with sizes",
                    [](op_spec &s) {
                        s.set(A::input_pixel_offsets, std::vector<float> {0.5f, 0.5f})
                                .set(A::output_pixel_offsets, std::vector<float> {-0.5f, -0.5f});
                    },
                    false, S, {"need the 'scales' attribute"}},
            {"one pixel offset array",
                    [](op_spec &s) {
                        use_scales(s, {2.f, 2.f});
                        s.set(A::output_pixel_offsets, std::vector<float> {-0.5f, -0.5f});
                    },
                    false, S, {"'output_pixel_offsets' is given without 'input_pixel_offsets'"}},
            {"pixel offsets with coordinate_transformation_mode",
                    [](op_spec &s) {
                        use_scales(s, {2.f, 2.f});
                        s.set(A::input_pixel_offsets, std::vector<float> {0.5f, 0.5f})
                                .set(A::output_pixel_offsets, std::vector<float> {-0.5f, -0.5f})
                                .set(A::coordinate_transformation_mode, std::string("half_pixel"));
                    },
                    false, S, {"'coordinate_transformation_mode' must be absent"}},
            // arity
            {"one input", [](op_spec &s) { s.in.pop_back(); }, false, G, {"expects 2 to 3 inputs", "got 1"}},
            {"four inputs",
                    [](op_spec &s) {
                        s.erase(A::sizes).in.push_back(lt(3, data_type::s32, {2}));
                        s.in.push_back(lt(4, f32, {1}));
                    },
                    false, G, {"got 4"}},
            {"no output", [](op_spec &s) { s.out.clear(); }, false, G, {"expects 1 outputs", "got 0"}},
            {"two outputs", [](op_spec &s) { s.out.push_back(lt(9, f32, {1, 2, 4, 6})); }, false, G, {"got 2"}},
            // dtypes
            {"s32 data", [](op_spec &s) { for (auto *v : {&s.in, &s.out}) for (auto &t : *v) t = lt(t.get_id(), data_type::s32, t.get_dims()); },
                    false, DT, {"src (input 0, tensor 0)", "s32", "allowed: f32, bf16, f16"}},
            {"diff_dst dtype differs", [](op_spec &s) { s.in[1] = lt(1, data_type::bf16, {1, 2, 8, 12}); }, false, DT,
                    {"diff_dst (input 1, tensor 1)", "bf16", "must match"}},
            {"diff_src dtype differs", [](op_spec &s) { s.out[0] = lt(2, data_type::f16, {1, 2, 4, 6}); }, false, DT,
                    {"diff_src (output 0, tensor 2)", "f16"}},
            {"sizes input not s32",
                    [](op_spec &s) { s.erase(A::sizes).in.push_back(lt(3, f32, {2})); }, false, DT, {"sizes (input 2, tensor 3)", "s32"}},
            {"sizes input of rank 2",
                    [](op_spec &s) { s.erase(A::sizes).in.push_back(lt(3, data_type::s32, {1, 2})); }, false, SH,
                    {"sizes (input 2, tensor 3)", "rank 2"}},
            {"sizes input of wrong length",
                    [](op_spec &s) { s.erase(A::sizes).in.push_back(lt(3, data_type::s32, {3})); }, false, SH,
                    {"sizes (input 2, tensor 3) has 3 elements", "one per spatial axis (2)"}},
            // shapes
            {"rank 2", [](op_spec &s) { s.in = {lt(0, f32, {1, 2}), lt(1, f32, {1, 2})}; s.out = {lt(2, f32, {1, 2})}; }, false, SH,
                    {"rank 2", "allowed ranks: 3 to 6"}},
            {"rank 7",
                    [](op_spec &s) {
                        s.in = {lt(0, f32, {1, 1, 1, 1, 1, 1, 1}), lt(1, f32, {1, 1, 1, 1, 1, 1, 1})};
                        s.out = {lt(2, f32, {1, 1, 1, 1, 1, 1, 1})};
                    },
                    false, SH, {"rank 7"}},
            {"rank 9", [](op_spec &s) { s.in[0] = lt(0, f32, dims(9, 1)); }, false, SH, {"rank 9", "at most 8"}},
            {"diff_dst of another rank", [](op_spec &s) { s.in[1] = lt(1, f32, {1, 2, 8, 12, 1}); }, false, SH,
                    {"diff_dst (input 1, tensor 1) has rank 5"}},
            {"diff_dst N differs", [](op_spec &s) { s.in[1] = lt(1, f32, {2, 2, 8, 12}); }, false, SH, {"axis 0 (N) must match"}},
            {"diff_dst C differs", [](op_spec &s) { s.in[1] = lt(1, f32, {1, 3, 8, 12}); }, false, SH, {"axis 1 (C) must match"}},
            {"diff_dst spatial differs from sizes", [](op_spec &s) { s.in[1] = lt(1, f32, {1, 2, 8, 13}); }, false, SH,
                    {"spatial axis 3 has size 13", "'sizes'[1] = 12"}},
            {"diff_dst spatial differs from floor(in * scale)",
                    [](op_spec &s) {
                        // floor(12 * 0.583333f) = floor(6.999996) = 6, not 7.
                        s.in = {lt(0, f32, {1, 2, 4, 12}), lt(1, f32, {1, 2, 8, 7})};
                        s.out = {lt(2, f32, {1, 2, 4, 12})};
                        use_scales(s, {2.f, 0.583333f});
                    },
                    false, SH, {"has size 7", "floor(12 * [0.583333]) = 6", "give 'sizes' instead"}},
            {"scale whose floor matches",
                    [](op_spec &s) {
                        s.in = {lt(0, f32, {1, 2, 3, 12}), lt(1, f32, {1, 2, 5, 7})};
                        s.out = {lt(2, f32, {1, 2, 3, 12})};
                        use_scales(s, {1.66667f, 0.5834f});
                    },
                    true},
            {"diff_src shape differs from src", [](op_spec &s) { s.out[0] = lt(2, f32, {1, 2, 4, 7}); }, false, SH,
                    {"diff_src (output 0, tensor 2) has shape 1x2x4x7", "src (input 0, tensor 0) has shape 1x2x4x6"}},
            {"zero spatial size",
                    [](op_spec &s) {
                        s.in = {lt(0, f32, {1, 2, 0, 6}), lt(1, f32, {1, 2, 8, 12})};
                        s.out = {lt(2, f32, {1, 2, 0, 6})};
                    },
                    false, SH, {"spatial axis 2 has size 0"}},
            {"negative dimension", [](op_spec &s) { s.in[0] = lt(0, f32, {1, 2, -4, 6}); }, false, SH, {"negative dimension -4"}},
            {"stride count differs from rank",
                    [](op_spec &s) { s.in[0] = logical_tensor(0, f32, {1, 2, 4, 6}, dims {48, 24, 6}); }, false, SH,
                    {"3 strides for rank 4"}},
            {"negative stride",
                    [](op_spec &s) { s.in[0] = logical_tensor(0, f32, {1, 2, 4, 6}, dims {48, 24, -6, 1}); }, false, SH,
                    {"negative stride"}},
            {"element count overflow",
                    [](op_spec &s) { s.in[0] = lt(0, f32, {int64_t(1) << 40, 2, int64_t(1) << 30, 6}); }, false, SH,
                    {"overflows"}},
            {"output is also an input", [](op_spec &s) { s.out[0] = lt(0, f32, {1, 2, 4, 6}); }, false, G,
                    {"tensor 0 is both an input and an output"}},
    };
    return r;
}

TEST(InterpolateSchema, EveryRuleRejectsAndAccepts) {
    const op_spec b = base();
    for (const verdict_row &row : rows()) expect_verdict(b, row);
}

TEST(InterpolateSchema, AliasesAreAcceptedKinds) {
    op::kind k;
    ASSERT_TRUE(op_kind_from_string("InterpolateBackward", k));
    EXPECT_EQ(k, op::kind::InterpolateBackprop);
    ASSERT_TRUE(op_kind_from_string("InterpolateBackprop", k));
    // The forward op is a oneDNN kind bpg carries but does not run.
    ASSERT_TRUE(op_kind_from_string("Interpolate", k));
    EXPECT_EQ(k, op::kind::Interpolate);
    EXPECT_FALSE(is_implemented(k));
    EXPECT_FALSE(op_kind_from_string("InterpolateBack", k));
}

} // namespace
} // namespace bpg::test
