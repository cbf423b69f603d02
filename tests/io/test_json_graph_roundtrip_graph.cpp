// JSON documents through bpg::graph: make_graph (schema checks, finalize) and
// document_of back, for the four oneDNN conformance files.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "bpg/json.hpp"
#include "support/conformance.hpp"

namespace {

using namespace bpg;

const std::string conformance_dir = bpg::test::conformance("");
const char *const conformance_files[] = {"interpolate_bwd.json", "interpolate_bwd_2d.json",
        "bnorm_bwd.json", "bn_bwd_relu_bwd_fusion.json"};

std::vector<size_t> sorted(std::vector<size_t> v) {
    std::sort(v.begin(), v.end());
    return v;
}

TEST(JsonGraphThroughGraphConformance, ConformanceFilesBuildAndComeBack) {
    BPG_REQUIRE_CONFORMANCE();
    for (const char *file : conformance_files) {
        SCOPED_TRACE(file);
        const graph_document doc = read_graph_json_file(conformance_dir + file);
        const graph g = make_graph(doc);
        EXPECT_TRUE(g.is_finalized());
        EXPECT_FALSE(g.get_partitions().empty());
        const graph_document back = document_of(g);
        EXPECT_EQ(back.engine_kind, doc.engine_kind);
        EXPECT_EQ(back.fpmath, doc.fpmath);
        ASSERT_EQ(back.ops.size(), doc.ops.size());
        for (size_t i = 0; i < doc.ops.size(); ++i) {
            EXPECT_EQ(back.ops[i].get_id(), doc.ops[i].get_id());
            EXPECT_EQ(back.ops[i].get_kind(), doc.ops[i].get_kind());
            EXPECT_EQ(back.ops[i].get_name(), doc.ops[i].get_name());
            EXPECT_TRUE(back.ops[i].get_attrs() == doc.ops[i].get_attrs());
            EXPECT_TRUE(back.ops[i].get_inputs() == doc.ops[i].get_inputs());
            EXPECT_TRUE(back.ops[i].get_outputs() == doc.ops[i].get_outputs());
        }
        // The exported document is itself a loadable graph.
        EXPECT_NO_THROW(make_graph(parse_graph_json(write_graph_json(back))));
    }
}

TEST(JsonGraphThroughGraphConformance, PortsAreTheGraphBoundary) {
    BPG_REQUIRE_CONFORMANCE();
    const graph_document doc2d = read_graph_json_file(conformance_dir + "interpolate_bwd_2d.json");
    const graph_document back2d = document_of(make_graph(doc2d));
    EXPECT_TRUE(back2d.has_ports);
    EXPECT_EQ(sorted(back2d.input_ports), doc2d.input_ports);
    EXPECT_EQ(sorted(back2d.output_ports), doc2d.output_ports);

    const graph_document fused = document_of(
            make_graph(read_graph_json_file(conformance_dir + "bn_bwd_relu_bwd_fusion.json")));
    // Tensor 2 joins the two ops, so it is neither an input nor an output.
    EXPECT_EQ(sorted(fused.input_ports), (std::vector<size_t> {0, 1, 3, 4, 5, 6}));
    EXPECT_EQ(sorted(fused.output_ports), (std::vector<size_t> {7, 8, 9}));
}

TEST(JsonGraphThroughGraphConformance, PortsMustNameTensorsOfTheGraph) {
    BPG_REQUIRE_CONFORMANCE();
    graph_document doc = read_graph_json_file(conformance_dir + "interpolate_bwd_2d.json");
    doc.output_ports = {2, 42};
    try {
        make_graph(doc);
        ADD_FAILURE() << "no error";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_graph);
        EXPECT_NE(std::string(e.what()).find("output_ports[1]"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("42"), std::string::npos) << e.what();
    }
}

TEST(JsonGraphThroughGraphConformance, DuplicateOpIdsAreCaughtByTheGraph) {
    BPG_REQUIRE_CONFORMANCE();
    graph_document doc = read_graph_json_file(conformance_dir + "bn_bwd_relu_bwd_fusion.json");
    // Same id as the ReLU op; the parser leaves this check to graph::add_op.
    const op bn = doc.ops[1];
    op same_id(0, bn.get_kind(), bn.get_inputs(), bn.get_outputs(), bn.get_name());
    for (const auto &kv : bn.get_attrs()) same_id.set_attr(kv.first, kv.second);
    doc.ops[1] = same_id;
    try {
        make_graph(doc);
        ADD_FAILURE() << "no error";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_graph) << e.what();
    }
}

} // namespace
