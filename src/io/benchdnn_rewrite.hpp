// benchdnn --graph rewrite knobs, so that the command lines of oneDNN's
// harness files (tests/benchdnn/inputs/graph/.../harness_*) run here:
//   --dt=bf16                          floating data tensors to bf16 (BN statistics stay f32)
//   --in-shapes=0:2x17x17*acb+1:2x17x21*acb   input shapes, optionally a memory tag
//   --op-attrs=0:scales:2x0.5*mode:linear     attributes of op 0 ('x' separates list values)
// After rewriting, the outputs of every op are re-inferred (shape inference of
// the op schemas) and laid out in the axis order of the op's input 0.
#pragma once

#include <optional>
#include <string>

#include "bpg/json.hpp"

namespace bpg::io {

struct benchdnn_rewrite {
    std::optional<data_type> dt;
    std::string in_shapes; // "" = unchanged
    std::string op_attrs;  // "" = unchanged
    bool empty() const { return !dt && in_shapes.empty() && op_attrs.empty(); }
};

// Throws bpg::error(invalid_argument) naming the knob and the bad part.
void apply_rewrite(graph_document &doc, const benchdnn_rewrite &r);

// "acb" for a rank-3 shape -> strides with axis b innermost. Throws on a tag
// that is not a permutation of the first rank letters.
dims strides_of_tag(const dims &shape, const std::string &tag);

} // namespace bpg::io
