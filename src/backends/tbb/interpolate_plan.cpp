#include "backends/tbb/interpolate_plan.hpp"

#include <algorithm>

namespace bpg::tbb_backend {

namespace {

// Stride s of an axis of size d is "unit" when a step along it is one element
// (or when the axis has one element, so its stride never matters).
bool unit(int64_t stride, int64_t size) { return stride == 1 || size <= 1; }

} // namespace

std::string make_interp_plan(const core::interpolate_bwd_problem &p, interp_plan &plan) {
    const core::tensor_desc &dd = p.diff_dst, &ds = p.diff_src;
    if (dd.dt != data_type::f32 && dd.dt != data_type::bf16 && dd.dt != data_type::f16)
        return std::string("data type ") + to_string(dd.dt) + " is not supported";
    const int nsp = int(p.spatial_axes.size());
    if (nsp < 1 || nsp > 4) return "1 to 4 spatial axes are supported";
    if (ds.element_count() == 0 || dd.element_count() == 0) {
        if (ds.element_count() != 0) return "diff_dst is empty but diff_src is not"; // refused at add_op
        interp_plan q;
        q.empty = true;
        choose_interp_path(q);
        plan = std::move(q);
        return {};
    }
    const int last = nsp - 1, c_axis = p.channel_axis, w_axis = p.spatial_axes[size_t(last)];
    const int64_t C = dd.shape[size_t(c_axis)];

    const bool channels_last_ok = unit(dd.strides[size_t(c_axis)], C) && unit(ds.strides[size_t(c_axis)], C);
    const bool planar_ok = unit(dd.strides[size_t(w_axis)], dd.shape[size_t(w_axis)])
            && unit(ds.strides[size_t(w_axis)], ds.shape[size_t(w_axis)]);
    if (!channels_last_ok && !planar_ok)
        return "neither C nor the innermost spatial axis has stride 1 in both diff_dst and diff_src";

    interp_plan q;
    q.dt = dd.dt;
    q.channels_last = channels_last_ok && (C > 1 || !planar_ok);
    q.nsp = nsp;
    for (int k = 0; k < nsp; ++k) {
        const int a = p.spatial_axes[size_t(k)];
        q.axes.push_back(kernels::build_axis_gather(
                p.axes[size_t(k)], p.mode == core::interp_mode::nearest, p.rounding));
        q.in[size_t(k)] = p.axes[size_t(k)].in;
        q.out[size_t(k)] = p.axes[size_t(k)].out;
        q.dd_sp[size_t(k)] = dd.strides[size_t(a)];
        q.ds_sp[size_t(k)] = ds.strides[size_t(a)];
    }
    q.n_count = dd.shape[0];
    q.dd_n = dd.strides[0];
    q.ds_n = ds.strides[0];
    if (q.channels_last) {
        q.run = C;
    } else {
        q.c_count = C;
        q.dd_c = dd.strides[size_t(c_axis)];
        q.ds_c = ds.strides[size_t(c_axis)];
        q.run = q.out[size_t(last)];
    }
    // Runs of a level-k slice: axes k+1..last (channels-last) or k+1..last-1 (planar).
    const int run_axes_end = q.channels_last ? nsp : last;
    for (int k = 0; k < last; ++k) {
        int64_t r = 1;
        for (int j = k + 1; j < run_axes_end; ++j) r *= q.out[size_t(j)];
        q.rows[size_t(k)] = r;
        q.slice_floats[size_t(k)] = r * q.run;
    }
    if (last > 0) { // where level 0 finds its runs in diff_dst, in scratch order
        q.dd_rows0.assign(1, 0);
        for (int j = 1; j < run_axes_end; ++j) {
            std::vector<int64_t> next;
            next.reserve(q.dd_rows0.size() * size_t(q.out[size_t(j)]));
            for (int64_t base : q.dd_rows0)
                for (int64_t o = 0; o < q.out[size_t(j)]; ++o) next.push_back(base + o * q.dd_sp[size_t(j)]);
            q.dd_rows0.swap(next);
        }
    }
    for (const kernels::axis_gather &g : q.axes) q.grouped.push_back(group_axis(g));
    const kernels::axis_gather &g0 = q.axes[0];
    for (int64_t i = 0; i < g0.in; ++i)
        if (g0.begin[size_t(i) + 1] > g0.begin[size_t(i)])
            q.level0_span = std::max(q.level0_span,
                    g0.output[size_t(g0.begin[size_t(i) + 1] - 1)] - g0.output[size_t(g0.begin[size_t(i)])] + 1);
    if (!q.channels_last) {
        q.inner_rows = make_row_gather(q.axes[size_t(last)]);
        if (nsp == 1) q.split_unit = 16;
    }
    choose_interp_path(q);
    plan = std::move(q);
    return {};
}

} // namespace bpg::tbb_backend
