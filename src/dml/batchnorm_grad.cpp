// DML_BATCH_NORMALIZATION_GRAD_OPERATOR_DESC and
// DML_BATCH_NORMALIZATION_TRAINING_GRAD_OPERATOR_DESC -> bpg
// BatchNormTrainingBackprop with rank-matched statistics (docs/semantics.md: the
// reduction set is the axes where Mean has size 1). GRAD is the
// use_global_stats formula, TRAINING_GRAD the training one. DirectML allows
// 1 to 8 dimensions, bpg 2 to 8: a 1-D operator gets a leading axis of size 1
// on every tensor (reduced, and of one element, so nothing changes).
#include <cmath>

#include "dml/dml_internal.hpp"

namespace bpg::dml {

namespace {

// The fields both descs share, in DirectML's binding order.
struct bn_fields {
    const char *name;
    bool training;
    const buffer_tensor_desc *tensors[8];
    float epsilon;
};
constexpr const char *field_names[8] = {"InputTensor", "InputGradientTensor", "MeanTensor", "VarianceTensor",
        "ScaleTensor", "OutputGradientTensor", "OutputScaleGradientTensor", "OutputBiasGradientTensor"};
constexpr size_t input_count = 5;

bn_fields fields_of(const char *name, bool training, const batch_normalization_grad_fields &d) {
    return {name, training,
            {d.InputTensor, d.InputGradientTensor, d.MeanTensor, d.VarianceTensor, d.ScaleTensor,
                    d.OutputGradientTensor, d.OutputScaleGradientTensor, d.OutputBiasGradientTensor},
            d.Epsilon};
}

void check_epsilon(const char *name, float eps) {
    if (!std::isfinite(eps))
        fail(name, status::invalid_argument, "Epsilon = " + std::to_string(eps) + " must be finite");
    if (eps < 0.f)
        fail(name, status::unimplemented,
                "Epsilon = " + std::to_string(eps)
                        + " is negative; bpg's BatchNormTrainingBackprop requires epsilon >= 0 (docs/semantics.md)");
}

// Every Mean axis is 1 (summed over) or the Input's size (kept): the
// statistics broadcast against the data.
void check_broadcast(const char *name, const checked_tensor &x, const checked_tensor &mean) {
    for (size_t a = 0; a < x.sizes.size(); ++a)
        if (mean.sizes[a] != 1 && mean.sizes[a] != x.sizes[a])
            fail(name, status::invalid_shape,
                    "MeanTensor.Sizes = " + sizes_text(mean.sizes) + " against InputTensor.Sizes = "
                            + sizes_text(x.sizes) + ": axis " + std::to_string(a)
                            + " must be 1 (summed over) or " + std::to_string(x.sizes[a]) + " (kept)");
}

binding binding_of(size_t id, const checked_tensor &t, bool is_statistic) {
    binding b;
    b.field = t.field;
    dims sizes = t.sizes, strides = t.strides;
    if (sizes.size() == 1) { // bpg's rank 2 minimum: a leading axis of size 1
        sizes.insert(sizes.begin(), 1);
        strides.insert(strides.begin(), t.sizes[0] * t.strides[0]);
    }
    if (is_statistic && t.dt == data_type::f16) {
        b.staged = true;
        b.dml_sizes = sizes;
        b.dml_strides = strides;
        b.lt = logical_tensor(id, data_type::f32, sizes, layout_type::strided);
    } else {
        b.lt = logical_tensor(id, t.dt, sizes, strides);
    }
    return b;
}

compiled_operator compile_bn(const bn_fields &f, const compile_options &opts) {
    std::vector<checked_tensor> t;
    for (size_t i = 0; i < 8; ++i)
        t.push_back(check_tensor(f.name, field_names[i], f.tensors[i], 1, 8, i >= input_count));
    for (size_t i = 1; i < 8; ++i) check_same_type_and_rank(f.name, t[0], t[i]);
    for (size_t i : {1, 5}) check_same_sizes(f.name, t[0], t[i]);
    for (size_t i : {3, 4, 6, 7}) check_same_sizes(f.name, t[2], t[i]);
    check_broadcast(f.name, t[0], t[2]);
    check_epsilon(f.name, f.epsilon);

    // Tensor ids = binding positions: 0 src, 1 diff_dst, 2 mean, 3 variance,
    // 4 gamma; 5 diff_src, 6 diff_gamma, 7 diff_beta.
    std::vector<binding> in, out;
    std::vector<logical_tensor> ins, outs;
    for (size_t i = 0; i < 8; ++i) {
        const bool statistic = i != 0 && i != 1 && i != 5;
        (i < input_count ? in : out).push_back(binding_of(i, t[i], statistic));
        (i < input_count ? ins : outs).push_back((i < input_count ? in : out).back().lt);
    }
    op o(0, op::kind::BatchNormTrainingBackprop, ins, outs, f.name);
    o.set_attr(op::attr::epsilon, f.epsilon).set_attr(op::attr::use_global_stats, !f.training);
    return compile_graph_op(f.name, o, in, out, {}, opts);
}

} // namespace

compiled_operator compile(const batch_normalization_grad_operator_desc &desc, const compile_options &opts) {
    return compile_bn(fields_of("DML_BATCH_NORMALIZATION_GRAD_OPERATOR_DESC", false, desc), opts);
}

compiled_operator compile(const batch_normalization_training_grad_operator_desc &desc,
        const compile_options &opts) {
    return compile_bn(fields_of("DML_BATCH_NORMALIZATION_TRAINING_GRAD_OPERATOR_DESC", true, desc), opts);
}

void batch_normalization_grad(const batch_normalization_grad_operator_desc &desc, const void *input,
        const void *input_gradient, const void *mean, const void *variance, const void *scale,
        void *output_gradient, void *output_scale_gradient, void *output_bias_gradient,
        const compile_options &opts) {
    compile(desc, opts).execute({input, input_gradient, mean, variance, scale},
            {output_gradient, output_scale_gradient, output_bias_gradient});
}

void batch_normalization_training_grad(const batch_normalization_training_grad_operator_desc &desc,
        const void *input, const void *input_gradient, const void *mean, const void *variance,
        const void *scale, void *output_gradient, void *output_scale_gradient,
        void *output_bias_gradient, const compile_options &opts) {
    compile(desc, opts).execute({input, input_gradient, mean, variance, scale},
            {output_gradient, output_scale_gradient, output_bias_gradient});
}

} // namespace bpg::dml
