// Issue 25's goals, checked per result and shown as marks in the report
// (never asserted in tests: they are numbers of a run), and the summary of
// a run per class: the worst ratios of each backend over the class's cases.
#pragma once

#include <string>
#include <vector>

#include "measure.hpp"

namespace bpg::bench {

// The goals. Throughput: median / streaming kernel's median at most
// stream_goal(dtype), and faster than every oneDNN row that ran (dnnl,
// onednn_graph). Overhead: time per call beyond the streaming kernel's.
// First call: the first execute of a freshly compiled partition.
double stream_goal(data_type dt); // 1.3 for f32, 1.5 for bf16 and f16
constexpr double overhead_goal_us = 3;
constexpr double first_call_goal_ms = 1;

// overhead cases: microseconds per call beyond the streaming kernel's (0
// when the row did not run).
double overhead_us(const case_result &r, const backend_result &b);

// The goals concern bpg's own kernels: the rows tbb and auto.
struct goal_check {
    bool applies = false;
    std::vector<std::string> missed; // "x_stream", "onednn", "overhead", "first_call", "fresh_first_call"
    bool met() const { return applies && missed.empty(); }
    std::string mark() const; // "-", "ok" or "MISS:x_stream,onednn"
};
goal_check check_goals(const case_result &r, const backend_result &b);

struct class_summary {
    std::string case_class, backend;
    bench_kind kind = bench_kind::throughput; // of the class's cases
    int cases = 0;                 // cases of the class with this row
    int ran = 0;                   // of which the row ran
    int goal_cases = 0, goals_met = 0;
    double worst_x_stream = 0;     // throughput cases; 0: none ran
    std::string worst_x_stream_case;
    double worst_x_dnnl = 0;       // 0: dnnl ran none of them
    std::string worst_x_dnnl_case;
    double worst_overhead_us = 0;  // overhead cases (may be negative: noise)
    double worst_first_ms = 0;     // first_call cases: in this process or fresh
};

// One entry per class and row (apart rows left out), in the order of the
// classes' first cases and of the rows.
std::vector<class_summary> summarize_classes(const std::vector<case_result> &rs);

} // namespace bpg::bench
