// Per-partition concurrency (docs/threading.md): compile_options.max_threads
// and runtime leave the host's OpenMP and oneTBB settings as they were, give
// the same bits for every thread count and runtime, and never run more of a
// kernel's tasks at once than max_threads. The size thresholds are lowered
// (as in tests/concurrency) so that small tensors take the large-tensor paths.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <omp.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include "backends/tbb/parallel.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "bpg/threading.hpp"
#include "bpg/verbose.hpp"
#include "support/bn_case.hpp"
#include "support/backends_in_build.hpp"
#include "support/expect_error.hpp"
#include "support/interp_case.hpp"
#include "support/small_partitions.hpp"

namespace bpg::test {
namespace {

constexpr threading_runtime runtimes[] = {threading_runtime::tbb_arena, threading_runtime::openmp};
constexpr int thread_counts[] = {1, 2, 3};

class lowered_thresholds {
public:
    lowered_thresholds() { tbb_backend::test_size_threshold_shift() = 12; }
    ~lowered_thresholds() { tbb_backend::test_size_threshold_shift() = 0; }
};

// What a host sees of its own threading settings.
struct host_state {
    int omp_threads = omp_get_max_threads();
    size_t tbb_limit = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
    int arena_concurrency = tbb::this_task_arena::max_concurrency();
    bool operator==(const host_state &o) const {
        return omp_threads == o.omp_threads && tbb_limit == o.tbb_limit && arena_concurrency == o.arena_concurrency;
    }
};

std::string text(const host_state &s) {
    return "omp_get_max_threads " + std::to_string(s.omp_threads) + ", max_allowed_parallelism "
            + std::to_string(s.tbb_limit) + ", arena concurrency " + std::to_string(s.arena_concurrency);
}

compile_options options(backend_kind b, int threads, threading_runtime r) {
    compile_options o;
    o.backend = b;
    o.max_threads = threads;
    o.runtime = r;
    return o;
}

interp_case interp(dims src, dims dst, const char *mode, bool nxc) {
    interp_case c;
    c.mode = mode;
    c.src = std::move(src);
    c.dst = std::move(dst);
    c.nxc = nxc;
    return c;
}

bn_case bn(dims shape, bool nxc, int relu) {
    bn_case c;
    c.shape = shape;
    c.stat_shape = {nxc ? shape.back() : shape[1]};
    c.nxc = nxc;
    c.relu = relu;
    return c;
}

struct kernel_case {
    std::string name;
    std::function<compiled_partition(const compile_options &)> compile;
};

kernel_case interp_kernel(std::string name, const interp_case &c) {
    return {std::move(name), [c](const compile_options &o) { return compile_interp_case(c, o); }};
}
kernel_case bn_kernel(std::string name, const bn_case &c) {
    return {std::move(name), [c](const compile_options &o) { return compile_bn_case(c, o); }};
}

// Every tbb kernel family the issue names, on shapes that make several tasks.
std::vector<kernel_case> kernel_cases() {
    return {interp_kernel("interp_ncx_linear", interp({2, 8, 24, 24}, {2, 8, 48, 48}, "linear", false)),
            interp_kernel("interp_ncx_nearest", interp({2, 8, 24, 24}, {2, 8, 48, 48}, "nearest", false)),
            interp_kernel("interp_ncx_few_planes", interp({1, 2, 32, 32}, {1, 2, 64, 64}, "linear", false)),
            interp_kernel("interp_nxc_linear", interp({2, 24, 24, 16}, {2, 48, 48, 16}, "linear", true)),
            interp_kernel("interp_nxc_nearest", interp({2, 24, 24, 16}, {2, 48, 48, 16}, "nearest", true)),
            bn_kernel("bn_ncx", bn({4, 16, 16, 32}, false, -1)),
            bn_kernel("bn_ncx_short_rows", bn({4, 32, 7, 7}, false, -1)),
            bn_kernel("bn_ncx_few_channels", bn({4, 3, 16, 16}, false, -1)),
            bn_kernel("bn_nxc", bn({4, 8, 8, 32}, true, -1)),
            bn_kernel("relu_bn_ncx", bn({2, 8, 16, 32}, false, 1)),
            bn_kernel("relu_bn_nxc", bn({4, 8, 8, 32}, true, 1))};
}

// Counts the task bodies running at once (parallel.hpp's test census),
// holding each task hold_us first so that tasks overlap: also past the
// openmp runtime's first tiny pieces, which run on the caller alone.
class census_on {
public:
    explicit census_on(int hold_us) {
        c_.peak = 0;
        c_.running = 0;
        c_.hold_us = hold_us;
        c_.on = true;
    }
    ~census_on() {
        c_.on = false;
        c_.hold_us = 0;
    }
    int peak() const { return c_.peak.load(); }
    void reset() { c_.peak = 0; }

private:
    tbb_backend::task_census &c_ = tbb_backend::test_task_census();
};

TEST(Threading, SameBitsForEveryThreadCountAndRuntime) {
    const lowered_thresholds lowered;
    const census_on overlap(40);
    for (const kernel_case &k : kernel_cases()) {
        SCOPED_TRACE(k.name);
        std::vector<uint32_t> want;
        for (threading_runtime r : runtimes)
            for (int n : thread_counts) {
                SCOPED_TRACE(std::string(to_string(r)) + " threads " + std::to_string(n));
                const compiled_partition cp = k.compile(options(backend_kind::tbb, n, r));
                ASSERT_EQ(cp.get_backend(), backend_kind::tbb);
                port_buffers io(cp, 7);
                io.poison_outputs();
                io.execute(cp);
                if (want.empty()) want = io.output_bits();
                else EXPECT_EQ(io.output_bits(), want);
            }
    }
}

TEST(Threading, HostSettingsUnchangedByExecutes) {
    const host_state before;
    for (backend_kind b : in_build({backend_kind::tbb, backend_kind::dnnl}))
        for (threading_runtime r : runtimes)
            for (int n : thread_counts) {
                const std::string what = std::string(to_string(b)) + " " + to_string(r) + " threads " + std::to_string(n);
                for (const compiled_partition &cp :
                        {compile_interp_case(interp({2, 16, 16, 16}, {2, 16, 32, 32}, "linear", false), options(b, n, r)),
                                compile_bn_case(bn({4, 16, 16, 16}, false, -1), options(b, n, r))}) {
                    ASSERT_EQ(cp.get_backend(), b) << what;
                    port_buffers io(cp, 3);
                    io.execute(cp);
                    EXPECT_EQ(host_state(), before) << what << ": was " << text(before) << ", now " << text(host_state());
                }
            }
}

// A host thread with its own OpenMP setting (as PyTorch's set_num_threads
// leaves it) keeps it, whatever the partitions ask for.
TEST(Threading, HostThreadKeepsItsOwnOpenMPSetting) {
    std::string failure;
    std::thread host([&] {
        try {
            omp_set_num_threads(3);
            const host_state before;
            for (backend_kind b : in_build({backend_kind::tbb, backend_kind::dnnl}))
                for (int n : {1, 2}) {
                    const compiled_partition cp = compile_interp_case(
                            interp({1, 16, 16, 8}, {1, 32, 32, 8}, "linear", true), options(b, n, threading_runtime::openmp));
                    port_buffers io(cp, 5);
                    io.execute(cp);
                    EXPECT_EQ(host_state(), before) << to_string(b) << " threads " << n << ": " << text(host_state());
                }
        } catch (const std::exception &e) {
            failure = e.what();
        }
    });
    host.join();
    EXPECT_EQ(failure, "");
}

TEST(Threading, SetMaxThreadsIsTheLibraryDefaultOnly) {
    const host_state before;
    const int all = get_max_threads();
    EXPECT_GE(all, 1);
    set_max_threads(3);
    EXPECT_EQ(get_max_threads(), 3);
    EXPECT_EQ(host_state(), before) << text(host_state());
    // max_threads = 0 takes the default at compile.
    set_verbose(2);
    testing::internal::CaptureStderr();
    const compiled_partition cp = compile_bn_case(bn({2, 4, 4, 4}, false, -1), options(backend_kind::tbb, 0, threading_runtime::openmp));
    const std::string err = testing::internal::GetCapturedStderr();
    set_verbose(0);
    set_max_threads(0);
    EXPECT_EQ(get_max_threads(), all);
    EXPECT_NE(err.find("bpg_verbose,threads,bn_bwd,BatchNormTrainingBackprop:1,tbb,threads=3 runtime=openmp one_task\n"),
            std::string::npos)
            << err;
    expect_error([] { set_max_threads(-1); }, status::invalid_argument, {"set_max_threads: -1", "must be in [0, "});
}

TEST(Threading, BadOptionsAreClearErrors) {
    const bn_case c = bn({2, 4, 4, 4}, false, -1);
    expect_error([&] { compile_bn_case(c, options(backend_kind::tbb, -1, threading_runtime::tbb_arena)); },
            status::invalid_argument, {"compile_options.max_threads = -1", "must be in [0, "});
    expect_error([&] { compile_bn_case(c, options(backend_kind::tbb, 1 << 20, threading_runtime::tbb_arena)); },
            status::invalid_argument, {"compile_options.max_threads = 1048576"});
    expect_error([&] { compile_bn_case(c, options(backend_kind::tbb, 1, threading_runtime(7))); },
            status::invalid_argument, {"compile_options.runtime = 7", "tbb_arena or openmp"});
    EXPECT_STREQ(to_string(threading_runtime::tbb_arena), "tbb_arena");
    EXPECT_STREQ(to_string(threading_runtime::openmp), "openmp");
}

TEST(Threading, NeverMoreTasksAtOnceThanMaxThreads) {
    const lowered_thresholds lowered;
    // Several tasks each; the census holds each task 0.3 ms so that they overlap.
    const std::vector<kernel_case> cases = {
            interp_kernel("interp_ncx", interp({4, 8, 64, 64}, {4, 8, 128, 128}, "linear", false)),
            interp_kernel("interp_nxc", interp({2, 32, 32, 32}, {2, 64, 64, 32}, "linear", true)),
            bn_kernel("relu_bn_ncx", bn({4, 16, 64, 64}, false, 1)),
            bn_kernel("bn_nxc", bn({8, 32, 32, 32}, true, -1))};
    census_on census(300);
    int widest = 0;
    for (const kernel_case &k : cases)
        for (threading_runtime r : runtimes)
            for (int n : thread_counts) {
                const compiled_partition cp = k.compile(options(backend_kind::tbb, n, r));
                port_buffers io(cp, 9);
                for (int rep = 0; rep < 2; ++rep) {
                    census.reset();
                    io.execute(cp);
                    EXPECT_GE(census.peak(), 1) << k.name << " " << to_string(r) << " threads " << n;
                    EXPECT_LE(census.peak(), n) << k.name << " " << to_string(r) << " threads " << n;
                    widest = std::max(widest, census.peak());
                }
            }
    // The census sees parallel tasks at all (so the bound above means something).
    EXPECT_GE(widest, 2);
}

// The threads of this process, from /proc (Linux).
int process_threads() {
    int n = 0;
    for ([[maybe_unused]] const auto &entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
}

// In a fresh process (a death test re-runs the binary): compiling a tbb
// partition that runs parallel tasks starts oneTBB's workers, so that its
// first execute need not wait for them (docs/overhead.md).
TEST(Threading, CompileStartsTheArenasWorkers) {
    if (tbb::info::default_concurrency() < 2) GTEST_SKIP() << "one core: no workers";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
            {
                const int before = process_threads();
                const compiled_partition cp = compile_bn_case(bn({4, 16, 64, 64}, false, -1),
                        options(backend_kind::tbb, 2, threading_runtime::tbb_arena));
                const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                while (process_threads() <= before && std::chrono::steady_clock::now() < until)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                std::exit(process_threads() > before ? 0 : 1);
            },
            testing::ExitedWithCode(0), "");
}

// A partition destroyed right after its compile, with the task that starts
// the workers maybe still queued: nothing is left behind (ASan/TSan builds).
TEST(Threading, PartitionsDestroyedRightAfterCompile) {
    for (int i = 0; i < 50; ++i)
        for (int n : {2, 3}) {
            const compiled_partition cp = compile_interp_case(interp({2, 8, 24, 24}, {2, 8, 48, 48}, "linear", false),
                    options(backend_kind::tbb, n, threading_runtime::tbb_arena));
            EXPECT_EQ(cp.get_backend(), backend_kind::tbb);
        }
}

TEST(Threading, TasksAtOnceIsTheRunsMaxThreads) {
    const core::run_threads run {3, threading_runtime::openmp};
    {
        const core::run_scope scope(run);
        EXPECT_EQ(tbb_backend::tasks_at_once(), 3);
        const core::run_threads inner {1, threading_runtime::tbb_arena};
        {
            const core::run_scope nested(inner);
            EXPECT_EQ(tbb_backend::tasks_at_once(), 1);
        }
        EXPECT_EQ(tbb_backend::tasks_at_once(), 3);
    }
    EXPECT_EQ(core::current_run(), nullptr);
    tbb::task_arena(2).execute([] { EXPECT_EQ(tbb_backend::tasks_at_once(), 2); });
}

} // namespace
} // namespace bpg::test
