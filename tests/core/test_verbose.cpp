// BPG_VERBOSE lines (include/bpg/verbose.hpp), captured in process through
// set_verbose: their fields at level 1, the dispatch and fusion decisions at
// level 2, and silence at level 0.
#include <sstream>

#include <gtest/gtest.h>

#include "bpg/bpg.hpp"
#include "bpg/verbose.hpp"
#include "support/backends_in_build.hpp"

namespace bpg::test {
namespace {

std::vector<std::string> lines_of(const std::string &text, const std::string &prefix) {
    std::vector<std::string> v;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);)
        if (l.rfind(prefix, 0) == 0) v.push_back(l);
    return v;
}

std::vector<std::string> fields_of(const std::string &line) {
    std::vector<std::string> f;
    std::istringstream is(line);
    for (std::string x; std::getline(is, x, ',');) f.push_back(x);
    return f;
}

// relu -> bn (fusable), and a second ReLUBackprop whose output is read twice
// (not fusable), so level 2 has both kinds of fusion decision.
graph make_graph() {
    const data_type f32 = data_type::f32;
    const dims act {2, 3, 4, 4}, ch {3};
    op relu(1, op::kind::ReLUBackprop, {logical_tensor(0, f32, act), logical_tensor(1, f32, act)},
            {logical_tensor(2, f32, act)});
    op bn(2, op::kind::BatchNormTrainingBackprop,
            {logical_tensor(3, f32, act), logical_tensor(2, f32, act), logical_tensor(4, f32, ch),
                    logical_tensor(5, f32, ch)},
            {logical_tensor(6, f32, act)});
    bn.set_attr(op::attr::epsilon, 1e-5f).set_attr(op::attr::data_format, "NCX");
    op relu2(3, op::kind::ReLUBackprop, {logical_tensor(0, f32, act), logical_tensor(6, f32, act)},
            {logical_tensor(7, f32, act)});
    op relu3(4, op::kind::ReLUBackprop, {logical_tensor(7, f32, act), logical_tensor(7, f32, act)},
            {logical_tensor(8, f32, act)});
    graph g;
    for (const op &o : {relu, bn, relu2, relu3}) g.add_op(o);
    g.finalize();
    return g;
}

std::string run_with_verbose(int level) {
    set_verbose(level);
    testing::internal::CaptureStderr();
    const graph g = make_graph();
    engine eng;
    std::vector<float> buf(6 * 96, 1.f);
    const partition p = g.get_partitions()[0]; // relu_bwd+bn_bwd
    compiled_partition cp = p.compile(p.get_input_ports(), {}, eng);
    std::vector<tensor> ins, outs;
    size_t k = 0;
    for (const logical_tensor &lt : cp.get_inputs()) ins.emplace_back(lt, eng, buf.data() + 96 * k++);
    for (const logical_tensor &lt : cp.get_outputs()) outs.emplace_back(lt, eng, buf.data() + 96 * k++);
    cp.execute(stream(eng), ins, outs);
    set_verbose(0);
    return testing::internal::GetCapturedStderr();
}

TEST(Verbose, LevelOneHasOneCompileAndOneExecLineWithEveryField) {
    const std::string err = run_with_verbose(1);
    const auto compile = lines_of(err, "bpg_verbose,compile,"), exec = lines_of(err, "bpg_verbose,exec,");
    ASSERT_EQ(compile.size(), 1u) << err;
    ASSERT_EQ(exec.size(), 1u) << err;
    EXPECT_TRUE(lines_of(err, "bpg_verbose,dispatch,").empty()) << err;
    EXPECT_TRUE(lines_of(err, "bpg_verbose,fusion,").empty()) << err;
    for (const std::string &line : {compile[0], exec[0]}) {
        const auto f = fields_of(line);
        ASSERT_EQ(f.size(), 8u) << line;
        EXPECT_EQ(f[2], "relu_bwd+bn_bwd");
        EXPECT_EQ(f[3], "ReLUBackprop:1;BatchNormTrainingBackprop:2");
        EXPECT_EQ(f[4], "tbb");
        EXPECT_NE(f[5].find("in=0:f32:2x3x4x4:48x16x4x1 "), std::string::npos) << f[5];
        EXPECT_NE(f[5].find(";out=6:f32:2x3x4x4:48x16x4x1"), std::string::npos) << f[5];
        // every attribute in effect, defaults included
        EXPECT_EQ(f[6], "op1{use_dst=true} op2{epsilon=1e-05;data_format=NCX;use_global_stats=false}");
        EXPECT_GE(std::stod(f[7]), 0.0) << f[7];
    }
}

TEST(Verbose, LevelTwoExplainsDispatchAndEveryFusionDecision) {
    const std::string err = run_with_verbose(2);
    const auto dispatch = lines_of(err, "bpg_verbose,dispatch,");
    ASSERT_EQ(dispatch.size(), 1u) << err;
    const std::string order = dnnl_in_build() ? "(tbb, dnnl, ref)" : "(tbb, ref)";
    EXPECT_EQ(dispatch[0].rfind("bpg_verbose,dispatch,relu_bwd+bn_bwd,ReLUBackprop:1;BatchNormTrainingBackprop:2,"
                                "tbb,first choice of the dispatch rule " + order, 0), 0u)
            << dispatch[0];
    const auto fusion = lines_of(err, "bpg_verbose,fusion,");
    ASSERT_EQ(fusion.size(), 3u) << err;
    EXPECT_NE(fusion[0].find(",ReLUBackprop:1;BatchNormTrainingBackprop:2,fused,"), std::string::npos) << fusion[0];
    EXPECT_NE(fusion[0].find("diff_dst (input 1)"), std::string::npos) << fusion[0];
    EXPECT_NE(fusion[1].find(",ReLUBackprop:3;ReLUBackprop:4,not_fused,"), std::string::npos) << fusion[1];
    EXPECT_NE(fusion[1].find("only BatchNormTrainingBackprop fuses"), std::string::npos) << fusion[1];
    EXPECT_NE(fusion[2].find(",ReLUBackprop:4,not_fused,output tensor 8 is read by 0 ops"), std::string::npos)
            << fusion[2];
    EXPECT_EQ(lines_of(err, "bpg_verbose,compile,").size(), 1u);
}

// The kernel path of every compiled partition, as get_kernel_path names it
// (a 2x3x4x4 f32 NCX partition: short planar rows, three channels).
TEST(Verbose, LevelTwoNamesTheKernelPathOfEveryPartition) {
    const std::string err = run_with_verbose(2);
    const auto path = lines_of(err, "bpg_verbose,path,");
    ASSERT_EQ(path.size(), lines_of(err, "bpg_verbose,compile,").size()) << err;
    const auto f = fields_of(path.at(0));
    ASSERT_EQ(f.size(), 6u) << path[0];
    EXPECT_EQ(f[2], "relu_bwd+bn_bwd");
    EXPECT_EQ(f[4], "tbb");
    EXPECT_EQ(f[5].rfind("bn:two_sweeps:sums=planar:update=planar", 0), 0u) << f[5];
    EXPECT_TRUE(lines_of(run_with_verbose(1), "bpg_verbose,path,").empty());
}

TEST(Verbose, LevelZeroIsSilent) {
    EXPECT_EQ(run_with_verbose(0).find("bpg_verbose"), std::string::npos);
}

} // namespace
} // namespace bpg::test
