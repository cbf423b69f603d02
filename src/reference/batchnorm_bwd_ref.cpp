// Reference BatchNormTrainingBackprop: one reduction group (a point of the
// non-reduced axes, i.e. one statistics element) at a time, two passes over
// its elements in f64: the sums, then diff_src. The math is kernels/bn_math.hpp.
//
// Channel mode and the rank-matched (DirectML) statistics shapes are the same
// code: the problem says which axes are reduced, and gives every statistics
// tensor's strides in src's rank with 0 on reduced axes.
#include <string>

#include "bpg/status.hpp"
#include "kernels/bn_math.hpp"
#include "reference/reference.hpp"

namespace bpg::reference {
namespace {

int64_t offset_of(const dims &idx, const dims &strides) {
    int64_t off = 0;
    for (size_t a = 0; a < idx.size(); ++a) off += idx[a] * strides[a];
    return off;
}

// The shape split in two: groups (reduced axes set to 1) and the elements of
// one group (non-reduced axes set to 1). A src index is the sum of the two.
struct split_shape {
    dims group, member;
};

split_shape split(const core::bn_bwd_problem &p) {
    split_shape s{p.src.shape, p.src.shape};
    for (size_t a = 0; a < p.src.shape.size(); ++a) (p.reduced[a] ? s.group : s.member)[a] = 1;
    return s;
}

// Inconsistent strides or counts would read out of bounds or divide by the
// wrong M; compile() should never produce them, so this is a bug check.
void check_consistent(const core::bn_bwd_problem &p, const split_shape &s) {
    const size_t r = p.src.shape.size();
    bool ok = p.reduced.size() == r && p.src.strides.size() == r && p.diff_dst.shape == p.src.shape
            && p.diff_src.shape == p.src.shape && p.diff_dst.strides.size() == r
            && p.diff_src.strides.size() == r && p.mean_strides.size() == r
            && p.variance_strides.size() == r && (!p.gamma || p.gamma_strides.size() == r)
            && (!p.diff_gamma || p.diff_gamma_strides.size() == r)
            && (!p.diff_beta || p.diff_beta_strides.size() == r);
    int64_t m = 1;
    for (size_t a = 0; ok && a < r; ++a) m *= s.member[a];
    ok = ok && m == p.reduce_count;
    if (!ok)
        throw error(status::runtime_error,
                "reference BatchNormTrainingBackprop (op " + std::to_string(p.op_id)
                        + "): problem strides or reduce_count are inconsistent");
}

} // namespace

void batchnorm_bwd(const core::bn_bwd_problem &p, const void *src, const void *diff_dst,
        const void *mean, const void *variance, const void *gamma, void *diff_src,
        void *diff_gamma, void *diff_beta) {
    const split_shape shapes = split(p);
    check_consistent(p, shapes);
    if ((gamma && !p.gamma) || (diff_gamma && !p.diff_gamma) || (diff_beta && !p.diff_beta))
        throw error(status::runtime_error,
                "reference BatchNormTrainingBackprop (op " + std::to_string(p.op_id)
                        + "): a buffer was given for a tensor the problem does not describe");
    const dims member_strides = dense_strides(shapes.member); // only to drive the loop
    const dims group_strides = dense_strides(shapes.group);
    const double eps = double(p.epsilon);

    core::for_each_index(shapes.group, group_strides, [&](const dims &g, int64_t) {
        const double mu = core::load_as_double(mean, p.mean.dt, offset_of(g, p.mean_strides));
        const double var =
                core::load_as_double(variance, p.variance.dt, offset_of(g, p.variance_strides));
        const double gam = gamma ? core::load_as_double(gamma, p.gamma->dt,
                                           offset_of(g, p.gamma_strides))
                                 : 1.0;
        const double inv = kernels::bn_inv_std(var, eps);

        dims idx(g.size());
        auto at = [&](const dims &m) -> const dims & {
            for (size_t a = 0; a < g.size(); ++a) idx[a] = g[a] + m[a];
            return idx;
        };

        double sum_dd = 0.0, sum_dd_xhat = 0.0;
        core::for_each_index(shapes.member, member_strides, [&](const dims &m, int64_t) {
            const dims &i = at(m);
            const double x = core::load_as_double(src, p.src.dt, offset_of(i, p.src.strides));
            const double dd =
                    core::load_as_double(diff_dst, p.diff_dst.dt, offset_of(i, p.diff_dst.strides));
            sum_dd += dd;
            sum_dd_xhat += dd * kernels::bn_xhat(x, mu, inv);
        });

        const kernels::bn_update_coeffs<double> k = kernels::bn_coeffs(
                gam, inv, sum_dd, sum_dd_xhat, p.reduce_count, p.use_global_stats);
        core::for_each_index(shapes.member, member_strides, [&](const dims &m, int64_t) {
            const dims &i = at(m);
            const double x = core::load_as_double(src, p.src.dt, offset_of(i, p.src.strides));
            const double dd =
                    core::load_as_double(diff_dst, p.diff_dst.dt, offset_of(i, p.diff_dst.strides));
            core::store_from_double(diff_src, p.diff_src.dt, offset_of(i, p.diff_src.strides),
                    kernels::bn_diff_src(k, dd, kernels::bn_xhat(x, mu, inv)));
        });

        if (diff_gamma)
            core::store_from_double(diff_gamma, p.diff_gamma->dt,
                    offset_of(g, p.diff_gamma_strides), sum_dd_xhat);
        if (diff_beta)
            core::store_from_double(diff_beta, p.diff_beta->dt,
                    offset_of(g, p.diff_beta_strides), sum_dd);
    });
}

} // namespace bpg::reference
