// The fields of bpg_verbose lines (include/bpg/verbose.hpp). Fields are
// separated by commas, so no field contains one: lists are joined by 'x',
// items by ' ' or ';'.
#pragma once

#include <string>
#include <vector>

#include "bpg/graph.hpp"

namespace bpg::graph_impl {

// "ReLUBackprop:1;BatchNormTrainingBackprop:2"
std::string verbose_ops(const std::vector<op> &ops);
// "in=10:f32:8x32x56x56:100352x3136x56x1 11:...;out=12:..." (id:dtype:shape:strides)
std::string verbose_ports(const std::vector<logical_tensor> &in, const std::vector<logical_tensor> &out);
// "op0{mode=bilinear;...;sizes=112x112} op2{epsilon=1e-05;...}": every
// attribute in effect, defaults included
std::string verbose_attrs(const std::vector<op> &ops);

} // namespace bpg::graph_impl
