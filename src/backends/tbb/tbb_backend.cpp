#include "backends/tbb/tbb_backend.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "backends/tbb/bn_plan.hpp"
#include "backends/tbb/interpolate_plan.hpp"
#include "backends/tbb/relu_run.hpp"
#include "backends/tbb/reorder.hpp"
#include "core/allocate.hpp"

namespace bpg::backends {

namespace {

// An interpolate plan plus, when a tensor's strides do not suit the kernel,
// a copy of that tensor to or from its dense layout (planned at compile).
struct interp_schedule {
    tbb_backend::interp_plan plan;
    core::tensor_desc dd, ds;          // as bound at execute
    bool reorder_dd = false, reorder_ds = false;
    dims dense_dd, dense_ds;           // the kernel's strides when reordered
};

// Tries the problem as laid out, then with the cheapest tensor(s) made dense.
std::string schedule_interp(const core::interpolate_bwd_problem &p, interp_schedule &s) {
    s.dd = p.diff_dst;
    s.ds = p.diff_src;
    const std::string as_is = tbb_backend::make_interp_plan(p, s.plan);
    if (as_is.empty()) return {};
    const int64_t dd_bytes = p.diff_dst.element_count(), ds_bytes = p.diff_src.element_count();
    struct option { bool dd, ds; int64_t cost; };
    option options[] = {{true, false, dd_bytes}, {false, true, ds_bytes}, {true, true, dd_bytes + ds_bytes}};
    std::sort(std::begin(options), std::begin(options) + 2, [](const option &a, const option &b) { return a.cost < b.cost; });
    for (const option &o : options) {
        core::interpolate_bwd_problem q = p;
        if (o.dd) q.diff_dst.strides = dense_strides(q.diff_dst.shape);
        if (o.ds) q.diff_src.strides = dense_strides(q.diff_src.shape);
        if (tbb_backend::make_interp_plan(q, s.plan).empty()) {
            s.reorder_dd = o.dd;
            s.reorder_ds = o.ds;
            s.dense_dd = q.diff_dst.strides;
            s.dense_ds = q.diff_src.strides;
            return {};
        }
    }
    return as_is;
}

core::aligned_buffer dense_copy(const core::tensor_desc &d, const char *name) {
    return core::allocate(size_t(d.element_count()) * size_of(d.dt),
            std::string("the dense copy of ") + name + " (tensor " + std::to_string(d.id) + ")");
}

class interp_kernel : public kernel {
public:
    explicit interp_kernel(interp_schedule s) : s_(std::move(s)) {}
    void execute(const buffer_map &b) const override {
        const void *dd = b.at(s_.dd.id);
        void *ds = b.at(s_.ds.id);
        // Both copies are taken before anything is written to diff_src.
        core::aligned_buffer dd_tmp, ds_tmp;
        if (s_.reorder_ds) ds_tmp = dense_copy(s_.ds, "diff_src");
        if (s_.reorder_dd) {
            dd_tmp = dense_copy(s_.dd, "diff_dst");
            tbb_backend::strided_copy(s_.dd.shape, dd, s_.dd.strides, dd_tmp.get(), s_.dense_dd, size_of(s_.dd.dt));
            dd = dd_tmp.get();
        }
        tbb_backend::run_interp_plan(s_.plan, dd, s_.reorder_ds ? ds_tmp.get() : ds, kept_);
        if (s_.reorder_ds)
            tbb_backend::strided_copy(s_.ds.shape, ds_tmp.get(), s_.dense_ds, ds, s_.ds.strides, size_of(s_.ds.dt));
    }
    std::string path() const override {
        std::string copies = s_.reorder_dd ? ":dense_diff_dst" : "";
        if (s_.reorder_ds) copies += ":dense_diff_src";
        return tbb_backend::interp_path_name(s_.plan) + copies;
    }
    // A dense copy's loop runs inline too: the run has one thread (partition_threads).
    bool one_task() const override { return s_.plan.one_task; }

private:
    interp_schedule s_;
    tbb_backend::kept_memory kept_;
};

class bn_kernel : public kernel {
public:
    explicit bn_kernel(tbb_backend::bn_plan plan) : plan_(std::move(plan)) {}
    void execute(const buffer_map &b) const override { tbb_backend::run_bn_plan(plan_, b, kept_); }
    std::string path() const override { return tbb_backend::bn_path_name(plan_); }
    bool one_task() const override { return plan_.one_task; }

private:
    tbb_backend::bn_plan plan_;
    tbb_backend::kept_memory kept_;
};

const core::interpolate_bwd_problem *single_interpolate(const partition_problem &p) {
    return p.ops.size() == 1 ? std::get_if<core::interpolate_bwd_problem>(&p.ops[0]) : nullptr;
}

const core::relu_bwd_problem *lone_relu(const partition_problem &p) {
    return p.ops.size() == 1 ? std::get_if<core::relu_bwd_problem>(&p.ops[0]) : nullptr;
}

class relu_kernel : public kernel {
public:
    explicit relu_kernel(core::relu_bwd_problem p) : p_(std::move(p)), nontemporal_(tbb_backend::relu_nontemporal(p_)) {}
    void execute(const buffer_map &b) const override {
        tbb_backend::run_relu_bwd(p_, nontemporal_, b.at(p_.input.id), b.at(p_.diff_dst.id), b.at(p_.diff_src.id));
    }
    std::string path() const override { return nontemporal_ ? "relu:nontemporal" : "relu:cached"; }

private:
    core::relu_bwd_problem p_;
    bool nontemporal_;
};

} // namespace

backend_kind tbb_backend_impl::kind() const { return backend_kind::tbb; }

std::string tbb_backend_impl::why_unsupported(const partition_problem &p) const {
    if (const core::interpolate_bwd_problem *ip = single_interpolate(p)) {
        interp_schedule s;
        return schedule_interp(*ip, s);
    }
    if (lone_relu(p)) return {};
    tbb_backend::bn_plan plan;
    return tbb_backend::make_bn_plan(p, plan);
}

std::unique_ptr<kernel> tbb_backend_impl::compile(const partition_problem &p) const {
    std::string no;
    if (const core::interpolate_bwd_problem *ip = single_interpolate(p)) {
        interp_schedule s;
        no = schedule_interp(*ip, s);
        if (no.empty()) return std::make_unique<interp_kernel>(std::move(s));
    } else if (const core::relu_bwd_problem *rp = lone_relu(p)) {
        return std::make_unique<relu_kernel>(*rp);
    } else {
        tbb_backend::bn_plan plan;
        no = tbb_backend::make_bn_plan(p, plan);
        if (no.empty()) return std::make_unique<bn_kernel>(std::move(plan));
    }
    throw error(status::unimplemented, "tbb backend: " + no);
}

} // namespace bpg::backends
