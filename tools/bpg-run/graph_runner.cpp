#include "graph_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/tensor_desc.hpp"
#include "input_fill.hpp"
#include "io/npy.hpp"
#include "run_files.hpp"

namespace bpg::tools {

namespace {

bool is_concrete(const logical_tensor &lt) {
    return lt.has_known_shape() && lt.get_layout_type() == layout_type::strided
            && lt.get_strides().size() == lt.get_dims().size();
}

double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Largest absolute difference of two tensors of one layout, and that
// difference relative to the largest reference magnitude (an element-wise
// ratio would blow up where the reference is near 0 by cancellation). A
// NaN/inf in one but not the other counts as an infinite error.
void compare(const host_buffer &got, const host_buffer &want, double &abs_err, double &rel_err) {
    const logical_tensor &lt = got.lt();
    double scale = 0, err = 0;
    core::for_each_index(lt.get_dims(), lt.get_strides(), [&](const dims &, int64_t off) {
        const double a = core::load_as_double(got.data(), lt.get_data_type(), off);
        const double b = core::load_as_double(want.data(), lt.get_data_type(), off);
        if (std::isfinite(b)) scale = std::max(scale, std::abs(b));
        if ((std::isnan(a) && std::isnan(b)) || a == b) return; // a == b: also equal infinities
        const double d = std::abs(a - b);
        err = std::isfinite(d) ? std::max(err, d) : INFINITY;
    });
    abs_err = std::max(abs_err, err);
    rel_err = std::max(rel_err, err == 0 ? 0.0 : err / std::max(scale, 1e-300));
}

} // namespace

graph_runner::graph_runner(const graph &g, run_options opts) : g_(g), opts_(opts) {
    if (opts_.repeat < 1) throw error(status::invalid_argument, "--repeat must be >= 1");
}

std::vector<size_t> graph_runner::load_inputs(const std::string &dir) {
    if (!dir.empty()) require_input_folder(dir);
    std::vector<size_t> from_files;
    for (const logical_tensor &lt : g_.get_input_tensors()) {
        if (!is_concrete(lt))
            throw error(status::invalid_shape,
                    "graph input tensor " + std::to_string(lt.get_id())
                            + " has no concrete shape and strides; bpg-run needs them");
        host_buffer b(lt);
        const std::string path = dir + "/" + std::to_string(lt.get_id()) + ".npy";
        if (!dir.empty() && entry_present(path)) {
            io::npy_to_buffer(io::read_npy(path), lt, b.data(), path);
            from_files.push_back(lt.get_id());
        } else {
            fill_input(g_.get_ops(), b);
        }
        buffers_.emplace(lt.get_id(), std::move(b));
    }
    return from_files;
}

std::vector<partition_report> graph_runner::run() {
    engine eng;
    stream strm(eng);
    std::vector<partition_report> reports;
    for (const partition &p : g_.get_partitions(opts_.policy)) {
        std::vector<logical_tensor> ins;
        for (const logical_tensor &port : p.get_input_ports()) ins.push_back(buffers_.at(port.get_id()).lt());
        compile_options co;
        co.backend = opts_.backend;
        const compiled_partition cp = p.compile(ins, p.get_output_ports(), eng, co);

        std::vector<tensor> in_t, out_t;
        for (const logical_tensor &lt : cp.get_inputs())
            in_t.emplace_back(lt, eng, buffers_.at(lt.get_id()).data());
        for (const logical_tensor &lt : cp.get_outputs()) {
            buffers_.erase(lt.get_id());
            auto it = buffers_.emplace(lt.get_id(), host_buffer(lt)).first;
            out_t.emplace_back(lt, eng, it->second.data());
        }
        // With several timed runs, one untimed run first: the first execute
        // also pays for starting threads and touching fresh output pages.
        if (opts_.repeat > 1) cp.execute(strm, in_t, out_t);
        std::vector<double> times;
        for (int r = 0; r < opts_.repeat; ++r) {
            const double t0 = now_ms();
            cp.execute(strm, in_t, out_t);
            times.push_back(now_ms() - t0);
        }
        std::sort(times.begin(), times.end());

        partition_report rep;
        rep.id = p.get_id();
        rep.pattern = p.get_pattern_name();
        rep.ops = p.get_ops();
        rep.backend = cp.get_backend_name();
        rep.dispatch_reason = cp.get_dispatch_reason();
        rep.description = cp.describe();
        rep.median_ms = times[times.size() / 2];
        rep.min_ms = times.front();
        if (opts_.check) {
            compile_options ref_opts;
            ref_opts.backend = backend_kind::ref;
            const compiled_partition ref = p.compile(ins, p.get_output_ports(), eng, ref_opts);
            std::vector<host_buffer> ref_out;
            std::vector<tensor> ref_t;
            for (const logical_tensor &lt : ref.get_outputs()) {
                ref_out.emplace_back(lt);
                ref_t.emplace_back(lt, eng, ref_out.back().data());
            }
            ref.execute(strm, in_t, ref_t);
            for (size_t k = 0; k < ref_out.size(); ++k)
                compare(buffers_.at(ref_out[k].lt().get_id()), ref_out[k], rep.max_abs_err, rep.max_rel_err);
            rep.checked = true;
        }
        reports.push_back(rep);
    }
    return reports;
}

std::vector<size_t> graph_runner::write_outputs(output_files &out) const {
    std::vector<size_t> written;
    for (const logical_tensor &lt : g_.get_output_tensors()) {
        const host_buffer &b = buffers_.at(lt.get_id());
        out.add(std::to_string(lt.get_id()) + ".npy", io::serialize_npy(io::buffer_to_npy(b.lt(), b.data())));
        written.push_back(lt.get_id());
    }
    out.commit();
    return written;
}

} // namespace bpg::tools
