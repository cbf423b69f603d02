#include "summary.hpp"

#include <algorithm>

#include "report.hpp"

namespace bpg::bench {

namespace {

// The fastest oneDNN row of the case (dnnl or onednn_graph); null if none ran.
const backend_result *fastest_onednn(const case_result &r) {
    const backend_result *best = nullptr;
    for (const backend_result &b : r.results)
        if (b.ok && !b.apart && (b.backend == "dnnl" || b.backend == "onednn_graph")
                && (!best || b.t.median_ms < best->t.median_ms))
            best = &b;
    return best;
}

} // namespace

double stream_goal(data_type dt) { return dt == data_type::f32 ? 1.3 : 1.5; }

double overhead_us(const case_result &r, const backend_result &b) {
    return b.ok ? (b.t.median_ms - r.stream.median_ms) * 1e3 : 0;
}

std::string goal_check::mark() const {
    if (!applies) return "-";
    if (missed.empty()) return "ok";
    std::string s = "MISS:";
    for (const std::string &m : missed) s += (s.size() > 5 ? "," : "") + m;
    return s;
}

goal_check check_goals(const case_result &r, const backend_result &b) {
    goal_check g;
    g.applies = b.ok && !b.apart && (b.backend == "tbb" || b.backend == "auto");
    if (!g.applies) return g;
    switch (r.c.kind) {
        case bench_kind::overhead:
            if (overhead_us(r, b) >= overhead_goal_us) g.missed.push_back("overhead");
            break;
        case bench_kind::first_call:
            if (b.first_ms >= first_call_goal_ms) g.missed.push_back("first_call");
            if (b.fresh_runs > 0 && b.fresh_first_ms >= first_call_goal_ms) g.missed.push_back("fresh_first_call");
            break;
        case bench_kind::throughput: {
            if (x_stream(r, b) > stream_goal(r.c.dtype)) g.missed.push_back("x_stream");
            const backend_result *onednn = fastest_onednn(r);
            if (onednn && b.t.median_ms >= onednn->t.median_ms) g.missed.push_back("onednn");
        }
    }
    return g;
}

std::vector<class_summary> summarize_classes(const std::vector<case_result> &rs) {
    std::vector<class_summary> out;
    for (const case_result &r : rs)
        for (const backend_result &b : r.results) {
            if (b.apart) continue;
            auto it = std::find_if(out.begin(), out.end(), [&](const class_summary &s) {
                return s.case_class == r.c.case_class && s.backend == b.backend;
            });
            if (it == out.end()) {
                out.push_back(class_summary {});
                it = out.end() - 1;
                it->case_class = r.c.case_class;
                it->backend = b.backend;
                it->kind = r.c.kind;
            }
            class_summary &s = *it;
            ++s.cases;
            if (!b.ok) continue;
            ++s.ran;
            const goal_check g = check_goals(r, b);
            s.goal_cases += g.applies;
            s.goals_met += g.met();
            if (r.c.kind == bench_kind::overhead)
                s.worst_overhead_us = s.ran == 1 ? overhead_us(r, b) : std::max(s.worst_overhead_us, overhead_us(r, b));
            if (r.c.kind == bench_kind::first_call)
                s.worst_first_ms = std::max({s.worst_first_ms, b.first_ms, b.fresh_first_ms});
            if (r.c.kind != bench_kind::throughput) continue;
            if (x_stream(r, b) > s.worst_x_stream) {
                s.worst_x_stream = x_stream(r, b);
                s.worst_x_stream_case = r.description;
            }
            if (x_dnnl(r, b) > s.worst_x_dnnl) {
                s.worst_x_dnnl = x_dnnl(r, b);
                s.worst_x_dnnl_case = r.description;
            }
        }
    // Rows of a class together, classes in the order of their first case.
    std::vector<std::string> order;
    for (const case_result &r : rs)
        if (std::find(order.begin(), order.end(), r.c.case_class) == order.end()) order.push_back(r.c.case_class);
    const auto rank = [&](const class_summary &s) { return std::find(order.begin(), order.end(), s.case_class); };
    std::stable_sort(out.begin(), out.end(),
            [&](const class_summary &a, const class_summary &b) { return rank(a) < rank(b); });
    return out;
}

} // namespace bpg::bench
