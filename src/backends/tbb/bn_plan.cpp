#include "backends/tbb/bn_plan.hpp"

#include <algorithm>
#include <numeric>

#include "backends/tbb/parallel.hpp"
#include "backends/tbb/size_thresholds.hpp"

namespace bpg::tbb_backend {

namespace {

struct group { int64_t size = 1, stride = 0; };

// Collapses axes (outer to inner) of one tensor into one axis, if its strides
// allow (each axis steps over the whole of the next).
bool collapse(const std::vector<int> &axes, const dims &shape, const dims &strides, group &g) {
    g = {};
    for (size_t i = 0; i < axes.size(); ++i) {
        g.size *= shape[size_t(axes[i])];
        if (i + 1 < axes.size()
                && strides[size_t(axes[i])] != strides[size_t(axes[i + 1])] * shape[size_t(axes[i + 1])])
            return false;
    }
    if (!axes.empty()) g.stride = strides[size_t(axes.back())];
    return true;
}

// Offsets of the statistics for each kept index, enumerated over the kept
// axes (outer to inner) as the data's K axis is.
std::vector<int64_t> stat_offsets(const std::vector<int> &kept, const dims &shape, const dims &stat_strides) {
    int64_t K = 1;
    for (int a : kept) K *= shape[size_t(a)];
    std::vector<int64_t> off(size_t(K), 0);
    for (int64_t k = 0; k < K; ++k) {
        int64_t rest = k, o = 0;
        for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
            o += (rest % shape[size_t(*it)]) * stat_strides[size_t(*it)];
            rest /= shape[size_t(*it)];
        }
        off[size_t(k)] = o;
    }
    return off;
}

} // namespace

std::string make_bn_plan(const backends::partition_problem &p, bn_plan &plan) {
    const core::bn_bwd_problem *bn = nullptr;
    const core::relu_bwd_problem *relu = nullptr;
    if (p.ops.size() == 1) bn = std::get_if<core::bn_bwd_problem>(&p.ops[0]);
    if (p.ops.size() == 2) {
        relu = std::get_if<core::relu_bwd_problem>(&p.ops[0]);
        bn = std::get_if<core::bn_bwd_problem>(&p.ops[1]);
    }
    if (!bn || (p.ops.size() == 2 && !relu)) return "not a BatchNormTrainingBackprop partition";
    bn_plan q;
    q.dt = bn->src.dt;
    if (q.dt != data_type::f32 && q.dt != data_type::bf16 && q.dt != data_type::f16)
        return std::string("data type ") + to_string(q.dt) + " is not supported";
    if (relu) {
        const size_t t = relu->diff_src.id;
        const bool into_src = bn->src.id == t, into_dd = bn->diff_dst.id == t;
        if (into_src == into_dd) return "ReLUBackprop must feed exactly one of src and diff_dst";
        q.fusion = into_src ? bn_fusion::relu_into_src : bn_fusion::relu_into_dd;
        q.relu_in_id = relu->input.id;
        q.relu_dd_id = relu->diff_dst.id;
    }
    q.part = bn->part;
    const bool local_sums = core::ends_with_sums(q.part);
    if (bn->src.element_count() == 0) {
        // Decided here, before the [A, K, B] view below, which leaves out
        // extent-1 axes and would take a 0 axis for one.
        if (q.part == core::bn_bwd_part::from_sums)
            return "no element: diff_gamma and diff_beta come from the given sums alone (the reference computes them)";
        q.empty = true;
        q.one_task = true; // nothing runs
        if (bn->diff_gamma) q.zeroed = {*bn->diff_gamma, *bn->diff_beta};
        if (local_sums) q.zeroed = {*bn->sum_diff_dst, *bn->sum_diff_dst_centered};
        choose_bn_path(q);
        plan = std::move(q);
        return {};
    }
    // The tensors the kernel reads or writes (a fused intermediate is neither).
    struct viewed { const core::tensor_desc *t; bn_view *v; };
    std::vector<viewed> tensors;
    if (!local_sums) tensors.push_back({&bn->diff_src, &q.ds});
    if (q.fusion != bn_fusion::relu_into_src) tensors.push_back({&bn->src, &q.src});
    if (q.fusion != bn_fusion::relu_into_dd) tensors.push_back({&bn->diff_dst, &q.dd});
    if (relu) {
        tensors.push_back({&relu->input, &q.relu_in});
        tensors.push_back({&relu->diff_dst, &q.relu_dd});
    }

    // Memory order of diff_src's axes (outer first; local_sums: src's), size-1 axes left out.
    const core::tensor_desc &layout = local_sums ? bn->src : bn->diff_src;
    const dims &shape = layout.shape;
    std::vector<int> order;
    for (int a = 0; a < int(shape.size()); ++a)
        if (shape[size_t(a)] > 1) order.push_back(a);
    std::stable_sort(order.begin(), order.end(),
            [&](int x, int y) { return layout.strides[size_t(x)] > layout.strides[size_t(y)]; });
    // [reduced...][kept...][reduced...]
    size_t first = order.size(), last = 0;
    for (size_t i = 0; i < order.size(); ++i)
        if (!bn->reduced[size_t(order[i])]) { first = std::min(first, i); last = i; }
    std::vector<int> outer, kept, inner;
    if (first == order.size()) {
        inner = order; // one channel (or none kept): everything is a reduction run
    } else {
        for (size_t i = first; i <= last; ++i)
            if (bn->reduced[size_t(order[i])]) return "kept (channel) axes are not adjacent in memory";
        outer.assign(order.begin(), order.begin() + long(first));
        kept.assign(order.begin() + long(first), order.begin() + long(last) + 1);
        inner.assign(order.begin() + long(last) + 1, order.end());
    }
    for (const viewed &t : tensors) {
        group ga, gk, gb;
        if (!collapse(outer, shape, t.t->strides, ga) || !collapse(kept, shape, t.t->strides, gk)
                || !collapse(inner, shape, t.t->strides, gb))
            return "tensor " + std::to_string(t.t->id) + " has strides that do not collapse to [A, K, B]";
        *t.v = {ga.stride, gk.stride, gb.stride};
        q.A = ga.size;
        q.K = gk.size;
        q.B = gb.size;
    }
    q.planar = q.B > 1;
    for (const viewed &t : tensors) {
        if (q.planar && t.v->b != 1) return "the innermost reduced axes are not contiguous";
        if (!q.planar && q.K > 1 && t.v->k != 1) return "the channels are not contiguous";
    }
    q.epsilon = bn->epsilon;
    q.global_stats = bn->use_global_stats;
    q.has_gamma = bn->gamma.has_value();
    q.has_diff_stats = bn->diff_gamma.has_value();
    q.M = bn->reduce_count;
    q.mean_off = stat_offsets(kept, shape, bn->mean_strides);
    q.mean_dt = bn->mean.dt;
    if (!local_sums) {
        q.var_off = stat_offsets(kept, shape, bn->variance_strides);
        q.var_dt = bn->variance.dt;
    }
    if (bn->sum_diff_dst) {
        q.sum_dd_off = stat_offsets(kept, shape, bn->sum_diff_dst_strides);
        q.sum_centered_off = stat_offsets(kept, shape, bn->sum_diff_dst_centered_strides);
        q.sum_dd_id = bn->sum_diff_dst->id;
        q.sum_centered_id = bn->sum_diff_dst_centered->id;
    }
    q.src_id = bn->src.id;
    q.dd_id = bn->diff_dst.id;
    q.ds_id = bn->diff_src.id;
    q.mean_id = bn->mean.id;
    q.var_id = bn->variance.id;
    if (q.has_gamma) {
        q.gamma_off = stat_offsets(kept, shape, bn->gamma_strides);
        q.gamma_dt = bn->gamma->dt;
        q.gamma_id = bn->gamma->id;
    }
    if (q.has_diff_stats) {
        q.dgamma_off = stat_offsets(kept, shape, bn->diff_gamma_strides);
        q.dbeta_off = stat_offsets(kept, shape, bn->diff_beta_strides);
        q.dgamma_dt = bn->diff_gamma->dt;
        q.dbeta_dt = bn->diff_beta->dt;
        q.dgamma_id = bn->diff_gamma->id;
        q.dbeta_id = bn->diff_beta->id;
    }
    q.stats_in_order = true;
    for (const auto *off : {&q.mean_off, &q.var_off, &q.gamma_off, &q.dgamma_off, &q.dbeta_off, &q.sum_dd_off,
                 &q.sum_centered_off})
        for (size_t k = 0; k < off->size(); ++k) q.stats_in_order &= (*off)[k] == int64_t(k);
    const int64_t bytes = q.A * q.K * q.B * int64_t(size_of(q.dt));
    q.one_task = tasks_at_once() == 1 || bytes < size_threshold(bn_one_task_max_bytes);
    choose_bn_path(q);
    q.scratch_bytes = bn_scratch_bytes(q);
    q.scratch_on_stack = q.scratch_bytes <= size_threshold(bn_stack_scratch_bytes);
    plan = std::move(q);
    return {};
}

} // namespace bpg::tbb_backend
