// The default suites: the cases whose numbers are the project's performance
// targets (issue 3's InterpolateBackprop table and issue 4's
// BatchNormTrainingBackprop table, plus the dtypes, coordinate modes and
// shapes around them).
#pragma once

#include <string>
#include <vector>

#include "bench_case.hpp"

namespace bpg::bench {

std::vector<bench_case> interpolate_suite();
std::vector<bench_case> batchnorm_suite();
// name: interpolate, batchnorm or all; throws bpg::error otherwise.
std::vector<bench_case> suite(const std::string &name);

} // namespace bpg::bench
