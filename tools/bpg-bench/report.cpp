#include "report.hpp"

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include "bpg/version.hpp"

namespace bpg::bench {

namespace {

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) break;
        const size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "unknown" : line.substr(start);
    }
    return "unknown";
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm {};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string version_string() {
    const version_info v = version();
    return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

const backend_result *find_dnnl(const case_result &r) {
    for (const backend_result &b : r.results)
        if (b.ok && b.backend == "dnnl") return &b;
    return nullptr;
}

// Milliseconds with three decimals; small values (tiny test cases) keep
// three significant digits instead of showing as 0.000.
std::string ms_text(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ms >= 0.1 || ms == 0 ? "%.3f" : "%.3g", ms);
    return buf;
}

// A number, or null when it does not exist (0 means "not measured" here).
nlohmann::ordered_json number_or_null(double v) { return v > 0 ? nlohmann::ordered_json(v) : nullptr; }

// Width of the class column.
constexpr int class_width = 13;

nlohmann::ordered_json case_fields(const bench_case &c) {
    using json = nlohmann::ordered_json;
    json jc;
    jc["op"] = to_string(c.op);
    jc["class"] = c.case_class;
    jc["kind"] = to_string(c.kind);
    jc["description"] = describe(c);
    if (c.op == bench_op::interpolate) {
        jc["mode"] = c.mode;
        jc["coord"] = c.coord;
        jc["nearest_mode"] = c.nearest_mode.empty() ? json(nullptr) : json(c.nearest_mode);
        jc["src"] = c.src;
        jc["dst"] = c.dst;
    } else {
        jc["shape"] = c.shape;
        jc["global_stats"] = c.global_stats;
        jc["outputs"] = c.outputs;
        jc["gamma"] = c.gamma;
        jc["relu"] = c.relu;
        jc["apart"] = c.apart;
    }
    jc["format"] = c.format;
    jc["dtype"] = to_string(c.dtype);
    jc["bytes"] = bytes_moved(c);
    return jc;
}

} // namespace

machine_info read_machine(int threads) {
    machine_info m;
    m.cpu = cpu_model();
    m.cores = int(std::thread::hardware_concurrency());
    m.threads = threads;
    m.date = utc_now();
    const char *policy = std::getenv("OMP_WAIT_POLICY");
    m.omp_wait_policy = policy ? policy : "";
    return m;
}

double x_stream(const case_result &r, const backend_result &b) {
    return b.ok && r.stream.median_ms > 0 ? b.t.median_ms / r.stream.median_ms : 0;
}

double x_dnnl(const case_result &r, const backend_result &b) {
    const backend_result *d = find_dnnl(r);
    return b.ok && d && d->t.median_ms > 0 ? b.t.median_ms / d->t.median_ms : 0;
}

double gbps(int64_t bytes, double ms) { return ms > 0 ? double(bytes) / (ms * 1e6) : 0; }

table_printer::table_printer(std::FILE *out, size_t desc_width)
    : out_(out), width_(int(std::max<size_t>(desc_width, 4))) {}

void table_printer::header(const machine_info &m, const run_config &cfg) {
    std::fprintf(out_, "bpg-bench (backprop-graph %s): %s, %d cores, %d threads used, %s, OMP_WAIT_POLICY=%s\n",
            version_string().c_str(), m.cpu.c_str(), m.cores, m.threads, m.date.c_str(),
            m.omp_wait_policy.empty() ? "(unset)" : m.omp_wait_policy.c_str());
    std::fprintf(out_,
            "median and min of %d runs after %d warm-up runs, a block of rounds per backend: each round runs the "
            "streaming kernel with non-temporal (stream:nt) and ordinary stores (the faster shown), then the backend; "
            "GB/s = bytes moved / median;\nx stream = median / streaming kernel's median; "
            "x dnnl = median / dnnl's median\n\n",
            cfg.repeat, cfg.warmup);
    std::fprintf(out_,
            "goal (tbb and auto rows): x stream <= %.1f (f32) or %.1f (bf16, f16) and faster than every oneDNN row; "
            "per call cases: < %.0f us per call over the streaming kernel; first call: < %.0f ms\n\n",
            stream_goal(data_type::f32), stream_goal(data_type::bf16), overhead_goal_us, first_call_goal_ms);
    std::fprintf(out_, "%-*s %-*s  %-9s %10s %10s %8s %9s %8s  %s\n", class_width, "class", width_, "case", "backend",
            "median ms", "min ms", "GB/s", "x stream", "x dnnl", "goal");
    std::fflush(out_);
}

void table_printer::print(const case_result &r) {
    const char *cls = r.c.case_class.c_str(), *desc = r.description.c_str();
    for (const backend_result &b : r.results) {
        const std::string name = b.apart ? b.backend + ":apart"
                : b.backend == "auto" && b.ok ? "auto:" + b.ran_on : b.backend;
        if (!b.ok) {
            std::fprintf(out_, "%-*s %-*s  %-9s n/a: %s\n", class_width, cls, width_, desc, name.c_str(),
                    b.reason.c_str());
            continue;
        }
        std::fprintf(out_, "%-*s %-*s  %-9s %10s %10s %8.2f %9.2f", class_width, cls, width_, desc, name.c_str(),
                ms_text(b.t.median_ms).c_str(), ms_text(b.t.min_ms).c_str(), gbps(r.bytes, b.t.median_ms),
                x_stream(r, b));
        const double xd = x_dnnl(r, b);
        if (xd > 0) std::fprintf(out_, " %8.2f", xd);
        else std::fprintf(out_, " %8s", "-");
        std::fprintf(out_, "  %s\n", check_goals(r, b).mark().c_str());
    }
    std::fprintf(out_, "%-*s %-*s  %-9s %10s %10s %8.2f %9.2f %8s\n", class_width, cls, width_, desc,
            r.stream_stores_nontemporal ? "stream:nt" : "stream",
            ms_text(r.stream.median_ms).c_str(), ms_text(r.stream.min_ms).c_str(), gbps(r.bytes, r.stream.median_ms),
            1.0, "-");
    for (const backend_result &b : r.results) {
        if (b.fusion_gain > 0)
            std::fprintf(out_, "%-*s %-*s  %s: fused %.2fx faster than apart (medians of the same rounds)\n",
                    class_width, cls, width_, desc, b.backend.c_str(), b.fusion_gain);
        if (!b.ok || b.apart) continue;
        if (r.c.kind == bench_kind::overhead)
            std::fprintf(out_, "%-*s %-*s  %s: %.2f us per call, %.2f us over the streaming kernel's %.2f "
                    "(median of %d blocks of %d calls)\n", class_width, cls, width_, desc, b.backend.c_str(),
                    b.t.median_ms * 1e3, overhead_us(r, b), r.stream.median_ms * 1e3, int(b.runs_ms.size()),
                    r.calls_per_run);
        if (r.c.kind == bench_kind::first_call) {
            std::fprintf(out_, "%-*s %-*s  %s: first execute %.3f ms (compile %.3f ms) after another shape ran",
                    class_width, cls, width_, desc, b.backend.c_str(), b.first_ms, b.compile_ms);
            if (b.fresh_runs > 0)
                std::fprintf(out_, "; fresh process: %.3f ms (compile %.3f ms), median of %d", b.fresh_first_ms,
                        b.fresh_compile_ms, b.fresh_runs);
            std::fprintf(out_, "\n");
        }
    }
    std::fprintf(out_, "\n");
    std::fflush(out_);
}

void table_printer::print_summary(const std::vector<class_summary> &summary) {
    std::fprintf(out_, "per class: the worst x stream and x dnnl of each backend over the class's cases "
                       "(per call: the worst us over the streaming kernel; first call: the worst ms), "
                       "and the cases meeting the goal\n");
    std::fprintf(out_, "%-*s %-13s %6s %9s %8s %9s  %s\n", class_width, "class", "backend", "ran", "worst",
            "x dnnl", "goal met", "worst x stream case");
    for (const class_summary &s : summary) {
        char ran[32], goal[32], worst[32];
        std::snprintf(ran, sizeof ran, "%d/%d", s.ran, s.cases);
        std::snprintf(goal, sizeof goal, s.goal_cases ? "%d/%d" : "-", s.goals_met, s.goal_cases);
        if (s.ran && s.kind == bench_kind::overhead) std::snprintf(worst, sizeof worst, "%.2f us", s.worst_overhead_us);
        else if (s.ran && s.kind == bench_kind::first_call) std::snprintf(worst, sizeof worst, "%.3f ms", s.worst_first_ms);
        else std::snprintf(worst, sizeof worst, s.worst_x_stream > 0 ? "%.2f" : "-", s.worst_x_stream);
        std::fprintf(out_, "%-*s %-13s %6s %9s", class_width, s.case_class.c_str(), s.backend.c_str(), ran, worst);
        if (s.worst_x_dnnl > 0) std::fprintf(out_, " %8.2f", s.worst_x_dnnl);
        else std::fprintf(out_, " %8s", "-");
        std::fprintf(out_, " %9s  %s\n", goal, s.worst_x_stream_case.c_str());
    }
    std::fflush(out_);
}

nlohmann::ordered_json to_json(const machine_info &m, const run_config &cfg, const std::vector<case_result> &rs,
        const std::vector<class_summary> &summary) {
    using json = nlohmann::ordered_json;
    json doc;
    doc["tool"] = "bpg-bench";
    doc["version"] = version_string();
    doc["machine"] = {{"cpu", m.cpu}, {"cores", m.cores}};
    doc["omp_wait_policy"] = m.omp_wait_policy.empty() ? json(nullptr) : json(m.omp_wait_policy);
    doc["date"] = m.date;
    doc["threads"] = m.threads;
    doc["repeat"] = cfg.repeat;
    doc["warmup"] = cfg.warmup;
    json cases = json::array();
    for (const case_result &r : rs) {
        const bench_case &c = r.c;
        json jc = case_fields(c);
        jc["calls_per_run"] = r.calls_per_run;
        jc["stream_ms"] = r.stream.median_ms;
        jc["stream_min_ms"] = r.stream.min_ms;
        jc["stream_runs"] = r.stream_runs;
        jc["stream_stores"] = r.stream_stores_nontemporal ? "nontemporal" : "regular";
        jc["stream_regular_ms"] = r.stream_regular.median_ms;
        jc["stream_nontemporal_ms"] = r.stream_nontemporal.median_ms;
        jc["stream_gbps"] = gbps(r.bytes, r.stream.median_ms);
        json results = json::array();
        for (const backend_result &b : r.results) {
            json jr;
            jr["backend"] = b.backend;
            if (c.relu && !c.apart) {
                jr["apart"] = b.apart;
                jr["fusion_gain"] = b.apart ? number_or_null(b.fusion_gain) : json(nullptr);
            }
            jr["status"] = b.ok ? "ok" : "n/a";
            jr["reason"] = b.ok ? json(nullptr) : json(b.reason);
            jr["ran_on"] = b.ok ? json(b.ran_on) : json(nullptr);
            jr["median_ms"] = b.ok ? json(b.t.median_ms) : json(nullptr);
            jr["min_ms"] = b.ok ? json(b.t.min_ms) : json(nullptr);
            jr["runs_ms"] = b.runs_ms;
            jr["stream_before_ms"] = b.stream_before_ms;
            jr["gbps"] = b.ok ? number_or_null(gbps(r.bytes, b.t.median_ms)) : json(nullptr);
            jr["x_stream"] = number_or_null(x_stream(r, b));
            jr["x_dnnl"] = number_or_null(x_dnnl(r, b));
            // Per call beyond the streaming kernel: may be negative (noise).
            if (c.kind == bench_kind::overhead) jr["overhead_us"] = b.ok ? json(overhead_us(r, b)) : json(nullptr);
            if (c.kind == bench_kind::first_call) {
                jr["compile_ms"] = number_or_null(b.compile_ms);
                jr["first_ms"] = number_or_null(b.first_ms);
                jr["fresh_compile_ms"] = number_or_null(b.fresh_compile_ms);
                jr["fresh_first_ms"] = number_or_null(b.fresh_first_ms);
                jr["fresh_runs"] = b.fresh_runs;
            }
            const goal_check g = check_goals(r, b);
            jr["goal"] = g.applies ? json({{"met", g.met()}, {"missed", g.missed}}) : json(nullptr);
            results.push_back(std::move(jr));
        }
        jc["results"] = std::move(results);
        cases.push_back(std::move(jc));
    }
    doc["cases"] = std::move(cases);
    json classes = json::array();
    for (const class_summary &s : summary)
        classes.push_back({{"class", s.case_class}, {"backend", s.backend}, {"cases", s.cases}, {"ran", s.ran},
                {"worst_x_stream", number_or_null(s.worst_x_stream)},
                {"worst_x_stream_case", s.worst_x_stream_case.empty() ? json(nullptr) : json(s.worst_x_stream_case)},
                {"worst_x_dnnl", number_or_null(s.worst_x_dnnl)},
                {"worst_x_dnnl_case", s.worst_x_dnnl_case.empty() ? json(nullptr) : json(s.worst_x_dnnl_case)},
                {"worst_overhead_us", s.ran && s.kind == bench_kind::overhead ? json(s.worst_overhead_us) : json(nullptr)},
                {"worst_first_ms", number_or_null(s.worst_first_ms)},
                {"goal_cases", s.goal_cases}, {"goals_met", s.goals_met}});
    doc["classes"] = std::move(classes);
    return doc;
}

nlohmann::ordered_json list_json(const std::vector<bench_case> &cases) {
    nlohmann::ordered_json doc;
    doc["tool"] = "bpg-bench";
    doc["version"] = version_string();
    doc["cases"] = nlohmann::ordered_json::array();
    for (const bench_case &c : cases) doc["cases"].push_back(case_fields(c));
    return doc;
}

} // namespace bpg::bench
