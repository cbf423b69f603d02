// JSON graph import/export: the four oneDNN conformance files, round trips,
// the documented choices for unknown shapes, and one test per error class
// (status plus a message that names the op and the offending field/value).
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

#include <gtest/gtest.h>

#include "support/expect_error.hpp"
#include <nlohmann/json.hpp>

#include "bpg/json.hpp"
#include "support/conformance.hpp"

namespace {

using namespace bpg;
using json = nlohmann::ordered_json;

const std::string conformance_dir = bpg::test::conformance("");

void expect_same_doc(const graph_document &a, const graph_document &b) {
    EXPECT_EQ(a.version, b.version);
    EXPECT_EQ(a.engine_kind, b.engine_kind);
    EXPECT_EQ(a.fpmath, b.fpmath);
    EXPECT_EQ(a.has_ports, b.has_ports);
    EXPECT_EQ(a.input_ports, b.input_ports);
    EXPECT_EQ(a.output_ports, b.output_ports);
    ASSERT_EQ(a.ops.size(), b.ops.size());
    for (size_t i = 0; i < a.ops.size(); ++i) {
        SCOPED_TRACE("op index " + std::to_string(i));
        const op &x = a.ops[i], &y = b.ops[i];
        EXPECT_EQ(x.get_id(), y.get_id());
        EXPECT_EQ(x.get_kind(), y.get_kind());
        EXPECT_EQ(x.get_name(), y.get_name());
        EXPECT_TRUE(x.get_attrs() == y.get_attrs());
        EXPECT_TRUE(x.get_inputs() == y.get_inputs());
        EXPECT_TRUE(x.get_outputs() == y.get_outputs());
    }
}

graph_document round_trip(const graph_document &doc) { return parse_graph_json(write_graph_json(doc)); }

using test::expect_error;

void expect_parse_error(const json &j, status s, std::initializer_list<std::string> pieces) {
    const std::string text = j.dump();
    expect_error([&] { parse_graph_json(text); }, s, pieces);
}

// A small valid document to mutate: one InterpolateBackward op, id 3.
json base_doc() {
    return json::parse(R"({
      "version": "3.0.0", "engine_kind": "cpu", "fpmath_mode": "strict",
      "graph": [ {
        "id": 3, "name": "RESAMPLING_0", "kind": "InterpolateBackward",
        "attrs": {
          "mode": {"type": "string", "value": "nearest"},
          "sizes": {"type": "s64[]", "value": [6, 12]},
          "data_format": {"type": "string", "value": "NCX"} },
        "inputs": [
          {"id": 0, "dtype": "f32", "shape": [2, 17, 7, 14], "stride": [1666, 98, 14, 1],
           "layout_type": "strided", "property_type": "undef"},
          {"id": 1, "dtype": "f32", "shape": [2, 17, 6, 12], "stride": [1224, 72, 12, 1],
           "layout_type": "strided", "property_type": "undef"} ],
        "outputs": [
          {"id": 2, "dtype": "f32", "shape": [2, 17, 7, 14], "stride": [1666, 98, 14, 1],
           "layout_type": "strided", "property_type": "undef"} ] } ] })");
}

json &op0(json &doc) { return doc["graph"][0]; }

// ---- the conformance files ------------------------------------------------

TEST(JsonGraphConformance, ParsesInterpolateBwd) {
    BPG_REQUIRE_CONFORMANCE();
    const graph_document doc = read_graph_json_file(conformance_dir + "interpolate_bwd.json");
    EXPECT_EQ(doc.version, "3.0.0");
    EXPECT_EQ(doc.engine_kind, engine::kind::cpu);
    EXPECT_EQ(doc.fpmath, fpmath_mode::strict);
    EXPECT_FALSE(doc.has_ports);
    ASSERT_EQ(doc.ops.size(), 1u);
    const op &o = doc.ops[0];
    EXPECT_EQ(o.get_id(), 0u);
    EXPECT_EQ(o.get_name(), "RESAMPLING_0");
    EXPECT_EQ(o.get_kind(), op::kind::InterpolateBackprop);
    // Attributes keep the file's order.
    const std::vector<std::pair<op::attr, attr_value>> attrs = {
            {op::attr::sizes, std::vector<int64_t> {6, 12}},
            {op::attr::coordinate_transformation_mode, std::string("half_pixel")},
            {op::attr::mode, std::string("nearest")},
            {op::attr::data_format, std::string("NCX")},
    };
    EXPECT_TRUE(o.get_attrs() == attrs);
    EXPECT_STREQ(attr_type_name(*o.find_attr(op::attr::sizes)), "s64[]");
    ASSERT_EQ(o.get_inputs().size(), 2u);
    ASSERT_EQ(o.get_outputs().size(), 1u);
    EXPECT_EQ(o.get_inputs()[0], logical_tensor(0, data_type::f32, {2, 17, 7, 14}, {1666, 98, 14, 1}));
    EXPECT_EQ(o.get_inputs()[1], logical_tensor(1, data_type::f32, {2, 17, 6, 12}, {1224, 72, 12, 1}));
    EXPECT_EQ(o.get_outputs()[0], logical_tensor(2, data_type::f32, {2, 17, 7, 14}, {1666, 98, 14, 1}));
    EXPECT_EQ(o.get_inputs()[0].get_layout_type(), layout_type::strided);
    EXPECT_EQ(o.get_inputs()[0].get_property_type(), property_type::undef);
}

TEST(JsonGraphConformance, ParsesInterpolateBwd2dWithPortsAndF32Array) {
    BPG_REQUIRE_CONFORMANCE();
    const graph_document doc = read_graph_json_file(conformance_dir + "interpolate_bwd_2d.json");
    EXPECT_EQ(doc.version, "3.7.0");
    EXPECT_TRUE(doc.has_ports);
    EXPECT_EQ(doc.input_ports, (std::vector<size_t> {0, 1}));
    EXPECT_EQ(doc.output_ports, (std::vector<size_t> {2}));
    ASSERT_EQ(doc.ops.size(), 1u);
    const op &o = doc.ops[0];
    EXPECT_EQ(o.get_kind(), op::kind::InterpolateBackprop);
    const attr_value *scales = o.find_attr(op::attr::scales);
    ASSERT_NE(scales, nullptr);
    EXPECT_STREQ(attr_type_name(*scales), "f32[]");
    EXPECT_EQ(std::get<std::vector<float>>(*scales), (std::vector<float> {1.66667f, 1.f}));
    EXPECT_EQ(std::get<std::string>(*o.find_attr(op::attr::mode)), "linear");
    EXPECT_EQ(o.get_inputs()[1].get_dims(), (dims {2, 16, 5, 11}));
    EXPECT_EQ(o.get_inputs()[1].get_strides(), (dims {880, 55, 11, 1}));
}

TEST(JsonGraphConformance, ParsesBnormBwd) {
    BPG_REQUIRE_CONFORMANCE();
    const graph_document doc = read_graph_json_file(conformance_dir + "bnorm_bwd.json");
    ASSERT_EQ(doc.ops.size(), 1u);
    const op &o = doc.ops[0];
    EXPECT_EQ(o.get_kind(), op::kind::BatchNormTrainingBackprop);
    EXPECT_EQ(o.get_name(), "BNORM_0");
    const attr_value *eps = o.find_attr(op::attr::epsilon);
    ASSERT_NE(eps, nullptr);
    EXPECT_STREQ(attr_type_name(*eps), "f32");
    EXPECT_EQ(std::get<float>(*eps), 0.0625f);
    EXPECT_EQ(std::get<std::string>(*o.find_attr(op::attr::data_format)), "NCX");
    ASSERT_EQ(o.get_inputs().size(), 5u);
    ASSERT_EQ(o.get_outputs().size(), 3u);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(o.get_inputs()[i].get_id(), i);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(o.get_outputs()[i].get_id(), 5 + i);
    EXPECT_EQ(o.get_inputs()[0], logical_tensor(0, data_type::f32, {2, 192, 71, 71}, {967872, 5041, 71, 1}));
    EXPECT_EQ(o.get_inputs()[4], logical_tensor(4, data_type::f32, {192}, {1}));
    EXPECT_EQ(o.get_outputs()[2], logical_tensor(7, data_type::f32, {192}, {1}));
}

TEST(JsonGraphConformance, ParsesBnBwdReluBwdFusion) {
    BPG_REQUIRE_CONFORMANCE();
    const graph_document doc = read_graph_json_file(conformance_dir + "bn_bwd_relu_bwd_fusion.json");
    ASSERT_EQ(doc.ops.size(), 2u);
    const op &relu = doc.ops[0], &bn = doc.ops[1];
    EXPECT_EQ(relu.get_kind(), op::kind::ReLUBackprop);
    EXPECT_EQ(relu.get_name(), "ELTWISE_0");
    const attr_value *use_dst = relu.find_attr(op::attr::use_dst);
    ASSERT_NE(use_dst, nullptr);
    EXPECT_STREQ(attr_type_name(*use_dst), "bool"); // written as 0, still a bool
    EXPECT_FALSE(std::get<bool>(*use_dst));
    EXPECT_EQ(bn.get_kind(), op::kind::BatchNormTrainingBackprop);
    EXPECT_EQ(bn.get_id(), 1u);
    // ReLU's output feeds BN's input 0.
    EXPECT_EQ(relu.get_outputs()[0].get_id(), 2u);
    EXPECT_EQ(bn.get_inputs()[0], relu.get_outputs()[0]);
    EXPECT_EQ(bn.get_outputs().size(), 3u);
}

TEST(JsonGraphConformance, ConformanceFilesRoundTrip) {
    BPG_REQUIRE_CONFORMANCE();
    for (const char *file : {"interpolate_bwd.json", "interpolate_bwd_2d.json", "bnorm_bwd.json",
                 "bn_bwd_relu_bwd_fusion.json"}) {
        SCOPED_TRACE(file);
        const graph_document doc = read_graph_json_file(conformance_dir + file);
        expect_same_doc(doc, round_trip(doc));
    }
}

// ---- the writer -----------------------------------------------------------

TEST(JsonGraphConformance, WriterFormat) {
    BPG_REQUIRE_CONFORMANCE();
    const graph_document doc = read_graph_json_file(conformance_dir + "bn_bwd_relu_bwd_fusion.json");
    const std::string text = write_graph_json(doc);
    // 2-space pretty printing, oneDNN v3 kind names, bool as 0/1, all six
    // tensor fields.
    EXPECT_EQ(text.rfind("{\n  \"version\": \"3.0.0\",\n  \"engine_kind\": \"cpu\"", 0), 0u) << text;
    EXPECT_NE(text.find("\"kind\": \"ReLUBackward\""), std::string::npos);
    EXPECT_NE(text.find("\"kind\": \"BatchNormTrainingBackward\""), std::string::npos);
    const json j = json::parse(text);
    const json &use_dst = j["graph"][0]["attrs"]["use_dst"];
    EXPECT_EQ(use_dst["type"], "bool");
    EXPECT_TRUE(use_dst["value"].is_number_integer());
    EXPECT_EQ(use_dst["value"], 0);
    const json &lt = j["graph"][1]["inputs"][0];
    for (const char *key : {"id", "dtype", "shape", "stride", "layout_type", "property_type"})
        EXPECT_TRUE(lt.contains(key)) << key;
    EXPECT_FALSE(j.contains("input_ports"));
}

TEST(JsonGraphConformance, WritesFloatsShortest) {
    BPG_REQUIRE_CONFORMANCE();
    const graph_document doc = read_graph_json_file(conformance_dir + "interpolate_bwd_2d.json");
    const std::string text = write_graph_json(doc);
    EXPECT_NE(text.find("1.66667"), std::string::npos);
    EXPECT_EQ(text.find("1.66666996"), std::string::npos) << text;
}

graph_document rich_doc() {
    graph_document doc;
    doc.version = "3.7.0";
    doc.fpmath = fpmath_mode::bf16;
    doc.has_ports = true;
    doc.input_ports = {10, 11};
    doc.output_ports = {12};
    op a(7, op::kind::InterpolateBackprop, "interp \"quoted\"");
    a.set_attr(op::attr::use_global_stats, attr_value(true))
            .set_attr(op::attr::sizes, attr_value(std::vector<int64_t> {}))
            .set_attr(op::attr::epsilon, attr_value(0.1f))
            .set_attr(op::attr::mode, "linear")
            .set_attr(op::attr::scales, attr_value(std::vector<float> {1e-7f, 3.4e38f, -0.f, 2.5f}))
            .set_attr(op::attr::nearest_mode, attr_value(int64_t(-9007199254740993)));
    a.add_input(logical_tensor(10, data_type::bf16, {2, 3, 4}, {12, 1, 3})); // channels last
    a.add_input(logical_tensor(11, data_type::f16, layout_type::any));       // unknown rank
    a.add_input(logical_tensor(13, data_type::s32, {2, -1, 7}));             // partial, strided
    a.add_input(logical_tensor(14, data_type::f32, dims {}));                // 0-D
    a.add_input(logical_tensor(15, data_type::undef, {0, 5}, layout_type::undef));
    a.add_input(logical_tensor(16, data_type::f32, {4, 4}, layout_type::any, property_type::constant));
    a.add_input(logical_tensor(17, data_type::f32, {3}, {2}, property_type::variable));
    a.add_output(logical_tensor(12, data_type::f32, layout_type::strided)); // unknown rank, strided
    doc.ops.push_back(a);
    op b(8, op::kind::ReLUBackprop);
    b.set_attr(op::attr::use_dst, attr_value(false));
    doc.ops.push_back(b);
    return doc;
}

TEST(JsonGraph, RichDocumentRoundTrips) {
    const graph_document doc = rich_doc();
    expect_same_doc(doc, round_trip(doc));
    // Writing twice gives the same text.
    EXPECT_EQ(write_graph_json(doc), write_graph_json(round_trip(doc)));
}

TEST(JsonGraph, WriterRefusesNonFiniteFloats) {
    graph_document doc;
    op o(5, op::kind::BatchNormTrainingBackprop, "bn");
    o.set_attr(op::attr::epsilon, attr_value(std::numeric_limits<float>::infinity()));
    doc.ops.push_back(o);
    expect_error([&] { write_graph_json(doc); }, status::invalid_argument, {"op 5", "epsilon"});
}

// ---- documented choices for shapes and strides ----------------------------

logical_tensor parse_one_input(const json &lt) {
    json doc = base_doc();
    op0(doc)["inputs"][0] = lt;
    return parse_graph_json(doc.dump()).ops[0].get_inputs()[0];
}

TEST(JsonGraph, UnknownShapeConventions) {
    // oneDNN writes [-1] for any shape not fully known: unknown rank.
    logical_tensor lt = parse_one_input(json::parse(
            R"({"id": 0, "dtype": "f32", "shape": [-1], "stride": [-1], "layout_type": "any", "property_type": "undef"})"));
    EXPECT_EQ(lt.ndims(), unknown_rank);
    EXPECT_EQ(lt.get_layout_type(), layout_type::any);
    // A missing shape too.
    lt = parse_one_input(json::parse(R"({"id": 0, "dtype": "f32", "layout_type": "strided"})"));
    EXPECT_EQ(lt.ndims(), unknown_rank);
    // [] is a scalar.
    lt = parse_one_input(json::parse(R"({"id": 0, "dtype": "f32", "shape": [], "stride": [], "layout_type": "strided"})"));
    EXPECT_EQ(lt.ndims(), 0);
    EXPECT_TRUE(lt.has_known_shape());
    // Strided with strides [-1] and a known shape: dense strides.
    lt = parse_one_input(json::parse(R"({"id": 0, "dtype": "f32", "shape": [2, 3], "stride": [-1], "layout_type": "strided"})"));
    EXPECT_EQ(lt.get_strides(), (dims {3, 1}));
    // Shape [-1] but four strides: rank 4, dims unknown.
    lt = parse_one_input(json::parse(R"({"id": 0, "dtype": "f32", "shape": [-1], "stride": [8, 4, 2, 1], "layout_type": "strided"})"));
    EXPECT_EQ(lt.get_dims(), (dims {-1, -1, -1, -1}));
    EXPECT_EQ(lt.get_strides(), (dims {8, 4, 2, 1}));
    // "any" ignores whatever stride it is given.
    lt = parse_one_input(json::parse(R"({"id": 0, "dtype": "f32", "shape": [2, 3], "stride": [9, 9], "layout_type": "any"})"));
    EXPECT_EQ(lt, logical_tensor(0, data_type::f32, {2, 3}, layout_type::any));
}

TEST(JsonGraph, OneDimUnknownSizeComesBackAsUnknownRank) {
    // The documented lossy case of the format.
    graph_document doc;
    op o(1, op::kind::ReLUBackprop);
    o.add_input(logical_tensor(4, data_type::f32, {-1}, layout_type::any));
    doc.ops.push_back(o);
    const logical_tensor back = round_trip(doc).ops[0].get_inputs()[0];
    EXPECT_EQ(back.ndims(), unknown_rank);
}

TEST(JsonGraph, AcceptsLenientEncodings) {
    json doc = base_doc();
    json &attrs = op0(doc)["attrs"];
    attrs.erase("sizes");
    attrs["scales"] = {{"type", "f32[]"}, {"value", {2, 1.5}}};      // ints as f32
    attrs["use_dst"] = {{"type", "bool"}, {"value", true}};           // JSON bool
    attrs["epsilon"] = {{"type", "f32"}, {"value", 1}};
    op0(doc)["kind"] = "InterpolateBackprop";                         // canonical name
    doc.erase("version");                                             // defaults
    doc.erase("fpmath_mode");
    doc["fpmath_mode_apply_to_int"] = "false";                        // newer key, ignored
    const graph_document d = parse_graph_json(doc.dump());
    EXPECT_EQ(d.version, "3.0.0");
    const op &o = d.ops[0];
    EXPECT_EQ(std::get<std::vector<float>>(*o.find_attr(op::attr::scales)), (std::vector<float> {2.f, 1.5f}));
    EXPECT_TRUE(std::get<bool>(*o.find_attr(op::attr::use_dst)));
    EXPECT_EQ(std::get<float>(*o.find_attr(op::attr::epsilon)), 1.f);
    EXPECT_EQ(o.get_kind(), op::kind::InterpolateBackprop);
}

TEST(JsonGraph, EveryAliasIsAccepted) {
    for (const char *alias : {"InterpolateBackward", "BatchNormTrainingBackward", "BatchNormBackprop",
                 "ReLUBackward", "InterpolateBackprop", "BatchNormTrainingBackprop", "ReLUBackprop"}) {
        json doc = base_doc();
        op0(doc)["kind"] = alias;
        EXPECT_NO_THROW(parse_graph_json(doc.dump())) << alias;
    }
}

// ---- errors ---------------------------------------------------------------

TEST(JsonGraphErrors, NotJson) {
    expect_error([] { parse_graph_json("{ \"version\": \"3.0.0\", "); }, status::invalid_argument,
            {"not valid JSON", "byte"});
    expect_error([] { parse_graph_json(""); }, status::invalid_argument, {"byte"});
}

TEST(JsonGraphErrors, TopLevelNotObject) {
    expect_error([] { parse_graph_json("[1, 2]"); }, status::invalid_argument, {"top level", "[1,2]"});
}

TEST(JsonGraphErrors, MissingOrBadGraph) {
    json doc = base_doc();
    doc.erase("graph");
    expect_parse_error(doc, status::invalid_argument, {"graph", "missing"});
    doc["graph"] = {{"id", 1}};
    expect_parse_error(doc, status::invalid_argument, {"graph", "expected an array"});
    doc["graph"] = json::array({42});
    expect_parse_error(doc, status::invalid_argument, {"graph[0]", "expected an object"});
}

TEST(JsonGraphErrors, MissingOpFields) {
    json doc = base_doc();
    op0(doc).erase("id");
    expect_parse_error(doc, status::invalid_argument, {"graph[0]", "id", "missing"});
    doc = base_doc();
    op0(doc)["id"] = -1;
    expect_parse_error(doc, status::invalid_argument, {"graph[0]", "id", "-1"});
    doc = base_doc();
    op0(doc).erase("inputs");
    expect_parse_error(doc, status::invalid_argument, {"op 3 (\"RESAMPLING_0\")", "inputs", "missing"});
    doc = base_doc();
    op0(doc)["inputs"][1].erase("dtype");
    expect_parse_error(doc, status::invalid_argument, {"op 3", "inputs[1].dtype", "missing"});
}

TEST(JsonGraphErrors, UnknownOpKind) {
    json doc = base_doc();
    op0(doc)["kind"] = "Foo";
    op0(doc)["name"] = "FOO_0";
    expect_parse_error(doc, status::invalid_graph,
            {"op 3 (\"FOO_0\"): kind: unknown op kind \"Foo\"",
                    "InterpolateBackprop (alias InterpolateBackward)",
                    "BatchNormTrainingBackprop (aliases BatchNormTrainingBackward, BatchNormBackprop)",
                    "ReLUBackprop (alias ReLUBackward)"});
}

TEST(JsonGraphErrors, UnknownAttributeName) {
    json doc = base_doc();
    op0(doc)["attrs"]["sizez"] = {{"type", "s64[]"}, {"value", {1}}};
    expect_parse_error(doc, status::invalid_argument,
            {"op 3 (\"RESAMPLING_0\")", "attrs.sizez", "\"sizez\"", "known:", "sizes", "epsilon"});
}

TEST(JsonGraphErrors, UnknownAttributeType) {
    json doc = base_doc();
    op0(doc)["attrs"]["sizes"]["type"] = "s32[]";
    expect_parse_error(doc, status::invalid_argument,
            {"op 3", "attrs.sizes.type", "\"s32[]\"", "[6,12]"});
}

TEST(JsonGraphErrors, AttributeValueOfWrongType) {
    json doc = base_doc();
    op0(doc)["attrs"]["sizes"]["value"] = {"a", "b"};
    expect_parse_error(doc, status::invalid_argument, {"op 3", "attrs.sizes.value[0]", "s64[]", "\"a\""});

    doc = base_doc();
    op0(doc)["attrs"]["sizes"] = {{"type", "s64"}, {"value", 1.5}};
    expect_parse_error(doc, status::invalid_argument, {"op 3", "attrs.sizes.value", "s64", "1.5"});

    doc = base_doc();
    op0(doc)["attrs"]["sizes"]["value"] = 6;
    expect_parse_error(doc, status::invalid_argument, {"op 3", "attrs.sizes.value", "s64[]", "6"});

    doc = base_doc();
    op0(doc)["attrs"]["use_dst"] = {{"type", "bool"}, {"value", 2}};
    expect_parse_error(doc, status::invalid_argument, {"op 3", "attrs.use_dst.value", "bool", "2"});

    doc = base_doc();
    op0(doc)["attrs"]["epsilon"] = {{"type", "f32"}, {"value", "small"}};
    expect_parse_error(doc, status::invalid_argument, {"op 3", "attrs.epsilon.value", "f32", "\"small\""});

    doc = base_doc();
    op0(doc)["attrs"]["epsilon"] = {{"type", "f32"}, {"value", 1e39}};
    expect_parse_error(doc, status::invalid_argument, {"op 3", "attrs.epsilon.value", "range", "f32"});

    doc = base_doc();
    op0(doc)["attrs"]["mode"]["value"] = 3;
    expect_parse_error(doc, status::invalid_argument, {"op 3", "attrs.mode.value", "string", "3"});

    doc = base_doc();
    op0(doc)["attrs"]["mode"].erase("value");
    expect_parse_error(doc, status::invalid_argument, {"op 3", "attrs.mode.value", "missing"});
}

TEST(JsonGraphErrors, BadDataType) {
    json doc = base_doc();
    op0(doc)["inputs"][1]["dtype"] = "f99";
    expect_parse_error(doc, status::invalid_argument, {"op 3 (\"RESAMPLING_0\")", "inputs[1].dtype", "\"f99\""});
    // A oneDNN type we do not support is legal, just not here.
    op0(doc)["inputs"][1]["dtype"] = "s8";
    expect_parse_error(doc, status::unimplemented, {"op 3", "inputs[1].dtype", "\"s8\""});
}

TEST(JsonGraphErrors, BadLayoutType) {
    json doc = base_doc();
    op0(doc)["outputs"][0]["layout_type"] = "blocked";
    expect_parse_error(doc, status::invalid_argument, {"op 3", "outputs[0].layout_type", "\"blocked\""});
    op0(doc)["outputs"][0]["layout_type"] = "opaque";
    expect_parse_error(doc, status::unimplemented, {"op 3", "outputs[0].layout_type", "\"opaque\""});
}

TEST(JsonGraphErrors, BadPropertyType) {
    json doc = base_doc();
    op0(doc)["inputs"][0]["property_type"] = "fixed";
    expect_parse_error(doc, status::invalid_argument, {"op 3", "inputs[0].property_type", "\"fixed\""});
    // Unknown rank cannot carry a property in bpg::logical_tensor.
    doc = base_doc();
    op0(doc)["inputs"][0]["shape"] = {-1};
    op0(doc)["inputs"][0]["stride"] = {-1};
    op0(doc)["inputs"][0]["property_type"] = "constant";
    expect_parse_error(doc, status::unimplemented, {"op 3", "inputs[0].property_type", "unknown rank"});
}

TEST(JsonGraphErrors, StrideRankMismatch) {
    json doc = base_doc();
    op0(doc)["inputs"][1]["stride"] = {72, 12, 1};
    expect_parse_error(doc, status::invalid_shape,
            {"op 3 (\"RESAMPLING_0\"): inputs[1].stride: expected 4 values (rank of shape), got 3"});
    op0(doc)["inputs"][1]["stride"] = json::array();
    expect_parse_error(doc, status::invalid_shape, {"inputs[1].stride", "got 0"});
}

TEST(JsonGraphErrors, BadShapeValues) {
    json doc = base_doc();
    op0(doc)["inputs"][0]["shape"] = {2, -2, 7, 14};
    expect_parse_error(doc, status::invalid_shape, {"op 3", "inputs[0].shape[1]", "-2"});
    doc = base_doc();
    op0(doc)["inputs"][0]["shape"] = {2, "x", 7, 14};
    expect_parse_error(doc, status::invalid_argument, {"op 3", "inputs[0].shape[1]", "\"x\""});
    doc = base_doc();
    op0(doc)["inputs"][0]["stride"] = 5;
    expect_parse_error(doc, status::invalid_argument, {"op 3", "inputs[0].stride", "expected an array"});
}

TEST(JsonGraphErrors, EngineKindGpu) {
    json doc = base_doc();
    doc["engine_kind"] = "gpu";
    expect_parse_error(doc, status::unimplemented, {"engine_kind", "\"gpu\""});
}

TEST(JsonGraphErrors, BadTopLevelFields) {
    json doc = base_doc();
    doc["fpmath_mode"] = "fast";
    expect_parse_error(doc, status::invalid_argument, {"fpmath_mode", "\"fast\""});
    doc = base_doc();
    doc["version"] = 3;
    expect_parse_error(doc, status::invalid_argument, {"version", "expected a string"});
    doc = base_doc();
    doc["input_ports"] = {0, "one"};
    expect_parse_error(doc, status::invalid_argument, {"input_ports[1]", "\"one\""});
}

// Every prefix of a real file is rejected with a bpg::error, nothing else.
TEST(JsonGraphErrorsConformance, TruncatedFilesOnlyRaiseBpgErrors) {
    BPG_REQUIRE_CONFORMANCE();
    std::ifstream in(conformance_dir + "interpolate_bwd_2d.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(text.size(), 100u);
    for (size_t n = 0; n + 2 < text.size(); n += 7)
        EXPECT_THROW(parse_graph_json(text.substr(0, n)), error) << n;
}

TEST(JsonGraphErrors, FileErrorsNameThePath) {
    const std::string missing = ::testing::TempDir() + "bpg_no_such_graph.json";
    expect_error([&] { read_graph_json_file(missing); }, status::invalid_argument, {missing});

    const std::string bad = ::testing::TempDir() + "bpg_bad_graph.json";
    std::ofstream(bad) << "{\"graph\": [{\"id\": 1, \"kind\": \"Nope\"}]}";
    expect_error([&] { read_graph_json_file(bad); }, status::invalid_graph, {bad, "op 1", "\"Nope\""});
    std::remove(bad.c_str());
}

} // namespace
