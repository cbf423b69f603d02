// bpg-bench: times InterpolateBackprop and BatchNormTrainingBackprop on each
// backend against a streaming kernel that moves the same bytes, in the same
// run. Its default suite holds the project's performance targets.
//
//   bpg-bench --op interpolate --mode bilinear --src 16x64x56x56 --dst 16x64x112x112
//             [--coord MODE] [--nearest-mode MODE] [--format NCX|NXC] [--dtype f32|bf16|f16]
//   bpg-bench --op batchnorm --shape 16x64x112x112 [--global-stats] [--outputs 1|3] [--no-gamma] [--relu [--apart]]
//             [--format NCX|NXC] [--dtype f32|bf16|f16]
//   bpg-bench [--suite interpolate|batchnorm|all] [--class NAME[,NAME...]]   (no case: the default suite)
//   common:   [--backend dnnl|tbb|ref|auto|onednn_graph|all] [--repeat N] [--warmup N] [--threads N] [--json [FILE]]
//             [--list]
//
// Exit codes: 0 success; 2 bad option or case (one line on stderr, nothing
// on stdout); 1 any other failure. See bench/README.md.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>

#include "../common/openmp_policy.hpp"
#include "backends/backend.hpp"
#include "bpg/threading.hpp"
#include "first_call.hpp"
#include "onednn_graph_backend.hpp"
#include "report.hpp"
#include "suites.hpp"
#include "summary.hpp"

namespace {

using namespace bpg;
using namespace bpg::bench;

// `--backend all` skips the reference backend above this many elements in
// the case's largest tensor: it takes 0.1 s and more per run there (dozens
// of the suite's cases), and it is the yardstick of correctness, not of speed.
constexpr int64_t ref_max_elements_in_all = int64_t(1) << 20;

struct cli_options {
    std::string op, mode, coord, nearest_mode, src, dst, format, dtype, shape, suite, classes;
    bool global_stats = false, no_gamma = false, relu = false, apart = false;
    int outputs = 3;
    std::string backend = "all", json_path;
    int repeat = 10, warmup = 2, threads = 2;
    bool list = false;
    bool first_call_child = false; // internal: first_call.hpp
};

// Which options were given on the command line.
struct given {
    std::map<std::string, CLI::Option *> opts;
    bool operator()(const std::string &name) const { return opts.at(name)->count() > 0; }
};

[[noreturn]] void bad(const std::string &msg) { throw error(status::invalid_argument, msg); }

data_type parse_dtype(const std::string &s) {
    if (s == "f32") return data_type::f32;
    if (s == "bf16") return data_type::bf16;
    if (s == "f16") return data_type::f16;
    bad("--dtype " + s + " is not one of f32, bf16, f16");
}

// The case of the command line (an op's options with the other op's is an error).
bench_case single_case(const cli_options &o, const given &g) {
    bench_case c;
    if (g("op")) {
        if (o.op == "interpolate") c.op = bench_op::interpolate;
        else if (o.op == "batchnorm") c.op = bench_op::batchnorm;
        else bad("--op " + o.op + " is not one of interpolate, batchnorm");
    } else {
        c.op = g("shape") ? bench_op::batchnorm : bench_op::interpolate;
    }
    const bool interp = c.op == bench_op::interpolate;
    for (const char *name : {"src", "dst", "mode", "coord", "nearest-mode"})
        if (!interp && g(name)) bad(std::string("--") + name + " is an interpolate option, not a batchnorm one");
    for (const char *name : {"shape", "global-stats", "outputs", "no-gamma", "relu", "apart"})
        if (interp && g(name)) bad(std::string("--") + name + " is a batchnorm option, not an interpolate one");
    if (g("format")) c.format = o.format;
    if (g("dtype")) c.dtype = parse_dtype(o.dtype);
    if (interp) {
        if (!g("src") || !g("dst")) bad("interpolate needs both --src and --dst");
        c.src = parse_shape(o.src, "--src");
        c.dst = parse_shape(o.dst, "--dst");
        if (g("mode")) c.mode = o.mode;
        if (g("coord")) c.coord = o.coord;
        c.nearest_mode = o.nearest_mode;
    } else {
        if (!g("shape")) bad("batchnorm needs --shape");
        c.shape = parse_shape(o.shape, "--shape");
        c.global_stats = o.global_stats;
        c.gamma = !o.no_gamma;
        c.outputs = o.outputs;
        c.relu = o.relu || o.apart;
        c.apart = o.apart;
    }
    validate(c);
    return c;
}

std::vector<bench_case> cases_of(const cli_options &o, const given &g) {
    if (g("src") || g("dst") || g("shape")) {
        if (g("suite")) bad("--suite runs the default cases; it cannot be combined with --src/--dst/--shape");
        if (g("class")) bad("--class selects default cases; it cannot be combined with --src/--dst/--shape");
        bench_case c = single_case(o, g);
        if (o.first_call_child) c.kind = bench_kind::first_call;
        return {c};
    }
    if (o.first_call_child) bad("--first-call-child needs one case");
    for (const char *name : {"mode", "coord", "nearest-mode", "format", "dtype", "global-stats", "outputs",
                 "no-gamma", "relu", "apart"})
        if (g(name))
            bad(std::string("--") + name
                    + " describes one case: give --src and --dst (interpolate) or --shape (batchnorm)");
    if (g("op") && g("suite")) bad("give --op or --suite to choose a suite, not both");
    if (g("op") && o.op != "interpolate" && o.op != "batchnorm")
        bad("--op " + o.op + " is not one of interpolate, batchnorm");
    const std::string name = g("suite") ? o.suite : g("op") ? o.op : "all";
    std::vector<bench_case> cases = suite(name);
    return g("class") ? select_classes(cases, o.classes, name) : cases;
}

run_config config_of(const cli_options &o) {
    run_config cfg;
    if (o.repeat < 1) bad("--repeat " + std::to_string(o.repeat) + " must be >= 1");
    if (o.warmup < 0) bad("--warmup " + std::to_string(o.warmup) + " must be >= 0");
    if (o.threads < 0) bad("--threads " + std::to_string(o.threads) + " must be >= 0 (0: all cores)");
    cfg.repeat = o.repeat;
    cfg.warmup = o.warmup;
    cfg.fresh_processes = o.repeat;
    if (o.backend == "all") {
        // The backends of this build: no dnnl rows without oneDNN (BPG_WITH_DNNL).
        for (backend_kind k : {backend_kind::dnnl, backend_kind::tbb, backend_kind::ref})
            if (backends::find_backend(k)) cfg.backends.push_back(k);
        cfg.ref_max_elements = ref_max_elements_in_all;
        cfg.onednn_graph = onednn_graph_available();
    } else if (o.backend == "onednn_graph") {
        if (!onednn_graph_available()) bad("--backend onednn_graph: this bpg-bench was built without oneDNN 3.x");
        cfg.onednn_graph = true;
    } else {
        backend_kind k; // "auto" parses to auto_select
        if (!backend_from_string(o.backend, k))
            bad("--backend " + o.backend + " is not one of dnnl, tbb, ref, auto, onednn_graph, all");
        cfg.backends = {k};
    }
    return cfg;
}

// Opened before anything runs, so that a bad path fails at once.
std::ofstream open_json(const std::string &path) {
    std::ofstream f(path);
    if (!f) bad("--json " + path + ": cannot open for writing");
    return f;
}

void write_json(std::ofstream f, const std::string &path, const std::string &doc) {
    f << doc << "\n";
    if (!f.flush()) throw error(status::runtime_error, "--json " + path + ": write failed");
}

int run(const cli_options &o, const given &g) {
    const std::vector<bench_case> cases = cases_of(o, g);
    const run_config cfg = config_of(o);
    if (o.first_call_child) {
        // Nothing of the library runs before the timed compile and execute.
        if (o.backend == "all") bad("--first-call-child needs one --backend");
        set_max_threads(o.threads);
        first_call_child(cases[0], o.backend, cfg);
        return 0;
    }
    // The library checks every case before anything is timed or printed.
    size_t width = 0;
    for (const bench_case &c : cases) {
        build_graph(c);
        width = std::max(width, describe(c).size());
    }
    if (o.list) {
        if (g("json")) {
            const std::string doc = list_json(cases).dump(2);
            if (o.json_path.empty()) std::cout << doc << "\n";
            else write_json(open_json(o.json_path), o.json_path, doc);
            return 0;
        }
        for (const bench_case &c : cases) std::printf("%-13s %s\n", c.case_class.c_str(), describe(c).c_str());
        return 0;
    }
    const bool json_to_stdout = g("json") && o.json_path.empty();
    std::ofstream json_file;
    if (!o.json_path.empty()) json_file = open_json(o.json_path);

    set_max_threads(o.threads);
    const machine_info m = read_machine(get_max_threads());
    std::unique_ptr<table_printer> table;
    if (!json_to_stdout) {
        table = std::make_unique<table_printer>(stdout, width);
        table->header(m, cfg);
    }
    std::vector<case_result> results;
    for (const bench_case &c : cases) {
        results.push_back(run_case(c, cfg));
        if (c.kind == bench_kind::first_call) time_fresh_processes(results.back(), cfg);
        if (table) table->print(results.back());
    }
    const std::vector<class_summary> summary = summarize_classes(results);
    if (table) table->print_summary(summary);
    const std::string doc = to_json(m, cfg, results, summary).dump(2);
    if (json_to_stdout) std::cout << doc << "\n";
    if (json_file.is_open()) write_json(std::move(json_file), o.json_path, doc);
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    // oneDNN's OpenMP workers must not spin while oneTBB (a backend or the
    // streaming kernel) runs next: restart with OMP_WAIT_POLICY=passive.
    bpg::tools::use_passive_openmp(argv);
    cli_options o;
    given g;
    CLI::App app {"bpg-bench: time InterpolateBackprop / BatchNormTrainingBackprop per backend against a "
                  "streaming kernel that moves the same bytes"};
    auto add = [&](const std::string &name, auto &var, const std::string &help) {
        g.opts[name] = app.add_option("--" + name, var, help);
    };
    auto flag = [&](const std::string &name, bool &var, const std::string &help) {
        g.opts[name] = app.add_flag("--" + name, var, help);
    };
    add("op", o.op, "interpolate or batchnorm (default: implied by --src/--dst or --shape)");
    add("mode", o.mode, "interpolate: nearest, linear, bilinear (default) or trilinear");
    add("coord", o.coord, "interpolate: coordinate_transformation_mode (default half_pixel)");
    add("nearest-mode", o.nearest_mode, "interpolate: round_prefer_ceil, round_prefer_floor, floor or ceil");
    add("src", o.src, "interpolate: forward src shape (= diff_src), e.g. 16x64x56x56");
    add("dst", o.dst, "interpolate: forward dst shape (= diff_dst), e.g. 16x64x112x112");
    add("shape", o.shape, "batchnorm: src shape, e.g. 16x64x112x112");
    flag("global-stats", o.global_stats, "batchnorm: use_global_stats");
    add("outputs", o.outputs, "batchnorm: 1 (diff_src) or 3 (also diff_gamma, diff_beta; default)");
    flag("no-gamma", o.no_gamma, "batchnorm: no gamma input (gamma = 1)");
    flag("relu", o.relu, "batchnorm: a ReLUBackprop feeds diff_dst (fused by the library)");
    flag("apart", o.apart, "batchnorm: with --relu, run the two ops as separate partitions");
    add("format", o.format, "NCX (default) or NXC; shapes are given in this order");
    add("dtype", o.dtype, "f32 (default), bf16 or f16");
    add("suite", o.suite, "interpolate, batchnorm or all: the default cases (default all when no case is given)");
    add("class", o.classes, "only the default cases of these classes (names joined by ','; --list shows them)");
    add("backend", o.backend, "dnnl, tbb, ref, auto (dispatch rule), onednn_graph (oneDNN 3.x's own graph partitions) or all "
                               "(default: dnnl, tbb, ref, and onednn_graph when built against oneDNN 3.x)");
    add("repeat", o.repeat, "timed runs per backend (median and min reported; default 10)");
    add("warmup", o.warmup, "untimed runs before them (default 2)");
    add("threads", o.threads, "threads of the backends and the streaming kernel (default 2; 0: all cores)");
    flag("list", o.list, "print the cases that would run (checked by the library), with their class, and exit; "
                         "with --json, as JSON");
    // Internal: the fresh process of a first_call case (first_call.hpp).
    g.opts["first-call-child"] = app.add_flag("--first-call-child", o.first_call_child)->group("");
    g.opts["json"] = app.add_option("--json", o.json_path,
                               "JSON instead of the table on stdout; with FILE, the table on stdout and JSON in FILE")
                             ->expected(0, 1)
                             ->type_name("[FILE]");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        std::cerr << "bpg-bench: error: " << e.what() << " (see --help)\n";
        return 2;
    }
    try {
        return run(o, g);
    } catch (const error &e) {
        std::cerr << "bpg-bench: error: " << e.what() << "\n";
        const bool caller = e.code() != status::out_of_memory && e.code() != status::runtime_error;
        return caller ? 2 : 1;
    } catch (const std::exception &e) {
        std::cerr << "bpg-bench: internal error: " << e.what() << "\n";
        return 1;
    }
}
