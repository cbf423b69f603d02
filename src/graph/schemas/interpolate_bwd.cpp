// InterpolateBackprop: schema, checks, shape inference, resolution.
// Inputs: 0 src (shape and dtype only), 1 diff_dst, 2 sizes (optional, s32 1-D).
// Output: 0 diff_src (shape of src). See docs/semantics.md.
#include <cmath>

#include "graph/op_schema.hpp"
#include "graph/resolve.hpp"
#include "graph/schemas/checks.hpp"
#include "kernels/interp_coords.hpp"

namespace bpg::graph_impl {

namespace {

using A = op::attr;

bool channels_last_of(const op &o) {
    return *attr_or_default<std::string>(o, A::data_format) == "NXC";
}

const std::vector<int64_t> *sizes_attr(const op &o) {
    const attr_value *v = o.find_attr(A::sizes);
    return v ? &std::get<std::vector<int64_t>>(*v) : nullptr;
}
const std::vector<float> *floats_attr(const op &o, A a) {
    const attr_value *v = o.find_attr(a);
    return v ? &std::get<std::vector<float>>(*v) : nullptr;
}

// Exactly one source for the output size: the sizes attribute, the scales
// attribute or the sizes input tensor.
void check_size_source(const op &o, size_t inputs) {
    const bool has_sizes = o.has_attr(A::sizes), has_scales = o.has_attr(A::scales);
    const bool has_input = inputs == 3;
    const int given = int(has_sizes) + int(has_scales) + int(has_input);
    if (given == 0)
        fail(o, status::invalid_argument,
                "the output size is not given: set exactly one of the 'sizes' attribute, the "
                "'scales' attribute or the sizes input (input 2)");
    if (given > 1) {
        std::string which = has_sizes ? "'sizes' attribute" : "";
        if (has_scales) which += std::string(which.empty() ? "" : " and ") + "'scales' attribute";
        if (has_input) which += std::string(which.empty() ? "" : " and ") + "sizes input (input 2)";
        fail(o, status::invalid_argument,
                "the output size is given twice (" + which
                        + "); sizes and scales are exclusive: give exactly one");
    }
}

void check_attr_values(const op &o) {
    if (auto *s = sizes_attr(o))
        for (size_t i = 0; i < s->size(); ++i)
            if ((*s)[i] <= 0)
                fail(o, status::invalid_argument,
                        "attribute 'sizes' = " + list_text(*s) + ": sizes[" + std::to_string(i)
                                + "] must be positive");
    if (auto *s = floats_attr(o, A::scales))
        for (size_t i = 0; i < s->size(); ++i)
            if (!std::isfinite((*s)[i]) || !((*s)[i] > 0.f))
                fail(o, status::invalid_argument,
                        "attribute 'scales' = " + list_text(*s) + ": scales[" + std::to_string(i)
                                + "] must be finite and > 0");
    for (A a : {A::input_pixel_offsets, A::output_pixel_offsets})
        if (auto *s = floats_attr(o, a))
            for (size_t i = 0; i < s->size(); ++i)
                if (!std::isfinite((*s)[i]))
                    fail(o, status::invalid_argument,
                            std::string("attribute '") + bpg::to_string(a) + "' = " + list_text(*s)
                                    + ": every offset must be finite");
}

// DirectML pixel offsets: both arrays, only with scales, and they replace
// coordinate_transformation_mode.
void check_pixel_offsets(const op &o) {
    const bool in = o.has_attr(A::input_pixel_offsets), out = o.has_attr(A::output_pixel_offsets);
    if (!in && !out) return;
    if (in != out)
        fail(o, status::invalid_argument,
                std::string("attribute '") + (in ? "input_pixel_offsets" : "output_pixel_offsets")
                        + "' is given without '"
                        + (in ? "output_pixel_offsets" : "input_pixel_offsets")
                        + "'; the pixel offsets go together (both or neither)");
    if (!o.has_attr(A::scales))
        fail(o, status::invalid_argument,
                "pixel offsets ('input_pixel_offsets', 'output_pixel_offsets') need the 'scales' "
                "attribute: s = (o - output_offset) / scale - input_offset");
    if (o.has_attr(A::coordinate_transformation_mode))
        fail(o, status::invalid_argument,
                "attribute 'coordinate_transformation_mode' must be absent when pixel offsets "
                "are given (the offsets define the coordinate transformation)");
}

// Every per-axis list has one value per spatial axis.
void check_list_lengths(const op &o, int spatial) {
    struct list { A attr; size_t n; };
    std::vector<list> lists;
    if (auto *s = sizes_attr(o)) lists.push_back({A::sizes, s->size()});
    for (A a : {A::scales, A::input_pixel_offsets, A::output_pixel_offsets})
        if (auto *s = floats_attr(o, a)) lists.push_back({a, s->size()});
    for (const list &l : lists) {
        if (spatial >= 0 && l.n != size_t(spatial))
            fail(o, status::invalid_argument,
                    std::string("attribute '") + bpg::to_string(l.attr) + "' has "
                            + std::to_string(l.n) + " values; it needs one per spatial axis ("
                            + std::to_string(spatial) + " for a rank-" + std::to_string(spatial + 2)
                            + " src)");
        if (l.n != lists.front().n)
            fail(o, status::invalid_argument,
                    std::string("attribute '") + bpg::to_string(l.attr) + "' has "
                            + std::to_string(l.n) + " values but '"
                            + bpg::to_string(lists.front().attr) + "' has "
                            + std::to_string(lists.front().n) + "; one per spatial axis each");
        if (l.n == 0 || l.n > 4)
            fail(o, status::invalid_argument,
                    std::string("attribute '") + bpg::to_string(l.attr) + "' has "
                            + std::to_string(l.n) + " values; 1 to 4 spatial axes are supported");
    }
}

void check_ports(const op &o, const std::vector<logical_tensor> &in, const logical_tensor &ds) {
    const logical_tensor &src = in[0], &dd = in[1];
    const std::string src_l = port_label(o, true, 0, "src"), dd_l = port_label(o, true, 1, "diff_dst"),
                      ds_l = port_label(o, false, 0, "diff_src");
    check_dtype_in(o, src, src_l, {data_type::f32, data_type::bf16, data_type::f16});
    check_same_dtype(o, src, src_l, dd, dd_l);
    check_same_dtype(o, src, src_l, ds, ds_l);
    check_rank(o, src, src_l, 3, 6);
    check_rank(o, dd, dd_l, 3, 6);
    check_rank(o, ds, ds_l, 3, 6);
    if (src.ndims() >= 0 && dd.ndims() >= 0 && src.ndims() != dd.ndims())
        fail(o, status::invalid_shape,
                dd_l + " has rank " + std::to_string(dd.ndims()) + " but src has rank "
                        + std::to_string(src.ndims()) + "; they must match");
    check_same_shape(o, src, src_l, ds, ds_l);
    if (in.size() == 3) {
        const std::string sz_l = port_label(o, true, 2, "sizes");
        check_dtype_in(o, in[2], sz_l, {data_type::s32});
        check_rank(o, in[2], sz_l, 1, 1);
        const int rank = src.ndims() >= 0 ? src.ndims() : dd.ndims();
        if (rank >= 0 && in[2].ndims() == 1 && known(in[2].get_dims()[0])
                && in[2].get_dims()[0] != rank - 2)
            fail(o, status::invalid_shape,
                    sz_l + " has " + std::to_string(in[2].get_dims()[0])
                            + " elements; it needs one per spatial axis ("
                            + std::to_string(rank - 2) + ")");
    }
}

// N and C of diff_dst equal src's; each spatial size equals the requested
// output size (sizes attribute, or floor(in * scale)). Unknown dims skip.
// Runs after check_ports and check_list_lengths: equal ranks, one list value
// per spatial axis.
void check_shapes(const op &o, const dims &src, const dims &dd) {
    if (src.empty() || dd.size() != src.size()) return;
    const int rank = int(src.size());
    const bool cl = channels_last_of(o);
    const std::string dd_l = port_label(o, true, 1, "diff_dst");
    for (int a : {0, channel_axis(cl, rank)})
        if (known(src[a]) && known(dd[a]) && src[a] != dd[a])
            fail(o, status::invalid_shape,
                    dd_l + " has shape " + shape_text(dd) + " but src has " + shape_text(src)
                            + ": axis " + std::to_string(a) + " (" + (a == 0 ? "N" : "C")
                            + ") must match; only spatial axes are resized (data_format "
                            + (cl ? "NXC" : "NCX") + ")");
    const std::vector<int> sp = spatial_axes(cl, rank);
    for (size_t i = 0; i < sp.size(); ++i) {
        const dim in = src[sp[i]], out = dd[sp[i]];
        for (auto [d, who] : {std::pair{in, "src"}, std::pair{out, "diff_dst"}})
            if (d == 0)
                fail(o, status::invalid_shape,
                        std::string(who) + " spatial axis " + std::to_string(sp[i])
                                + " has size 0; spatial sizes must be >= 1");
        if (auto *s = sizes_attr(o)) {
            if (known(out) && (*s)[i] != out)
                fail(o, status::invalid_shape,
                        dd_l + " spatial axis " + std::to_string(sp[i]) + " has size "
                                + std::to_string(out) + " but attribute 'sizes'[" + std::to_string(i)
                                + "] = " + std::to_string((*s)[i]) + "; they must match");
        } else if (auto *sc = floats_attr(o, A::scales)) {
            if (!known(in)) continue;
            const int64_t want = kernels::output_size_from_scale(in, (*sc)[i]);
            const std::string formula = "floor(" + std::to_string(in) + " * "
                    + list_text(std::vector<float>{(*sc)[i]}) + ")";
            if (want < 0) // does not fit in int64
                fail(o, status::invalid_argument,
                        "attribute 'scales' = " + list_text(*sc) + ": scales[" + std::to_string(i)
                                + "] gives the output size " + formula + " on spatial axis "
                                + std::to_string(sp[i]) + ", out of range: an output size must "
                                + "fit in int64 (at most 2^63 - 1)");
            if (known(out) && want != out)
                fail(o, status::invalid_shape,
                        dd_l + " spatial axis " + std::to_string(sp[i]) + " has size "
                                + std::to_string(out) + " but the output size of 'scales'["
                                + std::to_string(i) + "] is " + formula + " = "
                                + std::to_string(want)
                                + "; give 'sizes' instead, or a scale in [out/in, (out+1)/in)");
        }
    }
}

void check_interpolate(const op &o, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out) {
    check_size_source(o, in.size());
    check_attr_values(o);
    check_pixel_offsets(o);
    const int rank = in[0].ndims() >= 0 ? in[0].ndims() : in[1].ndims();
    check_ports(o, in, out[0]);
    check_list_lengths(o, rank >= 0 ? rank - 2 : -1);
    check_shapes(o, in[0].get_dims(), in[1].get_dims());
}

std::vector<dims> infer_interpolate(const op &, const std::vector<logical_tensor> &in) {
    return {in[0].get_dims()};
}

kernels::coord_mode coord_mode_of(const std::string &s) {
    using kernels::coord_mode;
    if (s == "align_corners") return coord_mode::align_corners;
    if (s == "asymmetric") return coord_mode::asymmetric;
    if (s == "pytorch_half_pixel") return coord_mode::pytorch_half_pixel;
    if (s == "tf_half_pixel_for_nn") return coord_mode::tf_half_pixel_for_nn;
    return coord_mode::half_pixel;
}

kernels::nearest_rounding rounding_of(const std::string &s) {
    using kernels::nearest_rounding;
    if (s == "round_prefer_floor") return nearest_rounding::round_prefer_floor;
    if (s == "floor") return nearest_rounding::floor;
    if (s == "ceil") return nearest_rounding::ceil;
    return nearest_rounding::round_prefer_ceil;
}

} // namespace

const op_schema &interpolate_bwd_schema() {
    static const op_schema s {op::kind::InterpolateBackprop,
            {{"src", false}, {"diff_dst", false}, {"sizes", true}},
            {{"diff_src", false}},
            {
                    {A::mode, attr_type::string, true, std::nullopt, {"nearest", "linear", "bilinear", "trilinear"}},
                    {A::coordinate_transformation_mode, attr_type::string, false, std::string("half_pixel"),
                            {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                                    "tf_half_pixel_for_nn"}},
                    {A::nearest_mode, attr_type::string, false, std::string("round_prefer_ceil"),
                            {"round_prefer_ceil", "round_prefer_floor", "floor", "ceil"}},
                    {A::sizes, attr_type::s64_list, false, std::nullopt, {}},
                    {A::scales, attr_type::f32_list, false, std::nullopt, {}},
                    {A::data_format, attr_type::string, false, std::string("NXC"), {"NXC", "NCX"}},
                    {A::input_pixel_offsets, attr_type::f32_list, false, std::nullopt, {}},
                    {A::output_pixel_offsets, attr_type::f32_list, false, std::nullopt, {}},
            },
            check_interpolate, infer_interpolate};
    return s;
}

core::interpolate_bwd_problem resolve_interpolate_bwd(const op &o,
        const std::vector<logical_tensor> &inputs, const std::vector<logical_tensor> &outputs) {
    core::interpolate_bwd_problem p;
    p.op_id = o.get_id();
    p.mode = *attr_or_default<std::string>(o, A::mode) == "nearest" ? core::interp_mode::nearest
                                                                      : core::interp_mode::linear;
    p.rounding = rounding_of(*attr_or_default<std::string>(o, A::nearest_mode));
    p.channels_last = channels_last_of(o);
    p.src = core::desc_of(inputs[0]);
    p.diff_dst = core::desc_of(inputs[1]);
    p.diff_src = core::desc_of(outputs[0]);
    if (inputs.size() == 3) p.sizes = core::desc_of(inputs[2]);
    const int rank = p.src.ndims();
    p.channel_axis = channel_axis(p.channels_last, rank);
    p.spatial_axes = spatial_axes(p.channels_last, rank);
    const bool offsets = o.has_attr(A::input_pixel_offsets);
    const auto mode = coord_mode_of(*attr_or_default<std::string>(o, A::coordinate_transformation_mode));
    for (size_t i = 0; i < p.spatial_axes.size(); ++i) {
        kernels::axis_map m;
        m.in = p.src.shape[p.spatial_axes[i]];
        m.out = p.diff_dst.shape[p.spatial_axes[i]];
        m.mode = mode;
        if (offsets) {
            m.mode = kernels::coord_mode::pixel_offsets;
            m.scale = (*floats_attr(o, A::scales))[i];
            m.input_offset = (*floats_attr(o, A::input_pixel_offsets))[i];
            m.output_offset = (*floats_attr(o, A::output_pixel_offsets))[i];
        }
        p.axes.push_back(m);
    }
    return p;
}

} // namespace bpg::graph_impl
