// A measurement, not a timed assertion: oneDNN runs on OpenMP threads while
// the tbb backend runs on oneTBB's workers. After a parallel region both
// runtimes keep their workers spinning for a while (libgomp: GOMP_SPINCOUNT,
// OMP_WAIT_POLICY; oneTBB: a short spin before sleeping), so a graph that
// alternates the two may have each runtime's spinning workers steal the cores
// the other needs. This test times a dnnl-executed partition and a
// tbb::parallel_for workload back to back (each alone, many times) and
// alternating (one of each, many times), and prints the per-call medians and
// their ratios. Compare runs under different environments, e.g.
//   bpg-tests-backends --gtest_filter='DnnlOmpTbb.*'
//   OMP_WAIT_POLICY=passive bpg-tests-backends --gtest_filter='DnnlOmpTbb.*'
// BPG_OMP_TBB_REPS sets the number of calls (default 20, kept small so the
// suite stays fast), BPG_OMP_TBB_SCALE multiplies both workloads' sizes. The
// "alone" tbb baseline is clean when the test runs in its own process (as
// ctest runs it): no OpenMP thread exists before it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/backend.hpp"
#include "support/problem_builders.hpp"

namespace bpg::test {
namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

double time_ms(const std::function<void()> &f) {
    const auto t0 = clock_type::now();
    f();
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

TEST(DnnlOmpTbb, AlternatingWorkloadsMeasurement) {
    const char *env = std::getenv("BPG_OMP_TBB_REPS");
    const int reps = env ? std::max(1, std::atoi(env)) : 20;
    const char *scale_env = std::getenv("BPG_OMP_TBB_SCALE");
    const int64_t scale = scale_env ? std::max(1, std::atoi(scale_env)) : 1;

    // dnnl: bilinear 2x backward, NXC f32, diff_dst 2x64x64x32 (2 MB) times scale.
    const auto p = make_interp_problem(core::interp_mode::linear, kernels::coord_mode::half_pixel,
            kernels::nearest_rounding::round_prefer_ceil, layout::nxc, {2 * scale, 32, 32, 32},
            {2 * scale, 64, 64, 32});
    const backends::partition_problem pp {"interpolate_bwd", {p}, {}};
    const auto k = backends::find_backend(backend_kind::dnnl)->compile(pp);
    buffer dd(p.diff_dst, std::vector<double>(size_t(p.diff_dst.element_count()), 0.25)), ds(p.diff_src);
    const backends::buffer_map bm {{p.diff_dst.id, dd.data()}, {p.diff_src.id, ds.data()}};
    auto dnnl_call = [&] { k->execute(bm); };

    // tbb: a streaming y = 0.5 y + x over 2 x 1M floats (8 MB) times scale, in 64 chunks.
    std::vector<float> x(size_t(scale) << 20, 1.f), y(size_t(scale) << 20, 0.f);
    auto tbb_call = [&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, x.size(), x.size() / 64), [&](const tbb::blocked_range<size_t> &r) {
            for (size_t i = r.begin(); i < r.end(); ++i) y[i] = 0.5f * y[i] + x[i];
        });
    };

    // tbb alone first, before oneDNN has started any OpenMP thread: the
    // clean baseline (afterwards an idle OpenMP worker may still be spinning).
    for (int i = 0; i < 3; ++i) tbb_call();
    std::vector<double> tbb_alone, dnnl_alone, dnnl_alt, tbb_alt;
    for (int i = 0; i < reps; ++i) tbb_alone.push_back(time_ms(tbb_call));
    for (int i = 0; i < 3; ++i) dnnl_call();
    for (int i = 0; i < reps; ++i) dnnl_alone.push_back(time_ms(dnnl_call));
    for (int i = 0; i < reps; ++i) {
        dnnl_alt.push_back(time_ms(dnnl_call));
        tbb_alt.push_back(time_ms(tbb_call));
    }
    const double da = median(dnnl_alone), ta = median(tbb_alone), dl = median(dnnl_alt), tl = median(tbb_alt);
    const char *policy = std::getenv("OMP_WAIT_POLICY");
    const char *spin = std::getenv("GOMP_SPINCOUNT");
    std::printf("[omp/tbb] OMP_WAIT_POLICY=%s GOMP_SPINCOUNT=%s reps=%d scale=%d\n", policy ? policy : "(unset)",
            spin ? spin : "(unset)", reps, int(scale));
    std::printf("[omp/tbb] dnnl call median: alone %.3f ms, alternating %.3f ms (x%.2f)\n", da, dl, dl / da);
    std::printf("[omp/tbb] tbb  call median: alone %.3f ms, alternating %.3f ms (x%.2f)\n", ta, tl, tl / ta);
    RecordProperty("dnnl_alternating_over_alone", std::to_string(dl / da));
    RecordProperty("tbb_alternating_over_alone", std::to_string(tl / ta));
    EXPECT_GT(da, 0.0);
}

} // namespace
} // namespace bpg::test
