// bpg-run on zero-size shapes (--in-shapes with a 0 axis), on every backend:
// exit 0, empty outputs written with their shapes, and BN's diff_gamma and
// diff_beta exactly 0 when N * spatial is 0.
#include <gtest/gtest.h>

#include "io/npy.hpp"
#include "support/backends_in_build.hpp"
#include "tools/tool_runner.hpp"

namespace bpg::test {
namespace {

struct zero_run {
    std::string file, shapes;
    std::vector<std::pair<size_t, dims>> outputs; // id, expected shape
    std::vector<size_t> zeros;                    // outputs whose bytes must all be 0
    bool fused = false;                           // a two-op partition: not on dnnl
};

const std::vector<zero_run> &runs() {
    static const std::vector<zero_run> all {
            {"bnorm_bwd.json", "0:0x192x4x4+1:0x192x4x4", {{5, {0, 192, 4, 4}}, {6, {192}}, {7, {192}}}, {6, 7}},
            {"bnorm_bwd.json", "0:2x192x0x4+1:2x192x0x4", {{5, {2, 192, 0, 4}}, {6, {192}}, {7, {192}}}, {6, 7}},
            {"bnorm_bwd.json", "0:2x0x4x4+1:2x0x4x4+2:0+3:0+4:0", {{5, {2, 0, 4, 4}}, {6, {0}}, {7, {0}}}, {}},
            {"bn_bwd_relu_bwd_fusion.json", "0:0x32x28x28+1:0x32x28x28+3:0x32x28x28",
                    {{7, {0, 32, 28, 28}}, {8, {32}}, {9, {32}}}, {8, 9}, true},
            {"interpolate_bwd.json", "0:0x17x7x14+1:0x17x6x12", {{2, {0, 17, 7, 14}}}, {}},
            {"interpolate_bwd.json", "0:2x0x7x14+1:2x0x6x12", {{2, {2, 0, 7, 14}}}, {}},
    };
    return all;
}

TEST(BpgRunZeroSizeConformance, EveryBackendWritesEmptyOutputsAndZeroSums) {
    BPG_REQUIRE_CONFORMANCE();
    for (const std::string &backend : in_build({"auto", "tbb", "dnnl", "ref"}))
        for (const zero_run &z : runs()) {
            if (z.fused && backend == "dnnl") continue;
            SCOPED_TRACE(std::string(backend) + " " + z.file + " " + z.shapes);
            const std::string out = temp_dir("zero-size-out");
            const tool_result r = run_tool("bpg-run", conformance(z.file) + " --backend " + backend
                            + " --in-shapes " + z.shapes + " --outputs " + out);
            ASSERT_EQ(r.exit_code, 0) << r.err;
            for (const auto &[id, shape] : z.outputs) {
                const io::npy_array a = io::read_npy(out + "/" + std::to_string(id) + ".npy");
                EXPECT_EQ(a.shape, shape) << "output " << id;
                if (std::find(z.zeros.begin(), z.zeros.end(), id) == z.zeros.end()) {
                    EXPECT_TRUE(a.data.empty()) << "output " << id;
                    continue;
                }
                EXPECT_FALSE(a.data.empty()) << "output " << id;
                for (uint8_t byte : a.data) ASSERT_EQ(byte, 0) << "output " << id << " is not all +0";
            }
        }
}

} // namespace
} // namespace bpg::test
