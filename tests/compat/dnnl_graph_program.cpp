// A framework's backward graph written against oneDNN v3's documented
// dnnl::graph C++ API only. Built twice: with BPG_COMPAT_USE_BPG against bpg
// through bpg/dnnl_graph.hpp, and, when a oneDNN 3.x is configured
// (BPG_ONEDNN3_DIR), against oneDNN itself; compare_runs.py compares their
// output. Besides the ops oneDNN and bpg run, the graph holds ops the
// "framework" runs itself (Wildcard, End): they come back as unsupported
// partitions, in graph order.
//
// Output: one line per op in partition order ("op <id> <kind> supported|
// unsupported"), then one line per result tensor (checksums and samples).
// Lines starting with '#' describe the partitioning, which may differ
// between libraries (bpg fuses ReLUBackward into BatchNormTrainingBackward).
// Exits non-zero when a check fails.
#ifdef BPG_COMPAT_USE_BPG
#include "bpg/dnnl_graph.hpp"
#else
#include "oneapi/dnnl/dnnl_graph.hpp"
#endif

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace dnnl::graph;
using data_type = logical_tensor::data_type;
using layout_type = logical_tensor::layout_type;
using dims = logical_tensor::dims;

namespace {

constexpr int64_t N = 2, C = 3, H = 4, W = 4, OH = 8, OW = 8;

// The ids of the framework's tensors.
enum tensor_id : size_t {
    x = 100,          // Wildcard 0's input
    up_diff = 101,    // Wildcard 0's output: the upsampled tensor's gradient
    up_src = 102,     // the interpolate's forward input (shape only)
    interp_diff = 103,
    bn_dst = 104,     // BatchNormForwardTraining's dst (ReLU's input, use_dst)
    relu_diff = 105,
    bn_src = 106,
    bn_mean = 107,
    bn_var = 108,
    bn_gamma = 109,
    bn_diff_src = 110,
    bn_diff_gamma = 111,
    bn_diff_beta = 112,
    next_grad = 113,  // Wildcard 4's output
};

// The shapes the framework knows for every tensor (the graph leaves some unknown).
const std::map<size_t, dims> shapes = {{x, {N, C, OH, OW}}, {up_diff, {N, C, OH, OW}},
        {up_src, {N, C, H, W}}, {interp_diff, {N, C, H, W}}, {bn_dst, {N, C, H, W}},
        {relu_diff, {N, C, H, W}}, {bn_src, {N, C, H, W}}, {bn_mean, {C}}, {bn_var, {C}},
        {bn_gamma, {C}}, {bn_diff_src, {N, C, H, W}}, {bn_diff_gamma, {C}}, {bn_diff_beta, {C}},
        {next_grad, {N, C, H, W}}};

int64_t count(const dims &d) {
    int64_t n = 1;
    for (int64_t v : d) n *= v;
    return n;
}

logical_tensor known(size_t id) { return logical_tensor(id, data_type::f32, shapes.at(id), layout_type::strided); }
logical_tensor unknown(size_t id) { return logical_tensor(id, data_type::f32, -1, layout_type::strided); }

// Deterministic values in [-1, 1): a linear congruential sequence per tensor.
std::vector<float> values(size_t id) {
    std::vector<float> v(size_t(count(shapes.at(id))));
    uint32_t s = uint32_t(id) * 2654435761u + 12345u;
    for (float &f : v) {
        s = s * 1664525u + 1013904223u;
        f = float(s >> 8) / float(1u << 23) - 1.f;
    }
    return v;
}

int failures = 0;
void check(bool ok, const std::string &what) {
    if (!ok) {
        std::printf("CHECK FAILED: %s\n", what.c_str());
        ++failures;
    }
}

void print_tensor(const char *name, const std::vector<float> &v) {
    double sum = 0, abs_sum = 0;
    for (float f : v) {
        sum += f;
        abs_sum += std::fabs(f);
    }
    std::printf("tensor %s sum %.6g abs_sum %.6g first %.6g last %.6g\n", name, sum, abs_sum, double(v.front()),
            double(v.back()));
}

graph build_graph() {
    graph g(dnnl::engine::kind::cpu);

    op wildcard_in(0, op::kind::Wildcard, "framework_upsample_grad");
    wildcard_in.add_input(unknown(x));
    wildcard_in.add_output(unknown(up_diff));
    g.add_op(wildcard_in);

    // oneDNN wants one description of a tensor id in every op: the Wildcard's
    // output is of unknown shape where InterpolateBackward reads it too.
    op interp(1, op::kind::InterpolateBackward, {known(up_src), unknown(up_diff)}, {known(interp_diff)}, "interp_bwd");
    interp.set_attr<std::string>(op::attr::mode, "linear");
    interp.set_attr<std::string>(op::attr::coordinate_transformation_mode, "half_pixel");
    interp.set_attr<std::vector<int64_t>>(op::attr::sizes, {OH, OW});
    interp.set_attr<std::string>(op::attr::data_format, "NCX");
    g.add_op(interp);

    op relu(2, op::kind::ReLUBackward, {known(bn_dst), known(interp_diff)}, {known(relu_diff)}, "relu_bwd");
    relu.set_attr<bool>(op::attr::use_dst, true);
    g.add_op(relu);

    op bn(3, op::kind::BatchNormTrainingBackward,
            {known(bn_src), known(relu_diff), known(bn_mean), known(bn_var), known(bn_gamma)},
            {known(bn_diff_src), known(bn_diff_gamma), known(bn_diff_beta)}, "bn_bwd");
    bn.set_attr<float>(op::attr::epsilon, 1e-5f);
    bn.set_attr<std::string>(op::attr::data_format, "NCX");
    g.add_op(bn);

    op wildcard_out(4, op::kind::Wildcard, "framework_conv_grad");
    wildcard_out.add_input(known(bn_diff_src));
    wildcard_out.add_output(unknown(next_grad));
    g.add_op(wildcard_out);

    // End after the last Wildcard: one topological order only, so that
    // both libraries list the partitions alike.
    op end(5, op::kind::End, "graph_end");
    end.add_input(unknown(next_grad));
    g.add_op(end);

    g.finalize();
    return g;
}

const char *kind_of(size_t op_id) {
    static const char *names[] = {"Wildcard", "InterpolateBackward", "ReLUBackward", "BatchNormTrainingBackward",
            "Wildcard", "End"};
    return op_id < 6 ? names[op_id] : "?";
}

} // namespace

int main() {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    graph g = build_graph();
    std::vector<partition> parts = g.get_partitions(partition::policy::fusion);

    std::map<size_t, std::vector<float>> buf; // the framework's buffers, by tensor id
    for (size_t id : {size_t(x), size_t(up_src), size_t(bn_src), size_t(bn_gamma)}) buf[id] = values(id);
    // BN's forward statistics of bn_src and its ReLU'd output (gamma = 1 + gamma', beta = 0.1).
    buf[bn_mean].assign(C, 0.f);
    buf[bn_var].assign(C, 0.f);
    buf[bn_dst].assign(size_t(N * C * H * W), 0.f);
    for (int64_t c = 0; c < C; ++c) {
        double s = 0, ss = 0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t i = 0; i < H * W; ++i) {
                const double v = buf[bn_src][size_t((n * C + c) * H * W + i)];
                s += v;
                ss += v * v;
            }
        const double m = s / double(N * H * W), var = ss / double(N * H * W) - m * m;
        buf[bn_mean][size_t(c)] = float(m);
        buf[bn_var][size_t(c)] = float(var);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t i = 0; i < H * W; ++i) {
                const size_t at = size_t((n * C + c) * H * W + i);
                const double y = (buf[bn_src][at] - m) / std::sqrt(var + 1e-5) * buf[bn_gamma][size_t(c)] + 0.1;
                buf[bn_dst][at] = float(y > 0 ? y : 0);
            }
    }

    std::vector<size_t> unsupported_order, op_order;
    for (const partition &p : parts) {
        const std::vector<size_t> ops = p.get_ops();
        std::printf("# partition of %zu op(s), supported %d, first op %zu\n", p.get_ops_num(), int(p.is_supported()),
                ops.empty() ? size_t(0) : ops.front());
        for (size_t id : ops) {
            std::printf("op %zu %s %s\n", id, kind_of(id), p.is_supported() ? "supported" : "unsupported");
            op_order.push_back(id);
            if (!p.is_supported()) unsupported_order.push_back(id);
        }
        if (!p.is_supported()) {
            // The framework's own kernels.
            for (size_t id : ops) {
                if (id == 0) {
                    buf[up_diff] = buf[x];
                    for (float &f : buf[up_diff]) f = 0.5f * f + 0.25f;
                } else if (id == 4) {
                    buf[next_grad] = buf[bn_diff_src];
                    for (float &f : buf[next_grad]) f *= 2.f;
                }
            }
            continue;
        }
        std::vector<logical_tensor> ins, outs;
        for (const logical_tensor &lt : p.get_input_ports()) ins.push_back(known(lt.get_id()));
        for (const logical_tensor &lt : p.get_output_ports()) outs.push_back(known(lt.get_id()));
        compiled_partition cp = p.compile(ins, outs, eng);
        std::vector<tensor> in_ts, out_ts;
        for (const logical_tensor &lt : ins) in_ts.emplace_back(lt, eng, buf.at(lt.get_id()).data());
        for (const logical_tensor &lt : outs) {
            const logical_tensor q = cp.query_logical_tensor(lt.get_id());
            check(q.get_layout_type() == layout_type::strided, "output " + std::to_string(lt.get_id()) + " strided");
            buf[lt.get_id()].assign(q.get_mem_size() / sizeof(float), 0.f);
            out_ts.emplace_back(q, eng, buf[lt.get_id()].data());
        }
        cp.execute(strm, in_ts, out_ts);
        strm.wait();
    }

    check(op_order == std::vector<size_t>({0, 1, 2, 3, 4, 5}), "every op in one partition, in graph order");
    check(unsupported_order == std::vector<size_t>({0, 4, 5}), "Wildcard 0, Wildcard 4, End 5 are unsupported");

    // Linear interpolation's backward keeps the gradient's sum.
    double up_sum = 0, interp_sum = 0;
    for (float f : buf[up_diff]) up_sum += f;
    for (float f : buf[interp_diff]) interp_sum += f;
    check(std::fabs(up_sum - interp_sum) <= 1e-4 * (1 + std::fabs(up_sum)), "interpolate backward keeps the sum");
    // diff_beta is the per-channel sum of the ReLU-masked gradient.
    for (int64_t c = 0; c < C; ++c) {
        double want = 0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t i = 0; i < H * W; ++i) {
                const size_t at = size_t((n * C + c) * H * W + i);
                want += buf[bn_dst][at] > 0 ? buf[interp_diff][at] : 0.f;
            }
        check(std::fabs(want - buf[bn_diff_beta][size_t(c)]) <= 1e-4 * (1 + std::fabs(want)),
                "diff_beta of channel " + std::to_string(c));
    }

    print_tensor("interp_diff_src", buf[interp_diff]);
    print_tensor("bn_diff_src", buf[bn_diff_src]);
    print_tensor("bn_diff_gamma", buf[bn_diff_gamma]);
    print_tensor("bn_diff_beta", buf[bn_diff_beta]);
    print_tensor("next_grad", buf[next_grad]);
    return failures == 0 ? 0 : 1;
}
