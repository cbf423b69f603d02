// One benchmark case: an InterpolateBackprop or a BatchNormTrainingBackprop
// problem, described by the options of the command line, and the one-op
// graph that computes it (built through the public API only, so the numbers
// are what a user of the library gets).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bpg/graph.hpp"

namespace bpg::bench {

enum class bench_op { interpolate, batchnorm };
const char *to_string(bench_op o);

// What a case measures. throughput: one execute per timed run, against the
// streaming kernel. overhead: a tiny partition, timed in blocks of many
// calls; what counts is the time per call beyond the streaming kernel's.
// first_call: the first execute of a freshly compiled partition.
enum class bench_kind { throughput, overhead, first_call };
const char *to_string(bench_kind k);

struct bench_case {
    bench_op op = bench_op::interpolate;
    bench_kind kind = bench_kind::throughput;
    // The shape class of a suite case ("short_rows", "1d", ...): the report
    // sums up the worst ratios per class. A command-line case has "cli".
    std::string case_class = "cli";
    std::string format = "NCX";
    data_type dtype = data_type::f32;

    // InterpolateBackprop: shapes of the forward src and dst (diff_src has
    // src's shape, diff_dst dst's), in the order of `format`.
    std::string mode = "bilinear";
    std::string coord = "half_pixel";
    std::string nearest_mode; // empty: the library's default
    dims src, dst;

    // BatchNormTrainingBackprop.
    dims shape;
    bool global_stats = false;
    bool gamma = true;
    int outputs = 3; // 1: diff_src only; 3: also diff_gamma and diff_beta
    // A ReLUBackprop feeding BN's diff_dst (the usual training graph): run as
    // the library's fused partition, or `apart` (partition_policy::debug).
    bool relu = false;
    bool apart = false;
};

// "16x64x56x56" -> {16, 64, 56, 56}. Throws bpg::error(invalid_argument)
// naming `option` when the text is not positive integers joined by 'x'.
dims parse_shape(const std::string &text, const std::string &option);
std::string shape_string(const dims &d);
int64_t element_count(const dims &d);

// The tool's own checks, made before the library sees the case so that a
// mistyped command line gets a message in the command line's terms (the
// library then checks everything else when the op is added to a graph).
void validate(const bench_case &c);

// One line, e.g. "interp bilinear NCX f32 16x64x56x56->16x64x112x112".
std::string describe(const bench_case &c);

// Bytes a kernel that reaches the memory bound must move (see bench/README.md;
// with a ReLUBackprop in front, those of the BN alone: the yardstick stays
// the BN's, and the fused/apart pair of rows is what to compare):
// interpolate: diff_dst read once + diff_src written once;
// batchnorm training: src and diff_dst read twice (reduce, then update) +
// diff_src written once; global stats: src and diff_dst read once (src only
// when diff_gamma is asked for) + diff_src written once. Statistics and
// per-channel vectors are left out (a few KB).
int64_t bytes_moved(const bench_case &c);

// Element count of the largest tensor of the case.
int64_t largest_tensor_elements(const bench_case &c);

// The case as a finalized one-op graph, with the concrete logical tensors of
// its inputs and outputs (dense, row-major in the order of the given shapes).
struct case_graph {
    graph g;
    std::vector<logical_tensor> inputs, outputs;
};
case_graph build_graph(const bench_case &c);

} // namespace bpg::bench
