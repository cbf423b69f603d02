// Small compiled partitions with their own input and output buffers, for
// tests that run one compiled partition many times (concurrency, non-finite
// propagation).
#pragma once

#include <cstdint>
#include <vector>

#include "bpg/graph.hpp"

namespace bpg::test {

// InterpolateBackprop f32 NCX: src 0 (shape src), diff_dst 1, diff_src 2;
// `mode` "nearest" or "linear", sizes from diff_dst's shape.
compiled_partition compile_interp(const dims &src, const dims &diff_dst, const char *mode, backend_kind b,
        const char *coordinate_mode = "half_pixel");
// BatchNormTrainingBackprop f32 NCX, [C] statistics: src 0, diff_dst 1, mean
// 2, variance 3, gamma 4; diff_src 5, diff_gamma 6, diff_beta 7.
compiled_partition compile_bn(const dims &src, backend_kind b);

// Buffers for every port of cp (held as floats; 16-bit tensors two elements
// to a float). Inputs are filled from `seed` with values in [0.5, 1.5)
// (positive, so valid variances too) in their own data type.
class port_buffers {
public:
    port_buffers(const compiled_partition &cp, uint32_t seed);
    port_buffers(const port_buffers &) = delete;
    port_buffers &operator=(const port_buffers &) = delete;
    float *input(size_t id);
    const std::vector<float> &output(size_t id) const;
    // Fills every output with an all-ones bit pattern (a NaN), so that a run
    // that skipped an element cannot pass for a run that wrote it.
    void poison_outputs();
    void execute(const compiled_partition &cp);
    // Every output's bits, concatenated.
    std::vector<uint32_t> output_bits() const;

private:
    std::vector<size_t> in_ids_, out_ids_;
    std::vector<std::vector<float>> in_, out_;
    std::vector<tensor> in_t_, out_t_;
};

} // namespace bpg::test
