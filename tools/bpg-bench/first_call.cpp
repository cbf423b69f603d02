#include "first_call.hpp"

#include <iostream>

#include <nlohmann/json.hpp>

#include "../common/run_self.hpp"
#include "bpg/threading.hpp"

namespace bpg::bench {

namespace {

std::string self_path() {
    const std::string self = tools::self_executable();
    if (self.empty()) throw error(status::runtime_error, "first call: cannot read /proc/self/exe");
    return self;
}

// Single quotes for the shell of popen (paths and names hold no quote).
std::string shell_quoted(const std::string &s) { return "'" + s + "'"; }

// One child's stdout, parsed; throws naming the command when it fails.
nlohmann::json run_child(const std::string &cmd) {
    int rc = 0;
    const std::string out = tools::command_output(cmd, rc);
    if (rc == -1) throw error(status::runtime_error, "first call: cannot start " + cmd);
    const nlohmann::json doc = nlohmann::json::parse(out, nullptr, false);
    if (rc != 0 || !doc.is_object())
        throw error(status::runtime_error, "first call: child failed (exit status " + std::to_string(rc) + "): " + cmd);
    return doc;
}

} // namespace

std::vector<std::string> case_options(const bench_case &c) {
    std::vector<std::string> o {"--op", to_string(c.op), "--format", c.format, "--dtype", to_string(c.dtype)};
    if (c.op == bench_op::interpolate) {
        for (const std::string &s : {std::string("--mode"), c.mode, std::string("--coord"), c.coord,
                     std::string("--src"), shape_string(c.src), std::string("--dst"), shape_string(c.dst)})
            o.push_back(s);
        if (!c.nearest_mode.empty()) o.insert(o.end(), {"--nearest-mode", c.nearest_mode});
        return o;
    }
    o.insert(o.end(), {"--shape", shape_string(c.shape), "--outputs", std::to_string(c.outputs)});
    if (c.global_stats) o.push_back("--global-stats");
    if (!c.gamma) o.push_back("--no-gamma");
    if (c.relu) o.push_back("--relu");
    if (c.apart) o.push_back("--apart");
    return o;
}

void time_fresh_processes(case_result &r, const run_config &cfg) {
    if (cfg.fresh_processes <= 0) return;
    std::string cmd = shell_quoted(self_path());
    for (const std::string &o : case_options(r.c)) cmd += " " + shell_quoted(o);
    cmd += " --threads " + std::to_string(get_max_threads()) + " --first-call-child --backend ";
    for (backend_result &b : r.results) {
        if (!b.ok || b.apart) continue;
        std::vector<double> compile, first;
        for (int i = 0; i < cfg.fresh_processes; ++i) {
            const nlohmann::json doc = run_child(cmd + shell_quoted(b.backend));
            if (!doc.contains("first_ms"))
                throw error(status::runtime_error, "first call: a fresh process could not run " + b.backend
                                + " where this one did: " + doc.value("reason", std::string("no reason")));
            compile.push_back(doc.at("compile_ms").get<double>());
            first.push_back(doc.at("first_ms").get<double>());
        }
        b.fresh_compile_ms = summarize(compile).median_ms;
        b.fresh_first_ms = summarize(first).median_ms;
        b.fresh_runs = cfg.fresh_processes;
    }
}

void first_call_child(const bench_case &c, const std::string &row, const run_config &cfg) {
    const first_call_times t = time_first_call(c, row, false, cfg);
    nlohmann::ordered_json doc;
    if (t.ok) {
        doc["compile_ms"] = t.compile_ms;
        doc["first_ms"] = t.first_ms;
    } else {
        doc["reason"] = t.reason;
    }
    std::cout << doc.dump() << "\n";
}

} // namespace bpg::bench
