// Reference BatchNormTrainingBackprop: one reduction group (a point of the
// non-reduced axes, i.e. one statistics element) at a time, two passes over
// its elements in f64: the sums, then diff_src. The math is kernels/bn_math.hpp.
// Its split (p.part) stops after the sums (local_sums) or starts from given
// ones (from_sums).
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
    const bool has_diff_src = !core::ends_with_sums(p.part);
    bool ok = p.reduced.size() == r && p.src.strides.size() == r && p.diff_dst.shape == p.src.shape
            && (!has_diff_src || (p.diff_src.shape == p.src.shape && p.diff_src.strides.size() == r))
            && p.diff_dst.strides.size() == r && p.mean_strides.size() == r
            && (!has_diff_src || p.variance_strides.size() == r) && (!p.gamma || p.gamma_strides.size() == r)
            && (!p.diff_gamma || p.diff_gamma_strides.size() == r)
            && (!p.diff_beta || p.diff_beta_strides.size() == r)
            && (p.part == core::bn_bwd_part::whole
                    || (p.sum_diff_dst && p.sum_diff_dst_strides.size() == r
                            && p.sum_diff_dst_centered_strides.size() == r));
    int64_t m = 1;
    for (size_t a = 0; ok && a < r; ++a) m *= s.member[a];
    // from_sums divides by the count over every process, at least the local one.
    ok = ok && (p.part == core::bn_bwd_part::from_sums ? p.reduce_count >= m : m == p.reduce_count);
    if (!ok)
        throw error(status::runtime_error,
                "reference BatchNormTrainingBackprop (op " + std::to_string(p.op_id)
                        + "): problem strides or reduce_count are inconsistent");
}

} // namespace

void batchnorm_bwd(const core::bn_bwd_problem &p, const void *src, const void *diff_dst,
        const void *mean, const void *variance, const void *gamma, void *diff_src,
        void *diff_gamma, void *diff_beta) {
    bn_buffers b;
    b.src = src, b.diff_dst = diff_dst, b.mean = mean, b.variance = variance, b.gamma = gamma;
    b.diff_src = diff_src, b.diff_gamma = diff_gamma, b.diff_beta = diff_beta;
    batchnorm_bwd(p, b);
}

void batchnorm_bwd(const core::bn_bwd_problem &p, const bn_buffers &b) {
    const split_shape shapes = split(p);
    check_consistent(p, shapes);
    if ((b.gamma && !p.gamma) || (b.diff_gamma && !p.diff_gamma) || (b.diff_beta && !p.diff_beta))
        throw error(status::runtime_error,
                "reference BatchNormTrainingBackprop (op " + std::to_string(p.op_id)
                        + "): a buffer was given for a tensor the problem does not describe");
    const dims member_strides = dense_strides(shapes.member); // only to drive the loop
    const dims group_strides = dense_strides(shapes.group);
    const double eps = double(p.epsilon);
    const bool local_sums = core::ends_with_sums(p.part), from_sums = p.part == core::bn_bwd_part::from_sums;
    const bool forward = p.part == core::bn_bwd_part::forward_sums;

    core::for_each_index(shapes.group, group_strides, [&](const dims &g, int64_t) {
        const double mu = core::load_as_double(b.mean, p.mean.dt, offset_of(g, p.mean_strides));
        const double var =
                local_sums ? 1.0 : core::load_as_double(b.variance, p.variance.dt, offset_of(g, p.variance_strides));
        const double gam = b.gamma ? core::load_as_double(b.gamma, p.gamma->dt, offset_of(g, p.gamma_strides)) : 1.0;
        const double inv = kernels::bn_inv_std(var, eps);

        dims idx(g.size());
        auto at = [&](const dims &m) -> const dims & {
            for (size_t a = 0; a < g.size(); ++a) idx[a] = g[a] + m[a];
            return idx;
        };
        auto load = [&](const void *t, const core::tensor_desc &d, const dims &m) {
            return core::load_as_double(t, d.dt, offset_of(at(m), d.strides));
        };

        // diff_beta's sum, diff_gamma's sum, and diff_gamma's sum before its
        // factor inv (the split's second sum).
        double sum_dd = 0.0, sum_dd_xhat = 0.0, sum_dd_centered = 0.0;
        if (from_sums) {
            sum_dd = core::load_as_double(b.sum_diff_dst, p.sum_diff_dst->dt, offset_of(g, p.sum_diff_dst_strides));
            sum_dd_centered = core::load_as_double(
                    b.sum_diff_dst_centered, p.sum_diff_dst_centered->dt, offset_of(g, p.sum_diff_dst_centered_strides));
            sum_dd_xhat = inv * sum_dd_centered;
        } else {
            core::for_each_index(shapes.member, member_strides, [&](const dims &m, int64_t) {
                const double x = load(b.src, p.src, m), dd = load(b.diff_dst, p.diff_dst, m);
                sum_dd += dd;
                sum_dd_xhat += dd * kernels::bn_xhat(x, mu, inv);
                sum_dd_centered += dd * (x - mu);
            });
        }
        if (local_sums) {
            // forward: sum (x - s) and sum (x - s)^2 with s = mean (the shift).
            double first = sum_dd, second = sum_dd_centered;
            if (forward) {
                first = 0.0, second = 0.0;
                core::for_each_index(shapes.member, member_strides, [&](const dims &m, int64_t) {
                    const double d = load(b.src, p.src, m) - mu;
                    first += d;
                    second += d * d;
                });
            }
            core::store_from_double(b.sum_diff_dst, p.sum_diff_dst->dt, offset_of(g, p.sum_diff_dst_strides), first);
            core::store_from_double(b.sum_diff_dst_centered, p.sum_diff_dst_centered->dt,
                    offset_of(g, p.sum_diff_dst_centered_strides), second);
            return;
        }

        const kernels::bn_update_coeffs<double> k = kernels::bn_coeffs(
                gam, inv, sum_dd, sum_dd_xhat, p.reduce_count, p.use_global_stats);
        core::for_each_index(shapes.member, member_strides, [&](const dims &m, int64_t) {
            const double x = load(b.src, p.src, m), dd = load(b.diff_dst, p.diff_dst, m);
            core::store_from_double(b.diff_src, p.diff_src.dt, offset_of(at(m), p.diff_src.strides),
                    kernels::bn_diff_src(k, dd, kernels::bn_xhat(x, mu, inv)));
        });

        if (b.diff_gamma)
            core::store_from_double(b.diff_gamma, p.diff_gamma->dt, offset_of(g, p.diff_gamma_strides), sum_dd_xhat);
        if (b.diff_beta)
            core::store_from_double(b.diff_beta, p.diff_beta->dt, offset_of(g, p.diff_beta_strides), sum_dd);
    });
}

} // namespace bpg::reference
