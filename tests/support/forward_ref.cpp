#include "support/forward_ref.hpp"

#include <cmath>
#include <stdexcept>

#include "support/problem_builders.hpp"

namespace bpg::test {
namespace {

// weights[o * in + i]: how much output o of this axis reads input i.
std::vector<double> axis_matrix(const core::interpolate_bwd_problem &p, size_t k) {
    const kernels::axis_map &m = p.axes[k];
    std::vector<double> w(size_t(m.out * m.in), 0.0);
    for (int64_t o = 0; o < m.out; ++o) {
        const kernels::source_coord s = kernels::source_coordinate(m, o);
        if (p.mode == core::interp_mode::nearest) {
            w[size_t(o * m.in + kernels::nearest_index(s, p.rounding, m.in))] = 1.0;
        } else {
            const kernels::linear_taps t = kernels::linear_taps_of(s, m.in);
            w[size_t(o * m.in + t.i0)] += t.w0;
            w[size_t(o * m.in + t.i1)] += t.w1;
        }
    }
    return w;
}

int64_t product(const dims &d, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t a = from; a < to; ++a) n *= d[a];
    return n;
}

} // namespace

void interpolate_fwd(const core::interpolate_bwd_problem &p, const std::vector<double> &src_dense,
        std::vector<double> &dst_dense) {
    dims shape = p.src.shape;
    std::vector<double> cur = src_dense;
    if (int64_t(cur.size()) != product(shape, 0, shape.size()))
        throw std::invalid_argument("interpolate_fwd: src size");
    for (size_t k = 0; k < p.spatial_axes.size(); ++k) {
        const size_t a = size_t(p.spatial_axes[k]);
        const int64_t in = shape[a], out = p.diff_dst.shape[a];
        const std::vector<double> w = axis_matrix(p, k);
        const int64_t outer = product(shape, 0, a), inner = product(shape, a + 1, shape.size());
        std::vector<double> next(size_t(outer * out * inner), 0.0);
        for (int64_t u = 0; u < outer; ++u)
            for (int64_t o = 0; o < out; ++o)
                for (int64_t v = 0; v < inner; ++v) {
                    double sum = 0.0;
                    for (int64_t i = 0; i < in; ++i)
                        sum += w[size_t(o * in + i)] * cur[size_t((u * in + i) * inner + v)];
                    next[size_t((u * out + o) * inner + v)] = sum;
                }
        cur.swap(next);
        shape[a] = out;
    }
    dst_dense.swap(cur);
}

namespace {

// Strides that map a src index to its statistics element (dense in the group
// shape): the group's dense strides with 0 on reduced axes.
dims group_strides(const core::bn_bwd_problem &p) {
    dims s = dense_strides(bn_group_shape(p));
    for (size_t a = 0; a < s.size(); ++a)
        if (p.reduced[a]) s[a] = 0;
    return s;
}

size_t group_count(const core::bn_bwd_problem &p) {
    size_t n = 1;
    for (dim d : bn_group_shape(p)) n *= size_t(d);
    return n;
}

} // namespace

void bn_batch_stats(const core::bn_bwd_problem &p, const std::vector<double> &src_dense,
        std::vector<double> &mean, std::vector<double> &var) {
    const dims gs = group_strides(p);
    const double m = double(p.reduce_count);
    mean.assign(group_count(p), 0.0);
    var.assign(group_count(p), 0.0);
    size_t i = 0;
    core::for_each_index(p.src.shape, gs,
            [&](const dims &, int64_t g) { mean[size_t(g)] += src_dense[i++]; });
    for (double &x : mean) x /= m;
    i = 0;
    core::for_each_index(p.src.shape, gs, [&](const dims &, int64_t g) {
        const double d = src_dense[i++] - mean[size_t(g)];
        var[size_t(g)] += d * d;
    });
    for (double &x : var) x /= m;
}

void batchnorm_fwd(const core::bn_bwd_problem &p, const std::vector<double> &src_dense,
        const std::vector<double> &gamma, const std::vector<double> &beta,
        std::vector<double> &dst_dense, const std::vector<double> *mean,
        const std::vector<double> *var) {
    std::vector<double> batch_mean, batch_var;
    if (!mean || !var) {
        bn_batch_stats(p, src_dense, batch_mean, batch_var);
        mean = &batch_mean;
        var = &batch_var;
    }
    const double eps = double(p.epsilon);
    dst_dense.assign(src_dense.size(), 0.0);
    size_t i = 0;
    core::for_each_index(p.src.shape, group_strides(p), [&](const dims &, int64_t g) {
        const size_t c = size_t(g);
        const double scale = gamma.empty() ? 1.0 : gamma[c];
        const double shift = beta.empty() ? 0.0 : beta[c];
        dst_dense[i] = scale * (src_dense[i] - (*mean)[c]) / std::sqrt((*var)[c] + eps) + shift;
        ++i;
    });
}

} // namespace bpg::test
