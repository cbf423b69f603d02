#include "backends/tbb/interpolate_plan.hpp"

#include <algorithm>

#include "backends/tbb/run_sum_gather.hpp"
#include "backends/tbb/size_thresholds.hpp"

namespace bpg::tbb_backend {

namespace {

// Stride s of an axis of size d is "unit" when a step along it is one element
// (or when the axis has one element, so its stride never matters).
bool unit(int64_t stride, int64_t size) { return stride == 1 || size <= 1; }

// The most outputs of g that `batch` consecutive inputs read, from the first
// to the last (kernels::axis_gather::first_output / end_output), in O(in).
int64_t most_outputs_of_a_batch(const kernels::axis_gather &g, int64_t batch) {
    const size_t n = size_t(g.in);
    std::vector<int64_t> next(n + 1, g.in), prev(n + 1, -1); // nearest input with taps at/after i, before i
    for (size_t i = n; i-- > 0;) next[i] = g.begin[i] != g.begin[i + 1] ? int64_t(i) : next[i + 1];
    for (size_t i = 1; i <= n; ++i) prev[i] = g.begin[i - 1] != g.begin[i] ? int64_t(i) - 1 : prev[i - 1];
    int64_t most = 0;
    for (int64_t i = 0; i < g.in; ++i) {
        const int64_t i1 = std::min(g.in, i + batch), a = next[size_t(i)], b = prev[size_t(i1)];
        if (a >= i1) continue;
        most = std::max(most, g.output[size_t(g.begin[size_t(b) + 1] - 1)] + 1 - g.output[size_t(g.begin[size_t(a)])]);
    }
    return most;
}

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
        plan = std::move(q);
        return {};
    }
    const int last = nsp - 1, c_axis = p.channel_axis, w_axis = p.spatial_axes[size_t(last)];
    const int64_t C = dd.shape[size_t(c_axis)];

    const bool vector_ok = unit(dd.strides[size_t(c_axis)], C) && unit(ds.strides[size_t(c_axis)], C);
    const bool planar_ok = unit(dd.strides[size_t(w_axis)], dd.shape[size_t(w_axis)])
            && unit(ds.strides[size_t(w_axis)], ds.shape[size_t(w_axis)]);
    if (!vector_ok && !planar_ok)
        return "neither C nor the innermost spatial axis has stride 1 in both diff_dst and diff_src";

    interp_plan q;
    q.dt = dd.dt;
    q.vector_mode = vector_ok && (C > 1 || !planar_ok);
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
    if (q.vector_mode) {
        q.run = C;
    } else {
        q.c_count = C;
        q.dd_c = dd.strides[size_t(c_axis)];
        q.ds_c = ds.strides[size_t(c_axis)];
        q.run = q.out[size_t(last)];
    }
    // Runs of a level-k slice: axes k+1..last (vector) or k+1..last-1 (planar).
    const int run_axes_end = q.vector_mode ? nsp : last;
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
    if (!q.vector_mode) {
        q.inner_rows = make_row_gather(q.axes[size_t(last)]);
        if (nsp == 1) q.split_unit = 16;
    }
    const std::vector<uint8_t> &sym4 = q.grouped[0].sym4;
    if (!q.vector_mode && nsp == 2) {
        q.level0_batch = q.inner_rows.stride2 ? 8 : q.in[0];
        if (q.dt != data_type::f32) q.batch_rows = most_outputs_of_a_batch(q.axes[0], q.level0_batch);
    } else if (std::find(sym4.begin(), sym4.end(), 1) != sym4.end()) q.level0_batch = 4;
    q.fused_runs = q.vector_mode && nsp >= 2 && q.dt == data_type::f32
            && run_sum_gather_available(q.grouped[size_t(last)], q.run);
    if (q.fused_runs && nsp == 2) q.level0_batch = 1;
    if (nsp == 2) q.prefetch_bytes0 = q.fused_runs ? fused_runs_prefetch_bytes : prefetch_ahead_bytes;
    if (nsp >= 3 && q.dt == data_type::f32 && q.slice_floats[0] * int64_t(sizeof(float)) >= size_threshold(column_prefetch_min_bytes))
        q.column_prefetch_bytes = int64_t(2) << 10;
    if (q.dt == data_type::f32) {
        int64_t ds_plane = 1, dd_plane = 1;
        for (int k = 0; k < nsp; ++k) {
            ds_plane *= q.in[size_t(k)];
            dd_plane *= q.out[size_t(k)];
        }
        const int64_t plane_floats = ds_plane * (q.vector_mode ? q.run : 1); // C runs in vector mode
        const bool large = q.n_count * q.c_count * plane_floats * int64_t(sizeof(float)) >= size_threshold(interp_nontemporal_min_bytes);
        if (q.vector_mode) q.nontemporal = large && q.ds_sp[size_t(last)] == q.run;
        else if (nsp == 2) q.nontemporal = large && ds_plane >= dd_plane && q.ds_sp[0] == q.in[1];
    }
    plan = std::move(q);
    return {};
}

std::string interp_path_name(const interp_plan &p) {
    if (p.empty) return "interpolate:zero_sized";
    std::string s = std::string("interpolate:") + (p.vector_mode ? "channels_last" : "planar") + ":"
            + std::to_string(p.nsp) + "d";
    if (p.fused_runs) s += ":fused_runs";
    return s + (p.nontemporal ? ":nontemporal" : ":cached");
}

} // namespace bpg::tbb_backend
