// Frictions a dnnl::graph program meets, removed: InterpolateBackprop's src
// (only its shape is read) may be bound to a null pointer on every backend,
// and an output of layout any takes the axis order of its diff_dst, so
// channels-last in gives channels-last out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bpg/dnnl_graph.hpp"
#include "support/backends_in_build.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

const engine cpu(engine::kind::cpu);

// dims N, C, H, W laid out channels-last (C innermost).
dims nhwc_strides(const dims &d) { return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]}; }

std::vector<float> ramp(size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = float(int(i % 13) - 6) / 8.f;
    return v;
}

partition interp_partition(const logical_tensor &src, const logical_tensor &dd, const logical_tensor &ds) {
    graph g(engine::kind::cpu);
    op o(0, op::kind::InterpolateBackward, {src, dd}, {ds});
    o.set_attr(op::attr::mode, "linear").set_attr(op::attr::sizes, {8, 8}).set_attr(op::attr::data_format, "NCX");
    g.add_op(o);
    g.finalize();
    return g.get_partitions().at(0);
}

TEST(CompatNullSrc, InterpolateSrcMayBeNullOnEveryBackend) {
    const logical_tensor src(0, data_type::f32, {2, 3, 4, 4}, layout_type::strided);
    const logical_tensor dd(1, data_type::f32, {2, 3, 8, 8}, layout_type::strided);
    const logical_tensor ds(2, data_type::f32, {2, 3, 4, 4}, layout_type::strided);
    const partition p = interp_partition(src, dd, ds);
    std::vector<float> diff = ramp(2 * 3 * 8 * 8), src_data(96, 0.f), with_src(96), reference(96);
    {
        compile_options ref;
        ref.backend = backend_kind::ref;
        p.compile({src, dd}, {ds}, cpu, ref)
                .execute(stream(cpu), {tensor(src, cpu, src_data.data()), tensor(dd, cpu, diff.data())},
                        {tensor(ds, cpu, reference.data())});
    }
    for (backend_kind b : in_build({backend_kind::ref, backend_kind::tbb, backend_kind::dnnl})) {
        compile_options opts;
        opts.backend = b;
        const compiled_partition cp = p.compile({src, dd}, {ds}, cpu, opts);
        std::vector<float> out(96, -7.f);
        cp.execute(stream(cpu), {tensor(src, cpu, nullptr), tensor(dd, cpu, diff.data())},
                {tensor(ds, cpu, out.data())});
        cp.execute(stream(cpu), {tensor(src, cpu, src_data.data()), tensor(dd, cpu, diff.data())},
                {tensor(ds, cpu, with_src.data())});
        EXPECT_EQ(out, with_src) << to_string(b);
        for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], reference[i], 1e-5) << to_string(b) << " " << i;
        // diff_dst is read: null stays refused.
        expect_error([&] {
            cp.execute(stream(cpu), {tensor(src, cpu, nullptr), tensor(dd, cpu, nullptr)},
                    {tensor(ds, cpu, out.data())});
        }, status::invalid_argument, {"input tensor 1", "null data pointer"});
    }
}

TEST(CompatLayoutAny, InterpolateDiffSrcFollowsDiffDst) {
    const logical_tensor src(0, data_type::f32, {2, 3, 4, 4}, layout_type::strided);
    const logical_tensor dd_nhwc(1, data_type::f32, {2, 3, 8, 8}, nhwc_strides({2, 3, 8, 8}));
    const logical_tensor dd_nchw(1, data_type::f32, {2, 3, 8, 8}, layout_type::strided);
    const logical_tensor ds_any(2, data_type::f32, {2, 3, 4, 4}, layout_type::any);
    const partition p = interp_partition(src, logical_tensor(1, data_type::f32, 4, layout_type::any), ds_any);
    const compiled_partition last = p.compile({src, dd_nhwc}, {ds_any}, cpu);
    EXPECT_EQ(last.query_logical_tensor(2).get_strides(), nhwc_strides({2, 3, 4, 4}));
    const compiled_partition first = p.compile({src, dd_nchw}, {ds_any}, cpu);
    EXPECT_EQ(first.query_logical_tensor(2).get_strides(), dense_strides({2, 3, 4, 4}));

    // The same logical values either way.
    std::vector<float> in_nchw = ramp(384), in_nhwc(384), out_nchw(96), out_nhwc(96);
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 3; ++c)
            for (int64_t hw = 0; hw < 64; ++hw) in_nhwc[size_t((n * 64 + hw) * 3 + c)] = in_nchw[size_t((n * 3 + c) * 64 + hw)];
    first.execute(stream(cpu), {tensor(src, cpu, nullptr), tensor(dd_nchw, cpu, in_nchw.data())},
            {tensor(first.query_logical_tensor(2), cpu, out_nchw.data())});
    last.execute(stream(cpu), {tensor(src, cpu, nullptr), tensor(dd_nhwc, cpu, in_nhwc.data())},
            {tensor(last.query_logical_tensor(2), cpu, out_nhwc.data())});
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 3; ++c)
            for (int64_t hw = 0; hw < 16; ++hw)
                ASSERT_FLOAT_EQ(out_nhwc[size_t((n * 16 + hw) * 3 + c)], out_nchw[size_t((n * 3 + c) * 16 + hw)]);
}

TEST(CompatLayoutAny, BatchNormAndReluDiffSrcFollowDiffDst) {
    const dims shape {2, 4, 3, 5};
    const logical_tensor src(0, data_type::f32, shape, nhwc_strides(shape));
    const logical_tensor dd(1, data_type::f32, shape, nhwc_strides(shape));
    const logical_tensor mean(2, data_type::f32, {4}, layout_type::strided);
    const logical_tensor var(3, data_type::f32, {4}, layout_type::strided);
    const logical_tensor gamma(4, data_type::f32, {4}, layout_type::strided);
    const logical_tensor ds(5, data_type::f32, 4, layout_type::any);
    const logical_tensor dg(6, data_type::f32, 1, layout_type::any);
    const logical_tensor db(7, data_type::f32, 1, layout_type::any);
    const logical_tensor relu_src(8, data_type::f32, shape, nhwc_strides(shape));
    const logical_tensor relu_ds(9, data_type::f32, 4, layout_type::any);
    graph g(engine::kind::cpu);
    op bn(0, op::kind::BatchNormTrainingBackward, {src, dd, mean, var, gamma}, {ds, dg, db});
    bn.set_attr(op::attr::epsilon, 1e-5f).set_attr(op::attr::data_format, "NCX");
    g.add_op(bn);
    g.add_op(op(1, op::kind::ReLUBackward, {relu_src, ds}, {relu_ds}));
    g.finalize();
    const std::vector<partition> parts = g.get_partitions();
    ASSERT_EQ(parts.size(), 2u);
    const compiled_partition cbn = parts[0].compile({src, dd, mean, var, gamma}, {ds, dg, db}, cpu);
    EXPECT_EQ(cbn.query_logical_tensor(5).get_strides(), nhwc_strides(shape));
    EXPECT_EQ(cbn.query_logical_tensor(6).get_strides(), (dims {1}));
    const logical_tensor ds_concrete = cbn.query_logical_tensor(5);
    const compiled_partition crelu = parts[1].compile({relu_src, ds_concrete}, {relu_ds}, cpu);
    EXPECT_EQ(crelu.query_logical_tensor(9).get_strides(), nhwc_strides(shape));
    // Strides the caller gives at compile still win over the model's order.
    const logical_tensor ds_dense(5, data_type::f32, shape, layout_type::strided);
    EXPECT_EQ(parts[0].compile({src, dd, mean, var, gamma}, {ds_dense, dg, db}, cpu).query_logical_tensor(5).get_strides(),
            dense_strides(shape));
}

} // namespace
} // namespace bpg::test
