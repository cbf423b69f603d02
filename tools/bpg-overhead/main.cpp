// bpg-overhead: what a tiny partition costs per execute, and what its first
// execute costs (issue 25). Public API only.
//
//   bpg-overhead [--blocks N] [--calls N] [--backends tbb,ref,dnnl] [--case NAME] [--no-fresh]
//   bpg-overhead --fresh CASE BACKEND   (one line: used by the parent run)
//
// Per case and backend: the median over --blocks blocks of the time per call
// of --calls back-to-back executes; the compile and first execute of a
// freshly compiled partition in this process, after other partitions have
// run on every backend ("warm"); and the same as the first thing a fresh
// process does after loading the library ("fresh", this program run again).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "../common/openmp_policy.hpp"
#include "../common/ready_partition.hpp"
#include "../common/run_self.hpp"
#include "bpg/graph.hpp"

namespace {

using namespace bpg;
using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

struct overhead_case {
    const char *name;
    enum { linear, nearest, bn, relu_bn } kind;
    bool nxc;
    dim channels = 1, size = 2; // src is size x size images of `channels` channels
};

// 1x1x2x2 NCX data, or 1x2x2x3 NXC (channels-last, 3 channels): diff_dst is
// 4x4. Then, for comparison, partitions large enough to run parallel tasks.
const overhead_case cases[] = {
        {"interp_linear_ncx", overhead_case::linear, false},
        {"interp_linear_nxc3", overhead_case::linear, true, 3},
        {"interp_nearest_ncx", overhead_case::nearest, false},
        {"interp_nearest_nxc3", overhead_case::nearest, true, 3},
        {"bn_ncx", overhead_case::bn, false},
        {"bn_nxc3", overhead_case::bn, true, 3},
        {"relu_bn_ncx", overhead_case::relu_bn, false},
        {"interp_linear_ncx_8x32", overhead_case::linear, false, 8, 32},
        {"bn_ncx_8x32", overhead_case::bn, false, 8, 32},
};

// n images; the warm-up partitions take n = 2 (another shape).
graph build(const overhead_case &c, dim n) {
    const dim ch = c.channels, h = c.size;
    const dims s = c.nxc ? dims {n, h, h, ch} : dims {n, ch, h, h};
    const dims d = c.nxc ? dims {n, 2 * h, 2 * h, ch} : dims {n, ch, 2 * h, 2 * h}, k {ch};
    auto t = [](size_t id, const dims &shape) { return logical_tensor(id, data_type::f32, shape); };
    const char *format = c.nxc ? "NXC" : "NCX";
    graph g;
    if (c.kind == overhead_case::linear || c.kind == overhead_case::nearest) {
        op o(0, op::kind::InterpolateBackprop, {t(0, s), t(1, d)}, {t(2, s)});
        o.set_attr(op::attr::mode, c.kind == overhead_case::linear ? "linear" : "nearest");
        o.set_attr(op::attr::data_format, format);
        o.set_attr(op::attr::sizes, std::vector<int64_t> {2 * h, 2 * h});
        g.add_op(o);
    } else {
        // ReLU's diff_src feeds BN's diff_dst: one fused partition.
        const bool relu = c.kind == overhead_case::relu_bn;
        if (relu) {
            op r(1, op::kind::ReLUBackprop, {t(10, s), t(11, s)}, {t(1, s)});
            r.set_attr(op::attr::use_dst, false);
            g.add_op(r);
        }
        op o(0, op::kind::BatchNormTrainingBackprop, {t(0, s), t(1, s), t(2, k), t(3, k), t(4, k)},
                {t(5, s), t(6, k), t(7, k)});
        o.set_attr(op::attr::epsilon, 1e-5f).set_attr(op::attr::data_format, format);
        g.add_op(o);
    }
    g.finalize();
    return g;
}

using tools::ready_partition;
using tools::command_output;
using tools::self_executable;

compile_options on(backend_kind b) {
    compile_options o;
    o.backend = b;
    return o;
}

const overhead_case *find_case(const std::string &name) {
    for (const overhead_case &c : cases)
        if (name == c.name) return &c;
    return nullptr;
}

// "compile_us first_us second_us path" of a partition compiled first thing
// in this process.
int fresh(const std::string &case_name, const std::string &backend) {
    const overhead_case *c = find_case(case_name);
    backend_kind b;
    if (!c || !backend_from_string(backend, b)) {
        std::cerr << "bpg-overhead: unknown case or backend\n";
        return 2;
    }
    const ready_partition r(build(*c, 1), on(b));
    const double first = r.run_us(), second = r.run_us();
    std::printf("%.1f %.1f %.1f %s\n", r.compile_us, first, second, r.cp.get_kernel_path().c_str());
    return 0;
}

// The child's first line ("failed" when it printed none).
std::string fresh_line(const std::string &self, const char *case_name, const std::string &backend) {
    int status = 0;
    const std::string out = command_output(self + " --fresh " + case_name + " " + backend + " 2>&1", status);
    const std::string line = out.substr(0, out.find('\n'));
    return line.empty() ? "failed" : line;
}

} // namespace

int main(int argc, char **argv) {
    bpg::tools::use_passive_openmp(argv);
    int blocks = 21, calls = 10000;
    std::string backends = "tbb,ref,dnnl";
    std::vector<std::string> fresh_args;
    std::string only;
    bool no_fresh = false;
    CLI::App app {"bpg-overhead: per-call and first-call time of tiny partitions"};
    app.add_option("--blocks", blocks, "timed blocks per case (median reported; default 21)");
    app.add_option("--calls", calls, "executes per block (default 10000)");
    app.add_option("--backends", backends, "comma-separated backends, auto: the dispatch rule's (default tbb,ref,dnnl)");
    app.add_option("--fresh", fresh_args, "CASE BACKEND: time one first compile and execute, then exit")
            ->expected(2);
    app.add_option("--case", only, "time this case only (default: all)");
    app.add_flag("--no-fresh", no_fresh, "skip the fresh-process columns (for profiling)");
    CLI11_PARSE(app, argc, argv);
    if (!fresh_args.empty()) return fresh(fresh_args[0], fresh_args[1]);
    if (blocks < 1 || calls < 1) {
        std::cerr << "bpg-overhead: error: --blocks >= 1, --calls >= 1\n";
        return 2;
    }
    std::vector<backend_kind> kinds;
    for (std::stringstream ss(backends); ss.good();) {
        std::string name;
        std::getline(ss, name, ',');
        backend_kind b;
        if (!backend_from_string(name, b)) {
            std::cerr << "bpg-overhead: error: unknown backend '" << name << "'\n";
            return 2;
        }
        kinds.push_back(b);
    }
    const std::string self = self_executable();

    // "Warm": every backend has run a partition of another shape already.
    for (backend_kind b : kinds)
        for (const overhead_case &c : cases) try {
                ready_partition(build(c, 2), on(b)).run_us();
            } catch (const error &) {}

    std::printf("%-22s %-9s %9s | %10s %10s | %10s %10s | %s\n", "case", "bknd", "us/call", "warm cmp", "warm 1st",
            "fresh cmp", "fresh 1st", "path");
    for (const overhead_case &c : cases)
        for (backend_kind b : kinds) {
            if (!only.empty() && only != c.name) continue;
            try {
                const ready_partition r(build(c, 1), on(b));
                const double first = r.run_us();
                std::vector<double> per_call;
                for (int k = 0; k < blocks; ++k) {
                    const auto t0 = clock_type::now();
                    for (int i = 0; i < calls; ++i) r.cp.execute(stream(engine()), r.ins, r.outs);
                    per_call.push_back(ready_partition::us_since(t0) / calls);
                }
                double f_cmp = 0, f_first = 0;
                if (!no_fresh) std::sscanf(fresh_line(self, c.name, to_string(b)).c_str(), "%lf %lf", &f_cmp, &f_first);
                const std::string chosen = b == backend_kind::auto_select ? "auto:" + r.cp.get_backend_name() : to_string(b);
                std::printf("%-22s %-9s %9.2f | %10.1f %10.1f | %10.1f %10.1f | %s\n", c.name, chosen.c_str(),
                        median(per_call), r.compile_us, first, f_cmp, f_first, r.cp.get_kernel_path().c_str());
            } catch (const error &e) {
                std::printf("%-22s %-9s n/a (%s)\n", c.name, to_string(b), e.what());
            }
            std::fflush(stdout);
        }
    return 0;
}
