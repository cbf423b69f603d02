#include "measure.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include <tbb/task_arena.h>

#include "bpg/threading.hpp"

#include "../bpg-run/host_buffer.hpp"
#include "../bpg-run/input_fill.hpp"
#include "onednn_graph_backend.hpp"
#include "stream_kernel.hpp"

namespace bpg::bench {

namespace {

using buffers = std::map<size_t, tools::host_buffer>;

// Where the streaming kernels' checksums go, so that no work is dead code.
volatile double checksum_sink = 0;

// The streaming kernel of a case, on the case's own buffers (ids of build_graph).
double run_stream(const bench_case &c, const buffers &b, bool nt) {
    if (c.op == bench_op::interpolate)
        return stream_reduce(c.dtype, b.at(1).data(), element_count(c.dst), b.at(2).data(), element_count(c.src), nt);
    const int64_t n = element_count(c.shape);
    void *ds = b.at(5).data();
    if (c.relu) {
        // A ReLUBackprop in front (build_graph's ids: 10 its input, 11 its
        // diff_dst) makes diff_dst inside the graph.
        const void *x = b.at(10).data(), *g = b.at(11).data();
        if (!c.global_stats) return stream_bn_two_pass(c.dtype, b.at(0).data(), g, x, ds, n, nt);
        if (c.outputs == 3) return stream_bn_one_pass(c.dtype, b.at(0).data(), g, x, ds, n, nt);
        return stream_bn_one_pass(c.dtype, x, g, nullptr, ds, n, nt);
    }
    const void *dd = b.at(1).data();
    if (!c.global_stats) return stream_bn_two_pass(c.dtype, b.at(0).data(), dd, nullptr, ds, n, nt);
    if (c.outputs == 3) return stream_bn_one_pass(c.dtype, b.at(0).data(), dd, nullptr, ds, n, nt);
    return stream_reduce(c.dtype, dd, n, ds, n, nt);
}

prepared_backend prepare_backend(backend_kind k, const bench_case &c, const std::vector<partition> &parts,
        buffers &b, const run_config &cfg) {
    prepared_backend out;
    backend_result &r = out.r;
    r.backend = k == backend_kind::auto_select ? "auto" : to_string(k);
    if (k == backend_kind::ref && cfg.ref_max_elements >= 0 && largest_tensor_elements(c) > cfg.ref_max_elements) {
        r.reason = "too large for ref; use --backend ref explicitly";
        return out;
    }
    const engine eng;
    // Every partition in order (one, except for a graph run apart); a tensor
    // between two partitions gets a buffer of its own.
    struct compiled { compiled_partition cp; std::vector<tensor> ins, outs; };
    std::vector<compiled> runs;
    for (const partition &p : parts) {
        compiled c1;
        try {
            compile_options opts;
            opts.backend = k;
            std::vector<logical_tensor> ins;
            for (const logical_tensor &port : p.get_input_ports()) {
                auto it = b.find(port.get_id());
                ins.push_back(it != b.end() ? it->second.lt() : port);
            }
            c1.cp = p.compile(ins, p.get_output_ports(), eng, opts);
        } catch (const error &e) {
            // Legal input this build cannot run on that backend (not built, or
            // a case it does not compute exactly): a result, not a failure.
            if (e.code() != status::unimplemented) throw;
            r.reason = e.what();
            return out;
        }
        for (const logical_tensor &lt : c1.cp.get_outputs())
            if (!b.count(lt.get_id())) b.emplace(lt.get_id(), tools::host_buffer(lt));
        for (const logical_tensor &lt : c1.cp.get_inputs()) c1.ins.emplace_back(lt, eng, b.at(lt.get_id()).data());
        for (const logical_tensor &lt : c1.cp.get_outputs()) c1.outs.emplace_back(lt, eng, b.at(lt.get_id()).data());
        r.ran_on += (r.ran_on.empty() ? "" : "+") + c1.cp.get_backend_name();
        runs.push_back(std::move(c1));
    }
    out.run = [runs = std::move(runs), strm = stream(eng)] {
        for (const compiled &c1 : runs) c1.cp.execute(strm, c1.ins, c1.outs);
    };
    r.ok = true;
    return out;
}

// Milliseconds per call of `calls` calls of f in a row.
double time_ms(const std::function<void()> &f, int calls = 1) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / calls;
}

// Inputs are filled like bpg-run fills them (variances positive); the
// outputs are zeroed, so every page is touched before any timing.
buffers make_buffers(const case_graph &cg) {
    buffers b;
    for (const logical_tensor &lt : cg.inputs) {
        tools::host_buffer &hb = b.emplace(lt.get_id(), tools::host_buffer(lt)).first->second;
        tools::fill_input(cg.g.get_ops(), hb);
    }
    for (const logical_tensor &lt : cg.outputs) b.emplace(lt.get_id(), tools::host_buffer(lt));
    return b;
}

// One row of the report compiled for the case: a bpg backend by name, or
// oneDNN Graph's own partitions.
prepared_backend prepare_row(const std::string &row, const bench_case &c, const case_graph &cg, buffers &b,
        const run_config &cfg) {
    if (row == "onednn_graph") return prepare_onednn_graph(c, cg, [&b](size_t id) { return b.at(id).data(); });
    backend_kind k = backend_kind::auto_select;
    if (!backend_from_string(row, k)) throw error(status::invalid_argument, "no backend named " + row);
    return prepare_backend(k, c, cg.g.get_partitions(c.apart ? partition_policy::debug : partition_policy::fusion),
            b, cfg);
}

} // namespace

timing summarize(std::vector<double> ms) {
    timing t;
    if (ms.empty()) return t;
    std::sort(ms.begin(), ms.end());
    const size_t h = ms.size() / 2;
    t.median_ms = ms.size() % 2 ? ms[h] : (ms[h - 1] + ms[h]) / 2;
    t.min_ms = ms.front();
    return t;
}

case_result run_case(const bench_case &c, const run_config &cfg) {
    case_result res;
    res.c = c;
    res.description = describe(c);
    res.bytes = bytes_moved(c);

    const case_graph cg = build_graph(c); // the library's checks run here
    const std::vector<partition> parts = cg.g.get_partitions(c.apart ? partition_policy::debug : partition_policy::fusion);
    if (parts.empty() || (parts.size() != 1 && !c.apart))
        throw error(status::runtime_error, res.description + ": expected one partition, got "
                        + std::to_string(parts.size()));
    // A fused case is compared with its ops apart in the same rounds: run
    // minutes apart, the machine's drift alone moved that ratio by 1.1-2x.
    const bool compare_apart = c.relu && !c.apart;
    const std::vector<partition> apart_parts =
            compare_apart ? cg.g.get_partitions(partition_policy::debug) : std::vector<partition> {};

    // Before anything of this shape has run in this process.
    std::map<std::string, first_call_times> first_calls;
    if (c.kind == bench_kind::first_call)
        for (const std::string &row : row_names(cfg)) first_calls[row] = time_first_call(c, row, true, cfg);
    buffers b = make_buffers(cg);

    // Every backend is compiled first; then each backend gets a block of
    // rounds, each round the streaming kernel (non-temporal stores, then
    // ordinary ones, which leave the buffers in the cache as a backend's
    // previous run would) and the backend once, each run timed on its own.
    // Interleaved, a drift of the shared machine (up to 1.5x over seconds
    // here) weighs on the yardstick and the backend alike, and each run starts
    // from the same cache state. In blocks, no backend is timed right after
    // another's: after oneDNN's 100 ms runs the next backend's compute-bound
    // runs took up to 1.5x longer, the memory-bound yardstick did not
    // (bench/NOTES.md). The faster way of storing is the yardstick. When no
    // backend runs the case, the streaming kernel still runs once a round.
    std::vector<prepared_backend> ready;
    for (backend_kind k : cfg.backends) {
        ready.push_back(prepare_backend(k, c, parts, b, cfg));
        if (!compare_apart || !ready.back().run) continue;
        prepared_backend apart = prepare_backend(k, c, apart_parts, b, cfg);
        apart.r.apart = true;
        ready.push_back(std::move(apart));
    }
    if (cfg.onednn_graph) {
        const auto data_of = [&b](size_t id) { return b.at(id).data(); };
        ready.push_back(prepare_onednn_graph(c, cg, data_of));
        if (compare_apart && ready.back().run) {
            bench_case apart_case = c;
            apart_case.apart = true;
            prepared_backend apart = prepare_onednn_graph(apart_case, cg, data_of);
            apart.r.apart = true;
            ready.push_back(std::move(apart));
        }
    }
    std::vector<const prepared_backend *> running;
    for (const prepared_backend &pb : ready)
        if (pb.run) running.push_back(&pb);
    if (running.empty()) running.push_back(nullptr);
    double sum = 0;
    // The yardstick gets the threads a partition gets (--threads is the
    // library default, bpg::set_max_threads): an arena of that many.
    tbb::task_arena stream_arena(get_max_threads());
    const std::function<void()> stream_runs[2] = {
            [&] { stream_arena.execute([&] { sum += run_stream(c, b, false); }); },
            [&] { stream_arena.execute([&] { sum += run_stream(c, b, true); }); }};
    // An overhead case times blocks of calls, many blocks: a block that lost
    // its core to another process is one outlier among many.
    const bool blocks = c.kind == bench_kind::overhead;
    res.calls_per_run = blocks ? overhead_calls_per_block : 1;
    const int repeat = blocks ? cfg.repeat * overhead_blocks_per_repeat : cfg.repeat;
    std::vector<double> ms[2];                              // [nontemporal]
    std::vector<std::vector<double>> backend_ms(ready.size()), before_ms[2];
    before_ms[0].resize(ready.size());
    before_ms[1].resize(ready.size());
    // A backend's apart runs share its block, right after its fused run.
    std::vector<std::vector<const prepared_backend *>> backend_blocks;
    for (const prepared_backend *pb : running) {
        if (pb && pb->r.apart && !backend_blocks.empty() && backend_blocks.back().front() == pb - 1)
            backend_blocks.back().push_back(pb);
        else
            backend_blocks.push_back({pb});
    }
    for (const std::vector<const prepared_backend *> &block : backend_blocks) {
        for (int round = 0; round < cfg.warmup + repeat; ++round) {
            const bool timed = round >= cfg.warmup;
            for (const prepared_backend *pb : block) {
                double yardstick[2];
                for (int nt = 1; nt >= 0; --nt) {
                    yardstick[nt] = time_ms(stream_runs[nt], res.calls_per_run);
                    if (timed) ms[nt].push_back(yardstick[nt]);
                }
                if (!pb) continue;
                const double t = time_ms(pb->run, res.calls_per_run);
                if (!timed) continue;
                const size_t k = size_t(pb - ready.data());
                backend_ms[k].push_back(t);
                for (int nt = 0; nt < 2; ++nt) before_ms[nt][k].push_back(yardstick[nt]);
            }
        }
    }
    res.stream_regular = summarize(ms[0]);
    res.stream_nontemporal = summarize(ms[1]);
    res.stream_stores_nontemporal = res.stream_nontemporal.median_ms < res.stream_regular.median_ms;
    for (size_t k = 0; k < ready.size(); ++k) {
        if (ready[k].run) ready[k].r.t = summarize(backend_ms[k]);
        ready[k].r.runs_ms = backend_ms[k];
        ready[k].r.stream_before_ms = before_ms[res.stream_stores_nontemporal][k];
        // An apart run follows the fused run of its backend.
        if (ready[k].r.apart && ready[k].run && ready[k - 1].r.t.median_ms > 0)
            ready[k].r.fusion_gain = ready[k].r.t.median_ms / ready[k - 1].r.t.median_ms;
        const auto first = first_calls.find(ready[k].r.backend);
        if (first != first_calls.end() && first->second.ok && !ready[k].r.apart) {
            ready[k].r.compile_ms = first->second.compile_ms;
            ready[k].r.first_ms = first->second.first_ms;
        }
        res.results.push_back(ready[k].r);
    }
    checksum_sink = checksum_sink + sum;
    res.stream = res.stream_stores_nontemporal ? res.stream_nontemporal : res.stream_regular;
    res.stream_runs = int(ms[0].size());
    return res;
}

std::vector<std::string> row_names(const run_config &cfg) {
    std::vector<std::string> rows;
    for (backend_kind k : cfg.backends) rows.push_back(k == backend_kind::auto_select ? "auto" : to_string(k));
    if (cfg.onednn_graph) rows.push_back("onednn_graph");
    return rows;
}

first_call_times time_first_call(const bench_case &c, const std::string &row, bool warm, const run_config &cfg) {
    if (warm) {
        bench_case other = c;
        other.kind = bench_kind::throughput;
        if (c.op == bench_op::interpolate) {
            other.src[0] += 1;
            other.dst[0] += 1;
        } else {
            other.shape[0] += 1;
        }
        const case_graph ocg = build_graph(other);
        buffers ob = make_buffers(ocg);
        const prepared_backend other_run = prepare_row(row, other, ocg, ob, cfg);
        if (other_run.run) other_run.run();
    }
    const case_graph cg = build_graph(c);
    buffers b = make_buffers(cg);
    first_call_times t;
    prepared_backend p;
    t.compile_ms = time_ms([&] { p = prepare_row(row, c, cg, b, cfg); });
    t.ok = bool(p.run);
    t.reason = p.r.reason;
    if (t.ok) t.first_ms = time_ms(p.run);
    return t;
}

} // namespace bpg::bench
