// The default suites: the cases whose numbers are the project's performance
// targets (issue 3's InterpolateBackprop table and issue 4's
// BatchNormTrainingBackprop table, plus issue 25's shape classes around
// them: short rows, batch 1, 1-D, non-integer scales, ...). Every case has a
// class (bench_case::case_class) that the report sums up by.
#pragma once

#include <string>
#include <vector>

#include "bench_case.hpp"

namespace bpg::bench {

std::vector<bench_case> interpolate_suite();
std::vector<bench_case> batchnorm_suite();
// name: interpolate, batchnorm or all; throws bpg::error otherwise.
std::vector<bench_case> suite(const std::string &name);

// The class names of the suite "all", in the order of their first case.
std::vector<std::string> suite_classes();

// The cases of `cases` whose class is in `list` (names joined by ','):
// throws bpg::error(invalid_argument) naming an unknown class, or when no
// case of the suite `suite_name` is left.
std::vector<bench_case> select_classes(const std::vector<bench_case> &cases, const std::string &list,
        const std::string &suite_name);

} // namespace bpg::bench
