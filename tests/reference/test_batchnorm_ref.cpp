// Reference BatchNormTrainingBackprop against finite differences of an
// independent f64 forward (tests/support/forward_ref), for channel-mode
// statistics in both layouts and rank-matched (DirectML) statistics shapes;
// plus dtypes, strides, eps = 0 and optional inputs/outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "reference/reference.hpp"
#include "support/forward_ref.hpp"
#include "support/problem_builders.hpp"

namespace bpg {
namespace {

using test::layout;

struct bn_outputs {
    std::vector<double> diff_src, diff_gamma, diff_beta;
};

// Inputs are dense vectors: data in src's shape, statistics in
// bn_group_shape(p) (the same order as the statistics tensor's own shape).
struct bn_inputs {
    std::vector<double> src, diff_dst, mean, var, gamma; // gamma empty: absent
};

bn_outputs run_bwd(const core::bn_bwd_problem &p, const bn_inputs &in) {
    test::buffer src(p.src, in.src), dd(p.diff_dst, in.diff_dst);
    test::buffer mean(p.mean, in.mean), var(p.variance, in.var);
    test::buffer ds(p.diff_src);
    std::optional<test::buffer> gamma, dg, db;
    if (p.gamma) gamma.emplace(*p.gamma, in.gamma);
    if (p.diff_gamma) dg.emplace(*p.diff_gamma);
    if (p.diff_beta) db.emplace(*p.diff_beta);
    reference::batchnorm_bwd(p, src.data(), dd.data(), mean.data(), var.data(),
            gamma ? gamma->data() : nullptr, ds.data(), dg ? dg->data() : nullptr,
            db ? db->data() : nullptr);
    EXPECT_TRUE(ds.padding_intact());
    bn_outputs out;
    out.diff_src = ds.dense();
    if (dg) out.diff_gamma = dg->dense();
    if (db) out.diff_beta = db->dense();
    return out;
}

// Rounded to f32 so a buffer holds what the f64 forward sees.
std::vector<double> random_values(size_t n, double lo, double hi, std::mt19937 &rng) {
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<double> v(n);
    for (double &x : v) x = double(float(u(rng)));
    return v;
}

size_t count_of(const dims &d) {
    size_t n = 1;
    for (dim x : d) n *= size_t(x);
    return n;
}

// |got - want| <= rtol * (|want| + scale): scale is the largest |want| of the
// tensor, so elements that cancel to near 0 are judged against the tensor's
// size rather than their own (the f32 rounding of mean and variance alone
// moves every element by ~1e-7 of the scale).
void expect_close(const std::vector<double> &got, const std::vector<double> &want, double rtol,
        const char *what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    double scale = 0.0;
    for (double w : want) scale = std::max(scale, std::fabs(w));
    for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], rtol * (std::fabs(want[i]) + scale)) << what << "[" << i << "]";
}

// Central difference of f at x along every coordinate of v (v is restored).
template <typename F>
std::vector<double> central_diff(std::vector<double> &v, F &&f, double h = 1e-5) {
    std::vector<double> d(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        const double keep = v[i];
        v[i] = keep + h;
        const double up = f();
        v[i] = keep - h;
        const double down = f();
        v[i] = keep;
        d[i] = (up - down) / (2 * h);
    }
    return d;
}

// Loss L = sum(w * y) with w = diff_dst, so dL/dsrc = diff_src, dL/dgamma =
// diff_gamma, dL/dbeta = diff_beta. Training mode: the forward recomputes the
// batch statistics, and the backward gets them (rounded to f32) as mean/var.
void check_gradients(const test::bn_spec &spec, std::mt19937 &rng) {
    const core::bn_bwd_problem p = test::make_bn_problem(spec);
    const size_t n = count_of(spec.src_shape), c = count_of(test::bn_group_shape(p));
    bn_inputs in;
    in.src = random_values(n, -2.0, 2.0, rng);
    in.diff_dst = random_values(n, -1.0, 1.0, rng);
    std::vector<double> gamma = random_values(c, 0.5, 1.5, rng);
    std::vector<double> beta = random_values(c, -0.5, 0.5, rng);
    if (spec.has_gamma) in.gamma = gamma;
    else gamma.assign(c, 1.0);

    std::vector<double> mean, var;
    if (spec.use_global_stats) {
        mean = random_values(c, -0.5, 0.5, rng);
        var = random_values(c, 0.5, 2.0, rng);
    } else {
        test::bn_batch_stats(p, in.src, mean, var);
        for (double &m : mean) m = double(float(m));
        for (double &v : var) v = double(float(v));
    }
    in.mean = mean;
    in.var = var;

    std::vector<double> x = in.src;
    auto loss = [&]() {
        std::vector<double> y;
        test::batchnorm_fwd(p, x, gamma, beta, y, spec.use_global_stats ? &mean : nullptr,
                spec.use_global_stats ? &var : nullptr);
        double l = 0.0;
        for (size_t i = 0; i < y.size(); ++i) l += in.diff_dst[i] * y[i];
        return l;
    };
    const bn_outputs got = run_bwd(p, in);
    expect_close(got.diff_src, central_diff(x, loss), 1e-6, "diff_src");
    if (spec.has_diff_scale_shift) {
        expect_close(got.diff_gamma, central_diff(gamma, loss), 1e-6, "diff_gamma");
        expect_close(got.diff_beta, central_diff(beta, loss), 1e-6, "diff_beta");
    }
}

test::bn_spec channel_spec(const dims &shape, layout fmt, bool global) {
    test::bn_spec s;
    s.src_shape = shape;
    s.fmt = fmt;
    s.stat_shape = {shape[fmt == layout::ncx ? 1 : shape.size() - 1]};
    s.use_global_stats = global;
    return s;
}

const std::vector<dims> channel_shapes = {{5, 3}, {2, 3, 4}, {2, 3, 2, 3}, {2, 3, 2, 2, 2}};

TEST(BatchNormRef, TrainingMatchesFiniteDifferencesChannelMode) {
    std::mt19937 rng(1);
    for (layout fmt : {layout::ncx, layout::nxc})
        for (const dims &shape : channel_shapes) {
            SCOPED_TRACE(testing::Message() << "layout " << int(fmt) << " rank " << shape.size());
            check_gradients(channel_spec(shape, fmt, false), rng);
        }
}

TEST(BatchNormRef, GlobalStatsMatchFiniteDifferencesChannelMode) {
    std::mt19937 rng(2);
    for (layout fmt : {layout::ncx, layout::nxc})
        for (const dims &shape : channel_shapes) {
            SCOPED_TRACE(testing::Message() << "layout " << int(fmt) << " rank " << shape.size());
            check_gradients(channel_spec(shape, fmt, true), rng);
        }
}

// DirectML: statistics of src's rank, reduced over their size-1 axes.
TEST(BatchNormRef, RankMatchedStatisticsMatchFiniteDifferences) {
    const std::vector<std::pair<dims, dims>> cases = {
            {{2, 3, 4, 5}, {1, 3, 1, 5}},
            {{2, 3, 4, 5}, {2, 1, 1, 1}},
            {{2, 3, 4}, {1, 1, 1}},
            {{3, 4}, {3, 1}},
            {{1, 2, 1, 2, 1, 2, 1, 2}, {1, 2, 1, 1, 1, 2, 1, 1}},
    };
    std::mt19937 rng(3);
    for (bool global : {false, true})
        for (const auto &c : cases) {
            test::bn_spec s;
            s.src_shape = c.first;
            s.stat_shape = c.second;
            s.fmt = layout::ncx; // ignored in this mode: pick the one that would differ
            s.use_global_stats = global;
            SCOPED_TRACE(testing::Message() << "global " << global << " rank " << c.first.size());
            check_gradients(s, rng);
        }
}

TEST(BatchNormRef, GammaAbsentMeansOne) {
    std::mt19937 rng(4);
    for (bool global : {false, true}) {
        auto s = channel_spec({2, 3, 4}, layout::ncx, global);
        s.has_gamma = false;
        check_gradients(s, rng);
    }
}

// The full training gradient whatever the number of outputs (oneDNN would
// switch to the global-stats formula when only diff_src is requested).
TEST(BatchNormRef, DiffSrcIsTheTrainingGradientWithoutScaleShiftOutputs) {
    std::mt19937 rng(5);
    auto with = channel_spec({2, 3, 4}, layout::nxc, false);
    auto without = with;
    without.has_diff_scale_shift = false;
    const auto p_with = test::make_bn_problem(with), p_without = test::make_bn_problem(without);
    bn_inputs in;
    in.src = random_values(24, -2, 2, rng);
    in.diff_dst = random_values(24, -1, 1, rng);
    in.gamma = random_values(4, 0.5, 1.5, rng); // NXC: C is the last axis
    test::bn_batch_stats(p_with, in.src, in.mean, in.var);
    const bn_outputs a = run_bwd(p_with, in), b = run_bwd(p_without, in);
    EXPECT_EQ(a.diff_src, b.diff_src);
    EXPECT_TRUE(b.diff_gamma.empty());
    check_gradients(without, rng);
}

TEST(BatchNormRef, StridedTensorsGiveTheDenseValues) {
    std::mt19937 rng(6);
    const dims shape{2, 3, 4, 5}; // NCX
    bn_inputs in;
    in.src = random_values(120, -2, 2, rng);
    in.diff_dst = random_values(120, -1, 1, rng);
    in.gamma = random_values(3, 0.5, 1.5, rng);
    auto dense = channel_spec(shape, layout::ncx, false);
    test::bn_batch_stats(test::make_bn_problem(dense), in.src, in.mean, in.var);
    const bn_outputs want = run_bwd(test::make_bn_problem(dense), in);

    auto channels_last = dense;
    channels_last.src_strides = test::permuted_strides(shape, {0, 2, 3, 1});
    channels_last.diff_dst_strides = test::padded_strides(shape, 2);
    channels_last.diff_src_strides = test::permuted_strides(shape, {3, 2, 1, 0});
    const bn_outputs got = run_bwd(test::make_bn_problem(channels_last), in);
    EXPECT_EQ(got.diff_src, want.diff_src);
    EXPECT_EQ(got.diff_gamma, want.diff_gamma);
    EXPECT_EQ(got.diff_beta, want.diff_beta);
}

// Statistics tensors may be strided too (the problem carries their strides).
TEST(BatchNormRef, StridedStatisticsAreAddressedThroughStatStrides) {
    std::mt19937 rng(7);
    auto spec = channel_spec({2, 3, 4}, layout::nxc, false);
    const auto dense = test::make_bn_problem(spec);
    bn_inputs in;
    in.src = random_values(24, -2, 2, rng);
    in.diff_dst = random_values(24, -1, 1, rng);
    in.gamma = random_values(4, 0.5, 1.5, rng);
    test::bn_batch_stats(dense, in.src, in.mean, in.var);
    const bn_outputs want = run_bwd(dense, in);

    // Every statistics tensor with stride 3 (a column of a 4x3 matrix).
    auto p = dense;
    for (core::tensor_desc *d : {&p.mean, &p.variance, &*p.gamma, &*p.diff_gamma, &*p.diff_beta})
        d->strides = {3};
    for (dims *s : {&p.mean_strides, &p.variance_strides, &p.gamma_strides,
                 &p.diff_gamma_strides, &p.diff_beta_strides})
        *s = {0, 0, 3};
    const bn_outputs got = run_bwd(p, in);
    EXPECT_EQ(got.diff_src, want.diff_src);
    EXPECT_EQ(got.diff_gamma, want.diff_gamma);
    EXPECT_EQ(got.diff_beta, want.diff_beta);
}

double round_to(data_type dt, double v) {
    switch (dt) {
        case data_type::bf16: return kernels::bf16_to_f32(kernels::f32_to_bf16(float(v)));
        case data_type::f16: return kernels::f16_to_f32(kernels::f32_to_f16(float(v)));
        default: return double(float(v));
    }
}

std::vector<double> rounded(data_type dt, std::vector<double> v) {
    for (double &x : v) x = round_to(dt, x);
    return v;
}

// 16-bit data (and bf16 statistics): the outputs are the f64 results rounded
// once, i.e. the f32 run on the same values, rounded to the 16-bit type.
TEST(BatchNormRef, SixteenBitDataAndBf16StatsAreTheF64ResultRounded) {
    struct dtypes {
        data_type data, stats;
    };
    std::mt19937 rng(8);
    for (dtypes t : {dtypes{data_type::bf16, data_type::f32}, dtypes{data_type::f16, data_type::f32},
                 dtypes{data_type::bf16, data_type::bf16}})
        for (bool global : {false, true}) {
            auto s32 = channel_spec({2, 3, 5}, layout::ncx, global);
            auto s16 = s32;
            s16.dt = t.data;
            s16.stat_dt = t.stats;
            const auto p32 = test::make_bn_problem(s32), p16 = test::make_bn_problem(s16);
            bn_inputs in;
            in.src = rounded(t.data, random_values(30, -2, 2, rng));
            in.diff_dst = rounded(t.data, random_values(30, -1, 1, rng));
            in.gamma = rounded(t.stats, random_values(3, 0.5, 1.5, rng));
            test::bn_batch_stats(p32, in.src, in.mean, in.var);
            in.mean = rounded(t.stats, in.mean);
            in.var = rounded(t.stats, in.var);
            const bn_outputs a = run_bwd(p32, in), b = run_bwd(p16, in);
            EXPECT_EQ(b.diff_src, rounded(t.data, a.diff_src));
            EXPECT_EQ(b.diff_gamma, rounded(t.stats, a.diff_gamma));
            EXPECT_EQ(b.diff_beta, rounded(t.stats, a.diff_beta));
        }
}

// eps = 0 with zero variance: inv = inf, and the results are what the
// formulas give in IEEE arithmetic, element by element.
TEST(BatchNormRef, ZeroVarianceWithZeroEpsilonFollowsTheFormula) {
    const double inf = std::numeric_limits<double>::infinity();
    auto spec = channel_spec({2, 2}, layout::nxc, true);
    spec.epsilon = 0.f;
    bn_inputs in;
    // Channel 0: x = {1, 2}, mean 0; channel 1: x = mean = 3.
    in.src = {1, 3, 2, 3};
    in.diff_dst = {1, 0, 2, -1};
    in.mean = {0, 3};
    in.var = {0, 0};
    in.gamma = {2, 2};

    // use_global_stats: diff_src = gamma * inf * dd, so +-inf where dd != 0 and
    // NaN (inf * 0) where dd == 0; never NaN from xhat.
    const bn_outputs g = run_bwd(test::make_bn_problem(spec), in);
    EXPECT_EQ(g.diff_src[0], inf);
    EXPECT_TRUE(std::isnan(g.diff_src[1]));
    EXPECT_EQ(g.diff_src[2], inf);
    EXPECT_EQ(g.diff_src[3], -inf);
    // diff_beta = sum dd; diff_gamma = sum dd * xhat: channel 0 xhat = +inf
    // twice -> +inf; channel 1 xhat = 0 * inf = NaN.
    EXPECT_EQ(g.diff_beta, (std::vector<double>{3, -1}));
    EXPECT_EQ(g.diff_gamma[0], inf);
    EXPECT_TRUE(std::isnan(g.diff_gamma[1]));

    // Training: channel 0 diff_src = 2 inf (dd - 3/2 - inf * inf / 2) = -inf;
    // channel 1 has NaN in xhat and slope, so NaN.
    spec.use_global_stats = false;
    const bn_outputs t = run_bwd(test::make_bn_problem(spec), in);
    EXPECT_EQ(t.diff_src[0], -inf);
    EXPECT_EQ(t.diff_src[2], -inf);
    EXPECT_TRUE(std::isnan(t.diff_src[1]));
    EXPECT_TRUE(std::isnan(t.diff_src[3]));
    EXPECT_EQ(t.diff_beta, g.diff_beta);
}

// A hand-computed channel, to pin the formula itself and not only its
// consistency with the forward: x = {-1, -1, 1, 1}, mean 0, var 1, eps 0, gamma 2.
TEST(BatchNormRef, HandComputedChannel) {
    auto spec = channel_spec({4, 1}, layout::nxc, false);
    spec.epsilon = 0.f;
    bn_inputs in{{-1, -1, 1, 1}, {1, 2, 3, 6}, {0}, {1}, {2}};
    // xhat = x; diff_beta = 12; diff_gamma = -1 - 2 + 3 + 6 = 6; M = 4
    // diff_src = 2 * (dd - 3 - xhat * 1.5) = 2 * {-0.5, 0.5, -1.5, 1.5}
    bn_outputs t = run_bwd(test::make_bn_problem(spec), in);
    EXPECT_EQ(t.diff_src, (std::vector<double>{-1, 1, -3, 3}));
    EXPECT_EQ(t.diff_beta, std::vector<double>{12});
    EXPECT_EQ(t.diff_gamma, std::vector<double>{6});
    spec.use_global_stats = true; // diff_src = gamma * dd
    t = run_bwd(test::make_bn_problem(spec), in);
    EXPECT_EQ(t.diff_src, (std::vector<double>{2, 4, 6, 12}));
}

TEST(BatchNormRef, InconsistentProblemIsRefused) {
    auto p = test::make_bn_problem(channel_spec({2, 3}, layout::nxc, false));
    p.reduce_count = 3; // M is 2 for this shape
    std::vector<float> x(6), stats(3), out(6), dstats(3);
    EXPECT_THROW(reference::batchnorm_bwd(p, x.data(), x.data(), stats.data(), stats.data(),
                         stats.data(), out.data(), dstats.data(), dstats.data()),
            error);
}

} // namespace
} // namespace bpg
