// Reference InterpolateBackprop: a scatter of every diff_dst element into the
// input elements its forward output read, with the forward weights.
//
// Interpolation is separable, so each spatial axis gets a small table: for
// every output index, the input indices it reads and their weights (one tap
// for nearest, two for linear). All coordinate math comes from
// kernels/interp_coords.hpp; this file only combines the per-axis taps.
#include <array>
#include <string>
#include <vector>

#include "bpg/status.hpp"
#include "core/allocate.hpp"
#include "kernels/interp_coords.hpp"
#include "reference/reference.hpp"

namespace bpg::reference {
namespace {

struct tap {
    int64_t index = 0;
    double weight = 0.0;
};

// Taps of one output index on one axis: nearest uses only the first.
using output_taps = std::array<tap, 2>;

core::checked_vector<output_taps> axis_taps(const core::interpolate_bwd_problem &p,
        const kernels::axis_map &m) {
    core::checked_vector<output_taps> table(size_t(m.out));
    for (int64_t o = 0; o < m.out; ++o) {
        const kernels::source_coord s = kernels::source_coordinate(m, o);
        output_taps &t = table[size_t(o)];
        if (p.mode == core::interp_mode::nearest) {
            t[0] = {kernels::nearest_index(s, p.rounding, m.in), 1.0};
        } else {
            const kernels::linear_taps lt = kernels::linear_taps_of(s, m.in);
            // i0 == i1 at the upper edge: both weights land on one element,
            // which the accumulation below handles without a special case.
            t[0] = {lt.i0, lt.w0};
            t[1] = {lt.i1, lt.w1};
        }
    }
    return table;
}

// A problem that does not match its own shapes would make the scatter write
// out of bounds; compile() should never produce one, so this is a bug check.
void check_consistent(const core::interpolate_bwd_problem &p) {
    const int r = p.diff_src.ndims();
    bool ok = p.diff_dst.ndims() == r && p.axes.size() == p.spatial_axes.size()
            && int(p.diff_src.strides.size()) == r && int(p.diff_dst.strides.size()) == r;
    std::vector<bool> spatial(size_t(r > 0 ? r : 0), false);
    for (size_t k = 0; ok && k < p.spatial_axes.size(); ++k) {
        const int a = p.spatial_axes[k];
        ok = a >= 0 && a < r && !spatial[size_t(a)] && p.diff_src.shape[a] == p.axes[k].in
                && p.diff_dst.shape[a] == p.axes[k].out
                && (p.axes[k].in >= 1 || p.axes[k].out == 0); // outputs need an input
        if (ok) spatial[size_t(a)] = true;
    }
    for (int a = 0; ok && a < r; ++a)
        if (!spatial[size_t(a)]) ok = p.diff_src.shape[a] == p.diff_dst.shape[a];
    if (!ok)
        throw error(status::runtime_error,
                "reference InterpolateBackprop (op " + std::to_string(p.op_id)
                        + "): problem shapes are inconsistent with its axis maps");
}

} // namespace

void interpolate_bwd(const core::interpolate_bwd_problem &p, const void *diff_dst,
        void *diff_src) {
    check_consistent(p);
    const size_t nsp = p.spatial_axes.size();
    core::checked_vector<core::checked_vector<output_taps>> tables;
    for (size_t k = 0; k < nsp; ++k) tables.push_back(axis_taps(p, p.axes[k]));
    const int taps_per_axis = p.mode == core::interp_mode::nearest ? 1 : 2;
    int64_t combos = 1;
    for (size_t k = 0; k < nsp; ++k) combos *= taps_per_axis;

    // Accumulate in f64 into a dense buffer shaped like diff_src: every input
    // element starts at 0, so inputs no output reads end up 0.
    const dims acc_strides = dense_strides(p.diff_src.shape);
    core::checked_vector<double> acc(size_t(p.diff_src.element_count()), 0.0);

    core::for_each_index(p.diff_dst.shape, p.diff_dst.strides,
            [&](const dims &idx, int64_t off) {
                const double g = core::load_as_double(diff_dst, p.diff_dst.dt, off);
                // Non-spatial axes (N, C) map one to one; spatial ones via taps.
                int64_t base = 0;
                for (int a = 0; a < int(idx.size()); ++a) base += idx[a] * acc_strides[a];
                for (size_t k = 0; k < nsp; ++k)
                    base -= idx[p.spatial_axes[k]] * acc_strides[p.spatial_axes[k]];
                for (int64_t c = 0; c < combos; ++c) {
                    int64_t at = base;
                    double w = g;
                    bool reads = true;
                    for (size_t k = 0; k < nsp && reads; ++k) {
                        const int a = p.spatial_axes[k];
                        const int which = taps_per_axis == 1 ? 0 : int((c >> k) & 1);
                        const tap &t = tables[k][size_t(idx[a])][size_t(which)];
                        at += t.index * acc_strides[a];
                        w *= t.weight;
                        // A zero weight means the forward output does not read
                        // this input: a NaN/inf in diff_dst must not reach it.
                        reads = t.weight != 0.0;
                    }
                    if (reads) acc[size_t(at)] += w;
                }
            });

    core::for_each_index(p.diff_src.shape, p.diff_src.strides,
            [&](const dims &idx, int64_t off) {
                int64_t at = 0;
                for (int a = 0; a < int(idx.size()); ++a) at += idx[a] * acc_strides[a];
                core::store_from_double(diff_src, p.diff_src.dt, off, acc[size_t(at)]);
            });
}

} // namespace bpg::reference
