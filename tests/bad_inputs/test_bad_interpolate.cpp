// Catalogue rows: InterpolateBackprop ops that add_op must refuse.
#include <cmath>
#include <limits>

#include "support/bad_input.hpp"

namespace bpg::test {
namespace {

using A = op::attr;
using dt = data_type;

// A valid op: NCX f32 1x2x4x4 -> 1x2x8x8, linear, sizes; ids 0 src, 1
// diff_dst, 2 diff_src, 3 a sizes input.
op_spec base() {
    op_spec s;
    s.id = 7;
    s.name = "UP";
    s.in = {lt(0, dt::f32, {1, 2, 4, 4}), lt(1, dt::f32, {1, 2, 8, 8})};
    s.out = {lt(2, dt::f32, {1, 2, 4, 4})};
    s.attrs = {{A::mode, std::string("linear")}, {A::data_format, std::string("NCX")},
            {A::sizes, std::vector<int64_t> {8, 8}}};
    return s;
}

bad_input row(std::string name, std::function<void(op_spec &)> change, status code, std::vector<std::string> has) {
    return add_op_row(std::move(name), base(), std::move(change), code, std::move(has));
}

const float nan = std::numeric_limits<float>::quiet_NaN();
const float inf = std::numeric_limits<float>::infinity();
const int64_t big = std::numeric_limits<int64_t>::max();

std::vector<bad_input> rows() {
    const status arg = status::invalid_argument, shape = status::invalid_shape,
                 type = status::invalid_data_type, structure = status::invalid_graph;
    auto scales = [](std::vector<float> v) {
        return [v](op_spec &s) { s.erase(A::sizes).set(A::scales, v); };
    };
    return {
            row("one_input", [](op_spec &s) { s.in.pop_back(); }, structure, {"expects 2 to 3 inputs", "got 1"}),
            row("four_inputs", [](op_spec &s) { s.in.push_back(lt(3, dt::s32, {2})); s.in.push_back(lt(4, dt::s32, {2})); },
                    structure, {"expects 2 to 3 inputs", "got 4"}),
            row("no_output", [](op_spec &s) { s.out.clear(); }, structure, {"outputs", "got 0"}),
            row("two_outputs", [](op_spec &s) { s.out.push_back(lt(5, dt::f32, {1, 2, 4, 4})); }, structure,
                    {"expects 1 outputs", "got 2"}),
            row("src_s32", [](op_spec &s) { for (auto &t : s.in) t = lt(t.get_id(), dt::s32, t.get_dims()); },
                    type, {"src (input 0, tensor 0)", "s32", "allowed: f32, bf16, f16"}),
            row("diff_dst_bf16_src_f32", [](op_spec &s) { s.in[1] = lt(1, dt::bf16, {1, 2, 8, 8}); }, type,
                    {"diff_dst (input 1, tensor 1)", "bf16", "f32", "must match"}),
            row("diff_src_f16_src_f32", [](op_spec &s) { s.out[0] = lt(2, dt::f16, {1, 2, 4, 4}); }, type,
                    {"diff_src (output 0, tensor 2)", "f16", "must match"}),
            row("sizes_input_f32", [](op_spec &s) { s.erase(A::sizes); s.in.push_back(lt(3, dt::f32, {2})); }, type,
                    {"sizes (input 2, tensor 3)", "f32", "allowed: s32"}),
            row("attr_of_other_op", [](op_spec &s) { s.set(A::epsilon, 1e-5f); }, arg,
                    {"attribute 'epsilon' does not apply", "mode"}),
            row("mode_mistyped", [](op_spec &s) { s.set(A::mode, std::string("bilinaer")); }, arg,
                    {"'mode' = \"bilinaer\"", "nearest, linear, bilinear, trilinear"}),
            row("coordinate_mode_unknown", [](op_spec &s) { s.set(A::coordinate_transformation_mode, std::string("half_pixels")); },
                    arg, {"'coordinate_transformation_mode' = \"half_pixels\"", "half_pixel"}),
            row("nearest_mode_unknown", [](op_spec &s) { s.set(A::nearest_mode, std::string("round")); }, arg,
                    {"'nearest_mode' = \"round\"", "round_prefer_floor"}),
            row("data_format_nhwc", [](op_spec &s) { s.set(A::data_format, std::string("NHWC")); }, arg,
                    {"'data_format' = \"NHWC\"", "NXC, NCX"}),
            row("mode_not_a_string", [](op_spec &s) { s.set(A::mode, int64_t(1)); }, arg,
                    {"'mode' must be of type string", "got s64 1"}),
            row("sizes_as_floats", [](op_spec &s) { s.set(A::sizes, std::vector<float> {8.f, 8.f}); }, arg,
                    {"'sizes' must be of type s64[]", "got f32[]"}),
            row("mode_missing", [](op_spec &s) { s.erase(A::mode); }, arg, {"required attribute 'mode' is missing"}),
            row("sizes_and_scales", [](op_spec &s) { s.set(A::scales, std::vector<float> {2.f, 2.f}); }, arg,
                    {"given twice", "'sizes' attribute and 'scales' attribute"}),
            row("neither_sizes_nor_scales", [](op_spec &s) { s.erase(A::sizes); }, arg,
                    {"output size is not given", "exactly one"}),
            row("sizes_attr_and_input", [](op_spec &s) { s.in.push_back(lt(3, dt::s32, {2})); }, arg,
                    {"given twice", "'sizes' attribute and sizes input (input 2)"}),
            row("sizes_one_value_for_two_axes", [](op_spec &s) { s.set(A::sizes, std::vector<int64_t> {8}); }, arg,
                    {"'sizes' has 1 values", "one per spatial axis (2 for a rank-4 src)"}),
            row("scales_three_values_for_two_axes", scales({2.f, 2.f, 2.f}), arg,
                    {"'scales' has 3 values", "(2 for a rank-4 src)"}),
            row("offsets_length_differs", [](op_spec &s) {
                    s.erase(A::sizes).set(A::scales, std::vector<float> {2.f, 2.f});
                    s.set(A::input_pixel_offsets, std::vector<float> {0.f}).set(A::output_pixel_offsets, std::vector<float> {0.f, 0.f}); },
                    arg, {"'input_pixel_offsets' has 1 values"}),
            row("sizes_zero", [](op_spec &s) { s.set(A::sizes, std::vector<int64_t> {0, 8}); }, arg,
                    {"'sizes' = [0, 8]", "sizes[0] must be positive"}),
            row("sizes_negative", [](op_spec &s) { s.set(A::sizes, std::vector<int64_t> {8, -3}); }, arg,
                    {"'sizes' = [8, -3]", "sizes[1] must be positive"}),
            row("sizes_int64_max", [](op_spec &s) { s.set(A::sizes, std::vector<int64_t> {big, 8}); }, shape,
                    {"diff_dst (input 1, tensor 1) spatial axis 2 has size 8", "'sizes'[0] = 9223372036854775807"}),
            row("scales_nan", scales({nan, 2.f}), arg, {"'scales' = [nan, 2]", "scales[0] must be finite and > 0"}),
            row("scales_inf", scales({2.f, inf}), arg, {"'scales' = [2, inf]", "scales[1] must be finite"}),
            row("scales_zero", scales({0.f, 2.f}), arg, {"scales[0] must be finite and > 0"}),
            row("scales_negative", scales({2.f, -2.f}), arg, {"'scales' = [2, -2]", "scales[1]"}),
            row("scales_output_size_out_of_range", scales({1e30f, 2.f}), arg,
                    {"'scales' = [1e+30, 2]", "scales[0] gives the output size floor(4 * [1e+30]) on spatial axis 2",
                            "out of range", "at most 2^63 - 1"}),
            row("scale_floor_misses_diff_dst", scales({1.5f, 2.f}), shape,
                    {"spatial axis 2 has size 8", "floor(4 * [1.5]) = 6"}),
            row("pixel_offset_nan", [](op_spec &s) {
                    s.erase(A::sizes).set(A::scales, std::vector<float> {2.f, 2.f});
                    s.set(A::input_pixel_offsets, std::vector<float> {nan, 0.f}).set(A::output_pixel_offsets, std::vector<float> {0.f, 0.f}); },
                    arg, {"'input_pixel_offsets' = [nan, 0]", "every offset must be finite"}),
            row("pixel_offsets_one_of_two", [](op_spec &s) {
                    s.erase(A::sizes).set(A::scales, std::vector<float> {2.f, 2.f});
                    s.set(A::output_pixel_offsets, std::vector<float> {0.f, 0.f}); },
                    arg, {"'output_pixel_offsets' is given without 'input_pixel_offsets'"}),
            row("pixel_offsets_without_scales", [](op_spec &s) {
                    s.set(A::input_pixel_offsets, std::vector<float> {0.f, 0.f}).set(A::output_pixel_offsets, std::vector<float> {0.f, 0.f}); },
                    arg, {"need the 'scales' attribute"}),
            row("pixel_offsets_with_coordinate_mode", [](op_spec &s) {
                    s.erase(A::sizes).set(A::scales, std::vector<float> {2.f, 2.f});
                    s.set(A::input_pixel_offsets, std::vector<float> {0.f, 0.f}).set(A::output_pixel_offsets, std::vector<float> {0.f, 0.f});
                    s.set(A::coordinate_transformation_mode, std::string("half_pixel")); },
                    arg, {"'coordinate_transformation_mode' must be absent"}),
            row("diff_dst_spatial_not_sizes", [](op_spec &s) { s.in[1] = lt(1, dt::f32, {1, 2, 8, 7}); }, shape,
                    {"diff_dst (input 1, tensor 1) spatial axis 3 has size 7", "'sizes'[1] = 8"}),
            row("diff_dst_channels_differ", [](op_spec &s) { s.in[1] = lt(1, dt::f32, {1, 3, 8, 8}); }, shape,
                    {"diff_dst (input 1, tensor 1) has shape 1x3x8x8", "axis 1 (C) must match"}),
            row("diff_dst_rank_differs", [](op_spec &s) { s.in[1] = lt(1, dt::f32, {1, 2, 8, 8, 8}); }, shape,
                    {"diff_dst (input 1, tensor 1) has rank 5 but src has rank 4"}),
            row("diff_src_shape_not_src", [](op_spec &s) { s.out[0] = lt(2, dt::f32, {1, 2, 4, 5}); }, shape,
                    {"diff_src (output 0, tensor 2) has shape 1x2x4x5", "src (input 0, tensor 0) has shape 1x2x4x4"}),
            row("rank_2", [](op_spec &s) { s.in = {lt(0, dt::f32, {2, 4}), lt(1, dt::f32, {2, 8})}; s.out = {lt(2, dt::f32, {2, 4})}; s.set(A::sizes, std::vector<int64_t> {}); },
                    shape, {"src (input 0, tensor 0) has rank 2", "allowed ranks: 3 to 6"}),
            row("rank_1", [](op_spec &s) { s.in = {lt(0, dt::f32, {4}), lt(1, dt::f32, {8})}; s.out = {lt(2, dt::f32, {4})}; }, shape,
                    {"has rank 1", "allowed ranks: 3 to 6"}),
            row("rank_9", [](op_spec &s) { s.in[0] = lt(0, dt::f32, dims(9, 1)); }, shape,
                    {"inputs[0] (tensor 0) has rank 9; at most 8 is supported"}),
            row("src_spatial_size_zero", [](op_spec &s) { s.in[0] = lt(0, dt::f32, {1, 2, 0, 4}); s.out[0] = lt(2, dt::f32, {1, 2, 0, 4}); }, shape,
                    {"src spatial axis 2 has size 0", "must be >= 1"}),
            row("negative_dim", [](op_spec &s) { s.in[0] = lt(0, dt::f32, {1, 2, -5, 4}); }, shape,
                    {"inputs[0] (tensor 0) has a negative dimension -5"}),
            row("diff_dst_element_count_overflows", [](op_spec &s) {
                    const int64_t d = int64_t(1) << 32;
                    s.in[1] = lt(1, dt::f32, {d, 2, d, 8}); },
                    shape, {"inputs[1] (tensor 1)", "element count overflows int64"}),
            row("sizes_input_three_values", [](op_spec &s) { s.erase(A::sizes); s.in.push_back(lt(3, dt::s32, {3})); }, shape,
                    {"sizes (input 2, tensor 3) has 3 elements", "one per spatial axis (2)"}),
            row("sizes_input_rank_2", [](op_spec &s) { s.erase(A::sizes); s.in.push_back(lt(3, dt::s32, {1, 2})); }, shape,
                    {"sizes (input 2, tensor 3) has rank 2", "allowed ranks: 1 to 1"}),
            row("output_is_input", [](op_spec &s) { s.out[0] = lt(0, dt::f32, {1, 2, 4, 4}); }, structure,
                    {"tensor 0 is both an input and an output", "cycle"}),
            row("tensor_without_id", [](op_spec &s) { s.out[0] = logical_tensor(); }, structure,
                    {"outputs[0]", "has no id"}),
            row("strides_of_wrong_rank", [](op_spec &s) { s.in[0] = logical_tensor(0, dt::f32, {1, 2, 4, 4}, {32, 16, 4}); }, shape,
                    {"inputs[0] (tensor 0) has 3 strides for rank 4"}),
            row("negative_stride", [](op_spec &s) { s.in[1] = logical_tensor(1, dt::f32, {1, 2, 8, 8}, {128, 64, -8, 1}); }, shape,
                    {"inputs[1] (tensor 1) has a negative stride -8"}),
    };
}

INSTANTIATE_TEST_SUITE_P(Interpolate, BadInput, ::testing::ValuesIn(rows()), row_name);

} // namespace
} // namespace bpg::test
