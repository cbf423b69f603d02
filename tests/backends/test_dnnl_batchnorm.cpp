// The oneDNN backend's BatchNormTrainingBackprop (batch_normalization_backward)
// against the reference backend: ranks 2 to 5, NCX and NXC (and NCX with
// channels-last strides), the DirectML rank-matched statistics with one kept
// axis, gamma or not, 1 or 3 outputs (the full training gradient either way),
// use_global_stats, f32 and bf16 data; eps = 0 with zero variances under
// use_global_stats; zero-size tensors; every refusal; concurrency. mean and
// variance are random, unrelated to src: the agreement shows that oneDNN's
// backward uses them as given and never recomputes them.
#include <cmath>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "backends/backend.hpp"
#include "backends/dnnl/dnnl_backend.hpp"
#include "backends/dnnl/dnnl_compat.hpp"
#include "bpg/graph.hpp"
#include "support/dnnl_cpu.hpp"
#include "support/expect_error.hpp"
#include "support/problem_builders.hpp"

namespace bpg::test {
namespace {

const backends::backend &dnnl_be() { return *backends::find_backend(backend_kind::dnnl); }
const backends::backend &ref_be() { return *backends::find_backend(backend_kind::ref); }

backends::partition_problem single(const core::bn_bwd_problem &p) { return {"bn_bwd", {p}, {}}; }

struct bn_inputs {
    std::vector<double> src, diff_dst, mean, variance, gamma;
};

bn_inputs random_inputs(const core::bn_bwd_problem &p, uint32_t seed, bool zero_variance = false) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    // Dyadic values (k/64) keep bf16 inputs exact, so both backends read the same numbers.
    auto dyadic = [&] { return std::round(u(rng) * 128) / 64; };
    bn_inputs in;
    const int64_t n = p.src.element_count(), c = p.mean.element_count();
    for (int64_t i = 0; i < n; ++i) in.src.push_back(dyadic()), in.diff_dst.push_back(dyadic());
    for (int64_t i = 0; i < c; ++i) {
        in.mean.push_back(dyadic() / 4);
        // With zero_variance, every other channel has variance 0 and some src equal its mean.
        in.variance.push_back(zero_variance && i % 2 == 0 ? 0.0 : 0.25 + std::abs(dyadic()));
        in.gamma.push_back(1 + dyadic() / 2);
    }
    if (zero_variance)
        for (size_t i = 0; i < in.src.size(); i += 3) in.src[i] = 0; // meets mean 0 channels below
    if (zero_variance)
        for (size_t i = 0; i < in.mean.size(); i += 2) in.mean[i] = 0;
    return in;
}

struct bn_outputs {
    std::vector<double> diff_src, diff_gamma, diff_beta;
};

bn_outputs run_kernel(const backends::kernel &k, const core::bn_bwd_problem &p, const bn_inputs &in) {
    buffer src(p.src, in.src), dd(p.diff_dst, in.diff_dst), mean(p.mean, in.mean), var(p.variance, in.variance),
            ds(p.diff_src);
    backends::buffer_map m {{p.src.id, src.data()}, {p.diff_dst.id, dd.data()}, {p.mean.id, mean.data()},
            {p.variance.id, var.data()}, {p.diff_src.id, ds.data()}};
    std::unique_ptr<buffer> gamma, dg, db;
    if (p.gamma) {
        gamma = std::make_unique<buffer>(*p.gamma, in.gamma);
        m[p.gamma->id] = gamma->data();
    }
    if (p.diff_gamma) {
        dg = std::make_unique<buffer>(*p.diff_gamma);
        db = std::make_unique<buffer>(*p.diff_beta);
        m[p.diff_gamma->id] = dg->data();
        m[p.diff_beta->id] = db->data();
    }
    k.execute(m);
    EXPECT_TRUE(ds.padding_intact());
    bn_outputs out {ds.dense(), {}, {}};
    if (dg) out.diff_gamma = dg->dense(), out.diff_beta = db->dense();
    return out;
}

bn_outputs run(const backends::backend &b, const core::bn_bwd_problem &p, const bn_inputs &in) {
    return run_kernel(*b.compile(single(p)), p, in);
}

// Scales for the tolerance, in f64: per diff_src element
// |gamma inv| (|dd| + sum|dd|/M + |xhat| sum|dd xhat|/M); per channel
// sum|dd xhat| and sum|dd|.
struct scales {
    std::vector<double> diff_src, diff_gamma, diff_beta;
};

scales magnitude_scales(const core::bn_bwd_problem &p, const bn_inputs &in) {
    const dims group = bn_group_shape(p), gs = dense_strides(group);
    const int64_t groups = p.mean.element_count();
    auto group_of = [&](const dims &idx) {
        int64_t g = 0;
        for (size_t a = 0; a < idx.size(); ++a) g += (p.reduced[a] ? 0 : idx[a]) * gs[a];
        return size_t(g);
    };
    std::vector<double> sum_dd(size_t(groups), 0), sum_dx(size_t(groups), 0);
    auto inv = [&](size_t g) { return 1 / std::sqrt(in.variance[g] + double(p.epsilon)); };
    size_t k = 0;
    core::for_each_index(p.src.shape, dense_strides(p.src.shape), [&](const dims &idx, int64_t) {
        const size_t g = group_of(idx);
        const double xhat = (in.src[k] - in.mean[g]) * inv(g);
        sum_dd[g] += std::abs(in.diff_dst[k]);
        sum_dx[g] += std::abs(in.diff_dst[k] * xhat);
        ++k;
    });
    scales s {{}, sum_dx, sum_dd};
    k = 0;
    const double m = double(p.reduce_count);
    core::for_each_index(p.src.shape, dense_strides(p.src.shape), [&](const dims &idx, int64_t) {
        const size_t g = group_of(idx);
        const double gam = p.gamma ? std::abs(in.gamma[g]) : 1.0;
        const double xhat = std::abs((in.src[k] - in.mean[g]) * inv(g));
        s.diff_src.push_back(gam * inv(g) * (std::abs(in.diff_dst[k]) + sum_dd[g] / m + xhat * sum_dx[g] / m));
        ++k;
    });
    return s;
}

void expect_close(const std::vector<double> &got, const std::vector<double> &want, const std::vector<double> &scale,
        double rel, const std::string &what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_LE(std::abs(got[i] - want[i]), rel * scale[i] + 1e-30) << what << " element " << i << " dnnl "
                                                                      << got[i] << " ref " << want[i];
}

std::string describe(const bn_spec &s) {
    std::string r = std::string(to_string(s.dt)) + (s.fmt == layout::nxc ? " NXC" : " NCX") + " src";
    for (dim d : s.src_shape) r += " " + std::to_string(d);
    r += " stats";
    for (dim d : s.stat_shape) r += " " + std::to_string(d);
    r += s.has_gamma ? " gamma" : " no-gamma";
    r += s.has_diff_scale_shift ? " 3-outputs" : " 1-output";
    if (s.use_global_stats) r += " global-stats";
    if (!s.src_strides.empty()) r += " channels-last-strides";
    return r;
}

// oneDNN refuses bf16 BatchNorm on CPUs without AVX-512 (support/dnnl_cpu.hpp):
// true, with the refusal checked, where it did.
bool refused_bf16_without_avx512(data_type dt, const std::string &why) {
    if (dt != data_type::bf16 || why.empty()) return false;
    EXPECT_FALSE(cpu_has_avx512_core()) << why;
    EXPECT_NE(why.find("has no batch_normalization_backward"), std::string::npos) << why;
    return true;
}

void expect_matches_reference(const bn_spec &spec, uint32_t seed) {
    const core::bn_bwd_problem p = make_bn_problem(spec);
    const std::string what = describe(spec);
    const std::string why = dnnl_be().why_unsupported(single(p));
    if (refused_bf16_without_avx512(spec.dt, why)) return;
    ASSERT_EQ(why, "") << what;
    const bn_inputs in = random_inputs(p, seed);
    const bn_outputs got = run(dnnl_be(), p, in), want = run(ref_be(), p, in);
    const scales s = magnitude_scales(p, in);
    // f32: 1e-4 of the sum of magnitudes. bf16 data: diff_src is rounded to
    // bf16 (2^-9 relative) on top of that.
    const double rel = spec.dt == data_type::bf16 ? 1.0 / 128 : 1e-4;
    expect_close(got.diff_src, want.diff_src, s.diff_src, rel, what + " diff_src");
    if (p.diff_gamma) {
        expect_close(got.diff_gamma, want.diff_gamma, s.diff_gamma, 1e-4, what + " diff_gamma");
        expect_close(got.diff_beta, want.diff_beta, s.diff_beta, 1e-4, what + " diff_beta");
    }
}

TEST(DnnlBatchNorm, MatchesReferenceOnEveryOption) {
    std::mt19937 rng(3);
    int cases = 0;
    for (data_type dt : {data_type::f32, data_type::bf16})
        for (int rank = 2; rank <= 5; ++rank)
            for (int lk = 0; lk < 3; ++lk)
                for (int opts = 0; opts < 8; ++opts) {
                    if (rank == 2 && lk == 2) continue; // no spatial axes to move
                    bn_spec s;
                    s.dt = dt;
                    s.fmt = lk == 1 ? layout::nxc : layout::ncx;
                    s.has_gamma = opts & 1;
                    s.has_diff_scale_shift = opts & 2;
                    s.use_global_stats = opts & 4;
                    const int64_t c = std::vector<int64_t> {1, 3, 16, 19}[rng() % 4];
                    s.src_shape = {1 + int64_t(rng() % 3)};
                    if (s.fmt == layout::ncx) s.src_shape.push_back(c);
                    for (int a = 2; a < rank; ++a) s.src_shape.push_back(1 + int64_t(rng() % 5));
                    if (s.fmt == layout::nxc) s.src_shape.push_back(c);
                    s.stat_shape = {c};
                    if (lk == 2) {
                        std::vector<int> order {0};
                        for (int a = 2; a < rank; ++a) order.push_back(a);
                        order.push_back(1);
                        s.src_strides = s.diff_dst_strides = s.diff_src_strides = permuted_strides(s.src_shape, order);
                    }
                    expect_matches_reference(s, uint32_t(cases++));
                }
    EXPECT_EQ(cases, 2 * (4 * 3 - 1) * 8);
}

// DirectML statistics of src's rank keep one axis, which plays C wherever it is.
TEST(DnnlBatchNorm, RankMatchedStatisticsWithOneKeptAxis) {
    for (int kept = 0; kept < 4; ++kept)
        for (bool global : {false, true}) {
            bn_spec s;
            s.src_shape = {3, 4, 5, 6};
            s.stat_shape = {1, 1, 1, 1};
            s.stat_shape[size_t(kept)] = s.src_shape[size_t(kept)];
            s.use_global_stats = global;
            expect_matches_reference(s, uint32_t(kept));
        }
}

// eps = 0 and zero variances: with use_global_stats and diff_src alone,
// oneDNN gives inf and NaN exactly where the reference does. diff_gamma (and
// the training formula) would not, and are refused.
TEST(DnnlBatchNorm, ZeroEpsilonZeroVarianceWithGlobalStats) {
    int checked = 0, refused_bf16 = 0;
    for (data_type dt : {data_type::f32, data_type::bf16})
        for (int rank = 2; rank <= 5; ++rank)
            for (layout fmt : {layout::ncx, layout::nxc})
                for (bool gamma : {false, true}) {
                    bn_spec s;
                    s.dt = dt;
                    s.fmt = fmt;
                    s.epsilon = 0.f;
                    s.use_global_stats = true;
                    s.has_gamma = gamma;
                    s.has_diff_scale_shift = false;
                    s.src_shape = dims(size_t(rank), 3);
                    s.src_shape[fmt == layout::ncx ? 1 : size_t(rank - 1)] = 4;
                    s.stat_shape = {4};
                    const core::bn_bwd_problem p = make_bn_problem(s);
                    const std::string why = dnnl_be().why_unsupported(single(p));
                    if (refused_bf16_without_avx512(dt, why)) {
                        ++refused_bf16;
                        continue;
                    }
                    ASSERT_EQ(why, "");
                    const bn_inputs in = random_inputs(p, 5, true);
                    const bn_outputs got = run(dnnl_be(), p, in), want = run(ref_be(), p, in);
                    int nonfinite = 0;
                    for (size_t i = 0; i < got.diff_src.size(); ++i) {
                        const double g = got.diff_src[i], w = want.diff_src[i];
                        const bool ok = std::isnan(w) ? std::isnan(g) : std::isinf(w) ? g == w : std::isfinite(g);
                        nonfinite += !std::isfinite(w);
                        ASSERT_TRUE(ok) << describe(s) << " element " << i << " dnnl " << g << " ref " << w;
                    }
                    EXPECT_GT(nonfinite, 0) << describe(s);
                    ++checked;
                    s.has_diff_scale_shift = true;
                    expect_error([&] { dnnl_be().compile(single(make_bn_problem(s))); }, status::unimplemented,
                            {"epsilon = 0 with diff_gamma"});
                }
    EXPECT_EQ(checked + refused_bf16, 32);
    EXPECT_GE(checked, 16); // f32 everywhere
}

TEST(DnnlBatchNorm, ZeroSizeTensors) {
    bn_spec s;
    s.fmt = layout::ncx;
    s.src_shape = {0, 3, 4};
    s.stat_shape = {3};
    const core::bn_bwd_problem p = make_bn_problem(s);
    ASSERT_EQ(dnnl_be().why_unsupported(single(p)), "");
    const bn_inputs in = random_inputs(p, 1);
    const bn_outputs got = run(dnnl_be(), p, in);
    EXPECT_EQ(got.diff_gamma, std::vector<double>(3, 0.0));
    EXPECT_EQ(got.diff_beta, std::vector<double>(3, 0.0));
    s.src_shape = {2, 0, 4};
    s.stat_shape = {0};
    const core::bn_bwd_problem q = make_bn_problem(s);
    ASSERT_EQ(dnnl_be().why_unsupported(single(q)), "");
    run(dnnl_be(), q, random_inputs(q, 1));
}

void expect_refused(const core::bn_bwd_problem &p, const std::string &piece) {
    const std::string why = dnnl_be().why_unsupported(single(p));
    EXPECT_NE(why.find(piece), std::string::npos) << "reason [" << why << "] lacks [" << piece << "]";
    EXPECT_NE(why.find("BatchNormTrainingBackprop op"), std::string::npos) << why;
    expect_error([&] { dnnl_be().compile(single(p)); }, status::unimplemented, {piece});
}

TEST(DnnlBatchNorm, RefusesWhatThePrimitiveDoesNotCompute) {
    bn_spec base;
    base.fmt = layout::ncx;
    base.src_shape = {2, 3, 4, 5};
    base.stat_shape = {3};
    bn_spec s = base;
    s.dt = data_type::bf16;
    s.stat_dt = data_type::bf16;
    expect_refused(make_bn_problem(s), "f32 only");
    s = base;
    s.dt = data_type::f16;
    expect_refused(make_bn_problem(s), "f16");
    s = base;
    s.src_shape = {2, 3, 2, 2, 2, 2};
    expect_refused(make_bn_problem(s), "2 to 5");
    s = base;
    s.stat_shape = {1, 3, 4, 1};
    expect_refused(make_bn_problem(s), "keep 2 axes");
    s.stat_shape = {1, 1, 1, 1};
    expect_refused(make_bn_problem(s), "keep 0 axes");
    s = base;
    s.diff_dst_strides = permuted_strides(s.src_shape, {0, 2, 3, 1});
    // 3.x takes two descriptors, but every CPU implementation refuses them
    // when they differ ("inconsistent diff_src and diff_dst mds").
    expect_refused(make_bn_problem(s), backends::dnnl_impl::onednn_v3 ? "in one layout only" : "one memory descriptor");
    s = base;
    s.epsilon = 0.f;
    expect_refused(make_bn_problem(s), "epsilon = 0");
    // Statistics that are not dense along C (a strided 1-D view).
    core::bn_bwd_problem p = make_bn_problem(base);
    p.mean.strides = {2};
    p.mean_strides[1] = 2;
    expect_refused(p, "dense [C]");
}

// Through the public API: the fused ReLUBackprop -> BN partition and a lone
// ReLUBackprop are refused with their reasons; a lone BN runs on oneDNN.
TEST(DnnlBatchNorm, PublicApiPartitions) {
    using K = op::kind;
    const data_type f32 = data_type::f32;
    const dims d {2, 3, 4};
    auto lt = [&](size_t id, const dims &shape) { return logical_tensor(id, f32, shape, layout_type::strided); };
    auto make_bn = [&](size_t src_id) {
        op bn(1, K::BatchNormTrainingBackprop, {lt(src_id, d), lt(3, d), lt(4, {3}), lt(5, {3})}, {lt(6, d)});
        bn.set_attr(op::attr::epsilon, 1e-5f).set_attr(op::attr::data_format, "NCX");
        return bn;
    };
    engine e;
    const compile_options dnnl {backend_kind::dnnl};
    {
        graph g;
        op relu(0, K::ReLUBackprop, {lt(0, d), lt(1, d)}, {lt(2, d)});
        g.add_op(relu);
        g.add_op(make_bn(2));
        g.finalize();
        auto parts = g.get_partitions();
        ASSERT_EQ(parts.size(), 1u);
        expect_error([&] { parts[0].compile(parts[0].get_input_ports(), {}, e, dnnl); }, status::unimplemented,
                {"backend 'dnnl' cannot run it", "single-op partitions only"});
    }
    {
        graph g;
        op relu(0, K::ReLUBackprop, {lt(0, d), lt(1, d)}, {lt(2, d)});
        g.add_op(relu);
        g.finalize();
        auto p = g.get_partitions().at(0);
        expect_error([&] { p.compile(p.get_input_ports(), {}, e, dnnl); }, status::unimplemented,
                {"ReLUBackprop op 0", "NaN"});
    }
    {
        graph g;
        g.add_op(make_bn(2));
        g.finalize();
        auto p = g.get_partitions().at(0);
        auto cp = p.compile(p.get_input_ports(), {}, e, dnnl);
        EXPECT_EQ(cp.get_backend(), backend_kind::dnnl);
        // No gamma, no diff_gamma: the plain lowering, and oneDNN's implementation name.
        EXPECT_EQ(cp.get_kernel_path().rfind("bn:plain:", 0), 0u) << cp.get_kernel_path();
        EXPECT_GT(cp.get_kernel_path().size(), std::string("bn:plain:").size());
        EXPECT_EQ(p.compile(p.get_input_ports(), {}, e, compile_options {backend_kind::ref}).get_kernel_path(),
                "reference:f64");
        std::vector<float> src(24), dd(24), mean {0.1f, -0.2f, 0.f}, var {1.f, 0.5f, 2.f}, out(24), want(24);
        for (int i = 0; i < 24; ++i) src[size_t(i)] = float(i % 7) / 4, dd[size_t(i)] = float(i % 5) / 8 - 0.25f;
        stream s(e);
        auto exec = [&](const compiled_partition &c, std::vector<float> &o) {
            c.execute(s,
                    {tensor(c.query_logical_tensor(2), e, src.data()), tensor(c.query_logical_tensor(3), e, dd.data()),
                            tensor(c.query_logical_tensor(4), e, mean.data()),
                            tensor(c.query_logical_tensor(5), e, var.data())},
                    {tensor(c.query_logical_tensor(6), e, o.data())});
        };
        exec(cp, out);
        exec(p.compile(p.get_input_ports(), {}, e, compile_options {backend_kind::ref}), want);
        for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], want[i], 1e-5) << i;
    }
}

TEST(DnnlBatchNorm, ConcurrentExecutionsOfOneKernel) {
    bn_spec s;
    s.src_shape = {4, 7, 9, 16};
    s.stat_shape = {16};
    s.has_gamma = true;
    s.has_diff_scale_shift = false; // the per-thread diff_scale scratch
    const core::bn_bwd_problem p = make_bn_problem(s);
    const bn_inputs in = random_inputs(p, 2);
    const auto k = dnnl_be().compile(single(p));
    const bn_outputs first = run_kernel(*k, p, in);
    std::vector<int> bad(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int rep = 0; rep < 30; ++rep) bad[size_t(t)] += run_kernel(*k, p, in).diff_src != first.diff_src;
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(bad, std::vector<int>(4, 0));
}

} // namespace
} // namespace bpg::test
