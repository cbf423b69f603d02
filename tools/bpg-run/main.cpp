// bpg-run: runs a oneDNN Graph JSON file end to end.
//
//   bpg-run GRAPH.json [--inputs DIR] [--outputs DIR] [--backend auto|ref|tbb|dnnl]
//           [--threads N] [--repeat N] [--no-check]
//           [--dt f32|bf16|f16] [--in-shapes ...] [--op-attrs ...]   (benchdnn rewrites)
//
// Exit codes: 0 success; 2 any failure, with one line on stderr naming it
// (a bad graph, file or option, out of memory, an internal error). Outputs
// are written all or nothing (run_files.hpp). Text quoted from the user
// (paths, names) has its control characters escaped: one line each.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "bpg/json.hpp"
#include "bpg/threading.hpp"
#include "core/message_text.hpp"
#include "../common/openmp_policy.hpp"
#include "graph_runner.hpp"
#include "io/benchdnn_rewrite.hpp"

namespace {

struct cli_options {
    std::string graph_path, inputs_dir, outputs_dir, backend = "auto", dt, in_shapes, op_attrs;
    int threads = 0, repeat = 1;
    bool no_check = false, print_graph = false, no_fusion = false;
};

std::string join(const std::vector<size_t> &v) {
    std::string s;
    for (size_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
    return s;
}

int run(const cli_options &o) {
    using namespace bpg;
    if (o.threads < 0) throw error(status::invalid_argument, "--threads must be >= 1");
    set_max_threads(o.threads);

    tools::run_options ro;
    if (!backend_from_string(o.backend, ro.backend))
        throw error(status::invalid_argument, "--backend " + o.backend + " is not one of auto, ref, tbb, dnnl");
    ro.repeat = o.repeat;
    ro.check = !o.no_check;
    if (o.no_fusion) ro.policy = partition_policy::debug;
    std::optional<tools::output_files> outputs;
    if (!o.outputs_dir.empty()) outputs.emplace(o.outputs_dir);

    graph_document doc = read_graph_json_file(o.graph_path);
    io::benchdnn_rewrite rw;
    if (!o.dt.empty()) {
        if (o.dt == "f32") rw.dt = data_type::f32;
        else if (o.dt == "bf16") rw.dt = data_type::bf16;
        else if (o.dt == "f16") rw.dt = data_type::f16;
        else throw error(status::invalid_argument, "--dt " + o.dt + " is not one of f32, bf16, f16");
    }
    rw.in_shapes = o.in_shapes;
    rw.op_attrs = o.op_attrs;
    io::apply_rewrite(doc, rw);
    if (o.print_graph) std::cout << write_graph_json(doc) << "\n";
    const graph g = make_graph(doc);

    tools::graph_runner runner(g, ro);
    const auto from_files = runner.load_inputs(o.inputs_dir);
    const auto parts = runner.run();

    using core::printable;
    std::printf("bpg-run: %s: %zu ops, %zu partitions, backend request '%s'%s\n", printable(o.graph_path).c_str(),
            g.get_ops().size(), parts.size(), printable(o.backend).c_str(),
            rw.empty() ? "" : " (rewritten)");
    std::printf("inputs: %s\n",
            from_files.empty() ? "deterministic fill" : ("from " + printable(o.inputs_dir) + ": " + join(from_files)).c_str());
    double total = 0;
    for (const auto &p : parts) {
        total += p.median_ms;
        std::printf("partition %zu %-16s ops [%s] ran on %-4s %9.3f ms (median of %d, min %.3f)", p.id,
                p.pattern.c_str(), join(p.ops).c_str(), p.backend.c_str(), p.median_ms, ro.repeat, p.min_ms);
        if (p.checked) std::printf("  max|err| vs ref %.3g (%.3g of max|ref|)", p.max_abs_err, p.max_rel_err);
        std::printf("\n    %s\n    backend: %s\n", p.description.c_str(), p.dispatch_reason.c_str());
    }
    std::printf("total: %.3f ms\n", total);
    if (outputs) {
        const auto written = runner.write_outputs(*outputs);
        std::printf("outputs: %s/{%s}.npy\n", printable(o.outputs_dir).c_str(), join(written).c_str());
    }
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    bpg::tools::use_passive_openmp(argv);
    cli_options o;
    CLI::App app {"bpg-run: run a oneDNN Graph JSON graph with backprop-graph"};
    app.add_option("graph", o.graph_path, "graph JSON file (oneDNN Graph serialization)")->required();
    app.add_option("--inputs", o.inputs_dir, "read graph input K from DIR/K.npy when present (DIR must be a folder)");
    app.add_option("--outputs", o.outputs_dir, "write graph output K to DIR/K.npy (all outputs or none)");
    app.add_option("--backend", o.backend, "auto (dispatch rule), ref, tbb or dnnl");
    app.add_option("--threads", o.threads, "threads of every backend (default: all cores)");
    app.add_option("--repeat", o.repeat, "timed executions per partition (median printed; one untimed run first when > 1)");
    app.add_flag("--no-check", o.no_check, "skip the comparison with the reference backend");
    app.add_flag("--no-fusion", o.no_fusion, "one partition per op (partition_policy::debug)");
    app.add_option("--dt", o.dt, "benchdnn rewrite: data type of floating data tensors");
    app.add_option("--in-shapes", o.in_shapes, "benchdnn rewrite: ID:SHAPE[*TAG]+...");
    app.add_option("--op-attrs", o.op_attrs, "benchdnn rewrite: OPID:NAME:VALUE[*NAME:VALUE]+...");
    app.add_flag("--print-graph", o.print_graph, "print the (rewritten) graph as JSON");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        std::cerr << "bpg-run: error: " << bpg::core::printable(e.what()) << " (see --help)\n";
        return 2;
    }
    try {
        return run(o);
    } catch (const bpg::error &e) {
        std::cerr << "bpg-run: error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception &e) {
        std::cerr << "bpg-run: internal error: " << bpg::core::printable(e.what()) << "\n";
        return 2;
    }
}
