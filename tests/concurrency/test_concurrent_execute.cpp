// One compiled partition executed from 8 threads at once, each on its own
// tensors, 1000 times each: every run gives the bits of a sequential run on
// the same tensors. And one partition compiled from several threads at once
// (the dnnl primitive cache, the tbb plans) gives working, identical kernels.
#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "core/allocate.hpp"
#include "support/small_partitions.hpp"
#include "support/backends_in_build.hpp"

namespace bpg::test {
namespace {

constexpr int threads = 8;
constexpr int runs_per_thread = 1000;

// Runs body(t) for t = 0..n-1 on n threads at once; returns how many threw.
int run_on_threads(int n, const std::function<void(int)> &body) {
    std::atomic<int> errors {0};
    std::vector<std::thread> pool;
    for (int t = 0; t < n; ++t)
        pool.emplace_back([&, t] {
            try {
                body(t);
            } catch (...) {
                ++errors;
            }
        });
    for (auto &th : pool) th.join();
    return errors.load();
}

void expect_concurrent_runs_match_sequential(const compiled_partition &cp, int runs = runs_per_thread) {
    SCOPED_TRACE(cp.describe());
    std::vector<std::unique_ptr<port_buffers>> mine;
    std::vector<std::vector<uint32_t>> want;
    for (int t = 0; t < threads; ++t) {
        mine.push_back(std::make_unique<port_buffers>(cp, 100 + t)); // different values per thread
        mine.back()->poison_outputs();
        mine.back()->execute(cp);
        want.push_back(mine.back()->output_bits());
    }
    std::atomic<int> mismatches {0};
    const int errors = run_on_threads(threads, [&](int t) {
        for (int r = 0; r < runs; ++r) {
            mine[t]->poison_outputs();
            mine[t]->execute(cp);
            if (mine[t]->output_bits() != want[t]) ++mismatches;
        }
    });
    EXPECT_EQ(errors, 0);
    EXPECT_EQ(mismatches.load(), 0) << "of " << threads * runs << " concurrent runs";
}

TEST(ConcurrentExecute, InterpolateLinearOnTbb) {
    expect_concurrent_runs_match_sequential(compile_interp({2, 4, 6, 6}, {2, 4, 12, 11}, "linear", backend_kind::tbb));
}
TEST(ConcurrentExecute, InterpolateNearestOnTbb) {
    expect_concurrent_runs_match_sequential(compile_interp({2, 4, 6, 6}, {2, 4, 9, 13}, "nearest", backend_kind::tbb));
}
TEST(ConcurrentExecute, InterpolateLinearOnDnnl) {
    BPG_SKIP_WITHOUT_DNNL();
    expect_concurrent_runs_match_sequential(compile_interp({2, 4, 6, 6}, {2, 4, 12, 12}, "linear", backend_kind::dnnl));
}
TEST(ConcurrentExecute, BatchNormOnTbb) {
    expect_concurrent_runs_match_sequential(compile_bn({4, 8, 5, 5}, backend_kind::tbb));
}
// Plans whose working memory is on the heap, kept by the compiled kernel
// (kept_memory.hpp): a run that finds it in use takes its own.
TEST(ConcurrentExecute, TbbPlansWithKeptMemory) {
    expect_concurrent_runs_match_sequential(
            compile_interp({4, 16, 64, 64}, {4, 16, 128, 127}, "linear", backend_kind::tbb), 50);
    expect_concurrent_runs_match_sequential(compile_bn({8, 64, 16, 16}, backend_kind::tbb), 50);
}
// Small plans keep their scratch on the stack: run from 8 threads at once,
// none takes a block (core::allocate made to fail at its first call).
TEST(ConcurrentExecute, SmallTbbPlansTakeNoMemory) {
    const compiled_partition interp = compile_interp({2, 4, 6, 6}, {2, 4, 12, 11}, "linear", backend_kind::tbb);
    const compiled_partition bn = compile_bn({4, 8, 5, 5}, backend_kind::tbb);
    std::vector<std::unique_ptr<port_buffers>> mine;
    for (int t = 0; t < threads; ++t) mine.push_back(std::make_unique<port_buffers>(t % 2 ? bn : interp, 200 + t));
    for (int t = 0; t < threads; ++t) mine[t]->execute(t % 2 ? bn : interp);
    core::test_allocation_faults().fail_after = 0;
    const int errors = run_on_threads(threads, [&](int t) {
        for (int r = 0; r < runs_per_thread; ++r) mine[t]->execute(t % 2 ? bn : interp);
    });
    core::test_allocation_faults().fail_after = -1;
    EXPECT_EQ(errors, 0) << "a concurrent run of a small plan took memory";
}
TEST(ConcurrentExecute, BatchNormOnDnnl) {
    BPG_SKIP_WITHOUT_DNNL();
    expect_concurrent_runs_match_sequential(compile_bn({4, 8, 5, 5}, backend_kind::dnnl));
}

// Threads compile the same problems at once (the first compile of a dnnl
// problem creates its primitive while the others wait on the cache; tbb
// builds its plans) and each checks its kernels against sequential ones.
TEST(ConcurrentCompile, SamePartitionFromSeveralThreads) {
    std::vector<std::function<compiled_partition()>> makers;
    for (backend_kind b : in_build({backend_kind::dnnl, backend_kind::tbb})) {
        makers.push_back([b] { return compile_interp({1, 3, 5, 7}, {1, 3, 10, 13}, "linear", b); });
        makers.push_back([b] { return compile_bn({2, 5, 3, 3}, b); });
    }
    std::vector<std::vector<uint32_t>> want;
    for (const auto &make : makers) {
        const compiled_partition cp = make();
        port_buffers b(cp, 7);
        b.execute(cp);
        want.push_back(b.output_bits());
    }
    constexpr int compilers = 6, rounds = 20;
    std::atomic<int> mismatches {0};
    const int errors = run_on_threads(compilers, [&](int t) {
        for (int r = 0; r < rounds; ++r) {
            const size_t k = size_t(t + r) % makers.size();
            const compiled_partition cp = makers[k]();
            port_buffers b(cp, 7);
            b.execute(cp);
            if (b.output_bits() != want[k]) ++mismatches;
        }
    });
    EXPECT_EQ(errors, 0);
    EXPECT_EQ(mismatches.load(), 0) << "of " << compilers * rounds << " compiles";
}

} // namespace
} // namespace bpg::test
