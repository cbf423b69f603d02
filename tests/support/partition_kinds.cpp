#include "support/partition_kinds.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>

#include "kernels/dtype_convert.hpp"
#include "support/problem_builders.hpp"

namespace bpg::test {

namespace {

using K = op::kind;
using A = op::attr;

std::string shape_name(const dims &d) {
    std::string s;
    for (dim x : d) s += (s.empty() ? "" : "x") + std::to_string(x);
    return s;
}

op interpolate_op(const kind_case &c) {
    const int h = c.nxc ? 1 : 2, w = h + 1, ch = c.nxc ? 3 : 1;
    dims dd = c.src;
    dd[size_t(h)] *= 2;
    dd[size_t(w)] += 1;
    const logical_tensor dd_lt = c.transposed_diff_dst
            ? logical_tensor(1, c.dt, dd, permuted_strides(dd, {0, ch, w, h}))
            : logical_tensor(1, c.dt, dd);
    op o(0, K::InterpolateBackprop, {logical_tensor(0, c.dt, c.src), dd_lt}, {logical_tensor(2, c.dt, c.src)}, "UP");
    o.set_attr(A::mode, c.kind == partition_kind::interpolate_nearest ? "nearest" : "linear");
    o.set_attr(A::data_format, c.nxc ? "NXC" : "NCX");
    o.set_attr(A::sizes, std::vector<int64_t> {dd[size_t(h)], dd[size_t(w)]});
    return o;
}

op relu_op(const kind_case &c, size_t in, size_t dd, size_t ds) {
    op o(ds == 2 ? 0 : 9, K::ReLUBackprop, {logical_tensor(in, c.dt, c.src), logical_tensor(dd, c.dt, c.src)},
            {logical_tensor(ds, c.dt, c.src)}, "RELU");
    o.set_attr(A::use_dst, false);
    return o;
}

op bn_op(const kind_case &c) {
    const dims stat {c.src[c.nxc ? 3 : 1]};
    auto t = [&](size_t id, const dims &d) { return logical_tensor(id, c.dt, d); };
    std::vector<logical_tensor> out {t(5, c.src)};
    if (c.kind != partition_kind::bn_diff_src) out.insert(out.end(), {t(6, stat), t(7, stat)});
    op o(1, K::BatchNormTrainingBackprop, {t(0, c.src), t(1, c.src), t(2, stat), t(3, stat), t(4, stat)}, out, "BN");
    o.set_attr(A::epsilon, 1e-3f).set_attr(A::data_format, c.nxc ? "NXC" : "NCX");
    if (c.kind == partition_kind::bn_global_stats) o.set_attr(A::use_global_stats, true);
    return o;
}

void fill_values(std::vector<uint8_t> &bytes, data_type dt, std::mt19937 &rng) {
    std::uniform_real_distribution<float> value(0.5f, 1.5f);
    if (dt == data_type::f32) {
        for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
            const float v = value(rng);
            std::memcpy(&bytes[i], &v, 4);
        }
    } else {
        for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
            const float v = value(rng);
            const uint16_t h = dt == data_type::bf16 ? kernels::f32_to_bf16(v) : kernels::f32_to_f16(v);
            std::memcpy(&bytes[i], &h, 2);
        }
    }
}

} // namespace

const std::vector<partition_kind> &all_partition_kinds() {
    static const std::vector<partition_kind> all {partition_kind::interpolate_nearest,
            partition_kind::interpolate_linear, partition_kind::relu, partition_kind::bn,
            partition_kind::bn_global_stats, partition_kind::bn_diff_src, partition_kind::relu_into_bn_src,
            partition_kind::relu_into_bn_diff_dst};
    return all;
}

std::string name_of(partition_kind k) {
    switch (k) {
        case partition_kind::interpolate_nearest: return "InterpolateNearest";
        case partition_kind::interpolate_linear: return "InterpolateLinear";
        case partition_kind::relu: return "ReLU";
        case partition_kind::bn: return "BN";
        case partition_kind::bn_global_stats: return "BNGlobalStats";
        case partition_kind::bn_diff_src: return "BNDiffSrcOnly";
        case partition_kind::relu_into_bn_src: return "ReLUIntoBNSrc";
        case partition_kind::relu_into_bn_diff_dst: return "ReLUIntoBNDiffDst";
    }
    return "?";
}

bool is_interpolate(partition_kind k) {
    return k == partition_kind::interpolate_nearest || k == partition_kind::interpolate_linear;
}

std::string name_of(const kind_case &c) {
    return name_of(c.kind) + " " + shape_name(c.src) + (c.nxc ? " NXC " : " NCX ") + to_string(c.dt)
            + (c.transposed_diff_dst ? " transposed diff_dst" : "");
}

graph build_graph(const kind_case &c) {
    graph g;
    switch (c.kind) {
        case partition_kind::interpolate_nearest:
        case partition_kind::interpolate_linear: g.add_op(interpolate_op(c)); break;
        case partition_kind::relu: g.add_op(relu_op(c, 0, 1, 2)); break;
        case partition_kind::bn:
        case partition_kind::bn_global_stats:
        case partition_kind::bn_diff_src: g.add_op(bn_op(c)); break;
        case partition_kind::relu_into_bn_src:
            g.add_op(relu_op(c, 10, 11, 0));
            g.add_op(bn_op(c));
            break;
        case partition_kind::relu_into_bn_diff_dst:
            g.add_op(relu_op(c, 10, 11, 1));
            g.add_op(bn_op(c));
            break;
    }
    g.finalize();
    return g;
}

compiled_partition compile_case(const kind_case &c, backend_kind b) {
    const graph g = build_graph(c);
    const std::vector<partition> parts = g.get_partitions();
    if (parts.size() != 1) throw std::logic_error("compile_case: " + name_of(c) + " is not one partition");
    compile_options opts;
    opts.backend = b;
    return parts[0].compile(parts[0].get_input_ports(), parts[0].get_output_ports(), engine(), opts);
}

case_buffers::case_buffers(const compiled_partition &cp, uint32_t seed, uint8_t sentinel) : sentinel_(sentinel) {
    std::mt19937 rng(seed);
    in_.reserve(cp.get_inputs().size());
    out_.reserve(cp.get_outputs().size());
    for (const logical_tensor &lt : cp.get_inputs()) {
        in_.emplace_back(lt.get_mem_size());
        fill_values(in_.back(), lt.get_data_type(), rng);
        in_t_.emplace_back(lt, engine(), in_.back().empty() ? nullptr : in_.back().data());
    }
    for (const logical_tensor &lt : cp.get_outputs()) {
        out_.emplace_back(lt.get_mem_size(), sentinel);
        out_t_.emplace_back(lt, engine(), out_.back().empty() ? nullptr : out_.back().data());
    }
}

void case_buffers::execute(const compiled_partition &cp) { cp.execute(stream(engine()), in_t_, out_t_); }

void case_buffers::reset_outputs() {
    for (auto &o : out_) std::fill(o.begin(), o.end(), sentinel_);
}

bool case_buffers::outputs_untouched() const {
    for (const auto &o : out_)
        for (uint8_t b : o)
            if (b != sentinel_) return false;
    return true;
}

} // namespace bpg::test
