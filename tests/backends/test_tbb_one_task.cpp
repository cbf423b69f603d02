// One-task runs of small tbb partitions (issue 25): a plan small enough runs
// every task in turn on the calling thread, with no arena and no loop, and
// says so on its BPG_VERBOSE=2 threads line. Its results equal the
// reference's, and bit for bit those of the same problem cut into parallel
// tasks (size thresholds lowered) with 1 and 3 threads, in both layouts and
// f32, bf16 and f16.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/tbb/size_thresholds.hpp"
#include "bpg/verbose.hpp"
#include "support/bn_case.hpp"
#include "support/interp_case.hpp"
#include "support/small_partitions.hpp"

namespace bpg::test {
namespace {

constexpr data_type dtypes[] = {data_type::f32, data_type::bf16, data_type::f16};

compile_options tbb_threads(int n) {
    compile_options o;
    o.backend = backend_kind::tbb;
    o.max_threads = n;
    return o;
}

// The threads line of compiling with `compile` at verbose level 2.
template <typename Compile> std::string threads_line(Compile &&compile) {
    set_verbose(2);
    testing::internal::CaptureStderr();
    compile();
    const std::string err = testing::internal::GetCapturedStderr();
    set_verbose(0);
    const size_t at = err.find("bpg_verbose,threads,");
    return at == std::string::npos ? std::string() : err.substr(at, err.find('\n', at) - at);
}

// Outputs' bits with 1 and 3 threads, then cut into tasks (thresholds
// lowered: no one-task run) with 3; the first two must run as one task.
template <typename Compile> void expect_same_bits_as_parallel_tasks(Compile &&compile) {
    std::vector<uint32_t> want;
    for (int n : {1, 3}) {
        SCOPED_TRACE("threads " + std::to_string(n));
        EXPECT_NE(threads_line([&] { compile(tbb_threads(n)); }).find(" one_task"), std::string::npos);
        const compiled_partition cp = compile(tbb_threads(n));
        port_buffers io(cp, 11);
        io.poison_outputs();
        io.execute(cp);
        if (want.empty()) want = io.output_bits();
        else EXPECT_EQ(io.output_bits(), want);
    }
    struct lowered {
        lowered() { tbb_backend::test_size_threshold_shift() = 12; }
        ~lowered() { tbb_backend::test_size_threshold_shift() = 0; }
    } knob;
    EXPECT_EQ(threads_line([&] { compile(tbb_threads(3)); }).find(" one_task"), std::string::npos);
    const compiled_partition cp = compile(tbb_threads(3));
    port_buffers io(cp, 11);
    io.poison_outputs();
    io.execute(cp);
    EXPECT_EQ(io.output_bits(), want) << "one task against parallel tasks";
}

std::vector<interp_case> tiny_interpolates() {
    std::vector<interp_case> cases;
    for (const char *mode : {"linear", "nearest"})
        for (bool nxc : {false, true})
            for (data_type dt : dtypes) {
                interp_case c;
                c.mode = mode;
                c.nxc = nxc;
                c.dt = dt;
                // The 1x1x2x2 <- 1x1x4x4; channels-last with 3 channels, so that C is a run.
                c.src = nxc ? dims {1, 2, 2, 3} : dims {1, 1, 2, 2};
                c.dst = nxc ? dims {1, 4, 4, 3} : dims {1, 1, 4, 4};
                cases.push_back(c);
                // Several planes and an odd size: one task still walks every plane.
                c.src = nxc ? dims {2, 3, 5, 4} : dims {2, 3, 3, 5};
                c.dst = nxc ? dims {2, 6, 9, 4} : dims {2, 3, 6, 9};
                cases.push_back(c);
            }
    return cases;
}

TEST(TbbOneTask, TinyInterpolateMatchesTheReference) {
    for (const interp_case &c : tiny_interpolates()) {
        SCOPED_TRACE(c.name());
        const std::vector<float> dd = diff_dst_values(c, 5);
        expect_interp_close(run_interp(c, backend_kind::tbb, dd), run_interp(c, backend_kind::ref, dd), c.dt, c.name());
    }
}

TEST(TbbOneTask, TinyInterpolateHasTheBitsOfParallelTasks) {
    for (const interp_case &c : tiny_interpolates()) {
        SCOPED_TRACE(c.name());
        expect_same_bits_as_parallel_tasks([&](const compile_options &o) { return compile_interp_case(c, o); });
    }
}

std::vector<bn_case> tiny_batchnorms() {
    std::vector<bn_case> cases;
    for (bool nxc : {false, true})
        for (data_type dt : dtypes)
            for (int relu : {-1, 0, 1}) {
                bn_case c;
                c.shape = nxc ? dims {1, 2, 2, 3} : dims {1, 1, 2, 2};
                c.stat_shape = {nxc ? 3 : 1};
                c.nxc = nxc;
                c.dt = dt; // statistics f32 (the only type f16 data allows)
                c.relu = relu;
                cases.push_back(c);
            }
    return cases;
}

TEST(TbbOneTask, TinyBatchNormMatchesTheReference) {
    for (const bn_case &c : tiny_batchnorms()) {
        SCOPED_TRACE(c.name());
        const auto in = bn_inputs(c, 3);
        expect_bn_close(run_bn(c, backend_kind::tbb, in), run_bn(c, backend_kind::ref, in), c);
    }
}

TEST(TbbOneTask, TinyBatchNormHasTheBitsOfParallelTasks) {
    for (const bn_case &c : tiny_batchnorms()) {
        SCOPED_TRACE(c.name());
        expect_same_bits_as_parallel_tasks([&](const compile_options &o) { return compile_bn_case(c, o); });
    }
}

// A large problem keeps its parallel loop in the partition's arena.
TEST(TbbOneTask, LargeProblemsAreNotOneTask) {
    interp_case c;
    c.src = {2, 16, 32, 32};
    c.dst = {2, 16, 64, 64};
    const std::string line = threads_line([&] { compile_interp_case(c, tbb_threads(2)); });
    EXPECT_NE(line.find("threads=2 runtime=tbb_arena"), std::string::npos) << line;
    EXPECT_EQ(line.find("one_task"), std::string::npos) << line;
}

} // namespace
} // namespace bpg::test
