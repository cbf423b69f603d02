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
            "median and min of %d runs after %d warm-up runs, interleaved: each round runs, for every backend, the "
            "streaming kernel with non-temporal (stream:nt) and ordinary stores (the faster shown), then the backend; "
            "GB/s = bytes moved / median;\nx stream = median / streaming kernel's median; "
            "x dnnl = median / dnnl's median\n\n",
            cfg.repeat, cfg.warmup);
    std::fprintf(out_, "%-*s  %-9s %10s %10s %8s %9s %8s\n", width_, "case", "backend", "median ms", "min ms",
            "GB/s", "x stream", "x dnnl");
    std::fflush(out_);
}

void table_printer::print(const case_result &r) {
    const char *desc = r.description.c_str();
    for (const backend_result &b : r.results) {
        const std::string name = b.apart ? b.backend + ":apart"
                : b.backend == "auto" && b.ok ? "auto:" + b.ran_on : b.backend;
        if (!b.ok) {
            std::fprintf(out_, "%-*s  %-9s n/a: %s\n", width_, desc, name.c_str(), b.reason.c_str());
            continue;
        }
        std::fprintf(out_, "%-*s  %-9s %10s %10s %8.2f %9.2f", width_, desc, name.c_str(),
                ms_text(b.t.median_ms).c_str(), ms_text(b.t.min_ms).c_str(), gbps(r.bytes, b.t.median_ms),
                x_stream(r, b));
        const double xd = x_dnnl(r, b);
        if (xd > 0) std::fprintf(out_, " %8.2f\n", xd);
        else std::fprintf(out_, " %8s\n", "-");
    }
    std::fprintf(out_, "%-*s  %-9s %10s %10s %8.2f %9.2f %8s\n", width_, desc,
            r.stream_stores_nontemporal ? "stream:nt" : "stream",
            ms_text(r.stream.median_ms).c_str(), ms_text(r.stream.min_ms).c_str(), gbps(r.bytes, r.stream.median_ms),
            1.0, "-");
    for (const backend_result &b : r.results)
        if (b.fusion_gain > 0)
            std::fprintf(out_, "%-*s  %s: fused %.2fx faster than apart (medians of the same rounds)\n", width_, desc,
                    b.backend.c_str(), b.fusion_gain);
    std::fprintf(out_, "\n");
    std::fflush(out_);
}

nlohmann::ordered_json to_json(const machine_info &m, const run_config &cfg, const std::vector<case_result> &rs) {
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
        json jc;
        jc["op"] = to_string(c.op);
        jc["description"] = r.description;
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
        }
        jc["format"] = c.format;
        jc["dtype"] = to_string(c.dtype);
        jc["bytes"] = r.bytes;
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
            results.push_back(std::move(jr));
        }
        jc["results"] = std::move(results);
        cases.push_back(std::move(jc));
    }
    doc["cases"] = std::move(cases);
    return doc;
}

} // namespace bpg::bench
