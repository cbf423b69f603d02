// Shared by the DirectML entry points: checking a buffer_tensor_desc against
// DirectML's rules, turning it into a bpg logical tensor, and the compiled
// operator's state.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "bpg/dml.hpp"

namespace bpg::dml {

// Throws bpg::error "<op>: <what>".
[[noreturn]] void fail(const char *op, status s, const std::string &what);

// A DML tensor after its own rules were checked: sizes and strides in
// elements (strides packed when the desc gave none).
struct checked_tensor {
    std::string field; // "InputGradientTensor"
    tensor_data_type dml_type = tensor_data_type::unknown;
    data_type dt = data_type::undef;
    dims sizes, strides;
};

// Checks one DML_BUFFER_TENSOR_DESC field of an operator: present, Flags,
// DimensionCount in [min_dims, max_dims], Sizes non-zero, TotalTensorSizeInBytes
// (DMLCalcBufferTensorSize, DWORD multiple), DataType FLOAT32 or FLOAT16, and
// for an output, strides whose elements do not overlap.
checked_tensor check_tensor(const char *op, const char *field, const buffer_tensor_desc *d,
        uint32_t min_dims, uint32_t max_dims, bool is_output);
// The DirectML rule "A and B must have the same DataType and DimensionCount".
void check_same_type_and_rank(const char *op, const checked_tensor &a, const checked_tensor &b);
void check_same_sizes(const char *op, const checked_tensor &a, const checked_tensor &b);
// "{2, 3, 4}", as DirectML documents write sizes.
std::string sizes_text(const dims &d);

// One buffer of DirectML's binding order and the bpg tensor it becomes.
// staged: the DML buffer is FLOAT16 statistics while bpg computes them in f32;
// execute converts through a dense f32 copy (lt is that copy).
struct binding {
    std::string field;
    logical_tensor lt;
    bool staged = false;
    dims dml_sizes, dml_strides; // as the DML desc lays the buffer out (staged only)
};

struct compiled_operator::impl {
    const char *name = "";
    std::vector<binding> inputs, outputs;
    // Graph inputs DirectML has no buffer for (InterpolateBackprop's src: its
    // shape and dtype only), bound to a dummy buffer through zero strides.
    std::vector<logical_tensor> shape_only_inputs;
    compiled_partition partition;
};

// Adds the op to a graph, compiles its one partition for the bindings and
// returns the compiled operator. A bpg error (which the DML checks should have
// anticipated) is rethrown with the DML operator's name in front.
compiled_operator compile_graph_op(const char *name, const op &o, std::vector<binding> inputs,
        std::vector<binding> outputs, std::vector<logical_tensor> shape_only_inputs,
        const compile_options &opts);

} // namespace bpg::dml
