// The oneDNN Graph JSON serialization (what benchdnn --graph reads and what
// ONEDNN_GRAPH_DUMP writes): import into ops, export back.
//
//   { "version": "3.0.0", "engine_kind": "cpu", "fpmath_mode": "strict",
//     "input_ports": [0, 1], "output_ports": [2],          (optional)
//     "graph": [ { "id", "name", "kind", "attrs": { name: {type, value} },
//                  "inputs": [lt...], "outputs": [lt...] } ] }
//   lt = { "id", "dtype", "shape", "stride", "layout_type", "property_type" }
#pragma once

#include <string>
#include <vector>

#include "bpg/graph.hpp"

#pragma GCC visibility push(default)
namespace bpg {

struct graph_document {
    std::string version = "3.0.0";
    engine::kind engine_kind = engine::kind::cpu;
    fpmath_mode fpmath = fpmath_mode::strict;
    bool has_ports = false; // input_ports / output_ports present
    std::vector<size_t> input_ports, output_ports;
    std::vector<op> ops;
};

// Parses and checks the JSON text (syntax, field types, known op kinds and
// attribute names). Op semantics are checked when the ops are added to a
// graph. Throws bpg::error naming the op id and field on any problem.
// Refused before any tree is built (invalid_argument, naming the path, e.g.
// `graph[0].attrs`): arrays and objects nested deeper than 64 levels (the
// top-level object is level 1; oneDNN's documents use 6), and a key that
// appears twice in one object. See docs/json.md.
graph_document parse_graph_json(const std::string &text);
graph_document read_graph_json_file(const std::string &path);

std::string write_graph_json(const graph_document &doc);
graph_document document_of(const graph &g);

// Adds every op (schema checks) and finalizes.
graph make_graph(const graph_document &doc);

} // namespace bpg
#pragma GCC visibility pop
