#include "support/interp_case.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include "graph/schemas/checks.hpp"
#include "kernels/dtype_convert.hpp"
#include "support/problem_builders.hpp"

namespace bpg::test {

interp_case ncx_case(data_type dt, int64_t n, int64_t c, const dims &src, const dims &dst, const char *mode,
        const char *coord) {
    interp_case k;
    k.mode = mode;
    k.coord = coord;
    k.dt = dt;
    k.src = {n, c, src[0], src[1]};
    k.dst = {n, c, dst[0], dst[1]};
    return k;
}

std::string interp_case::name() const {
    auto shape = [](const dims &d) {
        std::string s;
        for (dim x : d) s += (s.empty() ? "" : "x") + std::to_string(x);
        return s;
    };
    return mode + "/" + (scales.empty() ? coord : "pixel_offsets") + (mode == "nearest" ? "/" + nearest_mode : "")
            + (nxc ? "/NXC" : channels_last_strides ? "/NCX-acdb" : "/NCX") + "/" + to_string(dt) + " "
            + shape(src) + " <- " + shape(dst);
}

dims layout_strides(const dims &shape, bool channels_last) {
    if (!channels_last || shape.size() < 3) return dense_strides(shape);
    std::vector<int> order {0};
    for (int a = 2; a < int(shape.size()); ++a) order.push_back(a);
    order.push_back(1);
    return permuted_strides(shape, order);
}

std::vector<float> full_mantissas(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> v(n);
    for (float &x : v) x = u(rng);
    return v;
}

std::vector<uint32_t> bits_of(const std::vector<float> &v, size_t count) {
    std::vector<uint32_t> b(count);
    std::memcpy(b.data(), v.data(), count * sizeof(float));
    return b;
}

std::vector<uint32_t> bits_of(const std::vector<float> &v) { return bits_of(v, v.size()); }

std::vector<float> diff_dst_values(const interp_case &c, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> k(-128, 128);
    std::vector<float> v(size_t(std::accumulate(c.dst.begin(), c.dst.end(), int64_t(1), std::multiplies<>())));
    for (float &x : v) x = float(k(rng)) / 64.f;
    return v;
}

compiled_partition compile_interp_case(const interp_case &c, backend_kind b) {
    compile_options opts;
    opts.backend = b;
    return compile_interp_case(c, opts);
}

compiled_partition compile_interp_case(const interp_case &c, const compile_options &opts) {
    const dims src_strides = c.src_strides.empty() ? layout_strides(c.src, c.channels_last_strides) : c.src_strides;
    const dims dst_strides = c.dst_strides.empty() ? layout_strides(c.dst, c.channels_last_strides) : c.dst_strides;
    const logical_tensor src(0, c.dt, c.src, src_strides);
    const logical_tensor dd(1, c.dt, c.dst, dst_strides);
    const logical_tensor ds(2, c.dt, c.src, src_strides);
    op o(0, op::kind::InterpolateBackprop, {src, dd}, {ds});
    o.set_attr(op::attr::mode, c.mode).set_attr(op::attr::data_format, c.nxc ? "NXC" : "NCX");
    o.set_attr(op::attr::nearest_mode, c.nearest_mode);
    if (c.scales.empty()) {
        dims sizes;
        const int r = int(c.dst.size());
        for (int a : graph_impl::spatial_axes(c.nxc, r)) sizes.push_back(c.dst[size_t(a)]);
        o.set_attr(op::attr::sizes, std::vector<int64_t>(sizes.begin(), sizes.end()));
        o.set_attr(op::attr::coordinate_transformation_mode, c.coord);
    } else {
        o.set_attr(op::attr::scales, c.scales)
                .set_attr(op::attr::input_pixel_offsets, c.in_offsets)
                .set_attr(op::attr::output_pixel_offsets, c.out_offsets);
    }
    graph g;
    g.add_op(o);
    g.finalize();
    partition p = g.get_partitions().at(0);
    return p.compile({src, dd}, {ds}, engine(), opts);
}

std::vector<float> run_interp(const interp_case &c, backend_kind b, const std::vector<float> &dd_values) {
    const compiled_partition cp = compile_interp_case(c, b);
    const logical_tensor src = cp.query_logical_tensor(0), dd = cp.query_logical_tensor(1), ds = cp.query_logical_tensor(2);
    engine e;
    std::vector<char> dd_buf(dd.get_mem_size() + 1), src_buf(src.get_mem_size() + 1), ds_buf(ds.get_mem_size() + 1);
    size_t k = 0;
    core::for_each_index(dd.get_dims(), dd.get_strides(),
            [&](const dims &, int64_t off) { core::store_from_double(dd_buf.data(), c.dt, off, dd_values[k++]); });
    stream s(e);
    cp.execute(s, {tensor(src, e, src_buf.data()), tensor(dd, e, dd_buf.data())}, {tensor(ds, e, ds_buf.data())});
    std::vector<float> out;
    core::for_each_index(ds.get_dims(), ds.get_strides(), [&](const dims &, int64_t off) {
        out.push_back(float(core::load_as_double(ds_buf.data(), c.dt, off)));
    });
    return out;
}

void expect_interp_close(const std::vector<float> &got, const std::vector<float> &want, data_type dt,
        const std::string &what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    float scale = 0.f;
    for (float v : want) scale = std::max(scale, std::abs(v));
    const float rel = dt == data_type::f32 ? 0.f : dt == data_type::bf16 ? 1.f / 128 : 1.f / 1024;
    int bad = 0;
    for (size_t i = 0; i < got.size() && bad < 5; ++i) {
        const float tol = 1e-6f * scale + rel * std::abs(want[i]) + 1e-30f;
        if (!(std::abs(got[i] - want[i]) <= tol)) {
            ++bad;
            ADD_FAILURE() << what << ": element " << i << " tbb " << got[i] << " ref " << want[i];
        }
    }
}

} // namespace bpg::test
