// The SyncBatchNorm ops (BatchNormTrainingBackpropSums, ...FromSums,
// BatchNormForwardSums) through JSON: written under their own names with
// global_count as an s64, read back to the same ops, and run by a graph.
#include <gtest/gtest.h>

#include "bpg/json.hpp"

namespace bpg::test {
namespace {

logical_tensor f32(size_t id, const dims &d) { return logical_tensor(id, data_type::f32, d, layout_type::strided); }

TEST(JsonBnSplit, TheSplitOpsRoundTrip) {
    const dims x {2, 3, 4, 5}, c {3};
    op fwd(0, op::kind::BatchNormForwardSums, {f32(0, x), f32(2, c)}, {f32(10, c), f32(11, c)});
    fwd.set_attr(op::attr::data_format, "NCX");
    op sums(1, op::kind::BatchNormTrainingBackpropSums, {f32(0, x), f32(1, x), f32(2, c)}, {f32(8, c), f32(9, c)});
    sums.set_attr(op::attr::data_format, "NCX");
    op from(2, op::kind::BatchNormTrainingBackpropFromSums,
            {f32(0, x), f32(1, x), f32(2, c), f32(3, c), f32(8, c), f32(9, c)}, {f32(5, x)});
    from.set_attr(op::attr::data_format, "NCX").set_attr(op::attr::epsilon, 1e-5f);
    from.set_attr(op::attr::global_count, int64_t(80));
    graph g;
    for (const op &o : {fwd, sums, from}) g.add_op(o);
    g.finalize();
    const std::string text = write_graph_json(document_of(g));
    for (const char *name : {"\"BatchNormForwardSums\"", "\"BatchNormTrainingBackpropSums\"",
                 "\"BatchNormTrainingBackpropFromSums\"", "\"global_count\""})
        EXPECT_NE(text.find(name), std::string::npos) << name << " in " << text;
    const graph_document back = parse_graph_json(text);
    ASSERT_EQ(back.ops.size(), 3u);
    EXPECT_EQ(back.ops[0].get_kind(), op::kind::BatchNormForwardSums);
    EXPECT_EQ(back.ops[1].get_kind(), op::kind::BatchNormTrainingBackpropSums);
    EXPECT_EQ(back.ops[2].get_kind(), op::kind::BatchNormTrainingBackpropFromSums);
    EXPECT_EQ(std::get<int64_t>(*back.ops[2].find_attr(op::attr::global_count)), 80);
    // The sums feed the FromSums op: three partitions, one per op.
    EXPECT_EQ(make_graph(back).get_partitions().size(), 3u);
}

} // namespace
} // namespace bpg::test
