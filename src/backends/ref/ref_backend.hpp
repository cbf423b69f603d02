#pragma once
#include "backends/backend.hpp"

namespace bpg::backends {

class ref_backend : public backend {
public:
    backend_kind kind() const override;
    std::string why_unsupported(const partition_problem &p) const override;
    std::unique_ptr<kernel> compile(const partition_problem &p) const override;
};

} // namespace bpg::backends
