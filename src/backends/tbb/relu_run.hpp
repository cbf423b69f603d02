// ReLUBackprop alone (when it does not feed a BatchNormTrainingBackprop and
// is not fused): diff_src = input > 0 ? diff_dst : 0, elementwise, any strides.
#pragma once

#include "core/problems.hpp"

namespace bpg::tbb_backend {

// The plan: whether diff_src is large enough to be written past the caches.
bool relu_nontemporal(const core::relu_bwd_problem &p);

void run_relu_bwd(const core::relu_bwd_problem &p, bool nontemporal, const void *input, const void *diff_dst,
        void *diff_src);

} // namespace bpg::tbb_backend
