// Running out of memory while a partition executes. core::allocate is made to
// fail at its k-th call (k = 0, 1, ... up to the calls of a fault-free run)
// and for any request over b bytes: every partition kind on every backend
// then either gives the fault-free result, bit for bit, or throws
// bpg::error(out_of_memory) with its sentinel-filled outputs untouched.
// The cases reach the tbb working memory (task pools, dense copies of
// strided tensors, ReLU masks, non-temporal stages), the reference's
// accumulators and the fused partition's intermediate on ref.
#include <limits>
#include <optional>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "core/allocate.hpp"
#include "support/partition_kinds.hpp"
#include "support/backends_in_build.hpp"

namespace bpg::test {
namespace {

using PK = partition_kind;

// Puts the faults back off whatever happens in a test.
struct faults_off {
    faults_off() { reset(); }
    ~faults_off() { reset(); }
    static void reset() {
        core::test_allocation_faults().fail_after = -1;
        core::test_allocation_faults().fail_over = 0;
    }
};

std::vector<kind_case> cases() {
    const data_type f32 = data_type::f32, bf16 = data_type::bf16;
    return {
            {PK::interpolate_nearest, {2, 8, 16, 16}, false, f32},
            {PK::interpolate_linear, {2, 8, 16, 16}, false, f32, true}, // dense copy of diff_dst
            {PK::interpolate_linear, {2, 6, 10, 32}, true, f32},
            {PK::interpolate_linear, {2, 8, 16, 16}, false, bf16},      // 16-bit tile and ring
            {PK::interpolate_linear, {2, 16, 256, 256}, false, f32},    // non-temporal stage
            {PK::relu, {4, 16, 256, 256}, false, f32},                  // non-temporal stage
            {PK::bn, {2, 16, 8, 8}, false, f32},
            {PK::bn, {2, 8, 8, 37}, true, f32},                         // channels-last sums
            {PK::bn_global_stats, {2, 8, 8, 37}, true, bf16},
            {PK::bn_diff_src, {2, 16, 8, 8}, false, f32},
            {PK::relu_into_bn_src, {2, 8, 8, 32}, true, f32},           // the ReLU mask
            {PK::relu_into_bn_diff_dst, {2, 16, 8, 8}, false, f32},
            {PK::relu_into_bn_src, {16, 16, 128, 128}, false, f32},     // kept ReLU decisions
    };
}

// Runs cp with the faults set by `arm`; returns whether it threw out_of_memory.
template <typename Arm>
bool run_with_faults(const compiled_partition &cp, case_buffers &b, const std::vector<std::vector<uint8_t>> &want,
        Arm &&arm) {
    b.reset_outputs();
    arm();
    try {
        b.execute(cp);
    } catch (const error &e) {
        faults_off::reset();
        EXPECT_EQ(e.code(), status::out_of_memory) << e.what();
        EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
        EXPECT_TRUE(b.outputs_untouched()) << "an output was written before the failed allocation: " << e.what();
        return true;
    }
    faults_off::reset();
    EXPECT_TRUE(b.outputs() == want) << "a run that did not fail differs from the fault-free run";
    return false;
}

void check_backend(backend_kind backend, bool must_allocate) {
    const faults_off guard;
    int cases_allocating = 0;
    for (const kind_case &c : cases()) {
        SCOPED_TRACE(name_of(c));
        std::optional<compiled_partition> cp;
        try {
            cp = compile_case(c, backend);
        } catch (const error &e) {
            ASSERT_EQ(e.code(), status::unimplemented) << e.what();
            continue;
        }
        case_buffers b(*cp, 3, 0xA5);
        b.execute(*cp);
        const std::vector<std::vector<uint8_t>> want = b.outputs();
        // How many allocations a run makes (thread-local buffers kept from
        // earlier runs are not made again).
        constexpr int64_t plenty = int64_t(1) << 40;
        core::test_allocation_faults().fail_after = plenty;
        b.execute(*cp);
        const int64_t calls = plenty - core::test_allocation_faults().fail_after.load();
        faults_off::reset();
        int failures = 0;
        for (int64_t k = 0; k <= calls; ++k)
            failures += run_with_faults(*cp, b, want, [&] { core::test_allocation_faults().fail_after = k; });
        for (size_t over : {size_t(1), size_t(4096), size_t(1) << 20})
            failures += run_with_faults(*cp, b, want, [&] { core::test_allocation_faults().fail_over = over; });
        if (calls > 0) {
            ++cases_allocating;
            EXPECT_GT(failures, 0) << calls << " allocations, none of which could fail the run";
        }
    }
    if (must_allocate) {
        EXPECT_GT(cases_allocating, 0) << "no execute path allocated through core::allocate";
    }
}

TEST(AllocationFaults, TbbFailsCleanlyOrGivesTheSameBits) { check_backend(backend_kind::tbb, true); }
TEST(AllocationFaults, RefFailsCleanlyOrGivesTheSameBits) { check_backend(backend_kind::ref, true); }
// oneDNN's own allocations (primitive memory objects, streams) cannot be
// routed; ours (the scratchpad, kept per thread once made) are.
TEST(AllocationFaults, DnnlFailsCleanlyOrGivesTheSameBits) {
    BPG_SKIP_WITHOUT_DNNL();
    check_backend(backend_kind::dnnl, false);
}

// The fused ReLU+BN kernel never stores the ReLU's output, so its execute
// takes no buffer of that size (the executor used to allocate one per call).
TEST(AllocationFaults, FusedTbbPartitionAllocatesNoIntermediate) {
    const faults_off guard;
    const kind_case c {PK::relu_into_bn_diff_dst, {8, 16, 64, 64}, false, data_type::f32};
    const compiled_partition cp = compile_case(c, backend_kind::tbb);
    case_buffers b(cp, 5, 0xA5);
    b.execute(cp);
    const std::vector<std::vector<uint8_t>> want = b.outputs();
    const size_t intermediate = size_t(8 * 16 * 64 * 64) * sizeof(float);
    EXPECT_FALSE(run_with_faults(cp, b, want, [&] { core::test_allocation_faults().fail_over = intermediate / 4; }));
}

// Each case, a small plan, executes without one core::allocate; compiled
// again with the test thresholds lowered, it takes its working memory from
// core::allocate (so the first check is not vacuous).
void expect_small_plans_allocate_nothing(std::initializer_list<kind_case> small) {
    const faults_off guard;
    for (const kind_case &c : small) {
        SCOPED_TRACE(name_of(c));
        const compiled_partition cp = compile_case(c, backend_kind::tbb);
        case_buffers b(cp, 7, 0xA5);
        b.execute(cp);
        const std::vector<std::vector<uint8_t>> want = b.outputs();
        EXPECT_FALSE(run_with_faults(cp, b, want, [&] { core::test_allocation_faults().fail_after = 0; }));
        struct lowered {
            lowered() { tbb_backend::test_size_threshold_shift() = 12; }
            ~lowered() { tbb_backend::test_size_threshold_shift() = 0; }
        } knob;
        const compiled_partition heap_cp = compile_case(c, backend_kind::tbb);
        EXPECT_TRUE(run_with_faults(heap_cp, b, want, [&] { core::test_allocation_faults().fail_after = 0; }));
    }
}

// A small BatchNorm plan runs as one task with its working memory on the
// stack: an execute allocates nothing (per-call allocations had made a tiny
// call cost twice torch's).
TEST(AllocationFaults, SmallBatchNormAllocatesNothing) {
    expect_small_plans_allocate_nothing({kind_case {PK::bn, {2, 3, 4, 4}, false, data_type::f32},
            kind_case {PK::relu_into_bn_diff_dst, {2, 5, 3, 7}, false, data_type::f32}});
}

// So does a small interpolate plan, its scratch on the stack.
TEST(AllocationFaults, SmallInterpolateAllocatesNothing) {
    expect_small_plans_allocate_nothing({kind_case {PK::interpolate_linear, {1, 1, 2, 2}, false, data_type::f32},
            kind_case {PK::interpolate_nearest, {2, 3, 4, 5}, false, data_type::bf16},
            kind_case {PK::interpolate_linear, {1, 2, 2, 3}, true, data_type::f32},
            kind_case {PK::interpolate_linear, {2, 3, 2, 4}, true, data_type::f16}});
}

// A compiled tbb kernel keeps its working memory from one execute to the
// next (kept_memory.hpp): its first execute takes a block over 64 KB, later
// ones none (fresh blocks every call had cost page faults on each).
TEST(AllocationFaults, TbbKernelsKeepTheirWorkingMemory) {
    const faults_off guard;
    const size_t limit = size_t(64) << 10;
    const kind_case large[] = {
            {PK::relu_into_bn_src, {4, 128, 128, 32}, true, data_type::f32}, // the ReLU mask, 256 KB
            {PK::bn, {64, 2, 2, 4096}, true, data_type::f32},                // the chunks' partial sums
            {PK::interpolate_linear, {2, 16, 256, 256}, false, data_type::f32},
            {PK::relu_into_bn_src, {16, 8, 256, 256}, false, data_type::f32}, // a task's ReLU decisions, 128 KB
    };
    for (const kind_case &c : large) {
        // (The planar ReLU decisions are kept by the AVX-512 loops alone.)
        if (c.kind == PK::relu_into_bn_src && !c.nxc && !tbb_backend::has_avx512f()) continue;
        SCOPED_TRACE(name_of(c));
        const compiled_partition reference = compile_case(c, backend_kind::tbb);
        case_buffers b(reference, 11, 0xA5);
        b.execute(reference);
        const std::vector<std::vector<uint8_t>> want = b.outputs();
        const compiled_partition cp = compile_case(c, backend_kind::tbb);
        auto over_limit = [&] { core::test_allocation_faults().fail_over = limit; };
        EXPECT_TRUE(run_with_faults(cp, b, want, over_limit)) << "the first execute took no block over 64 KB";
        EXPECT_FALSE(run_with_faults(cp, b, want, [] {})); // takes the block that failed
        for (int i = 0; i < 2; ++i) EXPECT_FALSE(run_with_faults(cp, b, want, over_limit));
    }
}

} // namespace
} // namespace bpg::test
