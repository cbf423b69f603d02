// One-task runs (small tbb partitions, no arena, scratch on the stack)
// executed from several threads at once on one compiled partition, each run
// giving the bits of a sequential run on the same tensors. The thresholds are
// left as built, so that these sizes are one task. In the plain, ASan and
// TSan suites (label concurrency).
#include <gtest/gtest.h>

#include "support/bn_case.hpp"
#include "support/concurrent_runs.hpp"
#include "support/interp_case.hpp"

namespace bpg::test {
namespace {

constexpr int threads = 6;
constexpr int runs_per_thread = 50;

void expect_concurrent_runs_match_sequential(const compiled_partition &cp) {
    ASSERT_EQ(cp.get_backend(), backend_kind::tbb);
    SCOPED_TRACE(cp.describe());
    expect_concurrent_runs_give_sequential_bits(cp, threads, runs_per_thread, 300);
}

compile_options three_threads() {
    compile_options o;
    o.backend = backend_kind::tbb;
    o.max_threads = 3;
    return o;
}

TEST(ConcurrentOneTask, TinyInterpolate) {
    for (bool nxc : {false, true})
        for (data_type dt : {data_type::f32, data_type::bf16}) {
            interp_case c;
            c.nxc = nxc;
            c.dt = dt;
            c.src = {2, 3, 3, 5}; // NXC: 3x3 images of 5 channels
            c.dst = nxc ? dims {2, 6, 6, 5} : dims {2, 3, 6, 6};
            SCOPED_TRACE(c.name());
            expect_concurrent_runs_match_sequential(compile_interp_case(c, three_threads()));
        }
}

TEST(ConcurrentOneTask, TinyBatchNorm) {
    for (bool nxc : {false, true})
        for (int relu : {-1, 1}) {
            bn_case c;
            c.shape = nxc ? dims {2, 3, 3, 5} : dims {2, 5, 3, 3};
            c.stat_shape = {5};
            c.nxc = nxc;
            c.relu = relu;
            SCOPED_TRACE(c.name());
            expect_concurrent_runs_match_sequential(compile_bn_case(c, three_threads()));
        }
}

} // namespace
} // namespace bpg::test
