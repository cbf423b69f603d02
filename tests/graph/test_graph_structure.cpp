// Graph-level rules (ids, producers, cycles, lifecycle) and the partitioning
// passes (ReLUBackprop -> BatchNormTrainingBackprop fusion).
#include "graph/op_spec.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

using A = op::attr;
using K = op::kind;
constexpr data_type f32 = data_type::f32;

op relu(size_t id, size_t in, size_t dd, size_t out, dims d = {1, 3, 4, 4}) {
    return op(id, K::ReLUBackprop, {lt(in, f32, d), lt(dd, f32, d)}, {lt(out, f32, d)}, "relu");
}

op bn(size_t id, size_t src, size_t dd, size_t first_stat, size_t out, dims d = {1, 3, 4, 4}) {
    op o(id, K::BatchNormTrainingBackprop,
            {lt(src, f32, d), lt(dd, f32, d), lt(first_stat, f32, {3}), lt(first_stat + 1, f32, {3})},
            {lt(out, f32, d)}, "bn");
    o.set_attr(A::epsilon, 0.001f).set_attr(A::data_format, "NCX");
    return o;
}


TEST(GraphStructure, OpIdCollisionIsRejected) {
    graph g;
    g.add_op(relu(1, 0, 1, 2));
    expect_error([&] { g.add_op(relu(1, 3, 4, 5)); }, status::invalid_graph, {"op id 1 is already used"});
}

TEST(GraphStructure, TensorProducedTwiceIsRejected) {
    graph g;
    g.add_op(relu(1, 0, 1, 2));
    expect_error([&] { g.add_op(relu(2, 3, 4, 2)); }, status::invalid_graph, {"a tensor has at most one producer"});
}

TEST(GraphStructure, TensorIdReusedWithOtherDtypeOrShapeIsRejected) {
    graph g;
    g.add_op(relu(1, 0, 1, 2));
    op other(2, K::ReLUBackprop, {lt(2, data_type::bf16, {1, 3, 4, 4}), lt(3, data_type::bf16, {1, 3, 4, 4})},
            {lt(4, data_type::bf16, {1, 3, 4, 4})});
    expect_error([&] { g.add_op(other); }, status::invalid_graph, {"tensor 2 has data type bf16"});
    expect_error([&] { g.add_op(relu(3, 2, 5, 6, {1, 3, 4, 5})); }, status::invalid_graph, {"another shape"});
}

TEST(GraphStructure, CycleIsRejectedAtFinalize) {
    graph g;
    g.add_op(relu(1, 0, 1, 2));
    g.add_op(relu(2, 2, 3, 0)); // consumes 2, produces 0 which op 1 consumes
    expect_error([&] { g.finalize(); }, status::invalid_graph, {"cycle"});
}

TEST(GraphStructure, LifecycleErrors) {
    graph g;
    expect_error([&] { g.finalize(); }, status::invalid_graph, {"no ops"});
    expect_error([&] { (void)g.get_partitions(); }, status::invalid_graph, {"finalize() first"});
    g.add_op(relu(1, 0, 1, 2));
    g.finalize();
    expect_error([&] { g.add_op(relu(2, 3, 4, 5)); }, status::invalid_graph, {"finalized"});
}

TEST(GraphStructure, InputAndOutputTensors) {
    graph g;
    g.add_op(relu(1, 0, 1, 2));
    g.add_op(bn(2, 2, 3, 4, 6));
    std::vector<size_t> in, out;
    for (auto &t : g.get_input_tensors()) in.push_back(t.get_id());
    for (auto &t : g.get_output_tensors()) out.push_back(t.get_id());
    EXPECT_EQ(in, (std::vector<size_t> {0, 1, 3, 4, 5}));
    EXPECT_EQ(out, (std::vector<size_t> {6}));
}

TEST(Partitioning, ReluFeedingBnSrcIsFused) {
    graph g;
    g.add_op(relu(1, 0, 1, 2));
    g.add_op(bn(2, 2, 3, 4, 6));
    g.finalize();
    auto parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_EQ(parts[0].get_pattern_name(), "relu_bwd+bn_bwd");
    EXPECT_EQ(parts[0].get_ops(), (std::vector<size_t> {1, 2}));
    std::vector<size_t> in;
    for (auto &t : parts[0].get_input_ports()) in.push_back(t.get_id());
    EXPECT_EQ(in, (std::vector<size_t> {0, 1, 3, 4, 5})); // tensor 2 is internal
    ASSERT_EQ(parts[0].get_output_ports().size(), 1u);
    EXPECT_EQ(parts[0].get_output_ports()[0].get_id(), 6u);
}

TEST(Partitioning, DebugPolicyGivesEveryOpItsOwnPartition) {
    graph g;
    g.add_op(relu(1, 0, 1, 2));
    g.add_op(bn(2, 2, 3, 4, 6));
    g.finalize();
    EXPECT_EQ(g.get_partitions().size(), 1u);
    auto parts = g.get_partitions(partition_policy::debug);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0].get_pattern_name(), "relu_bwd");
    EXPECT_EQ(parts[1].get_pattern_name(), "bn_bwd");
    // The intermediate tensor is a port of both now.
    EXPECT_EQ(parts[0].get_output_ports()[0].get_id(), 2u);
    EXPECT_EQ(parts[1].get_input_ports()[0].get_id(), 2u);
}

TEST(Partitioning, ReluFeedingBnDiffDstIsFused) {
    graph g;
    g.add_op(bn(2, 0, 2, 4, 6)); // added first: order of add_op does not matter
    g.add_op(relu(1, 7, 1, 2));
    g.finalize();
    auto parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 1u);
    EXPECT_EQ(parts[0].get_pattern_name(), "relu_bwd+bn_bwd");
    EXPECT_EQ(parts[0].get_ops(), (std::vector<size_t> {1, 2})); // execution order
}

TEST(Partitioning, ReluWithTwoConsumersIsNotFused) {
    graph g;
    g.add_op(relu(1, 0, 1, 2));
    g.add_op(bn(2, 2, 3, 4, 6));
    g.add_op(relu(3, 2, 8, 9)); // also reads tensor 2
    g.finalize();
    auto parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 3u);
    for (auto &p : parts) EXPECT_NE(p.get_pattern_name(), "relu_bwd+bn_bwd");
    // The ReLU partition exposes tensor 2 as an output port.
    EXPECT_EQ(parts[0].get_output_ports()[0].get_id(), 2u);
}

} // namespace
} // namespace bpg::test
