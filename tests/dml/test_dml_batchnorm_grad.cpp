// DML_BATCH_NORMALIZATION_GRAD / _TRAINING_GRAD: the formulas of the DirectML
// document, and the mapping to BatchNormTrainingBackprop checked bit for bit
// against the same op built directly through the graph API.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "bpg/bpg.hpp"
#include "bpg/dml.hpp"
#include "core/allocate.hpp"
#include "dml/dml_tensor.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

using dml::tensor_data_type;

// The eight tensors in DirectML's order: Input, InputGradient, Mean, Variance,
// Scale, then OutputGradient, OutputScaleGradient, OutputBiasGradient.
struct bn_setup {
    std::vector<dml_tensor> t;
    float epsilon = 1e-3f;

    bn_setup(tensor_data_type type, const std::vector<uint32_t> &x, const std::vector<uint32_t> &stat) {
        for (int i = 0; i < 8; ++i) t.emplace_back(type, (i == 0 || i == 1 || i == 5) ? x : stat);
        t[0].fill_random(1, -2.f, 3.f);
        t[1].fill_random(2, -1.f, 1.f);
        t[2].fill_random(3, -0.5f, 0.5f);
        t[3].fill_random(4, 0.5f, 2.f);
        t[4].fill_random(5, 0.25f, 1.5f);
    }
    template <typename Desc> Desc desc() {
        Desc d;
        d.InputTensor = &t[0].desc;
        d.InputGradientTensor = &t[1].desc;
        d.MeanTensor = &t[2].desc;
        d.VarianceTensor = &t[3].desc;
        d.ScaleTensor = &t[4].desc;
        d.OutputGradientTensor = &t[5].desc;
        d.OutputScaleGradientTensor = &t[6].desc;
        d.OutputBiasGradientTensor = &t[7].desc;
        d.Epsilon = epsilon;
        return d;
    }
    std::vector<const void *> inputs() { return {t[0].data(), t[1].data(), t[2].data(), t[3].data(), t[4].data()}; }
    std::vector<void *> outputs() { return {t[5].data(), t[6].data(), t[7].data()}; }
};

// The same computation built by hand as a graph op: rank-matched statistics
// (a 1-D operator gets a leading axis of size 1), FLOAT16 statistics widened
// to f32 (bpg keeps statistics of 16-bit data in f32) and the f32 parameter
// gradients rounded to FLOAT16 afterwards.
std::vector<std::vector<float>> run_graph_op(bn_setup s, bool training) {
    const bool half = s.t[0].half();
    const data_type data_dt = half ? data_type::f16 : data_type::f32;
    auto shape_of = [](const dml_tensor &t) {
        dims d(t.sizes.begin(), t.sizes.end());
        if (d.size() == 1) d.insert(d.begin(), 1);
        return d;
    };
    std::vector<logical_tensor> lts;
    for (size_t i = 0; i < 8; ++i) {
        const bool data = i == 0 || i == 1 || i == 5;
        lts.emplace_back(i, data ? data_dt : data_type::f32, shape_of(s.t[i]));
    }
    op o(0, op::kind::BatchNormTrainingBackprop, {lts[0], lts[1], lts[2], lts[3], lts[4]}, {lts[5], lts[6], lts[7]});
    o.set_attr(op::attr::epsilon, s.epsilon).set_attr(op::attr::use_global_stats, !training);
    graph g;
    g.add_op(o);
    g.finalize();
    engine eng;
    std::vector<std::vector<float>> f32_buffers(8);
    dml_tensor dx(s.t[5]); // the entry point's result in s.t[5] stays
    std::vector<tensor> ins, outs;
    for (size_t i = 0; i < 8; ++i) {
        const bool data = i == 0 || i == 1 || i == 5;
        void *ptr = i == 5 ? dx.data() : s.t[i].data();
        if (!data) { // statistics as f32 values
            f32_buffers[i] = s.t[i].values();
            ptr = f32_buffers[i].data();
        }
        (i < 5 ? ins : outs).emplace_back(lts[i], eng, ptr);
    }
    g.get_partitions()[0].compile({lts[0], lts[1], lts[2], lts[3], lts[4]}, {lts[5], lts[6], lts[7]}, eng)
            .execute(stream(eng), ins, outs);
    std::vector<std::vector<float>> result {dx.values(), f32_buffers[6], f32_buffers[7]};
    for (size_t k : {1, 2}) // FLOAT16 outputs: round as the DML tensors store them
        if (half)
            for (float &v : result[k]) v = kernels::f16_to_f32(kernels::f32_to_f16(v));
    return result;
}

void expect_same_bits(const std::vector<float> &a, const std::vector<float> &b, const char *what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
}

struct shape_case {
    tensor_data_type type;
    std::vector<uint32_t> x, stat;
};

const std::vector<shape_case> &shape_cases() {
    const auto f32 = tensor_data_type::float32, f16 = tensor_data_type::float16;
    static const std::vector<shape_case> cases {
            {f32, {2, 3, 4, 5}, {1, 3, 1, 1}}, // NCHW, per channel
            {f16, {2, 3, 4, 5}, {1, 3, 1, 1}},
            {f32, {2, 4, 6}, {1, 1, 6}},       // channels last
            {f32, {3, 4, 2, 5}, {1, 4, 2, 1}}, // two kept axes
            {f32, {9}, {1}},                   // 1-D: one sum over everything
            {f16, {4, 3}, {1, 3}},
            {f32, {2, 3}, {2, 3}},             // nothing reduced
            {f32, {2, 1, 2, 1, 2, 1, 2, 3}, {1, 1, 1, 1, 1, 1, 2, 3}}, // 8-D
    };
    return cases;
}

template <typename Desc> void check_mapping(bool training) {
    for (const shape_case &c : shape_cases()) {
        bn_setup s(c.type, c.x, c.stat);
        SCOPED_TRACE(std::string(dml::to_string(c.type)) + " x " + std::to_string(c.x.size()) + "-D");
        const dml::compiled_operator op = dml::compile(s.template desc<Desc>());
        op.execute(s.inputs(), s.outputs());
        const std::vector<std::vector<float>> want = run_graph_op(s, training);
        expect_same_bits(s.t[5].values(), want[0], "OutputGradientTensor");
        expect_same_bits(s.t[6].values(), want[1], "OutputScaleGradientTensor");
        expect_same_bits(s.t[7].values(), want[2], "OutputBiasGradientTensor");
    }
}

// FLOAT16 statistics are staged as f32 for the partition: those copies are
// taken through core::allocate before anything is written. Requests over
// 16 KB fail here, which only the 32 KB copies of 8192 statistics make (the
// ref backend takes nothing that large for one op).
TEST(DmlBatchNormGrad, HalfStatisticsStagingRunsOutOfMemoryCleanly) {
    bn_setup s(tensor_data_type::float16, {2, 8192, 1, 1}, {1, 8192, 1, 1});
    compile_options opts;
    opts.backend = backend_kind::ref;
    const dml::compiled_operator op = dml::compile(s.desc<dml::batch_normalization_grad_operator_desc>(), opts);
    for (size_t i = 5; i < 8; ++i) std::fill(s.t[i].storage.begin(), s.t[i].storage.end(), 0xA5A5A5A5u);
    const std::vector<dml_tensor> before(s.t.begin() + 5, s.t.end());
    core::test_allocation_faults().fail_over = 16 << 10;
    expect_error([&] { op.execute(s.inputs(), s.outputs()); }, status::out_of_memory, {"out of memory", "bytes"});
    core::test_allocation_faults().fail_over = 0;
    for (size_t i = 5; i < 8; ++i) EXPECT_EQ(s.t[i].storage, before[i - 5].storage) << "output " << i << " was written";
    op.execute(s.inputs(), s.outputs());
    EXPECT_NE(s.t[5].storage, before[0].storage);
}

TEST(DmlBatchNormGrad, MappingMatchesTheGraphOpBitForBit) {
    check_mapping<dml::batch_normalization_grad_operator_desc>(false);
}

TEST(DmlBatchNormTrainingGrad, MappingMatchesTheGraphOpBitForBit) {
    check_mapping<dml::batch_normalization_training_grad_operator_desc>(true);
}

// The formulas, in f64, over the axes where Mean has size 1. GRAD: the
// DirectML document's three outputs. TRAINING_GRAD: the gradient through the
// batch statistics (docs/semantics.md).
std::vector<std::vector<double>> formulas(const bn_setup &s, bool training) {
    const dml_tensor &x = s.t[0], &dy = s.t[1], &mean = s.t[2];
    const size_t n = x.count(), m_count = mean.count();
    // stat index of each data element: drop the reduced axes.
    auto stat_of = [&](size_t i) {
        size_t si = 0, stride = 1;
        for (size_t a = x.sizes.size(); a-- > 0;) {
            const size_t idx = i % x.sizes[a];
            i /= x.sizes[a];
            if (mean.sizes[a] != 1) si += idx * stride;
            stride *= mean.sizes[a];
        }
        return si;
    };
    const double reduced = double(n) / double(m_count);
    std::vector<double> dscale(m_count, 0.0), dbias(m_count, 0.0), dx(n);
    auto inv = [&](size_t k) { return 1.0 / std::sqrt(double(s.t[3].get(k)) + double(s.epsilon)); };
    auto xhat = [&](size_t i) { return (double(x.get(i)) - mean.get(stat_of(i))) * inv(stat_of(i)); };
    for (size_t i = 0; i < n; ++i) {
        dbias[stat_of(i)] += dy.get(i);
        dscale[stat_of(i)] += dy.get(i) * xhat(i);
    }
    for (size_t i = 0; i < n; ++i) {
        const size_t k = stat_of(i);
        double g = dy.get(i);
        if (training) g -= dbias[k] / reduced + xhat(i) * dscale[k] / reduced;
        dx[i] = s.t[4].get(k) * inv(k) * g;
    }
    return {dx, dscale, dbias};
}

void run_one_shot(const dml::batch_normalization_grad_operator_desc &d, bn_setup &s) {
    dml::batch_normalization_grad(d, s.t[0].data(), s.t[1].data(), s.t[2].data(), s.t[3].data(), s.t[4].data(),
            s.t[5].data(), s.t[6].data(), s.t[7].data());
}
void run_one_shot(const dml::batch_normalization_training_grad_operator_desc &d, bn_setup &s) {
    dml::batch_normalization_training_grad(d, s.t[0].data(), s.t[1].data(), s.t[2].data(), s.t[3].data(),
            s.t[4].data(), s.t[5].data(), s.t[6].data(), s.t[7].data());
}

template <typename Desc> void check_formulas(bool training) {
    for (const shape_case &c : shape_cases()) {
        if (c.type != tensor_data_type::float32) continue;
        bn_setup s(c.type, c.x, c.stat);
        SCOPED_TRACE(std::to_string(c.x.size()) + "-D");
        run_one_shot(s.template desc<Desc>(), s);
        const auto want = formulas(s, training);
        for (size_t k = 0; k < 3; ++k)
            for (size_t i = 0; i < want[k].size(); ++i)
                EXPECT_NEAR(s.t[5 + k].get(i), want[k][i], 1e-4 * (1.0 + std::fabs(want[k][i])))
                        << "output " << k << " element " << i;
    }
}

TEST(DmlBatchNormGrad, ComputesTheFormulasOfTheDirectMLDocument) {
    check_formulas<dml::batch_normalization_grad_operator_desc>(false);
}

TEST(DmlBatchNormTrainingGrad, ComputesTheTrainingGradient) {
    check_formulas<dml::batch_normalization_training_grad_operator_desc>(true);
}

} // namespace
} // namespace bpg::test
