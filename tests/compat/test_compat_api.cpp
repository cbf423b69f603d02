// The dnnl::graph API forms bpg accepts (docs/dnnl-graph-compat.md):
// attribute setters, logical tensor constructors, oneDNN op kinds that come
// back as unsupported partitions, graph::add_op's status form.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "bpg/dnnl_graph.hpp"
#include "bpg/json.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

const std::vector<int64_t> &s64s(const op &o, op::attr a) { return std::get<std::vector<int64_t>>(*o.find_attr(a)); }
const std::vector<float> &f32s(const op &o, op::attr a) { return std::get<std::vector<float>>(*o.find_attr(a)); }

TEST(CompatSetAttr, BracedListsAndAnyIntegerVectorBecomeS64Lists) {
    op o(0, op::kind::InterpolateBackward);
    o.set_attr(op::attr::sizes, {8, 8});
    EXPECT_EQ(s64s(o, op::attr::sizes), (std::vector<int64_t> {8, 8}));
    o.set_attr(op::attr::sizes, std::vector<int> {3, 4});
    EXPECT_EQ(s64s(o, op::attr::sizes), (std::vector<int64_t> {3, 4}));
    o.set_attr(op::attr::sizes, std::vector<size_t> {5, 6});
    EXPECT_EQ(s64s(o, op::attr::sizes), (std::vector<int64_t> {5, 6}));
    o.set_attr(op::attr::sizes, std::vector<uint32_t> {7});
    EXPECT_EQ(s64s(o, op::attr::sizes), (std::vector<int64_t> {7}));
    o.set_attr<std::vector<int64_t>>(op::attr::sizes, {9, 10}); // oneDNN's spelling
    EXPECT_EQ(s64s(o, op::attr::sizes), (std::vector<int64_t> {9, 10}));
}

TEST(CompatSetAttr, FloatListsScalarsAndStrings) {
    op o(0, op::kind::InterpolateBackward);
    o.set_attr(op::attr::scales, {2.f, 1.5f});
    EXPECT_EQ(f32s(o, op::attr::scales), (std::vector<float> {2.f, 1.5f}));
    o.set_attr(op::attr::scales, std::vector<double> {0.5, 4.0});
    EXPECT_EQ(f32s(o, op::attr::scales), (std::vector<float> {0.5f, 4.f}));
    o.set_attr(op::attr::scales, {2.0, 3.0});
    EXPECT_EQ(f32s(o, op::attr::scales), (std::vector<float> {2.f, 3.f}));
    o.set_attr<std::string>(op::attr::mode, "linear");
    EXPECT_EQ(std::get<std::string>(*o.find_attr(op::attr::mode)), "linear");
    o.set_attr(op::attr::mode, "nearest");
    EXPECT_EQ(std::get<std::string>(*o.find_attr(op::attr::mode)), "nearest");
    op b(1, op::kind::BatchNormTrainingBackward);
    b.set_attr<float>(op::attr::epsilon, 1e-3f);
    EXPECT_EQ(std::get<float>(*b.find_attr(op::attr::epsilon)), 1e-3f);
    b.set_attr(op::attr::epsilon, 1e-5); // a double literal
    EXPECT_EQ(std::get<float>(*b.find_attr(op::attr::epsilon)), 1e-5f);
    op r(2, op::kind::ReLUBackward);
    r.set_attr<bool>(op::attr::use_dst, false);
    EXPECT_FALSE(std::get<bool>(*r.find_attr(op::attr::use_dst)));
    op w(3, op::kind::Convolution);
    w.set_attr<int64_t>(op::attr::groups, 2).set_attr(op::attr::strides, std::vector<size_t> {1, 1});
    EXPECT_EQ(std::get<int64_t>(*w.find_attr(op::attr::groups)), 2);
}

TEST(CompatSetAttr, ValuesOutsideTheAttributeTypeAreRefused) {
    op o(4, op::kind::InterpolateBackward, "up");
    expect_error([&] { o.set_attr(op::attr::sizes, std::vector<uint64_t> {std::numeric_limits<uint64_t>::max()}); },
            status::invalid_argument, {"InterpolateBackprop op 4", "'sizes'", "18446744073709551615", "s64"});
    expect_error([&] { o.set_attr(op::attr::scales, {1e300, 1.0}); }, status::invalid_argument,
            {"'scales'", "f32"});
    EXPECT_FALSE(o.has_attr(op::attr::sizes));
}

TEST(CompatLogicalTensor, OneDnnConstructorsAndNestedTypes) {
    const logical_tensor rank4(1, logical_tensor::data_type::f32, 4, logical_tensor::layout_type::strided);
    EXPECT_EQ(rank4.ndims(), 4);
    EXPECT_EQ(rank4.get_dims(), (logical_tensor::dims {-1, -1, -1, -1}));
    EXPECT_FALSE(rank4.has_known_shape());
    const logical_tensor unknown(2, logical_tensor::data_type::f32, -1, logical_tensor::layout_type::any);
    EXPECT_EQ(unknown.ndims(), unknown_rank);
    const logical_tensor scalar(3, data_type::f32, 0, layout_type::strided);
    EXPECT_EQ(scalar.ndims(), 0);
    // A braced one-element shape stays a shape, not a rank.
    const logical_tensor vec(4, data_type::f32, {4}, layout_type::strided);
    EXPECT_EQ(vec.get_dims(), (dims {4}));
    const logical_tensor strided(5, data_type::f32, {2, 3}, {1, 2});
    EXPECT_EQ(strided.get_strides(), (dims {1, 2}));
    EXPECT_TRUE(strided.is_equal(strided));
    expect_error([] { logical_tensor(6, data_type::f32, -2, layout_type::strided); }, status::invalid_shape,
            {"logical tensor 6", "ndims -2"});
}

// Convolution -> ReLUBackward -> Wildcard -> End, shapes unknown around the
// foreign ops: the supported op in the middle, the rest for the framework.
graph mixed_graph() {
    graph g(engine::kind::cpu);
    op conv(10, op::kind::Convolution, "conv_bwd_stand_in");
    conv.add_input(logical_tensor(1, data_type::f32, -1, layout_type::strided));
    conv.add_input(logical_tensor(2, data_type::s8, 4, layout_type::strided));
    conv.add_output(logical_tensor(3, data_type::f32, -1, layout_type::strided));
    conv.set_attr(op::attr::strides, {1, 1}).set_attr(op::attr::auto_pad, "SAME_UPPER");
    g.add_op(conv);
    op relu(11, op::kind::ReLUBackward, {logical_tensor(4, data_type::f32, {2, 3, 4, 4}, layout_type::strided),
            logical_tensor(3, data_type::f32, -1, layout_type::strided)},
            {logical_tensor(5, data_type::f32, 4, layout_type::any)});
    g.add_op(relu);
    op w(12, op::kind::Wildcard);
    w.add_input(logical_tensor(5, data_type::undef, layout_type::undef));
    w.add_output(logical_tensor(6, data_type::f32, -1, layout_type::strided));
    g.add_op(w);
    op end(13, op::kind::End);
    end.add_input(logical_tensor(6, data_type::f32, -1, layout_type::strided));
    g.add_op(end);
    g.finalize();
    return g;
}

TEST(CompatUnsupported, ForeignOpsComeBackAsUnsupportedPartitionsInGraphOrder) {
    const graph g = mixed_graph();
    for (partition::policy pol : {partition::policy::fusion, partition::policy::debug}) {
        const std::vector<partition> parts = g.get_partitions(pol);
        ASSERT_EQ(parts.size(), 4u);
        const size_t ids[] = {10, 11, 12, 13};
        for (size_t i = 0; i < parts.size(); ++i) {
            EXPECT_EQ(parts[i].get_ops(), std::vector<size_t> {ids[i]});
            EXPECT_EQ(parts[i].get_ops_num(), 1u);
            EXPECT_EQ(parts[i].is_supported(), i == 1) << i;
            EXPECT_EQ(parts[i].get_engine_kind(), engine::kind::cpu);
        }
        EXPECT_EQ(parts[0].get_output_ports().at(0).get_id(), 3u);
        EXPECT_EQ(parts[3].get_input_ports().at(0).get_id(), 6u);
    }
}

TEST(CompatUnsupported, CompilingOneIsUnimplementedAndNamesTheOp) {
    const partition p = mixed_graph().get_partitions()[0];
    expect_error([&] { p.compile({}, {}, engine(engine::kind::cpu)); }, status::unimplemented,
            {"Convolution op 10", "\"conv_bwd_stand_in\"", "unsupported", "is_supported() == false"});
}

TEST(CompatUnsupported, TheSupportedPartitionBetweenThemRuns) {
    const partition p = mixed_graph().get_partitions()[1];
    const logical_tensor src(4, data_type::f32, {2, 3, 4, 4}, layout_type::strided);
    const logical_tensor diff(3, data_type::f32, {2, 3, 4, 4}, layout_type::strided);
    const compiled_partition cp = p.compile({src, diff}, {}, engine(engine::kind::cpu));
    std::vector<float> s(96), d(96, 2.f), out(96, -1.f);
    for (size_t i = 0; i < s.size(); ++i) s[i] = i % 2 ? 1.f : -1.f;
    const engine e(engine::kind::cpu);
    cp.execute(stream(e), {tensor(src, e, s.data()), tensor(diff, e, d.data())},
            {tensor(cp.query_logical_tensor(5), e, out.data())});
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], i % 2 ? 2.f : 0.f) << i;
}

TEST(CompatUnsupported, ForeignOpsKeepNoSchemaButTheGraphRules) {
    graph g(engine::kind::cpu);
    op w(1, op::kind::Wildcard);
    w.add_input(logical_tensor(7, data_type::f32, -1, layout_type::strided));
    w.add_output(logical_tensor(7, data_type::f32, -1, layout_type::strided));
    expect_error([&] { g.add_op(w); }, status::invalid_graph, {"Wildcard op 1", "both an input and an output"});
    EXPECT_EQ(g.add_op(w, false), status::invalid_graph);
    op ok(2, op::kind::Wildcard);
    ok.add_output(logical_tensor(8, data_type::boolean, {3}, layout_type::strided));
    EXPECT_EQ(g.add_op(ok, false), status::success);
}

TEST(CompatUnsupported, TheJsonReaderTakesForeignKindsWithUnknownShapes) {
    const std::string text = R"({"version": "3.9.0", "engine_kind": "cpu", "graph": [
      {"id": 0, "name": "w", "kind": "Wildcard", "attrs": {},
       "inputs": [{"id": 1, "dtype": "f32", "shape": [-1], "stride": [-1], "layout_type": "strided"}],
       "outputs": [{"id": 2, "dtype": "f32", "shape": [-1], "stride": [-1], "layout_type": "strided"}]},
      {"id": 1, "name": "c", "kind": "Convolution",
       "attrs": {"strides": {"type": "s64[]", "value": [1, 1]}, "data_format": {"type": "string", "value": "NCX"}},
       "inputs": [{"id": 2, "dtype": "f32", "shape": [-1], "stride": [-1], "layout_type": "strided"}],
       "outputs": [{"id": 3, "dtype": "f32", "shape": [-1], "stride": [-1], "layout_type": "strided"}]}]})";
    const graph g = make_graph(parse_graph_json(text));
    const std::vector<partition> parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_FALSE(parts[0].is_supported());
    EXPECT_FALSE(parts[1].is_supported());
    EXPECT_EQ(parts[1].get_ops(), std::vector<size_t> {1});
    // And writes them back under their oneDNN names.
    EXPECT_NE(write_graph_json(document_of(g)).find("\"Convolution\""), std::string::npos);
}

TEST(CompatGraph, AOneOpPartitionFromItsOp) {
    op relu(3, op::kind::ReLUBackward, {logical_tensor(0, data_type::f32, {4}, layout_type::strided),
            logical_tensor(1, data_type::f32, {4}, layout_type::strided)},
            {logical_tensor(2, data_type::f32, {4}, layout_type::strided)});
    const partition p(relu, engine::kind::cpu);
    EXPECT_TRUE(p.is_supported());
    EXPECT_EQ(p.get_ops(), std::vector<size_t> {3});
    EXPECT_EQ(p.get_input_ports().size(), 2u);
    const partition w(op(4, op::kind::Wildcard), engine::kind::cpu);
    EXPECT_FALSE(w.is_supported());
    expect_error([] { partition(op(5, op::kind::ReLUBackward), engine::kind::cpu); }, status::invalid_graph,
            {"ReLUBackprop op 5", "expects 2 inputs"});
}

TEST(CompatGraph, FpmathModeInOneDnnsForms) {
    graph g(dnnl::engine::kind::cpu, dnnl::fpmath_mode::strict);
    g.set_fpmath_mode(fpmath_mode::bf16, true);
    fpmath_mode m = fpmath_mode::strict;
    bool ints = false;
    g.get_fpmath_mode(m, ints);
    EXPECT_EQ(m, fpmath_mode::bf16);
    EXPECT_TRUE(ints);
}

} // namespace
} // namespace bpg::test
