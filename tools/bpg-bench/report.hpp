// Output of bpg-bench: the machine header, the table (printed case by case
// while the run goes on) and the JSON document (written at the end).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure.hpp"
#include "summary.hpp"

namespace bpg::bench {

struct machine_info {
    std::string cpu;  // "model name" of /proc/cpuinfo
    int cores = 0;    // logical CPUs the OS reports
    int threads = 0;  // threads the backends and the streaming kernel use
    std::string date; // UTC, ISO 8601
    std::string omp_wait_policy; // OMP_WAIT_POLICY (oneDNN runs on OpenMP); empty if unset
};
machine_info read_machine(int threads);

// Ratios of a result: to the streaming kernel of its case and to the dnnl
// result of its case (0 when either is missing).
double x_stream(const case_result &r, const backend_result &b);
double x_dnnl(const case_result &r, const backend_result &b);
double gbps(int64_t bytes, double ms);

class table_printer {
public:
    // desc_width: the widest case description that will be printed.
    table_printer(std::FILE *out, size_t desc_width);
    void header(const machine_info &m, const run_config &cfg);
    void print(const case_result &r); // the case's rows, then its stream row
    void print_summary(const std::vector<class_summary> &s);

private:
    std::FILE *out_;
    int width_;
};

nlohmann::ordered_json to_json(const machine_info &m, const run_config &cfg, const std::vector<case_result> &rs,
        const std::vector<class_summary> &summary);

// --list --json: the cases alone, with the fields they have in to_json (the
// input of bench/torch_suite.py).
nlohmann::ordered_json list_json(const std::vector<bench_case> &cases);

} // namespace bpg::bench
