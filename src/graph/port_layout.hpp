// What compile derives for ports beyond their shapes: the strides of an
// output given with layout any, and the inputs no kernel reads.
#pragma once

#include <vector>

#include "bpg/graph.hpp"

namespace bpg::graph_impl {

// The input whose axis order output `out` of o takes when its layout is the
// library's choice (diff_src follows diff_dst: channels-last in, channels-last
// out); nullptr when the output is dense row-major (per-channel vectors).
const logical_tensor *layout_model(const op &o, size_t out, const std::vector<logical_tensor> &in);

// Dense strides for shape with its axes nested as model's strides nest them
// (largest stride outermost; equal strides keep the axis order).
dims strides_in_order_of(const logical_tensor &model, const dims &shape);

// Whether input i of o is read for its shape only (InterpolateBackprop's src).
bool is_shape_only_input(const op &o, size_t i);

} // namespace bpg::graph_impl
