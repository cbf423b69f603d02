#include "onednn_graph_backend.hpp"

#if BPG_BENCH_ONEDNN_GRAPH

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <omp.h>
#include <oneapi/dnnl/dnnl_graph.hpp>

#include "bpg/threading.hpp"

namespace bpg::bench {
namespace {

namespace og = dnnl::graph;
using og_lt = og::logical_tensor;

og_lt::data_type to_onednn(data_type dt) {
    switch (dt) {
        case data_type::bf16: return og_lt::data_type::bf16;
        case data_type::f16: return og_lt::data_type::f16;
        default: return og_lt::data_type::f32;
    }
}

// The case's tensor `lt` as oneDNN Graph sees it: same id, shape and dtype,
// dense in the order of its shape (as build_graph's tensors are).
og_lt onednn_tensor(const logical_tensor &lt) {
    return og_lt(lt.get_id(), to_onednn(lt.get_data_type()), lt.get_dims(), og_lt::layout_type::strided);
}

// The case as a oneDNN Graph graph; an empty reason when oneDNN's op set has it.
std::string build(const bench_case &c, const case_graph &cg, og::graph &g) {
    std::vector<og_lt> ins, outs;
    for (const logical_tensor &lt : cg.inputs) ins.push_back(onednn_tensor(lt));
    for (const logical_tensor &lt : cg.outputs) outs.push_back(onednn_tensor(lt));
    if (c.op == bench_op::interpolate) {
        if (!c.nearest_mode.empty()) return "oneDNN Graph's InterpolateBackward has no nearest_mode";
        if (c.coord != "half_pixel" && c.coord != "align_corners")
            return "oneDNN Graph's InterpolateBackward has no coordinate_transformation_mode " + c.coord;
        og::op o(0, og::op::kind::InterpolateBackward, ins, outs, "interpolate_bwd");
        const dims &d = c.dst;
        const dims sizes = c.format == "NCX" ? dims(d.begin() + 2, d.end()) : dims(d.begin() + 1, d.end() - 1);
        o.set_attr<std::string>(og::op::attr::mode, c.mode);
        o.set_attr<std::string>(og::op::attr::coordinate_transformation_mode, c.coord);
        o.set_attr<std::string>(og::op::attr::data_format, c.format);
        o.set_attr<std::vector<int64_t>>(og::op::attr::sizes, sizes);
        g.add_op(o);
        return "";
    }
    if (c.global_stats) return "oneDNN Graph's BatchNormTrainingBackward has no use_global_stats";
    // build_graph's BN inputs: src, diff_dst (or the ReLU's x), mean,
    // variance[, gamma][, the ReLU's diff_dst]; the ReLU's output is id 1.
    std::vector<og_lt> bn_ins(ins.begin(), ins.begin() + (c.gamma ? 5 : 4));
    if (c.relu) {
        const og_lt relu_out(1, ins[1].get_data_type(), cg.inputs[1].get_dims(), og_lt::layout_type::strided);
        og::op r(1, og::op::kind::ReLUBackward, {ins[1], ins.back()}, {relu_out}, "relu_bwd");
        r.set_attr<bool>(og::op::attr::use_dst, true);
        g.add_op(r);
        bn_ins[1] = relu_out;
    }
    og::op o(0, og::op::kind::BatchNormTrainingBackward, bn_ins, outs, "bn_bwd");
    o.set_attr<float>(og::op::attr::epsilon, 1e-5f);
    o.set_attr<std::string>(og::op::attr::data_format, c.format);
    g.add_op(o);
    return "";
}

struct compiled {
    og::compiled_partition cp;
    std::vector<og::tensor> ins, outs;
};

} // namespace

bool onednn_graph_available() { return true; }

prepared_backend prepare_onednn_graph(const bench_case &c, const case_graph &cg,
        const std::function<void *(size_t id)> &data_of) {
    prepared_backend out;
    out.r.backend = "onednn_graph";
    out.r.ran_on = "onednn_graph";
    // One engine for every case: oneDNN's compiled-partition cache may hand
    // a later compile of the same ops the kernel compiled for an earlier
    // engine, which then fails to execute on the first engine's stream.
    static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    std::vector<compiled> runs;
    // Tensors between two partitions (ReLU and BN apart): buffers of their own.
    auto scratch = std::make_shared<std::map<size_t, std::vector<char>>>();
    std::set<size_t> is_case_tensor;
    for (const logical_tensor &lt : cg.inputs) is_case_tensor.insert(lt.get_id());
    for (const logical_tensor &lt : cg.outputs) is_case_tensor.insert(lt.get_id());
    try {
        og::graph g(dnnl::engine::kind::cpu);
        const std::string unsupported = build(c, cg, g);
        if (!unsupported.empty()) {
            out.r.reason = unsupported;
            return out;
        }
        g.finalize();
        const og::partition::policy policy = c.apart ? og::partition::policy::debug : og::partition::policy::fusion;
        for (const og::partition &p : g.get_partitions(policy)) {
            if (!p.is_supported()) {
                out.r.reason = "oneDNN Graph does not support this case (an unsupported partition)";
                return out;
            }
            compiled run;
            run.cp = p.compile(p.get_input_ports(), p.get_output_ports(), eng);
            auto bind = [&](const og_lt &port, std::vector<og::tensor> &to) {
                const og_lt lt = run.cp.query_logical_tensor(port.get_id());
                void *data = nullptr;
                if (is_case_tensor.count(lt.get_id())) {
                    data = data_of(lt.get_id());
                } else {
                    std::vector<char> &buf = (*scratch)[lt.get_id()];
                    if (buf.empty()) buf.resize(lt.get_mem_size());
                    data = buf.data();
                }
                to.emplace_back(lt, eng, data);
            };
            for (const og_lt &port : p.get_input_ports()) bind(port, run.ins);
            for (const og_lt &port : p.get_output_ports()) bind(port, run.outs);
            out.r.ran_on = "onednn_graph:" + std::to_string(runs.size() + 1) + " partition(s)";
            runs.push_back(std::move(run));
        }
    } catch (const std::exception &e) {
        // oneDNN refuses what it does not implement (a dtype, a layout) with
        // dnnl::error; 3.9 compiles BN without gamma into std::out_of_range.
        out.r.reason = std::string("oneDNN Graph: ") + e.what();
        return out;
    }
    // oneDNN runs on OpenMP: give it the threads a bpg partition gets.
    const int threads = get_max_threads();
    out.run = [runs = std::move(runs), scratch, threads, strm = dnnl::stream(eng)]() mutable {
        omp_set_num_threads(threads);
        for (compiled &run : runs) run.cp.execute(strm, run.ins, run.outs);
        strm.wait();
    };
    out.r.ok = true;
    return out;
}

} // namespace bpg::bench

#else // bpg-bench built without oneDNN 3.x's graph API

namespace bpg::bench {

bool onednn_graph_available() { return false; }

prepared_backend prepare_onednn_graph(const bench_case &, const case_graph &, const std::function<void *(size_t)> &) {
    prepared_backend out;
    out.r.backend = "onednn_graph";
    out.r.reason = "bpg-bench was built without oneDNN 3.x (dnnl::graph)";
    return out;
}

} // namespace bpg::bench

#endif
