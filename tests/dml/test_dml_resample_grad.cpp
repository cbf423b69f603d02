// DML_RESAMPLE_GRAD_OPERATOR_DESC: the worked example of the DirectML
// document, and the mapping to InterpolateBackprop checked bit for bit against
// the same op built directly through the graph API.
#include <cstring>

#include <gtest/gtest.h>

#include "bpg/bpg.hpp"
#include "bpg/dml.hpp"
#include "dml/dml_tensor.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

using dml::tensor_data_type;

struct resample_setup {
    dml_tensor dy, dx; // InputGradientTensor, OutputGradientTensor
    std::vector<float> scales, in_offsets, out_offsets;
    dml::resample_grad_operator_desc desc;

    resample_setup(tensor_data_type t, std::vector<uint32_t> dy_sizes, std::vector<uint32_t> dx_sizes,
            std::vector<float> sc, std::vector<float> io, std::vector<float> oo,
            dml::interpolation_mode mode = dml::interpolation_mode::nearest_neighbor,
            std::vector<uint32_t> dy_strides = {})
        : dy(t, std::move(dy_sizes), std::move(dy_strides)), dx(t, std::move(dx_sizes)), scales(std::move(sc)),
          in_offsets(std::move(io)), out_offsets(std::move(oo)) {
        desc.InterpolationMode = mode;
        desc.DimensionCount = uint32_t(dy.sizes.size());
        bind();
    }
    // A copy's desc points at the copy's own tensors and arrays.
    resample_setup(const resample_setup &o)
        : dy(o.dy), dx(o.dx), scales(o.scales), in_offsets(o.in_offsets), out_offsets(o.out_offsets), desc(o.desc) {
        bind();
    }
    resample_setup &operator=(const resample_setup &) = delete;
    void bind() {
        desc.InputGradientTensor = &dy.desc;
        desc.OutputGradientTensor = &dx.desc;
        desc.Scales = scales.data();
        desc.InputPixelOffsets = in_offsets.data();
        desc.OutputPixelOffsets = out_offsets.data();
    }
};

// The DirectML document: nearest-neighbor, 1.5x in width and 0.5x in height;
// InputGradient [4, 5, 6] gives OutputGradient [[9, 6], [0, 0]]. Half-pixel
// offsets (ONNX Runtime's mapping: InputPixelOffset 0.5, OutputPixelOffset
// -0.5), and ties rounded down, as docs/semantics.md states.
TEST(DmlResampleGrad, WorkedExampleOfTheDirectMLDocument) {
    for (backend_kind b : {backend_kind::auto_select, backend_kind::ref, backend_kind::tbb}) {
        resample_setup s(tensor_data_type::float32, {1, 1, 1, 3}, {1, 1, 2, 2}, {1, 1, 0.5f, 1.5f},
                {0.5f, 0.5f, 0.5f, 0.5f}, {-0.5f, -0.5f, -0.5f, -0.5f});
        s.desc.RoundingDirection = dml::axis_direction::decreasing;
        s.dy.fill({4, 5, 6});
        dml::resample_grad(s.desc, s.dy.data(), s.dx.data(), {b});
        EXPECT_EQ(s.dx.values(), (std::vector<float> {9, 6, 0, 0})) << to_string(b);
    }
}

// The same example in 2 dimensions and in FLOAT16; with RESAMPLE1's own
// rounding, floor(x + 0.5), the two ties (x = 0.5 on both axes) go up instead.
TEST(DmlResampleGrad, WorkedExampleIn2DAndFloat16AndRoundingUp) {
    resample_setup s(tensor_data_type::float16, {1, 3}, {2, 2}, {0.5f, 1.5f}, {0.5f, 0.5f}, {-0.5f, -0.5f});
    s.desc.RoundingDirection = dml::axis_direction::decreasing;
    s.dy.fill({4, 5, 6});
    dml::resample_grad(s.desc, s.dy.data(), s.dx.data());
    EXPECT_EQ(s.dx.values(), (std::vector<float> {9, 6, 0, 0}));
    s.desc.RoundingDirection = dml::axis_direction::increasing;
    dml::resample_grad(s.desc, s.dy.data(), s.dx.data());
    EXPECT_EQ(s.dx.values(), (std::vector<float> {0, 0, 4, 11}));
}

// What the mapping must produce, written out by hand for each case: the bpg
// shapes (N, C, spatial..., NCX), and the per-spatial-axis attributes.
struct expected_graph_op {
    dims src, diff_dst;
    dims diff_dst_strides; // empty: dense
    std::vector<float> scales, in_offsets, out_offsets;
};

std::vector<float> run_graph_op(const resample_setup &s, const expected_graph_op &e, data_type dt) {
    const bool linear = s.desc.InterpolationMode == dml::interpolation_mode::linear;
    logical_tensor src(0, dt, e.src), ds(2, dt, e.src);
    logical_tensor dd = e.diff_dst_strides.empty() ? logical_tensor(1, dt, e.diff_dst)
                                                   : logical_tensor(1, dt, e.diff_dst, e.diff_dst_strides);
    op o(0, op::kind::InterpolateBackprop, {src, dd}, {ds});
    o.set_attr(op::attr::mode, linear ? "linear" : "nearest")
            .set_attr(op::attr::nearest_mode, s.desc.RoundingDirection == dml::axis_direction::decreasing
                            ? "round_prefer_floor" : "round_prefer_ceil")
            .set_attr(op::attr::data_format, "NCX")
            .set_attr(op::attr::scales, e.scales)
            .set_attr(op::attr::input_pixel_offsets, e.in_offsets)
            .set_attr(op::attr::output_pixel_offsets, e.out_offsets);
    graph g;
    g.add_op(o);
    g.finalize();
    engine eng;
    dml_tensor out(s.dx);
    std::vector<uint32_t> src_buf(out.storage.size(), 0u);
    dml_tensor in(s.dy);
    g.get_partitions()[0].compile({src, dd}, {ds}, eng).execute(stream(eng),
            {tensor(src, eng, src_buf.data()), tensor(dd, eng, in.data())}, {tensor(ds, eng, out.data())});
    return out.values();
}

void expect_same_bits(const std::vector<float> &a, const std::vector<float> &b) {
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(DmlResampleGrad, MappingMatchesTheGraphOpBitForBit) {
    using M = dml::interpolation_mode;
    const auto f32 = tensor_data_type::float32, f16 = tensor_data_type::float16;
    struct mapping_case {
        const char *what;
        resample_setup s;
        expected_graph_op e;
    };
    std::vector<mapping_case> cases;
    // NCHW upsample 2x, half-pixel: N and C are not resampled, so they stay N and C.
    cases.push_back({"4-D linear half_pixel 2x",
            resample_setup(f32, {2, 3, 8, 10}, {2, 3, 4, 5}, {1, 1, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f},
                    {-0.5f, -0.5f, -0.5f, -0.5f}, M::linear),
            {{2, 3, 4, 5}, {2, 3, 8, 10}, {}, {2, 2}, {0.5f, 0.5f}, {-0.5f, -0.5f}}});
    // Nearest, FLOAT16, downsample one axis; asymmetric offsets (0, 0).
    cases.push_back({"4-D nearest f16 asymmetric",
            resample_setup(f16, {1, 4, 6, 3}, {1, 4, 3, 6}, {1, 1, 2, 0.5f}, {0, 0, 0, 0}, {0, 0, 0, 0}),
            {{1, 4, 3, 6}, {1, 4, 6, 3}, {}, {2, 0.5f}, {0, 0}, {0, 0}}});
    // tf_half_pixel_for_nn offsets (0, -0.5) on the resized axes; 3-D: the
    // leading axis, offsets (0, 0), becomes C.
    cases.push_back({"3-D nearest tf_half_pixel_for_nn",
            resample_setup(f32, {3, 7, 9}, {3, 5, 6}, {1, 1.5f, 1.5f}, {0, 0, 0}, {0, -0.5f, -0.5f}),
            {{1, 3, 5, 6}, {1, 3, 7, 9}, {}, {1.5f, 1.5f}, {0, 0}, {-0.5f, -0.5f}}});
    // 1-D: the only axis is spatial; N and C are 1.
    cases.push_back({"1-D linear",
            resample_setup(f32, {14}, {7}, {2}, {0.5f}, {-0.5f}, M::linear),
            {{1, 1, 7}, {1, 1, 14}, {}, {2}, {0.5f}, {-0.5f}}});
    // The batch axis resampled too: every DirectML axis is spatial.
    cases.push_back({"4-D linear, batch resampled",
            resample_setup(f32, {4, 2, 4, 4}, {2, 2, 2, 2}, {2, 1, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f},
                    {-0.5f, -0.5f, -0.5f, -0.5f}, M::linear),
            {{1, 1, 2, 2, 2, 2}, {1, 1, 4, 2, 4, 4}, {}, {2, 1, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f},
                    {-0.5f, -0.5f, -0.5f, -0.5f}}});
    // An axis of scale 1 whose offsets shift it is resampled, not an N axis.
    cases.push_back({"2-D linear, shifted axis of scale 1",
            resample_setup(f32, {5, 8}, {5, 4}, {1, 2}, {0.25f, 0.5f}, {0, -0.5f}, M::linear),
            {{1, 1, 5, 4}, {1, 1, 5, 8}, {}, {1, 2}, {0.25f, 0.5f}, {0, -0.5f}}});
    // A padded InputGradientTensor (row stride 12 for 10 elements).
    cases.push_back({"4-D nearest, strided input gradient",
            resample_setup(f32, {1, 2, 4, 10}, {1, 2, 2, 5}, {1, 1, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f},
                    {-0.5f, -0.5f, -0.5f, -0.5f}, M::nearest_neighbor, {96, 48, 12, 1}),
            {{1, 2, 2, 5}, {1, 2, 4, 10}, {96, 48, 12, 1}, {2, 2}, {0.5f, 0.5f}, {-0.5f, -0.5f}}});
    for (mapping_case &c : cases) {
        SCOPED_TRACE(c.what);
        for (dml::axis_direction dir : {dml::axis_direction::increasing, dml::axis_direction::decreasing}) {
            c.s.desc.RoundingDirection = dir;
            c.s.dy.fill_random(7, -2.f, 2.f);
            const dml::compiled_operator op = dml::compile(c.s.desc);
            op.execute({c.s.dy.data()}, {c.s.dx.data()});
            const data_type dt = c.s.dy.half() ? data_type::f16 : data_type::f32;
            expect_same_bits(c.s.dx.values(), run_graph_op(c.s, c.e, dt));
            // The mapping's shapes, as the compiled partition sees them.
            EXPECT_NE(op.describe().find("out 2:" + std::string(to_string(dt)) + ":"), std::string::npos)
                    << op.describe();
        }
    }
}

// A compiled operator runs many times, and on every backend that takes it.
TEST(DmlResampleGrad, CompiledOperatorRunsRepeatedlyOnEachBackend) {
    resample_setup s(tensor_data_type::float32, {2, 3, 6, 6}, {2, 3, 3, 3}, {1, 1, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f},
            {-0.5f, -0.5f, -0.5f, -0.5f}, dml::interpolation_mode::linear);
    s.dy.fill_random(3, -1.f, 1.f);
    const dml::compiled_operator ref = dml::compile(s.desc, {backend_kind::ref});
    EXPECT_EQ(ref.get_backend(), backend_kind::ref);
    EXPECT_STREQ(ref.name(), "DML_RESAMPLE_GRAD_OPERATOR_DESC");
    ref.execute({s.dy.data()}, {s.dx.data()});
    const std::vector<float> want = s.dx.values();
    const dml::compiled_operator fast = dml::compile(s.desc);
    for (int run = 0; run < 3; ++run) {
        std::fill(s.dx.storage.begin(), s.dx.storage.end(), 0u);
        fast.execute({s.dy.data()}, {s.dx.data()});
        const std::vector<float> got = s.dx.values();
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << i;
    }
}

} // namespace
} // namespace bpg::test
