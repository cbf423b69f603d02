// BPG_VERBOSE read from the environment by a program (bpg-run): level 1
// prints compile and exec lines, level 2 adds dispatch and fusion lines.
#include <cstdlib>

#include <gtest/gtest.h>

#include "tools/tool_runner.hpp"

namespace bpg::test {
namespace {

size_t count_lines(const std::string &text, const std::string &prefix) {
    size_t n = 0;
    for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1))
        if (at == 0 || text[at - 1] == '\n') ++n;
    return n;
}

tool_result run_with_env(const char *level) {
    ::setenv("BPG_VERBOSE", level, 1);
    const tool_result r = run_tool("bpg-run",
            std::string(BPG_SOURCE_DIR) + "/examples/graphs/decoder_block_bwd.json --repeat 1 --no-check");
    ::unsetenv("BPG_VERBOSE");
    return r;
}

TEST(BpgRunVerbose, EnvironmentVariableSelectsTheLevel) {
    const tool_result one = run_with_env("1");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    // two partitions: interpolate_bwd and relu_bwd+bn_bwd, each run once
    EXPECT_EQ(count_lines(one.err, "bpg_verbose,compile,"), 2u) << one.err;
    EXPECT_EQ(count_lines(one.err, "bpg_verbose,exec,"), 2u) << one.err;
    EXPECT_EQ(count_lines(one.err, "bpg_verbose,dispatch,"), 0u) << one.err;
    EXPECT_NE(one.err.find("bpg_verbose,compile,interpolate_bwd,InterpolateBackprop:0,tbb,in="), std::string::npos)
            << one.err;

    const tool_result two = run_with_env("2");
    ASSERT_EQ(two.exit_code, 0) << two.err;
    EXPECT_EQ(count_lines(two.err, "bpg_verbose,dispatch,"), 2u) << two.err;
    EXPECT_EQ(count_lines(two.err, "bpg_verbose,fusion,relu_bwd+bn_bwd,ReLUBackprop:1;BatchNormTrainingBackprop:2,fused,"), 1u)
            << two.err;

    const tool_result zero = run_with_env("0");
    EXPECT_EQ(zero.err.find("bpg_verbose"), std::string::npos) << zero.err;
}

} // namespace
} // namespace bpg::test
