// A first pass over JSON text that builds no tree, so that input no tree
// should be built from is refused before nlohmann's recursive copies and
// destructors ever see it.
#pragma once

#include <string>

namespace bpg::io {

// Arrays and objects inside one another, counting the top-level value as 1.
// oneDNN's graph documents need 6 (root, graph, op, attrs, attr, value).
constexpr int max_json_depth = 64;

// Throws bpg::error(invalid_argument), prefixed by `where`, for text that is
// not valid JSON, that nests deeper than max_json_depth, or that has a key
// twice in one object. Messages give the path of the place (`graph[0].attrs`).
void precheck_json(const std::string &text, const std::string &where);

} // namespace bpg::io
