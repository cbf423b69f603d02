#include "backends/tbb/tbb_backend.hpp"

#include "backends/tbb/interpolate_plan.hpp"

namespace bpg::backends {

namespace {

class interp_kernel : public kernel {
public:
    interp_kernel(tbb_backend::interp_plan plan, size_t dd, size_t ds) : plan_(std::move(plan)), dd_(dd), ds_(ds) {}
    void execute(const buffer_map &b) const override {
        tbb_backend::run_interp_plan(plan_, b.at(dd_), b.at(ds_));
    }

private:
    tbb_backend::interp_plan plan_;
    size_t dd_, ds_;
};

const core::interpolate_bwd_problem *single_interpolate(const partition_problem &p) {
    return p.ops.size() == 1 ? std::get_if<core::interpolate_bwd_problem>(&p.ops[0]) : nullptr;
}

} // namespace

backend_kind tbb_backend_impl::kind() const { return backend_kind::tbb; }

std::string tbb_backend_impl::why_unsupported(const partition_problem &p) const {
    const core::interpolate_bwd_problem *ip = single_interpolate(p);
    if (!ip) return "only InterpolateBackprop partitions are implemented in the tbb backend so far";
    tbb_backend::interp_plan plan;
    return tbb_backend::make_interp_plan(*ip, plan);
}

std::unique_ptr<kernel> tbb_backend_impl::compile(const partition_problem &p) const {
    const core::interpolate_bwd_problem &ip = *single_interpolate(p);
    tbb_backend::interp_plan plan;
    const std::string no = tbb_backend::make_interp_plan(ip, plan);
    if (!no.empty()) throw error(status::unimplemented, "tbb backend: " + no);
    return std::make_unique<interp_kernel>(std::move(plan), ip.diff_dst.id, ip.diff_src.id);
}

} // namespace bpg::backends
