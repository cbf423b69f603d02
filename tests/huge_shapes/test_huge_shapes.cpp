// Tensors of more than 2^31 elements: every offset is 64-bit. Two f32
// InterpolateBackprop runs (nearest, half_pixel, exact factor 2 on the
// innermost axis, so each diff_src element has a closed form):
//   upsample:   diff_dst has 2^31 + 2^19 elements (read past 2^31),
//               diff_src[.., w] = diff_dst[.., 2w] + diff_dst[.., 2w+1];
//   downsample: diff_src has 2^31 + 2^19 elements (written past 2^31),
//               diff_src[.., 2o+1] = diff_dst[.., o], diff_src[.., 2o] = 0.
// diff_dst is 1 everywhere except a few marked elements whose reads or
// writes land beyond 2^31; every diff_src element is checked.
// src is shape-only for this op: its buffer is allocated but never touched,
// so each run keeps about 13 GiB resident. The test skips, saying so, when
// /proc/meminfo's MemAvailable is smaller. The two runs are one test, one
// after the other (ctest -j would otherwise run them at once). Named
// HugeShapes so that the sanitizer run can leave it out
// (scripts/test-sanitizers.sh).
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "bpg/graph.hpp"

namespace bpg::test {
namespace {

constexpr int64_t two31 = int64_t(1) << 31;

// MemAvailable in bytes, or 0 when unknown.
int64_t mem_available() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    int64_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return 0;
}

int64_t count_of(const dims &d) {
    int64_t n = 1;
    for (dim x : d) n *= x;
    return n;
}

// An uninitialised f32 buffer (its pages cost nothing until written).
std::unique_ptr<float[]> raw_floats(int64_t n) { return std::unique_ptr<float[]>(new float[size_t(n)]); }

struct huge_run {
    dims src, dd;
    std::unique_ptr<float[]> diff_dst, diff_src;
};

// Runs nearest InterpolateBackprop src <- dd with diff_dst = 1 except
// `marks` (flat index -> value).
void run(huge_run &r, const std::vector<std::pair<int64_t, float>> &marks) {
    const int64_t touched = (count_of(r.dd) + count_of(r.src)) * int64_t(sizeof(float));
    const int64_t need = touched + (int64_t(1) << 30);
    if (mem_available() < need)
        GTEST_SKIP() << "needs " << (need >> 20) << " MiB available for two f32 tensors of up to 2^31 + 2^19 elements, "
                     << "/proc/meminfo says " << (mem_available() >> 20) << " MiB";
    op o(0, op::kind::InterpolateBackprop, {logical_tensor(0, data_type::f32, r.src), logical_tensor(1, data_type::f32, r.dd)},
            {logical_tensor(2, data_type::f32)}, "HUGE");
    o.set_attr(op::attr::mode, "nearest").set_attr(op::attr::data_format, "NCX");
    o.set_attr(op::attr::sizes, std::vector<int64_t>(r.dd.begin() + 2, r.dd.end()));
    graph g;
    g.add_op(o);
    g.finalize();
    const partition p = g.get_partitions()[0];
    const compiled_partition cp = p.compile(p.get_input_ports(), p.get_output_ports(), engine());
    const auto src = raw_floats(count_of(r.src)); // shape-only input: never read
    r.diff_dst = raw_floats(count_of(r.dd));
    std::fill(r.diff_dst.get(), r.diff_dst.get() + count_of(r.dd), 1.f);
    for (const auto &[at, v] : marks) r.diff_dst[size_t(at)] = v;
    r.diff_src = raw_floats(count_of(r.src));
    cp.execute(stream(engine()), {tensor(cp.query_logical_tensor(0), engine(), src.get()), tensor(cp.query_logical_tensor(1), engine(), r.diff_dst.get())},
            {tensor(cp.query_logical_tensor(2), engine(), r.diff_src.get())});
}

// Counts elements that differ from want(i), reporting the first few.
template <typename F> int64_t count_wrong(const float *got, int64_t n, F want) {
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i)
        if (got[i] != want(i) && ++wrong <= 5)
            ADD_FAILURE() << "diff_src[" << i << "] = " << got[i] << ", want " << want(i);
    return wrong;
}

// Upsample: diff_dst has 2^31 + 2^19 elements, read past 2^31.
void upsample_reads_diff_dst_past_2_to_31() {
    const int64_t w = (int64_t(1) << 15) + 8;
    huge_run r {{2, 2, 8192, w}, {2, 2, 8192, 2 * w}, nullptr, nullptr};
    ASSERT_GT(count_of(r.dd), two31);
    // Marked diff_dst elements past 2^31, and the diff_src element each feeds.
    const std::vector<std::pair<int64_t, float>> marks = {
            {two31, 64.f}, {two31 + 1, 128.f}, {two31 + 12345, 256.f}, {count_of(r.dd) - 1, 512.f}};
    run(r, marks);
    if (!r.diff_src) return; // skipped
    auto want = [&](int64_t i) {
        float v = 2.f;
        for (const auto &[at, m] : marks)
            if (at / 2 == i) v += m - 1.f; // diff_dst flat 2i and 2i+1 feed diff_src flat i
        return v;
    };
    EXPECT_EQ(count_wrong(r.diff_src.get(), count_of(r.src), want), 0);
}

// Downsample: diff_src has 2^31 + 2^19 elements, written past 2^31.
void downsample_writes_diff_src_past_2_to_31() {
    const int64_t w = (int64_t(1) << 15) + 8;
    huge_run r {{2, 2, 8192, 2 * w}, {2, 2, 8192, w}, nullptr, nullptr};
    ASSERT_GT(count_of(r.src), two31);
    // diff_dst flat o feeds diff_src flat 2o+1: these land past 2^31.
    const int64_t o1 = two31 / 2 + 3, o2 = count_of(r.dd) - 1;
    const std::vector<std::pair<int64_t, float>> marks = {{o1, 64.f}, {o2, 128.f}};
    run(r, marks);
    if (!r.diff_src) return;
    auto want = [&](int64_t i) {
        if (i % 2 == 0) return 0.f;
        for (const auto &[at, m] : marks)
            if (2 * at + 1 == i) return m;
        return 1.f;
    };
    EXPECT_EQ(count_wrong(r.diff_src.get(), count_of(r.src), want), 0);
}

// One test, so the two ~13 GiB runs never overlap, even under ctest -j.
TEST(HugeShapes, ReadAndWritePast2To31) {
    upsample_reads_diff_dst_past_2_to_31();
    if (IsSkipped()) return;
    downsample_writes_diff_src_past_2_to_31();
}

} // namespace
} // namespace bpg::test
