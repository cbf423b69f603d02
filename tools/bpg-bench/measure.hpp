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
};

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
    std::vector<backend_result> results;
};

// Throws bpg::error when the library rejects the case (a caller error) or a
// backend fails at run time; an unimplemented backend is a result, not an error.
case_result run_case(const bench_case &c, const run_config &cfg);

} // namespace bpg::bench
