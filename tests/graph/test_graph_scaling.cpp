// Building a graph is near-linear in its op count: add_op looks ids up in
// hash maps, finalize's topological sort takes the ready op of lowest
// insertion index from a heap, partitioning and the partition ports use maps
// by tensor id. A quadratic step makes 4x the ops cost 16x the time; the
// bound below (8x) leaves a linear build twice its expected 4x as margin.
#include <algorithm>
#include <ctime>

#include "graph/op_spec.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

constexpr data_type f32 = data_type::f32;

// A chain of n ReLUBackprop ops: op i reads tensor i (the previous op's
// output) and its own diff_dst, and writes tensor i + 1. Added last op
// first, so the topological sort must reorder every op.
graph reversed_chain(size_t n) {
    const dims d = {2, 3};
    graph g;
    for (size_t k = 0; k < n; ++k) {
        const size_t i = n - 1 - k;
        g.add_op(op(i, op::kind::ReLUBackprop, {lt(i, f32, d), lt(1000000 + i, f32, d)}, {lt(i + 1, f32, d)}));
    }
    g.finalize();
    return g;
}

// CPU time of this thread: other processes on the machine do not count.
double thread_seconds() {
    timespec t {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double seconds_to_build(size_t n) {
    double best = 1e9;
    for (int run = 0; run < 3; ++run) { // the fastest run: the least disturbed
        const double start = thread_seconds();
        const graph g = reversed_chain(n);
        best = std::min(best, thread_seconds() - start);
        EXPECT_EQ(g.get_partitions().size(), n);
    }
    return best;
}

TEST(GraphScaling, FourTimesTheOpsTakeLessThanEightTimesTheTime) {
    const size_t n = 5000;
    const double small = seconds_to_build(n), large = seconds_to_build(4 * n);
    EXPECT_LT(large, 8 * small) << n << " ops: " << small << " s, " << 4 * n << " ops: " << large << " s";
}

// The order of partitions is the topological order with ties in insertion
// order, however the ops were added.
TEST(GraphScaling, PartitionsFollowTheChainNotTheInsertionOrder) {
    const graph g = reversed_chain(50);
    const std::vector<partition> parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 50u);
    for (size_t i = 0; i < parts.size(); ++i) {
        EXPECT_EQ(parts[i].get_id(), i);
        EXPECT_EQ(parts[i].get_ops(), std::vector<size_t> {i});
    }
}

TEST(GraphScaling, IndependentOpsKeepInsertionOrder) {
    const dims d = {2, 3};
    graph g;
    const size_t ids[] = {7, 3, 9, 1};
    for (size_t k = 0; k < 4; ++k)
        g.add_op(op(ids[k], op::kind::ReLUBackprop, {lt(10 * k, f32, d), lt(10 * k + 1, f32, d)},
                {lt(10 * k + 2, f32, d)}));
    g.finalize();
    const std::vector<partition> parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 4u);
    for (size_t k = 0; k < 4; ++k) EXPECT_EQ(parts[k].get_ops(), std::vector<size_t> {ids[k]});
}

// add_op keeps, per tensor id, what every earlier use knows: a use of unknown
// rank does not hide a rank another use gave.
TEST(GraphScaling, TensorFactsCombineEveryEarlierUse) {
    graph g;
    g.add_op(op(1, op::kind::ReLUBackprop, {logical_tensor(5, f32), logical_tensor(6, f32)}, {logical_tensor(7, f32)}));
    g.add_op(op(2, op::kind::ReLUBackprop, {lt(5, f32, {2, -1}), lt(8, f32, {2, 3})}, {lt(9, f32, {2, 3})}));
    g.add_op(op(3, op::kind::ReLUBackprop, {lt(5, f32, {-1, 3}), lt(10, f32, {2, 3})}, {lt(11, f32, {2, 3})}));
    expect_error([&] {
        g.add_op(op(4, op::kind::ReLUBackprop, {lt(5, f32, {2, 3, 1}), lt(12, f32, {2, 3, 1})}, {lt(13, f32, {2, 3, 1})}));
    }, status::invalid_graph, {"ReLUBackprop op 4", "tensor 5 has another rank"});
    expect_error([&] {
        g.add_op(op(4, op::kind::ReLUBackprop, {lt(5, f32, {2, 4}), lt(12, f32, {2, 4})}, {lt(13, f32, {2, 4})}));
    }, status::invalid_graph, {"ReLUBackprop op 4", "tensor 5 has another shape"});
    // A refused op leaves no trace: its id and output are free again.
    g.add_op(op(4, op::kind::ReLUBackprop, {lt(5, f32, {2, 3}), lt(12, f32, {2, 3})}, {lt(13, f32, {2, 3})}));
    EXPECT_NO_THROW(g.finalize());
}

} // namespace
} // namespace bpg::test
