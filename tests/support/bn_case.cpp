#include "support/bn_case.hpp"

#include <cmath>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "core/tensor_desc.hpp"
#include "support/aligned.hpp"

namespace bpg::test {

namespace {
int64_t count(const dims &d) { return std::accumulate(d.begin(), d.end(), int64_t(1), std::multiplies<>()); }
std::string text(const dims &d) {
    std::string s;
    for (dim x : d) s += (s.empty() ? "" : "x") + std::to_string(x);
    return s;
}
} // namespace

std::string bn_case::name() const {
    return text(shape) + " stats " + text(stat_shape) + (nxc ? " NXC" : " NCX") + (data_strides.empty() ? "" : " strided")
            + (stat_strides.empty() ? "" : " strided stats") + " " + to_string(dt) + "/" + to_string(stat_dt) + (global_stats ? " global" : "") + (gamma ? "" : " no-gamma")
            + (three_outputs ? "" : " 1-output") + (relu >= 0 ? " relu->" + std::to_string(relu) : "")
            + (misaligned ? " misaligned" : "");
}

std::map<size_t, std::vector<float>> bn_inputs(const bn_case &c, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> k(-128, 128);
    auto fill = [&](const dims &d, float scale, float shift) {
        std::vector<float> v(size_t(count(d)));
        for (float &x : v) x = float(k(rng)) / 64.f * scale + shift;
        return v;
    };
    std::map<size_t, std::vector<float>> in;
    in[0] = fill(c.shape, 1.f, 0.25f);
    in[1] = fill(c.shape, 1.f, 0.f);
    in[2] = fill(c.stat_shape, 0.25f, 0.25f);
    in[3] = fill(c.stat_shape, 0.25f, 0.75f); // in [0.25, 1.25]
    in[4] = fill(c.stat_shape, 0.5f, 1.f);
    if (c.relu >= 0) {
        in[10] = fill(c.shape, 1.f, 0.f);
        in[11] = fill(c.shape, 1.f, 0.f);
    }
    return in;
}

namespace {
logical_tensor stat_tensor(const bn_case &c, size_t id) {
    if (c.stat_strides.empty()) return logical_tensor(id, c.stat_dt, c.stat_shape, layout_type::strided);
    return logical_tensor(id, c.stat_dt, c.stat_shape, c.stat_strides);
}
} // namespace

std::vector<op> bn_case_ops(const bn_case &c) {
    const dims strides = c.data_strides.empty() ? dense_strides(c.shape) : c.data_strides;
    auto data = [&](size_t id) { return logical_tensor(id, c.dt, c.shape, strides); };
    auto stat = [&](size_t id) { return stat_tensor(c, id); };
    std::vector<logical_tensor> bn_in {data(0), data(1), stat(2), stat(3)};
    if (c.gamma) bn_in.push_back(stat(4));
    std::vector<logical_tensor> bn_out {data(5)};
    if (c.three_outputs) bn_out.insert(bn_out.end(), {stat(6), stat(7)});
    std::vector<op> ops;
    if (c.relu >= 0) {
        // The ReLU output replaces the BN input it feeds (id 20).
        bn_in[size_t(c.relu)] = data(20);
        op r(0, op::kind::ReLUBackprop, {data(10), data(11)}, {data(20)});
        r.set_attr(op::attr::use_dst, false);
        ops.push_back(r);
    }
    op o(1, op::kind::BatchNormTrainingBackprop, bn_in, bn_out);
    o.set_attr(op::attr::epsilon, c.epsilon).set_attr(op::attr::data_format, c.nxc ? "NXC" : "NCX");
    o.set_attr(op::attr::use_global_stats, c.global_stats);
    ops.push_back(o);
    return ops;
}

compiled_partition compile_bn_case(const bn_case &c, backend_kind b) {
    compile_options opts;
    opts.backend = b;
    return compile_bn_case(c, opts);
}

compiled_partition compile_bn_case(const bn_case &c, const compile_options &opts) {
    graph g;
    for (const op &x : bn_case_ops(c)) g.add_op(x);
    g.finalize();
    const partition p = g.get_partitions().at(0);
    return p.compile(p.get_input_ports(), p.get_output_ports(), engine(), opts);
}

std::map<size_t, std::vector<float>> run_bn(const bn_case &c, backend_kind b, const std::map<size_t, std::vector<float>> &in,
        bool fused, bool read_diff_src) {
    const std::vector<op> ops = bn_case_ops(c);
    const std::vector<logical_tensor> &bn_out = ops.back().get_outputs();
    const dims strides = c.data_strides.empty() ? dense_strides(c.shape) : c.data_strides;
    auto data = [&](size_t id) { return logical_tensor(id, c.dt, c.shape, strides); };
    auto stat = [&](size_t id) { return stat_tensor(c, id); };

    engine e;
    stream s(e);
    compile_options opts;
    opts.backend = b;
    std::map<size_t, std::vector<char>> buf;
    auto buffer_of = [&](const logical_tensor &lt) -> void * {
        auto &v = buf[lt.get_id()];
        if (v.empty()) v.resize(lt.get_mem_size() + 72);
        return v.data() + bytes_to_line(v.data()) + (c.misaligned ? 4 : 0);
    };
    // Graph inputs from `in`.
    for (auto &[id, values] : in) {
        if (id == 4 && !c.gamma) continue;
        const logical_tensor lt = (id == 2 || id == 3 || id == 4) ? stat(id) : data(id);
        if (c.relu >= 0 && id == size_t(c.relu)) continue; // replaced by the ReLU output
        size_t k = 0;
        void *p = buffer_of(lt);
        core::for_each_index(lt.get_dims(), lt.get_strides(),
                [&](const dims &, int64_t off) { core::store_from_double(p, lt.get_data_type(), off, values[k++]); });
    }
    auto run_graph = [&](const std::vector<op> &group) {
        graph g;
        for (const op &x : group) g.add_op(x);
        g.finalize();
        for (const partition &p : g.get_partitions()) {
            const compiled_partition cp = p.compile(p.get_input_ports(), p.get_output_ports(), e, opts);
            std::vector<tensor> ti, to;
            for (const logical_tensor &lt : cp.get_inputs()) ti.emplace_back(lt, e, buffer_of(lt));
            for (const logical_tensor &lt : cp.get_outputs()) to.emplace_back(lt, e, buffer_of(lt));
            cp.execute(s, ti, to);
        }
    };
    if (fused || ops.size() == 1) run_graph(ops);
    else
        for (const op &x : ops) run_graph({x}); // each op its own graph: no fusion
    std::map<size_t, std::vector<float>> out;
    for (const logical_tensor &lt : bn_out) {
        if (lt.get_id() == 5 && !read_diff_src) continue;
        std::vector<float> v;
        const void *p = buffer_of(lt);
        core::for_each_index(lt.get_dims(), lt.get_strides(),
                [&](const dims &, int64_t off) { v.push_back(float(core::load_as_double(p, lt.get_data_type(), off))); });
        out[lt.get_id()] = v;
    }
    return out;
}

void expect_bn_close(const std::map<size_t, std::vector<float>> &got, const std::map<size_t, std::vector<float>> &want,
        const bn_case &c) {
    for (auto &[id, w] : want) {
        const auto &g = got.at(id);
        ASSERT_EQ(g.size(), w.size());
        float scale = 0.f;
        for (float v : w) scale = std::max(scale, std::abs(v));
        // diff_src is stored in the data type; statistics in stat_dt.
        const data_type dt = id == 5 ? c.dt : c.stat_dt;
        const float rel = dt == data_type::f32 ? 0.f : dt == data_type::bf16 ? 1.f / 128 : 1.f / 1024;
        int bad = 0;
        for (size_t i = 0; i < g.size() && bad < 3; ++i)
            if (!(std::abs(g[i] - w[i]) <= 2e-5f * scale + rel * std::abs(w[i]))) {
                ++bad;
                ADD_FAILURE() << c.name() << " output " << id << "[" << i << "]: tbb " << g[i] << " ref " << w[i];
            }
    }
}

} // namespace bpg::test
