// DirectML-compatible entry points. The structs mirror directml.h field for
// field (DML_BUFFER_TENSOR_DESC, DML_RESAMPLE_GRAD_OPERATOR_DESC,
// DML_BATCH_NORMALIZATION_GRAD_OPERATOR_DESC,
// DML_BATCH_NORMALIZATION_TRAINING_GRAD_OPERATOR_DESC), so code written for
// DirectML ports by renaming types. Every constraint the DirectML documents
// state is checked at compile; a violation throws bpg::error naming the DML
// operator, the field, the value and the rule (invalid_* statuses), and legal
// DirectML that bpg cannot compute throws status::unimplemented. A compiled
// operator builds the equivalent bpg graph op (docs/semantics.md, "DirectML
// operators"; docs/dml.md) and runs it on the backend the dispatch rule picks.
//
//   bpg::dml::compiled_operator op = bpg::dml::compile(desc);   // once
//   op.execute({input_gradient}, {output_gradient});            // many times
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bpg/graph.hpp"

#pragma GCC visibility push(default)
namespace bpg::dml {

// DML_TENSOR_DATA_TYPE, same order and values.
enum class tensor_data_type : uint32_t {
    unknown, float32, float16, uint32, uint16, uint8, int32, int16, int8, float64, uint64, int64,
};
const char *to_string(tensor_data_type t); // "FLOAT32", as directml.h spells it

// DML_TENSOR_FLAGS. OWNED_BY_DML (weights DirectML keeps at initialization) has
// no meaning on a CPU library: compile reports it as unimplemented.
enum class tensor_flags : uint32_t { none = 0, owned_by_dml = 1 };

// DML_BUFFER_TENSOR_DESC (DML_TENSOR_DESC of type DML_TENSOR_TYPE_BUFFER).
// Sizes and Strides point to DimensionCount values; Strides (in elements) may
// be null for a packed tensor. TotalTensorSizeInBytes must be at least
// calc_buffer_tensor_size(...) and a multiple of 4, as DirectML requires.
// GuaranteedBaseOffsetAlignment is an alignment hint; bpg does not need it.
struct buffer_tensor_desc {
    tensor_data_type DataType = tensor_data_type::unknown;
    tensor_flags Flags = tensor_flags::none;
    uint32_t DimensionCount = 0;
    const uint32_t *Sizes = nullptr;
    const uint32_t *Strides = nullptr;
    uint64_t TotalTensorSizeInBytes = 0;
    uint32_t GuaranteedBaseOffsetAlignment = 0;
};

// DMLCalcBufferTensorSize: bytes of the one-past-last element, rounded up to 4.
// 0 for a data type without a size.
uint64_t calc_buffer_tensor_size(tensor_data_type type, uint32_t dimension_count,
        const uint32_t *sizes, const uint32_t *strides);

// DML_INTERPOLATION_MODE.
enum class interpolation_mode : uint32_t { nearest_neighbor, linear };
// DML_AXIS_DIRECTION, used as DML_RESAMPLE2's RoundingDirection.
enum class axis_direction : uint32_t { increasing, decreasing };

// DML_RESAMPLE_GRAD_OPERATOR_DESC. InputGradientTensor has the sizes of the
// forward output, OutputGradientTensor those of the forward input. Each of the
// DimensionCount axes maps output coordinate x_out to
//   x_in = (x_out - OutputPixelOffsets[i]) / Scales[i] - InputPixelOffsets[i].
// RoundingDirection is a bpg extension taken from DML_RESAMPLE2: how a
// nearest-neighbor coordinate exactly halfway between two pixels rounds.
// increasing (the default) is RESAMPLE1's floor(x + 0.5); the worked example of
// the RESAMPLE_GRAD document needs decreasing (ceil(x - 0.5)).
struct resample_grad_operator_desc {
    const buffer_tensor_desc *InputGradientTensor = nullptr;
    const buffer_tensor_desc *OutputGradientTensor = nullptr;
    interpolation_mode InterpolationMode = interpolation_mode::nearest_neighbor;
    uint32_t DimensionCount = 0;
    const float *Scales = nullptr;
    const float *InputPixelOffsets = nullptr;
    const float *OutputPixelOffsets = nullptr;
    axis_direction RoundingDirection = axis_direction::increasing;
};

// The fields DML_BATCH_NORMALIZATION_GRAD_OPERATOR_DESC and
// DML_BATCH_NORMALIZATION_TRAINING_GRAD_OPERATOR_DESC share, in directml.h's
// order. Sums run over the axes where MeanTensor (and Variance, Scale) have
// size 1.
struct batch_normalization_grad_fields {
    const buffer_tensor_desc *InputTensor = nullptr;
    const buffer_tensor_desc *InputGradientTensor = nullptr;
    const buffer_tensor_desc *MeanTensor = nullptr;
    const buffer_tensor_desc *VarianceTensor = nullptr;
    const buffer_tensor_desc *ScaleTensor = nullptr;
    const buffer_tensor_desc *OutputGradientTensor = nullptr;
    const buffer_tensor_desc *OutputScaleGradientTensor = nullptr;
    const buffer_tensor_desc *OutputBiasGradientTensor = nullptr;
    float Epsilon = 0.f;
};
// DML_BATCH_NORMALIZATION_GRAD_OPERATOR_DESC: the gradient with the statistics
// held constant (bpg's use_global_stats formula).
struct batch_normalization_grad_operator_desc : batch_normalization_grad_fields {};
// DML_BATCH_NORMALIZATION_TRAINING_GRAD_OPERATOR_DESC: the gradient through the
// batch statistics (bpg's training formula). Same fields and rules.
struct batch_normalization_training_grad_operator_desc : batch_normalization_grad_fields {};

// An operator checked and compiled once, executed many times (concurrent
// executes are safe). Buffers are bound in DirectML's order: the input tensors
// in the order of the desc's fields, then the outputs likewise, each laid out
// as its buffer_tensor_desc says.
class compiled_operator {
public:
    compiled_operator() = default;
    void execute(const std::vector<const void *> &inputs, const std::vector<void *> &outputs) const;
    const char *name() const;            // "DML_RESAMPLE_GRAD_OPERATOR_DESC", ...
    backend_kind get_backend() const;    // chosen by the dispatch rule (or forced by options)
    // The bpg graph this operator runs: one line per compiled partition
    // (compiled_partition::describe) and why its backend was chosen.
    std::string describe() const;

    struct impl;
    explicit compiled_operator(std::shared_ptr<const impl> p) : impl_(std::move(p)) {}

private:
    std::shared_ptr<const impl> impl_;
};

compiled_operator compile(const resample_grad_operator_desc &desc, const compile_options &opts = {});
compiled_operator compile(const batch_normalization_grad_operator_desc &desc, const compile_options &opts = {});
compiled_operator compile(const batch_normalization_training_grad_operator_desc &desc,
        const compile_options &opts = {});

// One-shot forms: compile, execute once.
void resample_grad(const resample_grad_operator_desc &desc, const void *input_gradient,
        void *output_gradient, const compile_options &opts = {});
void batch_normalization_grad(const batch_normalization_grad_operator_desc &desc, const void *input,
        const void *input_gradient, const void *mean, const void *variance, const void *scale,
        void *output_gradient, void *output_scale_gradient, void *output_bias_gradient,
        const compile_options &opts = {});
void batch_normalization_training_grad(const batch_normalization_training_grad_operator_desc &desc,
        const void *input, const void *input_gradient, const void *mean, const void *variance,
        const void *scale, void *output_gradient, void *output_scale_gradient,
        void *output_bias_gradient, const compile_options &opts = {});

} // namespace bpg::dml
#pragma GCC visibility pop
