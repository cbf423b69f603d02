// Every constraint the DirectML documents state is checked at compile, and
// reported with the operator, the field, the value and the rule: caller errors
// as invalid_*, legal DirectML that bpg cannot run as unimplemented.
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "bpg/dml.hpp"
#include "dml/dml_tensor.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

using dml::tensor_data_type;
const auto f32 = tensor_data_type::float32, f16 = tensor_data_type::float16;
constexpr const char *resample = "DML_RESAMPLE_GRAD_OPERATOR_DESC";
constexpr const char *bn = "DML_BATCH_NORMALIZATION_GRAD_OPERATOR_DESC";
constexpr const char *bn_training = "DML_BATCH_NORMALIZATION_TRAINING_GRAD_OPERATOR_DESC";

TEST(DmlTensorDesc, CalcBufferTensorSizeIsDirectMLsFormula) {
    const uint32_t sizes[] = {2, 3}, strides[] = {8, 2};
    EXPECT_EQ(dml::calc_buffer_tensor_size(f32, 2, sizes, nullptr), 24u);
    EXPECT_EQ(dml::calc_buffer_tensor_size(f16, 2, sizes, nullptr), 12u);
    // last element at 1*8 + 2*2 = 12: 13 halves = 26 bytes, rounded up to 28
    EXPECT_EQ(dml::calc_buffer_tensor_size(f16, 2, sizes, strides), 28u);
    EXPECT_EQ(dml::calc_buffer_tensor_size(tensor_data_type::uint8, 1, sizes, nullptr), 4u);
    EXPECT_EQ(dml::calc_buffer_tensor_size(tensor_data_type::unknown, 2, sizes, nullptr), 0u);
}

// Compiling must throw status s with a message that starts with the operator's
// name and contains every piece.
void expect_rule(const std::function<void()> &compile, const char *op, status s,
        const std::vector<std::string> &pieces) {
    try {
        compile();
        ADD_FAILURE() << "compiled";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), s) << e.what();
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind(std::string(op) + ": ", 0), 0u) << msg;
        for (const std::string &p : pieces) EXPECT_NE(msg.find(p), std::string::npos) << p << " | " << msg;
    }
}

struct resample_fixture {
    dml_tensor dy {f32, {1, 1, 4, 4}}, dx {f32, {1, 1, 2, 2}};
    std::vector<float> scales {1, 1, 2, 2}, io {0.5f, 0.5f, 0.5f, 0.5f}, oo {-0.5f, -0.5f, -0.5f, -0.5f};
    dml::resample_grad_operator_desc d;
    resample_fixture() {
        d.InputGradientTensor = &dy.desc;
        d.OutputGradientTensor = &dx.desc;
        d.DimensionCount = 4;
        d.Scales = scales.data();
        d.InputPixelOffsets = io.data();
        d.OutputPixelOffsets = oo.data();
    }
    void compile() const { dml::compile(d); }
};

TEST(DmlResampleGradChecks, ValidDescCompiles) { EXPECT_NO_THROW(resample_fixture().compile()); }

TEST(DmlResampleGradChecks, EachRuleOfTheDocument) {
    struct rule {
        const char *what;
        std::function<void(resample_fixture &)> breaks;
        status s;
        std::vector<std::string> pieces;
    };
    const std::vector<rule> rules {
            {"null tensor", [](resample_fixture &f) { f.d.InputGradientTensor = nullptr; },
                    status::invalid_argument, {"InputGradientTensor is null"}},
            {"5 dimensions", [](resample_fixture &f) {
                 f.dy = dml_tensor(f32, {1, 1, 1, 4, 4});
                 f.d.InputGradientTensor = &f.dy.desc;
             }, status::invalid_shape, {"InputGradientTensor.DimensionCount = 5", "1 to 4"}},
            {"size 0", [](resample_fixture &f) { f.dx.sizes[2] = 0; }, status::invalid_shape,
                    {"OutputGradientTensor.Sizes[2] = 0", "size of zero"}},
            {"int32", [](resample_fixture &f) { f.dy.desc.DataType = tensor_data_type::int32; },
                    status::invalid_data_type, {"InputGradientTensor.DataType = INT32", "FLOAT32 and FLOAT16"}},
            {"mixed types", [](resample_fixture &f) {
                 f.dx = dml_tensor(f16, {1, 1, 2, 2});
                 f.d.OutputGradientTensor = &f.dx.desc;
             }, status::invalid_data_type, {"OutputGradientTensor.DataType = FLOAT16", "same DataType"}},
            {"mixed ranks", [](resample_fixture &f) {
                 f.dx = dml_tensor(f32, {1, 2, 2});
                 f.d.OutputGradientTensor = &f.dx.desc;
             }, status::invalid_shape, {"OutputGradientTensor.DimensionCount = 3", "same DimensionCount"}},
            {"op DimensionCount", [](resample_fixture &f) { f.d.DimensionCount = 2; }, status::invalid_argument,
                    {"DimensionCount = 2 but the tensors have DimensionCount 4"}},
            {"small TotalTensorSizeInBytes", [](resample_fixture &f) { f.dy.desc.TotalTensorSizeInBytes = 60; },
                    status::invalid_argument, {"InputGradientTensor.TotalTensorSizeInBytes = 60", "at least", "64"}},
            {"unaligned TotalTensorSizeInBytes", [](resample_fixture &f) { f.dy.desc.TotalTensorSizeInBytes = 66; },
                    status::invalid_argument, {"TotalTensorSizeInBytes = 66", "multiple of 4"}},
            {"overlapping output", [](resample_fixture &f) {
                 f.dx = dml_tensor(f32, {1, 1, 2, 2}, {4, 4, 1, 1});
                 f.d.OutputGradientTensor = &f.dx.desc;
             }, status::invalid_shape, {"OutputGradientTensor.Strides = {4, 4, 1, 1}", "must not overlap"}},
            {"owned by DML", [](resample_fixture &f) { f.dy.desc.Flags = dml::tensor_flags::owned_by_dml; },
                    status::unimplemented, {"InputGradientTensor.Flags = DML_TENSOR_FLAG_OWNED_BY_DML"}},
            {"null Scales", [](resample_fixture &f) { f.d.Scales = nullptr; }, status::invalid_argument,
                    {"Scales is null", "DimensionCount (4) values"}},
            {"zero scale", [](resample_fixture &f) { f.scales[3] = 0.f; }, status::invalid_argument,
                    {"Scales[3] = 0", "finite and > 0"}},
            {"NaN offset", [](resample_fixture &f) { f.oo[1] = std::nanf(""); }, status::invalid_argument,
                    {"OutputPixelOffsets[1]", "finite"}},
            {"bad mode", [](resample_fixture &f) { f.d.InterpolationMode = dml::interpolation_mode(7); },
                    status::invalid_argument, {"InterpolationMode = 7"}},
            {"bad direction", [](resample_fixture &f) { f.d.RoundingDirection = dml::axis_direction(2); },
                    status::invalid_argument, {"RoundingDirection = 2"}},
            // DirectML allows any positive scale; bpg needs floor(in * scale) = out.
            {"scale not the size ratio", [](resample_fixture &f) { f.scales[2] = 2.5f; }, status::unimplemented,
                    {"InputGradientTensor.Sizes[2] = 4", "floor(2 * 2.5", "= 5", "not the size ratio"}},
            {"scale whose output size overflows", [](resample_fixture &f) { f.scales[2] = 1e30f; },
                    status::invalid_argument, {"Scales[2] = ", "floor(2 * ", "out of range", "2^63 - 1"}},
    };
    for (const rule &r : rules) {
        SCOPED_TRACE(r.what);
        resample_fixture f;
        r.breaks(f);
        expect_rule([&] { f.compile(); }, resample, r.s, r.pieces);
    }
}

TEST(DmlResampleGradChecks, ExecuteNamesTheBindingThatIsWrong) {
    resample_fixture f;
    const dml::compiled_operator op = dml::compile(f.d);
    expect_error([&] { op.execute({}, {f.dx.data()}); }, status::invalid_argument,
            {resample, "execute got 0 input buffers", "InputGradientTensor"});
    expect_error([&] { op.execute({f.dy.data()}, {nullptr}); }, status::invalid_argument,
            {resample, "OutputGradientTensor is null"});
    expect_error([] { dml::compiled_operator().execute({}, {}); }, status::invalid_argument, {"empty"});
}

struct bn_fixture {
    std::vector<dml_tensor> t;
    float eps = 1e-5f;
    bn_fixture() {
        for (int i = 0; i < 8; ++i) t.emplace_back(f32, (i == 0 || i == 1 || i == 5) ? std::vector<uint32_t> {2, 3, 4}
                                                                                       : std::vector<uint32_t> {1, 3, 1});
    }
    template <typename Desc> Desc desc() {
        Desc d;
        const dml::buffer_tensor_desc *p[8];
        for (int i = 0; i < 8; ++i) p[i] = &t[size_t(i)].desc;
        d.InputTensor = p[0];
        d.InputGradientTensor = p[1];
        d.MeanTensor = p[2];
        d.VarianceTensor = p[3];
        d.ScaleTensor = p[4];
        d.OutputGradientTensor = p[5];
        d.OutputScaleGradientTensor = p[6];
        d.OutputBiasGradientTensor = p[7];
        d.Epsilon = eps;
        return d;
    }
};

TEST(DmlBatchNormGradChecks, EachRuleOfTheDocument) {
    struct rule {
        const char *what;
        std::function<void(bn_fixture &)> breaks;
        status s;
        std::vector<std::string> pieces;
    };
    const std::vector<rule> rules {
            {"9 dimensions", [](bn_fixture &f) { f.t[0] = dml_tensor(f32, {1, 1, 1, 1, 1, 1, 1, 1, 2}); },
                    status::invalid_shape, {"InputTensor.DimensionCount = 9", "1 to 8"}},
            {"mixed types", [](bn_fixture &f) { f.t[3] = dml_tensor(f16, {1, 3, 1}); }, status::invalid_data_type,
                    {"VarianceTensor.DataType = FLOAT16", "InputTensor.DataType = FLOAT32", "same DataType"}},
            {"mixed ranks", [](bn_fixture &f) { f.t[2] = dml_tensor(f32, {3}); }, status::invalid_shape,
                    {"MeanTensor.DimensionCount = 1", "same DimensionCount"}},
            {"gradient sizes", [](bn_fixture &f) { f.t[1] = dml_tensor(f32, {2, 3, 5}); }, status::invalid_shape,
                    {"InputGradientTensor.Sizes = {2, 3, 5}", "InputTensor.Sizes = {2, 3, 4}", "same Sizes"}},
            {"output gradient sizes", [](bn_fixture &f) { f.t[5] = dml_tensor(f32, {2, 3, 5}); },
                    status::invalid_shape, {"OutputGradientTensor.Sizes = {2, 3, 5}", "same Sizes"}},
            {"scale sizes", [](bn_fixture &f) { f.t[4] = dml_tensor(f32, {1, 1, 4}); }, status::invalid_shape,
                    {"ScaleTensor.Sizes = {1, 1, 4}", "MeanTensor.Sizes = {1, 3, 1}", "same Sizes"}},
            {"bias gradient sizes", [](bn_fixture &f) { f.t[7] = dml_tensor(f32, {1, 1, 1}); },
                    status::invalid_shape, {"OutputBiasGradientTensor.Sizes = {1, 1, 1}", "same Sizes"}},
            {"mean does not broadcast", [](bn_fixture &f) {
                 for (size_t i : {2, 3, 4, 6, 7}) f.t[i] = dml_tensor(f32, {1, 2, 1});
             }, status::invalid_shape, {"MeanTensor.Sizes = {1, 2, 1}", "axis 1 must be 1 (summed over) or 3"}},
            {"missing scale", [](bn_fixture &f) { f.t[4].desc.DataType = tensor_data_type::float64; },
                    status::invalid_data_type, {"ScaleTensor.DataType = FLOAT64"}},
            {"NaN epsilon", [](bn_fixture &f) { f.eps = std::nanf(""); }, status::invalid_argument,
                    {"Epsilon = nan", "finite"}},
            {"negative epsilon", [](bn_fixture &f) { f.eps = -1.f; }, status::unimplemented,
                    {"Epsilon = -1", "epsilon >= 0"}},
    };
    for (const rule &r : rules) {
        for (bool training : {false, true}) {
            SCOPED_TRACE(std::string(r.what) + (training ? " (training)" : ""));
            bn_fixture f;
            r.breaks(f);
            expect_rule([&] {
                if (training) dml::compile(f.desc<dml::batch_normalization_training_grad_operator_desc>());
                else dml::compile(f.desc<dml::batch_normalization_grad_operator_desc>());
            }, training ? bn_training : bn, r.s, r.pieces);
        }
    }
    bn_fixture ok;
    EXPECT_NO_THROW(dml::compile(ok.desc<dml::batch_normalization_grad_operator_desc>()));
}

} // namespace
} // namespace bpg::test
