// From a checked op and concrete logical tensors to the resolved problem a
// backend compiles (src/core/problems.hpp). Called by compile() after shape
// inference, so every shape and stride here is concrete.
#pragma once

#include <vector>

#include "bpg/graph.hpp"
#include "core/problems.hpp"

namespace bpg::graph_impl {

core::interpolate_bwd_problem resolve_interpolate_bwd(const op &o,
        const std::vector<logical_tensor> &inputs, const std::vector<logical_tensor> &outputs);
core::bn_bwd_problem resolve_batchnorm_bwd(const op &o,
        const std::vector<logical_tensor> &inputs, const std::vector<logical_tensor> &outputs);
core::relu_bwd_problem resolve_relu_bwd(const op &o,
        const std::vector<logical_tensor> &inputs, const std::vector<logical_tensor> &outputs);

} // namespace bpg::graph_impl
