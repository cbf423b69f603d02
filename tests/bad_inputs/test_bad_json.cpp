// Catalogue rows: oneDNN Graph JSON documents that bpg::parse_graph_json or
// bpg::make_graph must refuse. Each row edits a valid document.
#include <nlohmann/json.hpp>

#include "bpg/json.hpp"
#include "support/bad_input.hpp"

namespace bpg::test {
namespace {

using json = nlohmann::ordered_json;

json tensor_json(size_t id, const char *dtype, std::vector<int64_t> shape) {
    return {{"id", id}, {"dtype", dtype}, {"shape", shape}, {"stride", dense_strides(shape)},
            {"layout_type", "strided"}, {"property_type", "undef"}};
}

// A valid document: one InterpolateBackward 1x2x4x4 <- 1x2x8x8.
json base() {
    json op = {{"id", 0}, {"name", "RESAMPLING_0"}, {"kind", "InterpolateBackward"},
            {"attrs",
                    {{"mode", {{"type", "string"}, {"value", "linear"}}},
                            {"data_format", {{"type", "string"}, {"value", "NCX"}}},
                            {"sizes", {{"type", "s64[]"}, {"value", {8, 8}}}}}},
            {"inputs", {tensor_json(0, "f32", {1, 2, 4, 4}), tensor_json(1, "f32", {1, 2, 8, 8})}},
            {"outputs", {tensor_json(2, "f32", {1, 2, 4, 4})}}};
    return {{"version", "3.0.0"}, {"engine_kind", "cpu"}, {"fpmath_mode", "strict"}, {"graph", {op}}};
}

json relu_json(size_t id, size_t in, size_t dd, size_t out) {
    return {{"id", id}, {"name", "RELU_" + std::to_string(id)}, {"kind", "ReLUBackward"}, {"attrs", json::object()},
            {"inputs", {tensor_json(in, "f32", {2, 3}), tensor_json(dd, "f32", {2, 3})}},
            {"outputs", {tensor_json(out, "f32", {2, 3})}}};
}

void import(const std::string &text) { make_graph(parse_graph_json(text)); }

bad_input text_row(std::string name, std::string text, status code, std::vector<std::string> has) {
    return {std::move(name), [text](sentinel_buffers &) { import(text); }, code, std::move(has)};
}

bad_input row(std::string name, std::function<void(json &)> edit, status code, std::vector<std::string> has) {
    return {std::move(name),
            [edit](sentinel_buffers &) {
                json doc = base();
                edit(doc);
                import(doc.dump());
            },
            code, std::move(has)};
}

json &op0(json &doc) { return doc["graph"][0]; }

// `levels` arrays (or objects {"a": ...}) inside one another around a 0.
std::string nested(size_t levels, bool objects) {
    std::string text;
    for (size_t i = 0; i < levels; ++i) text += objects ? "{\"a\": " : "[";
    text += "0";
    for (size_t i = 0; i < levels; ++i) text += objects ? "}" : "]";
    return text;
}

// The base document's text with `insert` put right after the first `after`
// (a duplicate key cannot be made through nlohmann's objects).
std::string base_text_with(const std::string &after, const std::string &insert) {
    std::string text = base().dump();
    text.insert(text.find(after) + after.size(), insert);
    return text;
}

std::vector<bad_input> rows() {
    const status arg = status::invalid_argument, shape = status::invalid_shape, structure = status::invalid_graph,
                 unimpl = status::unimplemented;
    const std::string where = "op 0 (\"RESAMPLING_0\")";
    return {
            text_row("json_truncated", R"({"graph": [)", arg, {"graph JSON: not valid JSON: syntax error at byte"}),
            text_row("json_empty_text", "", arg, {"not valid JSON"}),
            text_row("json_not_json_at_all", "graph: [interpolate]", arg, {"not valid JSON: syntax error at byte 1"}),
            // Found by fuzz_json_graph: nlohmann's out_of_range escaped as a foreign exception.
            text_row("json_number_out_of_range", R"({"graph": [], "x": 2e397})", arg, {"not valid JSON", "number overflow"}),
            text_row("json_top_level_array", "[]", arg, {"the top level must be an object with a \"graph\" array"}),
            row("json_graph_missing", [](json &d) { d.erase("graph"); }, arg, {"graph"}),
            row("json_graph_not_an_array", [](json &d) { d["graph"] = json::object(); }, arg, {"graph: expected an array"}),
            row("json_op_kind_unknown", [](json &d) { op0(d)["kind"] = "InterpolateBackwards"; }, structure,
                    {where, "kind", "InterpolateBackwards"}),
            row("json_op_id_negative", [](json &d) { op0(d)["id"] = -1; }, arg, {"id", "-1"}),
            row("json_op_id_fractional", [](json &d) { op0(d)["id"] = 0.5; }, arg, {"id", "0.5"}),
            row("json_attr_name_mistyped", [](json &d) { op0(d)["attrs"]["sizez"] = op0(d)["attrs"]["sizes"]; }, arg,
                    {where, "sizez"}),
            row("json_attr_value_not_its_type", [](json &d) { op0(d)["attrs"]["sizes"]["value"] = "8x8"; }, arg,
                    {where, "attrs.sizes", "8x8"}),
            row("json_attr_type_unknown", [](json &d) { op0(d)["attrs"]["sizes"]["type"] = "s128[]"; }, arg,
                    {where, "attrs.sizes.type", "s128[]"}),
            row("json_sizes_fractional", [](json &d) { op0(d)["attrs"]["sizes"]["value"] = {7.5, 8}; }, arg,
                    {where, "attrs.sizes", "7.5"}),
            row("json_dtype_unknown", [](json &d) { op0(d)["inputs"][0]["dtype"] = "f31"; }, arg,
                    {where, "inputs[0].dtype", "f31"}),
            row("json_dtype_legal_but_unsupported", [](json &d) { op0(d)["inputs"][0]["dtype"] = "s8"; }, unimpl,
                    {where, "inputs[0].dtype", "s8"}),
            row("json_layout_opaque", [](json &d) { op0(d)["inputs"][1]["layout_type"] = "opaque"; }, unimpl,
                    {where, "inputs[1].layout_type", "opaque"}),
            row("json_stride_wrong_length", [](json &d) { op0(d)["inputs"][1]["stride"] = {128, 64, 1}; }, shape,
                    {where, "inputs[1].stride", "expected 4 values"}),
            row("json_shape_not_a_list", [](json &d) { op0(d)["outputs"][0]["shape"] = "1x2x4x4"; }, arg,
                    {where, "outputs[0].shape"}),
            row("json_shape_negative", [](json &d) { op0(d)["inputs"][0]["shape"] = {1, 2, -4, 4}; }, shape,
                    {where, "inputs[0].shape[2]", "-4"}),
            row("json_inputs_missing", [](json &d) { op0(d).erase("inputs"); }, arg, {where, "inputs"}),
            row("json_engine_gpu", [](json &d) { d["engine_kind"] = "gpu"; }, unimpl, {"engine_kind", "\"gpu\""}),
            row("json_op_ids_collide", [](json &d) { d["graph"] = {relu_json(5, 0, 1, 2), relu_json(5, 3, 4, 6)}; }, structure,
                    {"ReLUBackprop op 5 (\"RELU_5\"): op id 5 is already used"}),
            row("json_cycle", [](json &d) { d["graph"] = {relu_json(1, 0, 1, 2), relu_json(2, 2, 3, 1)}; }, structure,
                    {"the ops form a cycle", "ReLUBackprop op 1", "ReLUBackprop op 2"}),
            row("json_tensor_id_reused_other_dtype", [](json &d) {
                    json second = relu_json(2, 2, 3, 4);
                    second["inputs"][0]["dtype"] = "bf16"; second["inputs"][1]["dtype"] = "bf16"; second["outputs"][0]["dtype"] = "bf16";
                    d["graph"] = {relu_json(1, 0, 1, 2), second}; },
                    structure, {"ReLUBackprop op 2 (\"RELU_2\"): tensor 2 has data type bf16 here and f32 elsewhere"}),
            // 170 KB of brackets overflowed the stack in nlohmann's recursive copy.
            text_row("json_nested_100000_arrays", "{\"x\": " + nested(100000, false) + ", \"graph\": []}", arg,
                    {"graph JSON: x[0][0][0][0][0]...[0][0][0]: ", "nest deeper than the limit of 64 levels"}),
            text_row("json_nested_100000_objects", "{\"graph\": [], \"x\": " + nested(100000, true) + "}", arg,
                    {"graph JSON: x.a.a.a.a.a...a.a.a: ", "limit of 64 levels"}),
            text_row("json_nested_one_level_too_deep", "{\"graph\": [], \"x\": " + nested(64, false) + "}", arg,
                    {"graph JSON: x[0]", "limit of 64 levels"}),
            text_row("json_duplicate_key_top_level", R"({"graph": [], "graph": []})", arg,
                    {"graph JSON: top-level object: duplicate key \"graph\""}),
            text_row("json_duplicate_attr", base_text_with("\"attrs\":{", R"("mode":{"type":"string","value":"nearest"},)"),
                    arg, {"graph JSON: graph[0].attrs: duplicate key \"mode\""}),
            text_row("json_duplicate_key_in_tensor", base_text_with("\"outputs\":[{", R"("id":7,)"), arg,
                    {"graph JSON: graph[0].outputs[0]: duplicate key \"id\""}),
            // The message is one line and keeps the text after the NUL.
            row("json_op_name_with_newline_and_nul", [](json &d) {
                    op0(d)["name"] = std::string("A\nB\0C", 5);
                    op0(d)["kind"] = "Nope"; }, structure,
                    {"op 0 (\"A\\nB\\x00C\"): kind: unknown op kind \"Nope\""}),
            row("json_schema_check_reaches_import", [](json &d) { op0(d)["attrs"]["sizes"]["value"] = {8, 9}; }, shape,
                    {"InterpolateBackprop op 0 (\"RESAMPLING_0\")", "'sizes'[1] = 9"}),
    };
}

INSTANTIATE_TEST_SUITE_P(Json, BadInput, ::testing::ValuesIn(rows()), row_name);

} // namespace
} // namespace bpg::test
