// The oneDNN backend's InterpolateBackprop (resampling_backward):
//  - the f32 arithmetic model (resampling_model.hpp) predicts, pair by pair,
//    where oneDNN's nearest ranges differ from docs/semantics.md, checked against
//    the primitive itself on its three implementations;
//  - every supported case agrees with the reference backend (nearest: same
//    bits; linear: within the f32 rounding plus the modelled weight error);
//  - every refusal has a reason, and compile forced to dnnl reports it;
//  - the primitive cache, concurrent compiles and concurrent executions.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl.hpp>

#include "backends/backend.hpp"
#include "backends/dnnl/dnnl_backend.hpp"
#include "backends/dnnl/dnnl_compat.hpp"
#include "backends/dnnl/openmp_team.hpp"
#include "backends/dnnl/resampling_model.hpp"
#include "core/run_threads.hpp"
#include "support/dnnl_cpu.hpp"
#include "support/expect_error.hpp"
#include "support/interp_case.hpp"
#include "support/problem_builders.hpp"

namespace bpg::test {
namespace {

using backends::dnnl_impl::linear_axis_check;
using backends::dnnl_impl::nearest_axis_mismatch;
using backends::dnnl_impl::resampling_kernel;
using core::interp_mode;
using kernels::coord_mode;
using kernels::nearest_rounding;

const backends::backend &dnnl_be() {
    const backends::backend *b = backends::find_backend(backend_kind::dnnl);
    if (!b) throw std::runtime_error("dnnl backend not registered");
    return *b;
}
const backends::backend &ref_be() { return *backends::find_backend(backend_kind::ref); }

// One OpenMP thread for oneDNN in the scope: the run of a partition compiled
// with compile_options.max_threads = 1 (the backend's compile and execute
// read it), and the calling thread's team for the model test's own primitive
// calls. Many small executions: a busy machine (descheduled spinning OpenMP
// workers) cannot stretch them to minutes.
class one_thread {
    core::run_threads run_ {1, threading_runtime::tbb_arena};
    core::run_scope scope_ {run_};
    backends::dnnl_impl::openmp_team_for_call team_;
};

backends::partition_problem single(const core::interpolate_bwd_problem &p) {
    return {"interpolate_bwd", {p}, {}};
}

// diff_dst values k/64 with |k| <= 128: exact in f32 and bf16, and every sum
// of them the nearest mode forms is exact in f32.
std::vector<double> dyadic_values(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> k(-128, 128);
    std::vector<double> v(static_cast<size_t>(n));
    for (double &x : v) x = k(rng) / 64.0;
    return v;
}

std::vector<double> run(const backends::backend &b, const core::interpolate_bwd_problem &p,
        const std::vector<double> &dd) {
    buffer ddb(p.diff_dst, dd), dsb(p.diff_src);
    b.compile(single(p))->execute({{p.diff_dst.id, ddb.data()}, {p.diff_src.id, dsb.data()}});
    EXPECT_TRUE(dsb.padding_intact()) << "wrote outside diff_src's view";
    return dsb.dense();
}

// For linear: per input element, the sum of |w * dd| (mag) and of |dd| over
// the outputs that read it (touch), from the shared coordinate functions.
struct magnitudes {
    std::vector<double> mag, touch;
};
magnitudes linear_magnitudes(const core::interpolate_bwd_problem &p, const std::vector<double> &dd) {
    const dims src_dense = dense_strides(p.diff_src.shape);
    magnitudes m {std::vector<double>(size_t(p.diff_src.element_count()), 0.0),
            std::vector<double>(size_t(p.diff_src.element_count()), 0.0)};
    size_t k = 0;
    core::for_each_index(p.diff_dst.shape, dense_strides(p.diff_dst.shape), [&](const dims &idx, int64_t) {
        const double g = std::abs(dd[k++]);
        const size_t nsp = p.axes.size();
        for (int c = 0; c < (1 << nsp); ++c) {
            int64_t at = 0;
            double w = 1.0;
            for (int a = 0; a < int(idx.size()); ++a) at += idx[size_t(a)] * src_dense[size_t(a)];
            for (size_t s = 0; s < nsp && w != 0.0; ++s) {
                const int a = p.spatial_axes[s];
                const kernels::linear_taps t =
                        kernels::linear_taps_of(kernels::source_coordinate(p.axes[s], idx[size_t(a)]), p.axes[s].in);
                const bool second = (c >> s) & 1;
                at += ((second ? t.i1 : t.i0) - idx[size_t(a)]) * src_dense[size_t(a)];
                w *= second ? t.w1 : t.w0;
            }
            if (w == 0.0) continue;
            m.mag[size_t(at)] += w * g;
            m.touch[size_t(at)] += g;
        }
    });
    return m;
}

// dnnl against the reference on one problem the backend claims to support.
void expect_matches_reference(const core::interpolate_bwd_problem &p, const std::string &what, uint32_t seed) {
    const std::vector<double> dd = dyadic_values(p.diff_dst.element_count(), seed);
    const std::vector<double> got = run(dnnl_be(), p, dd), want = run(ref_be(), p, dd);
    ASSERT_EQ(got.size(), want.size());
    if (p.mode == interp_mode::nearest) { // sums of dyadic values: exact, same bits
        for (size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(got[i], want[i]) << what << " element " << i;
        return;
    }
    double werr = 0; // oneDNN's weights: f32 coordinates, bounded by the model
    for (const kernels::axis_map &m : p.axes) werr += linear_axis_check(m.in, m.out).max_weight_error;
    werr += 4e-7 * double(p.axes.size()); // rounding of 1 - w and of the weight products
    const magnitudes m = linear_magnitudes(p, dd);
    // bf16: both results are rounded to bf16 from slightly different values,
    // so they may sit one bf16 ulp (2^-7 relative at most) apart.
    const double rel = p.diff_src.dt == data_type::bf16 ? 1.0 / 128 : 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
        const double tol = 1e-5 * m.mag[i] + werr * m.touch[i] + rel * std::abs(want[i]) + 1e-30;
        ASSERT_LE(std::abs(got[i] - want[i]), tol) << what << " element " << i << " dnnl " << got[i] << " ref "
                                                   << want[i];
    }
}

// ---------------------------------------------------------------------------
// The model against oneDNN's primitive, on 1-D problems.

// The 33 (in, out) pairs with in, out in 1..64 whose nearest gradient
// oneDNN 2.6's jit:avx512_core path misplaces (found by running the
// primitive on all 4096 pairs; the model reproduces the list).
const std::set<std::pair<int64_t, int64_t>> jit_nearest_mismatches = {{14, 57}, {22, 29}, {22, 47}, {26, 7},
        {28, 2}, {28, 57}, {30, 9}, {36, 10}, {38, 15}, {38, 41}, {40, 12}, {42, 3}, {42, 11}, {44, 29},
        {44, 47}, {44, 58}, {46, 15}, {46, 29}, {46, 59}, {50, 15}, {50, 27}, {52, 7}, {52, 14}, {54, 15},
        {54, 55}, {56, 2}, {56, 4}, {56, 57}, {58, 31}, {58, 61}, {60, 2}, {60, 9}, {60, 18}};

TEST(DnnlInterpolateModel, NearestMismatchesUpTo64) {
    std::set<std::pair<int64_t, int64_t>> jit, simple;
    for (int64_t in = 1; in <= 64; ++in)
        for (int64_t out = 1; out <= 64; ++out) {
            if (!nearest_axis_mismatch(resampling_kernel::jit, in, out).empty()) jit.insert({in, out});
            if (!nearest_axis_mismatch(resampling_kernel::simple_or_ref, in, out).empty()) simple.insert({in, out});
        }
    EXPECT_EQ(jit, jit_nearest_mismatches);
    EXPECT_TRUE(simple.empty());
    // A reason names the output, the tie and both inputs.
    const std::string why = nearest_axis_mismatch(resampling_kernel::jit, 28, 2);
    EXPECT_NE(why.find("exact tie"), std::string::npos) << why;
    EXPECT_NE(why.find("docs/semantics.md reads input"), std::string::npos) << why;
}

TEST(DnnlInterpolateModel, LinearExactForSmallAndDyadicSizes) {
    for (int64_t in = 1; in <= 64; ++in)
        for (int64_t out = 1; out <= 64; ++out) {
            const auto r = linear_axis_check(in, out);
            ASSERT_TRUE(r.mismatch.empty()) << in << " -> " << out << ": " << r.mismatch;
            ASSERT_LE(r.max_weight_error, 2e-6) << in << " -> " << out;
        }
    // 2x: exact while (2o + 1) * in fits in 24 bits, or when in is a power of two.
    for (int64_t in : {56, 112, 1000, 4096, 65536}) {
        EXPECT_EQ(linear_axis_check(in, 2 * in).max_weight_error, 0.0) << in;
        EXPECT_TRUE(linear_axis_check(in, 2 * in).mismatch.empty()) << in;
    }
    EXPECT_GT(linear_axis_check(100000, 200000).max_weight_error, backends::dnnl_impl::max_linear_weight_error);
    EXPECT_GT(linear_axis_check(1000, 1500).max_weight_error, backends::dnnl_impl::max_linear_weight_error);
}

enum class path { jit, simple, ref };

// A 1-D nearest resampling_backward forced onto one implementation by its
// layout: nwc -> jit, dense ncw -> simple, padded ncw -> ref. Returns true
// when diff_src equals docs/semantics.md's (values o + 1 expose any misplaced o).
bool primitive_matches_semantics(path which, int64_t in, int64_t out, std::string *impl) {
    using md = dnnl::memory::desc;
    const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    // C = 2: with N = C = 1 every layout also matches nwc and oneDNN picks the jit.
    const int64_t c = 2, pad = which == path::ref ? 3 : 0;
    auto desc = [&](int64_t w) {
        if (which == path::jit) return md({1, c, w}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nwc);
        return md({1, c, w}, dnnl::memory::data_type::f32, dnnl::memory::dims {c * (w + pad), w + pad, 1});
    };
    const md s = desc(in), d = desc(out);
    const auto alg = dnnl::algorithm::resampling_nearest;
    const dnnl::resampling_backward::primitive_desc pd =
            backends::dnnl_impl::make_resampling_bwd_pd(eng, alg, s, d, dnnl::primitive_attr());
    *impl = pd.impl_info_str();
    std::vector<float> dd(size_t(c * (out + pad) + 64), 1e30f), ds(size_t(c * (in + pad)), 0.f);
    // Channel 0 only (the other channel's gradient lands elsewhere): o + 1 at o.
    const int64_t ds_stride = which == path::jit ? c : 1;
    for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t o = 0; o < out; ++o) dd[size_t(which == path::jit ? o * c + ch : ch * (out + pad) + o)] = float(o + 1);
    dnnl::stream st(eng);
    dnnl::resampling_backward(pd).execute(st, {{DNNL_ARG_DIFF_DST, dnnl::memory(d, eng, dd.data())},
                                                      {DNNL_ARG_DIFF_SRC, dnnl::memory(s, eng, ds.data())}});
    st.wait();
    kernels::axis_map m;
    m.in = in;
    m.out = out;
    std::vector<double> want(size_t(in), 0.0);
    for (int64_t o = 0; o < out; ++o)
        want[size_t(kernels::nearest_index(kernels::source_coordinate(m, o), nearest_rounding::round_prefer_ceil,
                in))] += double(o + 1);
    for (int64_t i = 0; i < in; ++i)
        if (double(ds[size_t(i * ds_stride)]) != want[size_t(i)]) return false;
    return true;
}

// The implementation each layout reaches (2.6 and 3.9 alike), except that
// 3.x's jit also takes a dense NCX axis of in = out = 1, which is NXC too.
const char *impl_prefix(path p, int64_t in, int64_t out) {
    // Without AVX-512, oneDNN has no jit resampling backward: nwc takes
    // simple:any, or ref:any (which the model reads as on 3.x).
    if (!cpu_has_avx512_core()) return p == path::ref ? "ref:" : p == path::simple ? "simple:" : "";
    if (backends::dnnl_impl::onednn_v3 && p == path::simple && in == 1 && out == 1) return "jit:";
    const char *prefix[] = {"jit:", "simple:", "ref:"};
    return prefix[int(p)];
}

// All 4096 pairs up to 64 and large pairs (where both paths misplace outputs
// for most non-dyadic ratios) on each implementation: the model's verdict is
// the primitive's.
TEST(DnnlInterpolateModel, PredictsThePrimitive) {
    // 12,000 small executions, on one_thread.
    const one_thread limit;
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t in = 1; in <= 64; ++in)
        for (int64_t out = 1; out <= 64; ++out) pairs.push_back({in, out});
    // Large pairs the model calls wrong on some path, and random ones.
    for (auto pr : {std::pair<int64_t, int64_t> {18987, 1049}, {4826, 7690}, {9698, 7452}, {3862, 19104},
                 {11738, 13668}, {1000, 3000}, {4096, 8192}})
        pairs.push_back(pr);
    std::mt19937 rng(5);
    for (int k = 0; k < 25; ++k) pairs.push_back({1 + rng() % 20000, 1 + rng() % 20000});
    int predicted_bad[3] = {0, 0, 0};
    for (path which : {path::jit, path::simple, path::ref})
        for (auto [in, out] : pairs) {
            std::string impl;
            const bool same = primitive_matches_semantics(which, in, out, &impl);
            const std::string prefix = impl_prefix(which, in, out);
            if (prefix.empty()) ASSERT_TRUE(impl.rfind("simple:", 0) == 0 || impl.rfind("ref:", 0) == 0) << impl;
            else ASSERT_EQ(impl.rfind(prefix, 0), 0u) << "path " << int(which) << ": " << impl;
            const std::string why = nearest_axis_mismatch(backends::dnnl_impl::resampling_kernel_of(impl), in, out);
            predicted_bad[int(which)] += !why.empty();
            ASSERT_EQ(same, why.empty()) << impl << " (" << in << ", " << out << "): " << why;
        }
    if (cpu_has_avx512_core()) {
        EXPECT_GT(predicted_bad[0], int(jit_nearest_mismatches.size())); // the large pairs add some
    }
    EXPECT_GT(predicted_bad[2], 0);
    // 2.6: ref computes simple's bounds; 3.9: ref computes the jit's (factor
    // first), which misplace more pairs (docs/onednn-versions.md).
    if (backends::dnnl_impl::onednn_v3) {
        if (cpu_has_avx512_core()) {
            EXPECT_EQ(predicted_bad[2], predicted_bad[0]);
        }
        EXPECT_LT(predicted_bad[1], predicted_bad[2]);
    } else {
        EXPECT_EQ(predicted_bad[1], predicted_bad[2]);
    }
}

// ---------------------------------------------------------------------------
// The backend against the reference.

const std::pair<int64_t, int64_t> size_pairs[] = {{1, 1}, {1, 5}, {5, 1}, {4, 4}, {3, 7}, {7, 3}, {4, 8}, {8, 4},
        {5, 13}, {13, 5}, {2, 3}, {6, 11}, {17, 17}, {28, 2}, {14, 57}};

core::interpolate_bwd_problem random_problem(std::mt19937 &rng, interp_mode mode, int nsp, layout fmt,
        bool channels_last_strides, data_type dt) {
    std::uniform_int_distribution<int> pick(0, int(std::size(size_pairs)) - 1);
    const int64_t n = 1 + rng() % 2, c = std::vector<int64_t> {1, 3, 16, 17}[rng() % 4];
    dims src {n}, dst {n};
    if (fmt == layout::ncx) src.push_back(c), dst.push_back(c);
    for (int k = 0; k < nsp; ++k) {
        auto [i, o] = size_pairs[pick(rng)];
        if (nsp == 3) i = std::min<int64_t>(i, 6), o = std::min<int64_t>(o, 7);
        src.push_back(i);
        dst.push_back(o);
    }
    if (fmt == layout::nxc) src.push_back(c), dst.push_back(c);
    dims ss, ds;
    if (channels_last_strides) {
        std::vector<int> order {0};
        for (int a = 2; a < nsp + 2; ++a) order.push_back(a);
        order.push_back(1);
        ss = permuted_strides(src, order);
        ds = permuted_strides(dst, order);
    }
    return make_interp_problem(mode, coord_mode::half_pixel, nearest_rounding::round_prefer_ceil, fmt, src, dst, dt,
            ss, ds);
}

std::string describe(const core::interpolate_bwd_problem &p) {
    std::string s = (p.mode == interp_mode::nearest ? "nearest " : "linear ") + std::string(to_string(p.diff_src.dt))
            + (p.channels_last ? " NXC " : " NCX ");
    for (dim d : p.diff_src.shape) s += std::to_string(d) + " ";
    s += "<-";
    for (dim d : p.diff_dst.shape) s += " " + std::to_string(d);
    return s;
}

TEST(DnnlInterpolate, MatchesReferenceOnRandomShapes) {
    std::mt19937 rng(11);
    int compared = 0, refused = 0;
    for (data_type dt : {data_type::f32, data_type::bf16})
        for (interp_mode mode : {interp_mode::nearest, interp_mode::linear})
            for (int layout_kind = 0; layout_kind < 3; ++layout_kind)
                for (int nsp = 1; nsp <= 3; ++nsp)
                    for (int rep = 0; rep < 3; ++rep) {
                        const auto p = random_problem(rng, mode, nsp, layout_kind == 1 ? layout::nxc : layout::ncx,
                                layout_kind == 2, dt);
                        const std::string why = dnnl_be().why_unsupported(single(p));
                        if (!why.empty() && dt == data_type::bf16 && !cpu_has_avx512_core()) {
                            // oneDNN's bf16 needs AVX-512 (support/dnnl_cpu.hpp).
                            EXPECT_NE(why.find("has no resampling_backward"), std::string::npos) << why;
                            continue;
                        }
                        if (!why.empty()) {
                            // Only the modelled f32 tie cases are refused here.
                            EXPECT_EQ(mode, interp_mode::nearest) << describe(p) << ": " << why;
                            EXPECT_NE(why.find("docs/semantics.md reads input"), std::string::npos) << why;
                            ++refused;
                            continue;
                        }
                        expect_matches_reference(p, describe(p), uint32_t(compared++));
                    }
    EXPECT_GT(compared, cpu_has_avx512_core() ? 90 : 45);
    if (cpu_has_avx512_core()) {
        EXPECT_GT(refused, 0); // (no jit path without it)
    }
}

// A 1-D linear problem with 2 channels on one oneDNN path: 0 NCX
// (simple:any), 1 NXC (jit), 2 NCX with padded rows (ref:any).
core::interpolate_bwd_problem linear_1d(int lk, int64_t in, int64_t out) {
    const layout fmt = lk == 1 ? layout::nxc : layout::ncx;
    const dims src = fmt == layout::ncx ? dims {1, 2, in} : dims {1, in, 2};
    const dims dst = fmt == layout::ncx ? dims {1, 2, out} : dims {1, out, 2};
    return make_interp_problem(interp_mode::linear, coord_mode::half_pixel, nearest_rounding::round_prefer_ceil,
            fmt, src, dst, data_type::f32, lk == 2 ? padded_strides(src, 3) : dims {},
            lk == 2 ? padded_strides(dst, 1) : dims {});
}

// Linear on every (in, out) up to 64, on the jit, simple and ref paths:
// within f32 rounding plus the modelled weight error of the reference.
TEST(DnnlInterpolate, LinearSweepUpTo64) {
    const one_thread limit;
    for (int lk = 0; lk < 3; ++lk) // NCX (simple:any), NXC (jit), padded NCX (ref:any)
        for (int64_t in = 1; in <= 64; ++in)
            for (int64_t out = 1; out <= 64; ++out) {
                const auto p = linear_1d(lk, in, out);
                ASSERT_EQ(dnnl_be().why_unsupported(single(p)), "") << describe(p);
                expect_matches_reference(p, describe(p), uint32_t(in * 64 + out));
                if (HasFatalFailure()) return;
            }
}

// Larger axes the model accepts (weights within 2^-16) agree with the
// reference within that bound on every path; the others are refused.
TEST(DnnlInterpolate, LinearLargeAxes) {
    const one_thread limit;
    int accepted = 0, refused = 0;
    for (auto [in, out] : {std::pair<int64_t, int64_t> {300, 700}, {700, 300}, {512, 1024}, {1000, 2000},
                 {4096, 8192}, {255, 256}, {1023, 1024}, {1000, 1500}, {3000, 7000}, {100000, 200000}})
        for (int lk = 0; lk < 3; ++lk) {
            const auto p = linear_1d(lk, in, out);
            const std::string why = dnnl_be().why_unsupported(single(p));
            if (linear_axis_check(in, out).max_weight_error > backends::dnnl_impl::max_linear_weight_error) {
                EXPECT_NE(why.find("2^-16"), std::string::npos) << describe(p) << ": " << why;
                ++refused;
                continue;
            }
            ASSERT_EQ(why, "") << describe(p);
            expect_matches_reference(p, describe(p), uint32_t(in + out));
            ++accepted;
        }
    EXPECT_GT(accepted, 0);
    EXPECT_GT(refused, 0);
}

// The jit path's tie pairs are refused on NXC data but run on NCX data, whose
// implementation (simple:any) places them right; so does NXC data where
// oneDNN has no jit (no AVX-512).
TEST(DnnlInterpolate, TiePairsDependOnTheImplementation) {
    for (auto [in, out] : {std::pair<int64_t, int64_t> {28, 2}, {42, 3}, {26, 7}}) {
        const auto nxc = make_interp_problem(interp_mode::nearest, coord_mode::half_pixel,
                nearest_rounding::round_prefer_ceil, layout::nxc, {2, in, 5}, {2, out, 5});
        const std::string why = dnnl_be().why_unsupported(single(nxc));
        if (cpu_has_avx512_core()) {
            EXPECT_NE(why.find("exact tie"), std::string::npos) << why;
            EXPECT_NE(why.find("jit:"), std::string::npos) << why;
        } else {
            EXPECT_EQ(why, "");
            expect_matches_reference(nxc, describe(nxc), 4);
        }
        const auto ncx = make_interp_problem(interp_mode::nearest, coord_mode::half_pixel,
                nearest_rounding::round_prefer_ceil, layout::ncx, {2, 5, in}, {2, 5, out});
        EXPECT_EQ(dnnl_be().why_unsupported(single(ncx)), "");
        expect_matches_reference(ncx, describe(ncx), 3);
    }
}

// Padded (non-dense) strides reach oneDNN's ref:any path; pytorch_half_pixel
// with output sizes > 1 is half_pixel; a zero N compiles to a no-op.
TEST(DnnlInterpolate, StridesPytorchHalfPixelAndEmptyTensors) {
    for (interp_mode mode : {interp_mode::nearest, interp_mode::linear}) {
        const dims src {2, 3, 5, 4}, dst {2, 3, 9, 7};
        const auto padded = make_interp_problem(mode, coord_mode::half_pixel, nearest_rounding::round_prefer_ceil,
                layout::ncx, src, dst, data_type::f32, padded_strides(src, 2), padded_strides(dst, 1));
        EXPECT_EQ(dnnl_be().why_unsupported(single(padded)), "");
        expect_matches_reference(padded, "padded " + describe(padded), 1);

        const auto pt = make_interp_problem(mode, coord_mode::pytorch_half_pixel,
                nearest_rounding::round_prefer_ceil, layout::nxc, {1, 3, 5, 2}, {1, 7, 2, 2});
        EXPECT_EQ(dnnl_be().why_unsupported(single(pt)), "");
        expect_matches_reference(pt, "pytorch_half_pixel " + describe(pt), 2);

        const auto empty = make_interp_problem(mode, coord_mode::half_pixel, nearest_rounding::round_prefer_ceil,
                layout::ncx, {0, 3, 5}, {0, 3, 9});
        EXPECT_EQ(dnnl_be().why_unsupported(single(empty)), "");
        buffer ddb(empty.diff_dst), dsb(empty.diff_src);
        dnnl_be().compile(single(empty))->execute({{1, ddb.data()}, {2, dsb.data()}});
    }
}

// Through the public API: compile_options{dnnl} runs on oneDNN and gives the
// reference's bits for nearest (golden values of docs/semantics.md too).
TEST(DnnlInterpolate, PublicApiGoldenAndLayouts) {
    interp_case golden;
    golden.mode = "nearest";
    golden.src = {1, 1, 2, 2};
    golden.dst = {1, 1, 3, 3};
    std::vector<float> iota(9);
    for (int i = 0; i < 9; ++i) iota[size_t(i)] = float(i);
    EXPECT_EQ(run_interp(golden, backend_kind::dnnl, iota), (std::vector<float> {0, 3, 9, 24}));
    golden.mode = "bilinear";
    const std::vector<float> bilinear = run_interp(golden, backend_kind::dnnl, iota), want {3, 6, 12, 15};
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(bilinear[i], want[i], 1e-5) << i;

    for (const char *mode : {"nearest", "linear"})
        for (int lk = 0; lk < 3; ++lk) {
            interp_case c;
            c.mode = mode;
            c.nxc = lk == 1;
            c.channels_last_strides = lk == 2;
            c.src = c.nxc ? dims {2, 5, 6, 3} : dims {2, 3, 5, 6};
            c.dst = c.nxc ? dims {2, 11, 4, 3} : dims {2, 3, 11, 4};
            const auto dd = diff_dst_values(c, 9);
            const auto got = run_interp(c, backend_kind::dnnl, dd), want = run_interp(c, backend_kind::ref, dd);
            ASSERT_EQ(got.size(), want.size());
            for (size_t i = 0; i < got.size(); ++i)
                EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << c.name() << " element " << i;
        }
}

// A runtime `sizes` input (checked by execute before the kernel runs) is
// ignored by the kernel: oneDNN takes the sizes from diff_dst's dims.
TEST(DnnlInterpolate, RuntimeSizesInput) {
    const data_type f32 = data_type::f32;
    auto lt = [](size_t id, data_type dt, const dims &d) { return logical_tensor(id, dt, d, layout_type::strided); };
    op o(0, op::kind::InterpolateBackprop,
            {lt(0, f32, {1, 1, 2, 2}), lt(1, f32, {1, 1, 3, 3}), lt(3, data_type::s32, {2})}, {lt(2, f32, {1, 1, 2, 2})});
    o.set_attr(op::attr::mode, "nearest").set_attr(op::attr::data_format, "NCX");
    graph g;
    g.add_op(o);
    g.finalize();
    auto p = g.get_partitions().at(0);
    engine e;
    auto cp = p.compile(p.get_input_ports(), p.get_output_ports(), e, compile_options {backend_kind::dnnl});
    EXPECT_EQ(cp.get_backend(), backend_kind::dnnl);
    // oneDNN's implementation name after "resampling:".
    EXPECT_EQ(cp.get_kernel_path().rfind("resampling:", 0), 0u) << cp.get_kernel_path();
    EXPECT_GT(cp.get_kernel_path().size(), std::string("resampling:").size());
    stream s(e);
    std::vector<float> src(4), dd {0, 1, 2, 3, 4, 5, 6, 7, 8}, out(4, -1.f);
    std::vector<int32_t> sizes {3, 3};
    cp.execute(s,
            {tensor(cp.query_logical_tensor(0), e, src.data()), tensor(cp.query_logical_tensor(1), e, dd.data()),
                    tensor(cp.query_logical_tensor(3), e, sizes.data())},
            {tensor(cp.query_logical_tensor(2), e, out.data())});
    EXPECT_EQ(out, (std::vector<float> {0, 3, 9, 24}));
}

// ---------------------------------------------------------------------------
// Refusals: a reason from why_unsupported, and the same reason in the
// unimplemented error of a compile forced onto dnnl.

void expect_refused(const core::interpolate_bwd_problem &p, const std::string &piece) {
    const std::string why = dnnl_be().why_unsupported(single(p));
    EXPECT_NE(why.find(piece), std::string::npos) << "reason [" << why << "] lacks [" << piece << "]";
    EXPECT_NE(why.find("op " + std::to_string(p.op_id)), std::string::npos) << why;
    expect_error([&] { dnnl_be().compile(single(p)); }, status::unimplemented, {piece});
}

TEST(DnnlInterpolate, RefusesWhatThePrimitiveDoesNotCompute) {
    auto prob = [](interp_mode m, coord_mode c, nearest_rounding r, const dims &s, const dims &d,
                        data_type dt = data_type::f32) {
        return make_interp_problem(m, c, r, layout::ncx, s, d, dt);
    };
    const auto N = interp_mode::nearest, L = interp_mode::linear;
    const auto ceil_r = nearest_rounding::round_prefer_ceil;
    expect_refused(prob(L, coord_mode::align_corners, ceil_r, {1, 2, 4}, {1, 2, 7}), "align_corners");
    expect_refused(prob(N, coord_mode::asymmetric, ceil_r, {1, 2, 4}, {1, 2, 7}), "asymmetric");
    expect_refused(prob(N, coord_mode::tf_half_pixel_for_nn, ceil_r, {1, 2, 4}, {1, 2, 7}), "tf_half_pixel_for_nn");
    expect_refused(prob(L, coord_mode::pytorch_half_pixel, ceil_r, {1, 2, 4}, {1, 2, 1}), "pytorch_half_pixel");
    for (auto r : {nearest_rounding::round_prefer_floor, nearest_rounding::floor, nearest_rounding::ceil})
        expect_refused(prob(N, coord_mode::half_pixel, r, {1, 2, 4}, {1, 2, 7}), "nearest_mode");
    expect_refused(prob(L, coord_mode::half_pixel, ceil_r, {1, 1, 2, 2, 2, 2}, {1, 1, 3, 3, 3, 3}), "1 to 3");
    expect_refused(prob(L, coord_mode::half_pixel, ceil_r, {1, 2, 4}, {1, 2, 7}, data_type::f16), "f16");
    auto offsets = prob(N, coord_mode::half_pixel, ceil_r, {1, 2, 4}, {1, 2, 8});
    set_pixel_offsets(offsets, {2.f}, {0.5f}, {-0.5f});
    expect_refused(offsets, "pixel offsets");
    // Nearest ties the jit path misplaces (NXC data; simple:any without
    // AVX-512 places them right), and a linear axis whose f32 weights are off
    // by more than 2^-16.
    const auto ties = make_interp_problem(N, coord_mode::half_pixel, ceil_r, layout::nxc, {1, 56, 4}, {1, 57, 4});
    if (cpu_has_avx512_core()) expect_refused(ties, "exact tie");
    else EXPECT_EQ(dnnl_be().why_unsupported(single(ties)), "");
    expect_refused(prob(L, coord_mode::half_pixel, ceil_r, {1, 1, 1000}, {1, 1, 1500}), "2^-16");
}

TEST(DnnlInterpolate, PublicApiCompileReportsTheReason) {
    interp_case c;
    c.coord = "align_corners";
    c.src = {1, 2, 4, 4};
    c.dst = {1, 2, 8, 8};
    expect_error([&] { run_interp(c, backend_kind::dnnl, diff_dst_values(c, 1)); }, status::unimplemented,
            {"backend 'dnnl' cannot run it", "align_corners"});
    c.coord = "half_pixel";
    c.mode = "nearest";
    c.nearest_mode = "round_prefer_floor";
    expect_error([&] { run_interp(c, backend_kind::dnnl, diff_dst_values(c, 1)); }, status::unimplemented,
            {"round_prefer_floor"});
}

// ---------------------------------------------------------------------------
// Primitive cache and threads.

TEST(DnnlInterpolate, SecondCompileHitsTheCache) {
    backends::dnnl_primitive_cache_clear();
    const auto p = make_interp_problem(interp_mode::linear, coord_mode::half_pixel,
            nearest_rounding::round_prefer_ceil, layout::nxc, {1, 6, 7, 5}, {1, 12, 14, 5});
    auto k1 = dnnl_be().compile(single(p));
    const auto first = backends::dnnl_primitive_cache_counters();
    EXPECT_EQ(first.misses, 1u);
    auto k2 = dnnl_be().compile(single(p));
    EXPECT_TRUE(dnnl_be().why_unsupported(single(p)).empty());
    const auto second = backends::dnnl_primitive_cache_counters();
    EXPECT_EQ(second.misses, 1u);
    EXPECT_EQ(second.hits, first.hits + 2);
    // Another layout is another primitive.
    auto q = p;
    q.diff_dst.strides = padded_strides(q.diff_dst.shape, 1);
    dnnl_be().compile(single(q));
    EXPECT_EQ(backends::dnnl_primitive_cache_counters().misses, 2u);
}

TEST(DnnlInterpolate, ConcurrentCompilesCreateOnePrimitive) {
    backends::dnnl_primitive_cache_clear();
    const auto p = make_interp_problem(interp_mode::nearest, coord_mode::half_pixel,
            nearest_rounding::round_prefer_ceil, layout::ncx, {2, 3, 9, 10}, {2, 3, 18, 20});
    std::vector<std::unique_ptr<backends::kernel>> kernels(8);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < kernels.size(); ++t)
        threads.emplace_back([&, t] { kernels[t] = dnnl_be().compile(single(p)); });
    for (auto &t : threads) t.join();
    const auto c = backends::dnnl_primitive_cache_counters();
    EXPECT_EQ(c.misses, 1u);
    EXPECT_EQ(c.hits, 7u);
    const std::vector<double> dd = dyadic_values(p.diff_dst.element_count(), 4);
    const std::vector<double> want = run(ref_be(), p, dd);
    for (auto &k : kernels) {
        buffer ddb(p.diff_dst, dd), dsb(p.diff_src);
        k->execute({{1, ddb.data()}, {2, dsb.data()}});
        EXPECT_EQ(dsb.dense(), want);
    }
}

TEST(DnnlInterpolate, ConcurrentExecutionsOfOneKernel) {
    const auto p = make_interp_problem(interp_mode::linear, coord_mode::half_pixel,
            nearest_rounding::round_prefer_ceil, layout::nxc, {2, 9, 8, 16}, {2, 17, 16, 16});
    const auto k = dnnl_be().compile(single(p));
    const std::vector<double> dd = dyadic_values(p.diff_dst.element_count(), 8);
    buffer ddb0(p.diff_dst, dd), dsb0(p.diff_src);
    k->execute({{1, ddb0.data()}, {2, dsb0.data()}});
    const std::vector<double> first = dsb0.dense();
    std::vector<std::thread> threads;
    std::vector<int> bad(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            buffer ddb(p.diff_dst, dd), dsb(p.diff_src);
            for (int rep = 0; rep < 50; ++rep) {
                k->execute({{1, ddb.data()}, {2, dsb.data()}});
                bad[size_t(t)] += dsb.dense() != first;
            }
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(bad, std::vector<int>(4, 0));
}

} // namespace
} // namespace bpg::test
