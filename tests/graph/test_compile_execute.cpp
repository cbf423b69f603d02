// The whole public path: graph -> partitions -> compile -> execute, on the
// golden values of docs/semantics.md, plus compile- and execute-time errors.
#include <cstdlib>
#include <numeric>

#include "graph/op_spec.hpp"
#include "support/expect_error.hpp"
#include "support/backends_in_build.hpp"

namespace bpg::test {
namespace {

using A = op::attr;
using K = op::kind;
constexpr data_type f32 = data_type::f32;


// One-op InterpolateBackprop graph, NCX, src 1x1x2x2.
compiled_partition compile_interp(const std::string &mode, dims dd_shape,
        std::vector<std::pair<A, attr_value>> attrs, compile_options opts = {}) {
    op o(0, K::InterpolateBackprop, {lt(0, f32, {1, 1, 2, 2}), lt(1, f32, dd_shape)},
            {logical_tensor(2, f32)}, "interp");
    o.set_attr(A::mode, mode).set_attr(A::data_format, "NCX");
    for (auto &[a, v] : attrs) o.set_attr(a, v);
    graph g;
    g.add_op(o);
    g.finalize();
    auto parts = g.get_partitions();
    return parts.at(0).compile(parts[0].get_input_ports(), {}, engine(), opts);
}

std::vector<float> run_interp(const compiled_partition &cp, std::vector<float> dd) {
    std::vector<float> out(4, -1.f), src(4, 0.f);
    engine e;
    stream s(e);
    cp.execute(s, {tensor(cp.query_logical_tensor(0), e, src.data()), tensor(cp.query_logical_tensor(1), e, dd.data())},
            {tensor(cp.query_logical_tensor(2), e, out.data())});
    return out;
}

std::vector<float> iota9() {
    std::vector<float> v(9);
    std::iota(v.begin(), v.end(), 0.f);
    return v;
}

// The golden values on the backend the dispatch rule picks and on each
// backend forced (a backend that cannot run the case says so).
void expect_golden(const std::string &mode, const std::vector<float> &want) {
    for (backend_kind b : in_build({backend_kind::auto_select, backend_kind::ref, backend_kind::tbb, backend_kind::dnnl})) {
        SCOPED_TRACE(to_string(b));
        try {
            auto cp = compile_interp(mode, {1, 1, 3, 3}, {{A::sizes, std::vector<int64_t> {3, 3}}}, compile_options {b});
            EXPECT_EQ(cp.query_logical_tensor(2).get_dims(), (dims {1, 1, 2, 2})); // inferred
            // Linear weights may be computed in float by a backend: last-bit slack.
            const std::vector<float> got = run_interp(cp, iota9());
            ASSERT_EQ(got.size(), want.size());
            for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * want[i]) << i;
        } catch (const error &e) {
            EXPECT_EQ(e.code(), status::unimplemented) << e.what();
            EXPECT_NE(b, backend_kind::ref) << "the reference runs everything";
        }
    }
}

TEST(CompileExecute, OneDnnGoldenNearest) { expect_golden("nearest", {0, 3, 9, 24}); }
TEST(CompileExecute, OneDnnGoldenBilinear) { expect_golden("bilinear", {3, 6, 12, 15}); }

TEST(CompileExecute, DirectMlWorkedExample) {
    auto cp = compile_interp("nearest", {1, 1, 1, 3},
            {{A::sizes, std::vector<int64_t> {1, 3}}, {A::nearest_mode, std::string("round_prefer_floor")}});
    EXPECT_EQ(run_interp(cp, {4, 5, 6}), (std::vector<float> {9, 6, 0, 0}));
}

TEST(CompileExecute, DirectMlWorkedExampleThroughPixelOffsets) {
    auto cp = compile_interp("nearest", {1, 1, 1, 3},
            {{A::scales, std::vector<float> {0.5f, 1.5f}},
                    {A::input_pixel_offsets, std::vector<float> {0.5f, 0.5f}},
                    {A::output_pixel_offsets, std::vector<float> {-0.5f, -0.5f}},
                    {A::nearest_mode, std::string("round_prefer_floor")}});
    EXPECT_EQ(run_interp(cp, {4, 5, 6}), (std::vector<float> {9, 6, 0, 0}));
}

// The sizes input is read at execute; a value that disagrees with diff_dst is
// an error and leaves the output untouched.
TEST(CompileExecute, RuntimeSizesInput) {
    op o(0, K::InterpolateBackprop,
            {lt(0, f32, {1, 1, 2, 2}), lt(1, f32, {1, 1, 3, 3}), lt(3, data_type::s32, {2})},
            {lt(2, f32, {1, 1, 2, 2})});
    o.set_attr(A::mode, "nearest").set_attr(A::data_format, "NCX");
    graph g;
    g.add_op(o);
    g.finalize();
    auto p = g.get_partitions().at(0);
    auto cp = p.compile(p.get_input_ports(), p.get_output_ports(), engine());
    engine e;
    stream s(e);
    std::vector<float> src(4), dd = iota9(), out(4, -1.f);
    std::vector<int32_t> sizes {3, 3};
    auto ins = [&] {
        return std::vector<tensor> {tensor(cp.query_logical_tensor(0), e, src.data()),
                tensor(cp.query_logical_tensor(1), e, dd.data()), tensor(cp.query_logical_tensor(3), e, sizes.data())};
    };
    cp.execute(s, ins(), {tensor(cp.query_logical_tensor(2), e, out.data())});
    EXPECT_EQ(out, (std::vector<float> {0, 3, 9, 24}));
    sizes = {3, 4};
    out.assign(4, -1.f);
    expect_error([&] { cp.execute(s, ins(), {tensor(cp.query_logical_tensor(2), e, out.data())}); },
            status::invalid_argument, {"sizes input (tensor 3)[1] = 4"});
    EXPECT_EQ(out, std::vector<float>(4, -1.f)) << "nothing may be written on error";
}

TEST(CompileExecute, ExecuteBindingErrors) {
    auto cp = compile_interp("nearest", {1, 1, 3, 3}, {{A::sizes, std::vector<int64_t> {3, 3}}});
    engine e;
    stream s(e);
    std::vector<float> src(4), dd(9), out(4);
    tensor t_src(cp.query_logical_tensor(0), e, src.data()), t_dd(cp.query_logical_tensor(1), e, dd.data()),
            t_out(cp.query_logical_tensor(2), e, out.data());
    expect_error([&] { cp.execute(s, {t_src}, {t_out}); }, status::invalid_argument, {"input tensor 1 is not bound"});
    expect_error([&] { cp.execute(s, {t_src, t_dd, t_dd}, {t_out}); }, status::invalid_argument, {"bound twice"});
    expect_error([&] { cp.execute(s, {t_src, tensor(cp.query_logical_tensor(1), e, nullptr)}, {t_out}); },
            status::invalid_argument, {"null data pointer"});
    expect_error([&] { cp.execute(s, {t_src, tensor(lt(1, f32, {1, 1, 3, 4}), e, dd.data())}, {t_out}); },
            status::invalid_shape, {"bound with shape 1x1x3x4"});
    expect_error([&] { cp.execute(s, {t_src, t_dd, tensor(lt(9, f32, {1}), e, dd.data())}, {t_out}); },
            status::invalid_argument, {"tensor 9 is not an input"});
    expect_error([&] { cp.execute(s, {t_src, t_dd}, {tensor(cp.query_logical_tensor(2), e, dd.data())}); },
            status::invalid_argument, {"overlaps input tensor 1"});
}

TEST(CompileExecute, CompileErrors) {
    op o(0, K::InterpolateBackprop, {logical_tensor(0, f32), logical_tensor(1, f32)}, {logical_tensor(2, f32)});
    o.set_attr(A::mode, "nearest").set_attr(A::data_format, "NCX").set_attr(A::sizes, std::vector<int64_t> {3, 3});
    graph g;
    g.add_op(o);
    g.finalize();
    auto p = g.get_partitions().at(0);
    engine e;
    expect_error([&] { p.compile({}, {}, e); }, status::invalid_shape, {"needs a known shape"});
    const auto src = lt(0, f32, {1, 1, 2, 2});
    expect_error([&] { p.compile({src, lt(1, f32, {1, 1, 3, 4})}, {}, e); }, status::invalid_shape, {"'sizes'[1] = 3"});
    expect_error([&] { p.compile({src, lt(1, data_type::bf16, {1, 1, 3, 3})}, {}, e); }, status::invalid_data_type, {"bf16"});
    expect_error([&] { p.compile({src, lt(1, f32, {1, 1, 3, 3}), lt(5, f32, {1})}, {}, e); }, status::invalid_argument,
            {"tensor 5 given to compile is not an input port"});
    expect_error([&] {
        p.compile({src, lt(1, f32, {1, 1, 3, 3})}, {logical_tensor(2, f32, {1, 1, 2, 2}, dims {4, 4, 1, 1})}, e);
    }, status::invalid_shape, {"overlap"});
    // DirectML statistics whose kept axes (1 and 3) are not adjacent in
    // memory, forced onto the tbb backend, which does not run them.
    op bn(0, K::BatchNormTrainingBackprop,
            {lt(0, f32, {2, 3, 4, 5}), lt(1, f32, {2, 3, 4, 5}), lt(2, f32, {1, 3, 1, 5}), lt(3, f32, {1, 3, 1, 5})},
            {lt(4, f32, {2, 3, 4, 5})});
    bn.set_attr(A::epsilon, 0.f);
    graph bg;
    bg.add_op(bn);
    bg.finalize();
    auto bp = bg.get_partitions().at(0);
    expect_error([&] { bp.compile(bp.get_input_ports(), {}, e, compile_options {backend_kind::tbb}); },
            status::unimplemented, {"backend 'tbb' cannot run it", "not adjacent"});
    // Output strides chosen by the caller are kept (channels-last here).
    auto cp = p.compile({src, lt(1, f32, {1, 1, 3, 3})}, {logical_tensor(2, f32, {1, 1, 2, 2}, dims {4, 1, 2, 1})}, e);
    EXPECT_EQ(cp.query_logical_tensor(2).get_strides(), (dims {4, 1, 2, 1}));
}

TEST(CompileExecute, BackendEnvironmentVariable) {
    ::setenv("BPG_BACKEND", "fastest", 1);
    expect_error([] { compile_interp("nearest", {1, 1, 3, 3}, {{A::sizes, std::vector<int64_t> {3, 3}}}); },
            status::invalid_argument, {"BPG_BACKEND=fastest"});
    ::setenv("BPG_BACKEND", "ref", 1);
    EXPECT_EQ(compile_interp("nearest", {1, 1, 3, 3}, {{A::sizes, std::vector<int64_t> {3, 3}}}).get_backend(),
            backend_kind::ref);
    ::unsetenv("BPG_BACKEND");
}

// ReLUBackprop -> BatchNormTrainingBackprop as one partition equals the two
// ops run apart.
TEST(CompileExecute, FusedPartitionEqualsOpsRunApart) {
    const dims d {2, 3, 2, 2};
    auto make_relu = [&] {
        op r(0, K::ReLUBackprop, {lt(0, f32, d), lt(1, f32, d)}, {lt(2, f32, d)});
        r.set_attr(A::use_dst, false);
        return r;
    };
    auto make_bn = [&] {
        op b(1, K::BatchNormTrainingBackprop,
                {lt(2, f32, d), lt(3, f32, d), lt(4, f32, {3}), lt(5, f32, {3}), lt(6, f32, {3})},
                {lt(7, f32, d), lt(8, f32, {3}), lt(9, f32, {3})});
        b.set_attr(A::epsilon, 0.0625f).set_attr(A::data_format, "NCX");
        return b;
    };
    std::vector<std::vector<float>> buf(10);
    for (size_t id : {0, 1, 2, 3, 7}) buf[id].resize(24);
    for (size_t id : {4, 5, 6, 8, 9}) buf[id].resize(3);
    for (size_t id : {0, 1, 3})
        for (size_t i = 0; i < 24; ++i) buf[id][i] = float((i * (id + 3) * 7) % 11) - 5.f;
    buf[4] = {0.1f, -0.2f, 0.3f};
    buf[5] = {1.f, 2.f, 0.5f};
    buf[6] = {1.5f, -1.f, 2.f};
    engine e;
    stream s(e);
    auto run = [&](const compiled_partition &cp) {
        std::vector<tensor> in, out;
        for (auto &t : cp.get_inputs()) in.emplace_back(t, e, buf[t.get_id()].data());
        for (auto &t : cp.get_outputs()) out.emplace_back(t, e, buf[t.get_id()].data());
        cp.execute(s, in, out);
    };

    graph fused;
    fused.add_op(make_relu());
    fused.add_op(make_bn());
    fused.finalize();
    auto fp = fused.get_partitions();
    ASSERT_EQ(fp.size(), 1u);
    run(fp[0].compile(fp[0].get_input_ports(), fp[0].get_output_ports(), e));
    std::vector<std::vector<float>> fused_out {buf[7], buf[8], buf[9]};

    for (size_t id : {2, 7, 8, 9}) std::fill(buf[id].begin(), buf[id].end(), 0.f);
    for (op o : {make_relu(), make_bn()}) {
        graph g;
        g.add_op(o);
        g.finalize();
        auto p = g.get_partitions().at(0);
        run(p.compile(p.get_input_ports(), p.get_output_ports(), e));
    }
    EXPECT_EQ(fused_out[0], buf[7]);
    EXPECT_EQ(fused_out[1], buf[8]);
    EXPECT_EQ(fused_out[2], buf[9]);
}

} // namespace
} // namespace bpg::test
