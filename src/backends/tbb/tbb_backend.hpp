#pragma once
#include "backends/backend.hpp"

namespace bpg::backends {

// Our own oneTBB kernels (src/backends/tbb): InterpolateBackprop,
// BatchNormTrainingBackprop, and ReLUBackprop fused into BN.
class tbb_backend_impl : public backend {
public:
    backend_kind kind() const override;
    std::string why_unsupported(const partition_problem &p) const override;
    std::unique_ptr<kernel> compile(const partition_problem &p) const override;
};

} // namespace bpg::backends
