// DML_RESAMPLE_GRAD_OPERATOR_DESC -> bpg InterpolateBackprop.
//
// DirectML resamples any of its 1 to 4 axes; bpg's InterpolateBackprop resizes
// the spatial axes of an N,C,X... tensor. The mapping (docs/dml.md):
//   - leading axes that DirectML maps to themselves (same size, and every
//     output index reads exactly its own index under the axis's scale and
//     offsets) become N and C, at most two and never all axes;
//   - missing N and C are axes of size 1; the other axes are spatial, NCX;
//   - Scales, InputPixelOffsets, OutputPixelOffsets of the spatial axes become
//     the scales / input_pixel_offsets / output_pixel_offsets attributes
//     (docs/semantics.md: s = (o - output_offset) / scale - input_offset);
//   - NEAREST_NEIGHBOR rounds by RoundingDirection (increasing: floor(s + 0.5)
//     = round_prefer_ceil; decreasing: round_prefer_floor); LINEAR is linear.
#include <cmath>

#include "dml/dml_internal.hpp"
#include "kernels/interp_coords.hpp"

namespace bpg::dml {

namespace {

constexpr const char *op_name = "DML_RESAMPLE_GRAD_OPERATOR_DESC";

kernels::nearest_rounding rounding_of(axis_direction d) {
    return d == axis_direction::decreasing ? kernels::nearest_rounding::round_prefer_floor
                                           : kernels::nearest_rounding::round_prefer_ceil;
}

// True when output index o reads only input index o with weight 1 for every o:
// the axis is not resampled and can be an N or C axis of bpg's op. Decided by
// the same coordinate functions the kernels run.
bool is_identity_axis(const kernels::axis_map &m, interpolation_mode mode, kernels::nearest_rounding r) {
    if (m.in != m.out || m.scale != 1.f) return false;
    for (int64_t o = 0; o < m.out; ++o) {
        const kernels::source_coord s = kernels::source_coordinate(m, o);
        if (mode == interpolation_mode::nearest_neighbor) {
            if (kernels::nearest_index(s, r, m.in) != o) return false;
        } else {
            const kernels::linear_taps t = kernels::linear_taps_of(s, m.in);
            if (t.i0 != o || t.w1 != 0.0) return false;
        }
    }
    return true;
}

void check_array(const float *values, const char *field, uint32_t n, bool positive) {
    if (!values)
        fail(op_name, status::invalid_argument,
                std::string(field) + " is null; it must point to DimensionCount (" + std::to_string(n) + ") values");
    for (uint32_t i = 0; i < n; ++i)
        if (!std::isfinite(values[i]) || (positive && !(values[i] > 0.f)))
            fail(op_name, status::invalid_argument,
                    std::string(field) + "[" + std::to_string(i) + "] = " + std::to_string(values[i])
                            + (positive ? "; a scale must be finite and > 0" : "; an offset must be finite"));
}

// logical tensor of rank 2 + spatial count: N and C from the leading identity
// axes (or size 1), then the spatial axes, with the DML tensor's strides.
logical_tensor bpg_tensor(size_t id, const checked_tensor &t, size_t leading, bool shape_only) {
    dims sizes, strides;
    const dim outer = t.sizes[0] * t.strides[0]; // any stride serves an axis of size 1
    for (size_t k = leading; k < 2; ++k) {
        sizes.push_back(1);
        strides.push_back(outer);
    }
    for (size_t a = 0; a < t.sizes.size(); ++a) {
        sizes.push_back(t.sizes[a]);
        strides.push_back(t.strides[a]);
    }
    if (shape_only) strides.assign(sizes.size(), 0);
    return logical_tensor(id, t.dt, sizes, strides);
}

} // namespace

compiled_operator compile(const resample_grad_operator_desc &d, const compile_options &opts) {
    const checked_tensor dy = check_tensor(op_name, "InputGradientTensor", d.InputGradientTensor, 1, 4, false);
    const checked_tensor dx = check_tensor(op_name, "OutputGradientTensor", d.OutputGradientTensor, 1, 4, true);
    check_same_type_and_rank(op_name, dy, dx);
    const uint32_t n = d.DimensionCount;
    if (n != dy.sizes.size())
        fail(op_name, status::invalid_argument,
                "DimensionCount = " + std::to_string(n) + " but the tensors have DimensionCount "
                        + std::to_string(dy.sizes.size()) + "; it must equal theirs");
    if (d.InterpolationMode != interpolation_mode::nearest_neighbor && d.InterpolationMode != interpolation_mode::linear)
        fail(op_name, status::invalid_argument,
                "InterpolationMode = " + std::to_string(uint32_t(d.InterpolationMode))
                        + " is not DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR (0) or _LINEAR (1)");
    if (d.RoundingDirection != axis_direction::increasing && d.RoundingDirection != axis_direction::decreasing)
        fail(op_name, status::invalid_argument,
                "RoundingDirection = " + std::to_string(uint32_t(d.RoundingDirection))
                        + " is not DML_AXIS_DIRECTION_INCREASING (0) or _DECREASING (1)");
    check_array(d.Scales, "Scales", n, true);
    check_array(d.InputPixelOffsets, "InputPixelOffsets", n, false);
    check_array(d.OutputPixelOffsets, "OutputPixelOffsets", n, false);

    const kernels::nearest_rounding rounding = rounding_of(d.RoundingDirection);
    std::vector<kernels::axis_map> axes(n);
    for (uint32_t i = 0; i < n; ++i)
        axes[i] = {dx.sizes[i], dy.sizes[i], kernels::coord_mode::pixel_offsets, d.Scales[i],
                d.InputPixelOffsets[i], d.OutputPixelOffsets[i]};
    size_t leading = 0;
    while (leading < 2 && leading + 1 < n && is_identity_axis(axes[leading], d.InterpolationMode, rounding))
        ++leading;

    std::vector<float> scales, in_offsets, out_offsets;
    for (uint32_t i = uint32_t(leading); i < n; ++i) {
        const int64_t want = kernels::output_size_from_scale(dx.sizes[i], d.Scales[i]);
        if (want < 0) // does not fit in int64
            fail(op_name, status::invalid_argument,
                    "Scales[" + std::to_string(i) + "] = " + std::to_string(d.Scales[i])
                            + " gives the output size floor(OutputGradientTensor.Sizes[" + std::to_string(i)
                            + "] * Scales[" + std::to_string(i) + "]) = floor(" + std::to_string(dx.sizes[i])
                            + " * " + std::to_string(d.Scales[i])
                            + "), out of range: an output size must fit in int64 (at most 2^63 - 1)");
        if (want != dy.sizes[i])
            fail(op_name, status::unimplemented,
                    "InputGradientTensor.Sizes[" + std::to_string(i) + "] = " + std::to_string(dy.sizes[i])
                            + " but floor(OutputGradientTensor.Sizes[" + std::to_string(i) + "] * Scales["
                            + std::to_string(i) + "]) = floor(" + std::to_string(dx.sizes[i]) + " * "
                            + std::to_string(d.Scales[i]) + ") = " + std::to_string(want)
                            + "; DirectML allows a scale that is not the size ratio, bpg's "
                              "InterpolateBackprop requires the output size of a scale to be that floor");
        scales.push_back(d.Scales[i]);
        in_offsets.push_back(d.InputPixelOffsets[i]);
        out_offsets.push_back(d.OutputPixelOffsets[i]);
    }

    // Tensor ids: 0 src (shape only), 1 diff_dst = InputGradient, 2 diff_src = OutputGradient.
    const logical_tensor src = bpg_tensor(0, dx, leading, true);
    binding in, out;
    in.field = "InputGradientTensor";
    in.lt = bpg_tensor(1, dy, leading, false);
    out.field = "OutputGradientTensor";
    out.lt = bpg_tensor(2, dx, leading, false);
    op o(0, op::kind::InterpolateBackprop, {src, in.lt}, {out.lt}, op_name);
    o.set_attr(op::attr::mode, d.InterpolationMode == interpolation_mode::linear ? "linear" : "nearest")
            .set_attr(op::attr::nearest_mode,
                    rounding == kernels::nearest_rounding::round_prefer_floor ? "round_prefer_floor"
                                                                              : "round_prefer_ceil")
            .set_attr(op::attr::data_format, "NCX")
            .set_attr(op::attr::scales, scales)
            .set_attr(op::attr::input_pixel_offsets, in_offsets)
            .set_attr(op::attr::output_pixel_offsets, out_offsets);
    return compile_graph_op(op_name, o, {in}, {out}, {src}, opts);
}

void resample_grad(const resample_grad_operator_desc &desc, const void *input_gradient, void *output_gradient,
        const compile_options &opts) {
    compile(desc, opts).execute({input_gradient}, {output_gradient});
}

} // namespace bpg::dml
