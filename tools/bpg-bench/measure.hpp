// Running one case: compile the case's graph for each requested backend,
// execute it on 64-byte aligned, deterministically filled buffers, time each
// execute, and time the streaming kernel on the same buffers in the same run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_case.hpp"

namespace bpg::bench {

struct timing {
    double median_ms = 0, min_ms = 0;
};

// The median (mean of the two middle values for an even count) and minimum.
timing summarize(std::vector<double> ms);

struct run_config {
    // Backends to try, in report order. auto_select means the library's
    // dispatch rule (reported as "auto", with the backend it chose).
    std::vector<backend_kind> backends;
    // Also time oneDNN Graph's own partitions of the case (row onednn_graph,
    // after the backends; onednn_graph_backend.hpp).
    bool onednn_graph = false;
    // The reference backend runs only cases whose largest tensor has at most
    // this many elements, unless it was asked for by name (it is an f64,
    // any-strides implementation: seconds per run on the suite's shapes).
    int64_t ref_max_elements = -1; // -1: no limit
    int warmup = 2, repeat = 10;
    // first_call cases: fresh processes (this tool run again on the one
    // case) that time the first execute per backend; 0: none.
    int fresh_processes = 0;
};

// overhead cases: calls per timed block, and timed blocks per `repeat`
// (default 10 x 10 blocks of 100: 10^4 calls per backend).
constexpr int overhead_calls_per_block = 100;
constexpr int overhead_blocks_per_repeat = 10;

struct backend_result {
    std::string backend;  // "dnnl", "tbb", "ref" or "auto"
    std::string ran_on;   // the backend that ran (differs from backend only for auto)
    bool ok = false;      // false: "n/a"
    std::string reason;   // why n/a
    timing t;
    // A fused case (ReLUBackprop -> BN) also runs its two ops as separate
    // partitions on each backend that ran it fused, in the same rounds: this
    // is that run, and fusion_gain = its median / the fused run's median.
    bool apart = false;
    double fusion_gain = 0;
    // Every timed run in round order, and the yardstick's run (the way of
    // storing that was faster) right before each: the raw data behind the
    // medians, paired round by round.
    std::vector<double> runs_ms, stream_before_ms;
    // first_call cases (0: not measured): the compile and the first execute
    // in this process, after a partition of another shape ran once on the
    // same backend; and the medians over fresh processes doing only that.
    double compile_ms = 0, first_ms = 0;
    double fresh_compile_ms = 0, fresh_first_ms = 0;
    int fresh_runs = 0;
};

struct case_result {
    bench_case c;
    std::string description;
    int64_t bytes = 0;
    // The streaming kernel with each way of storing (`repeat` runs before
    // each backend's runs, one by one: stream_runs in all), and the faster one.
    timing stream_regular, stream_nontemporal, stream;
    bool stream_stores_nontemporal = false;
    int stream_runs = 0;
    // Executes per timed run (overhead cases: a block; times are per call).
    int calls_per_run = 1;
    std::vector<backend_result> results;
};

// Throws bpg::error when the library rejects the case (a caller error) or a
// backend fails at run time; an unimplemented backend is a result, not an error.
case_result run_case(const bench_case &c, const run_config &cfg);

// The names of the rows cfg asks for, in report order ("dnnl", ..., "onednn_graph").
std::vector<std::string> row_names(const run_config &cfg);

// A first_call measurement of one row: compile the case on fresh buffers and
// time that and the first execute. With warm, a partition of another shape
// (N + 1) runs once on the same row first: the library is loaded and warm,
// but nothing of this shape is. ok false: the row cannot run it (reason).
struct first_call_times {
    bool ok = false;
    std::string reason;
    double compile_ms = 0, first_ms = 0;
};
first_call_times time_first_call(const bench_case &c, const std::string &row, bool warm, const run_config &cfg);

} // namespace bpg::bench
