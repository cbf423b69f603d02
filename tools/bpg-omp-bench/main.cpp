// bpg-omp-bench: times a tbb-backend partition right after a busy OpenMP
// parallel region of the calling thread, as it runs inside PyTorch (a torch
// op, then bpg), with runtime tbb_arena and openmp (docs/threading.md).
// OMP_WAIT_POLICY is left as the user has it: unset, libgomp's workers keep
// spinning for a while after each region, which is the case measured.
//
//   bpg-omp-bench [--threads N] [--repeat N] [--omp-ms MS] [--gap-ms MS]
//
// Per case and runtime: the median execute time warm (run twice in a row
// after a pause, the second timed: the host's OpenMP workers asleep) and
// right after the region, and their ratio; then the time per call of a tiny
// partition executed back to back. Results in bench/NOTES.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <omp.h>

#include "../common/ready_partition.hpp"
#include "bpg/graph.hpp"
#include "bpg/threading.hpp"

namespace {

using namespace bpg;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// The work of a host's OpenMP op: every thread of the calling thread's
// default team computes for about `ms`.
volatile double omp_sink = 0;
void busy_openmp_region(double ms) {
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
        const auto t0 = clock_type::now();
        double x = omp_get_thread_num() + 1.0;
        while (ms_since(t0) < ms)
            for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
        total += x;
    }
    omp_sink = omp_sink + total;
}

logical_tensor f32(size_t id, const dims &d) { return logical_tensor(id, data_type::f32, d); }

struct bench_case {
    std::string name;
    graph g;
};

bench_case bn_case(const dims &s) {
    bench_case c {"BN training NCX " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2])
                    + "x" + std::to_string(s[3]),
            graph()};
    const dims k {s[1]};
    op o(0, op::kind::BatchNormTrainingBackprop, {f32(0, s), f32(1, s), f32(2, k), f32(3, k), f32(4, k)},
            {f32(5, s), f32(6, k), f32(7, k)});
    o.set_attr(op::attr::epsilon, 1e-5f).set_attr(op::attr::data_format, "NCX");
    c.g.add_op(o);
    c.g.finalize();
    return c;
}

bench_case bilinear_case(const dims &src) {
    const dims dst {src[0], src[1], 2 * src[2], 2 * src[3]};
    bench_case c {"bilinear 2x NCX " + std::to_string(src[0]) + "x" + std::to_string(src[1]) + "x"
                    + std::to_string(src[2]) + "x" + std::to_string(src[3]),
            graph()};
    op o(0, op::kind::InterpolateBackprop, {f32(0, src), f32(1, dst)}, {f32(2, src)});
    o.set_attr(op::attr::mode, "linear").set_attr(op::attr::data_format, "NCX");
    o.set_attr(op::attr::coordinate_transformation_mode, "half_pixel");
    o.set_attr(op::attr::sizes, std::vector<int64_t> {dst[2], dst[3]});
    c.g.add_op(o);
    c.g.finalize();
    return c;
}

// A tbb partition of c with its buffers.
struct ready_partition : tools::ready_partition {
    ready_partition(const bench_case &c, int threads, threading_runtime r)
        : tools::ready_partition(c.g, [&] {
              compile_options o;
              o.backend = backend_kind::tbb;
              o.max_threads = threads;
              o.runtime = r;
              return o;
          }()) {}
    double run_ms() const { return run_us() / 1000; }
};

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
            return line.substr(line.find(':') + 2);
    return "unknown";
}

} // namespace

int main(int argc, char **argv) {
    int threads = 0, repeat = 15;
    double omp_ms = 2.0, gap_ms = 30.0;
    CLI::App app {"bpg-omp-bench: a tbb partition right after a busy OpenMP region, runtime tbb_arena vs openmp"};
    app.add_option("--threads", threads, "max_threads of the partitions (default 0: bpg::get_max_threads())");
    app.add_option("--repeat", repeat, "timed runs of each kind (median reported; default 15)");
    app.add_option("--omp-ms", omp_ms, "length of the busy OpenMP region before each run (default 2)");
    app.add_option("--gap-ms", gap_ms, "pause before each warm pair of runs, so that the OpenMP workers sleep (default 30)");
    CLI11_PARSE(app, argc, argv);
    if (threads < 0 || repeat < 1 || omp_ms < 0 || gap_ms < 0) {
        std::cerr << "bpg-omp-bench: error: --threads >= 0, --repeat >= 1, --omp-ms >= 0, --gap-ms >= 0\n";
        return 2;
    }
    const int n = threads > 0 ? threads : get_max_threads();
    const char *policy = std::getenv("OMP_WAIT_POLICY");
    std::printf("cpu: %s, %u logical cores; max_threads %d; OpenMP team %d; OMP_WAIT_POLICY %s\n", cpu_model().c_str(),
            std::thread::hardware_concurrency(), n, omp_get_max_threads(), policy ? policy : "(unset)");
    std::printf("%-34s %-10s %10s %12s %7s\n", "case", "runtime", "warm ms", "after omp ms", "ratio");
    try {
        for (const bench_case &c : {bilinear_case({8, 32, 56, 56}), bn_case({8, 64, 56, 56})}) {
            const threading_runtime rts[] = {threading_runtime::tbb_arena, threading_runtime::openmp};
            std::vector<ready_partition> parts;
            for (threading_runtime r : rts) parts.emplace_back(c, n, r);
            std::vector<double> alone[2], after[2];
            // Interleaved rounds, so that a drift of the machine weighs on both
            // runtimes alike; the first round warms up.
            for (int round = 0; round <= repeat; ++round)
                for (int k = 0; k < 2; ++k) {
                    // Warm: the host's OpenMP workers asleep, the partition's own
                    // threads just used (the first run of the pair wakes them).
                    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(gap_ms));
                    parts[size_t(k)].run_ms();
                    const double a = parts[size_t(k)].run_ms();
                    busy_openmp_region(omp_ms);
                    const double b = parts[size_t(k)].run_ms();
                    if (round == 0) continue;
                    alone[k].push_back(a);
                    after[k].push_back(b);
                }
            for (int k = 0; k < 2; ++k) {
                const double a = median(alone[k]), b = median(after[k]);
                std::printf("%-34s %-10s %10.3f %12.3f %7.2f\n", c.name.c_str(), to_string(rts[k]), a, b, b / a);
            }
        }
        // The cost of a call itself: a tiny partition executed back to back.
        std::printf("\n%-34s %-10s %10s\n", "per call, back to back", "runtime", "us/call");
        const bench_case tiny = bn_case({2, 3, 4, 4});
        for (threading_runtime r : {threading_runtime::tbb_arena, threading_runtime::openmp}) {
            const ready_partition part(tiny, n, r);
            std::vector<double> us;
            for (int round = 0; round < 7; ++round) {
                constexpr int calls = 20000;
                const auto t0 = clock_type::now();
                for (int i = 0; i < calls; ++i) part.run_ms();
                us.push_back(ms_since(t0) * 1000 / calls);
            }
            std::printf("%-34s %-10s %10.2f\n", tiny.name.c_str(), to_string(r), median(us));
        }
    } catch (const error &e) {
        std::cerr << "bpg-omp-bench: error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
