// first_call cases in fresh processes: this tool starts itself again on the
// one case and one row, and the child times the compile and the first
// execute with nothing run before them (the library loaded, nothing warm).
#pragma once

#include <string>
#include <vector>

#include "measure.hpp"

namespace bpg::bench {

// The command-line options that describe c (main's single_case reads them back).
std::vector<std::string> case_options(const bench_case &c);

// For every row of r that ran, cfg.fresh_processes children, each with
// --first-call-child; their medians go into the row's fresh_* fields.
// Throws bpg::error(runtime_error) when a child fails.
void time_fresh_processes(case_result &r, const run_config &cfg);

// The child's side: time_first_call on the one row without warming, printed
// as one JSON object on stdout.
void first_call_child(const bench_case &c, const std::string &row, const run_config &cfg);

} // namespace bpg::bench
