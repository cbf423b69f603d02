// The DirectML-compatible entry points (bpg/dml.hpp): a DML_RESAMPLE_GRAD
// operator (the worked example of its DirectML document), then a
// DML_BATCH_NORMALIZATION_TRAINING_GRAD operator compiled once and run twice.
// Exit code 0 when the results are the expected ones.
#include <cmath>
#include <cstdio>
#include <vector>

#include "bpg/dml.hpp"

using namespace bpg;

namespace {

// A packed FLOAT32 DML_BUFFER_TENSOR_DESC over the given sizes.
dml::buffer_tensor_desc packed_f32(const std::vector<uint32_t> &sizes) {
    dml::buffer_tensor_desc d;
    d.DataType = dml::tensor_data_type::float32;
    d.DimensionCount = uint32_t(sizes.size());
    d.Sizes = sizes.data();
    d.TotalTensorSizeInBytes = dml::calc_buffer_tensor_size(d.DataType, d.DimensionCount, d.Sizes, nullptr);
    return d;
}

bool resample_worked_example() {
    // Forward: nearest neighbor, 0.5x in height and 1.5x in width, half-pixel
    // offsets; ties round down (the document's example).
    const std::vector<uint32_t> dy_sizes {1, 1, 1, 3}, dx_sizes {1, 1, 2, 2};
    const dml::buffer_tensor_desc dy = packed_f32(dy_sizes), dx = packed_f32(dx_sizes);
    const float scales[] = {1, 1, 0.5f, 1.5f}, in_offsets[] = {0.5f, 0.5f, 0.5f, 0.5f},
                out_offsets[] = {-0.5f, -0.5f, -0.5f, -0.5f};
    dml::resample_grad_operator_desc desc;
    desc.InputGradientTensor = &dy;
    desc.OutputGradientTensor = &dx;
    desc.InterpolationMode = dml::interpolation_mode::nearest_neighbor;
    desc.DimensionCount = 4;
    desc.Scales = scales;
    desc.InputPixelOffsets = in_offsets;
    desc.OutputPixelOffsets = out_offsets;
    desc.RoundingDirection = dml::axis_direction::decreasing;
    const float input_gradient[] = {4, 5, 6};
    float output_gradient[4] = {};
    dml::resample_grad(desc, input_gradient, output_gradient);
    std::printf("DML_RESAMPLE_GRAD: InputGradient [4, 5, 6] -> OutputGradient [[%g, %g], [%g, %g]]\n",
            output_gradient[0], output_gradient[1], output_gradient[2], output_gradient[3]);
    std::printf("  %s\n", dml::compile(desc).describe().c_str());
    return output_gradient[0] == 9 && output_gradient[1] == 6 && output_gradient[2] == 0 && output_gradient[3] == 0;
}

bool batchnorm_training_grad() {
    // x: 2 x 2 (N x C); statistics 1 x 2: sums over N, one per channel.
    const std::vector<uint32_t> data_sizes {2, 2}, stat_sizes {1, 2};
    const dml::buffer_tensor_desc data = packed_f32(data_sizes), stat = packed_f32(stat_sizes);
    dml::batch_normalization_training_grad_operator_desc desc;
    desc.InputTensor = desc.InputGradientTensor = desc.OutputGradientTensor = &data;
    desc.MeanTensor = desc.VarianceTensor = desc.ScaleTensor = &stat;
    desc.OutputScaleGradientTensor = desc.OutputBiasGradientTensor = &stat;
    desc.Epsilon = 0.f;
    const dml::compiled_operator op = dml::compile(desc);
    // Channel 0: x = {1, 3}, mean 2, variance 1 -> xhat = {-1, 1}.
    const float x[] = {1, 10, 3, 20}, mean[] = {2, 15}, var[] = {1, 25}, scale[] = {2, 1};
    bool ok = true;
    for (float grad : {1.f, 3.f}) {
        const float dy[] = {grad, 0, 0, 0};
        float dx[4], dscale[2], dbias[2];
        op.execute({x, dy, mean, var, scale}, {dx, dscale, dbias});
        // dbias = sum dy = grad; dscale = sum dy * xhat = -grad;
        // dx = scale / sqrt(var) * (dy - dbias / 2 - xhat * dscale / 2) = 2 * {grad/2 - grad/2, -grad/2 + grad/2} = 0
        std::printf("DML_BATCH_NORMALIZATION_TRAINING_GRAD (dy[0] = %g): OutputScaleGradient[0] = %g, "
                    "OutputBiasGradient[0] = %g, OutputGradient[0..2 of channel 0] = %g, %g\n",
                grad, dscale[0], dbias[0], dx[0], dx[2]);
        ok = ok && dbias[0] == grad && dscale[0] == -grad && dx[0] == 0 && dx[2] == 0 && dbias[1] == 0;
    }
    std::printf("  %s\n", op.describe().c_str());
    return ok;
}

} // namespace

int main() {
    try {
        const bool ok = resample_worked_example() & batchnorm_training_grad();
        std::puts(ok ? "OK" : "FAILED");
        return ok ? 0 : 1;
    } catch (const error &e) {
        std::fprintf(stderr, "error (%s): %s\n", to_string(e.code()), e.what());
        return 2;
    }
}
