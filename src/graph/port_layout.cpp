#include "graph/port_layout.hpp"

#include <algorithm>
#include <numeric>

namespace bpg::graph_impl {

const logical_tensor *layout_model(const op &o, size_t out, const std::vector<logical_tensor> &in) {
    if (out != 0 || in.size() < 2) return nullptr;
    switch (o.get_kind()) {
        case op::kind::InterpolateBackprop:
        case op::kind::BatchNormTrainingBackprop:
        case op::kind::BatchNormTrainingBackpropFromSums:
        case op::kind::ReLUBackprop: return &in[1]; // diff_dst
        default: return nullptr;
    }
}

dims strides_in_order_of(const logical_tensor &model, const dims &shape) {
    const dims &ms = model.get_strides();
    if (ms.size() != shape.size()) return dense_strides(shape);
    std::vector<size_t> order(shape.size()); // outermost first
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ms[a] > ms[b]; });
    dims strides(shape.size(), 1);
    const dims nested = dense_strides([&] {
        dims permuted;
        for (size_t a : order) permuted.push_back(shape[a]);
        return permuted;
    }());
    for (size_t i = 0; i < order.size(); ++i) strides[order[i]] = nested[i];
    return strides;
}

bool is_shape_only_input(const op &o, size_t i) {
    return o.get_kind() == op::kind::InterpolateBackprop && i == 0;
}

} // namespace bpg::graph_impl
