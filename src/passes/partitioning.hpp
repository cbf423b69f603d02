// Pattern passes: group a finalized graph's ops into partitions.
//
// Passes run in a fixed order; each claims ops no earlier pass claimed:
//   1. relu_bwd+bn_bwd: a ReLUBackprop whose output is consumed only by one
//      BatchNormTrainingBackprop, as its input 0 (src: the layout of oneDNN's
//      bn_bwd_relu_bwd_fusion case) or input 1 (diff_dst: the usual training
//      graph, where the ReLU after BN is differentiated first). The
//      intermediate tensor becomes internal to the partition.
//   2. single ops: every op left is a partition of its own.
#pragma once

#include <string>
#include <vector>

#include "bpg/graph.hpp"

namespace bpg::passes {

struct op_group {
    std::string pattern;        // "relu_bwd+bn_bwd", "interpolate_bwd", "bn_bwd", "relu_bwd"
    std::vector<size_t> ops;    // indices into the op list, in execution order
};

// Why a fusion pass did or did not fuse a candidate op (for BPG_VERBOSE=2).
struct fusion_decision {
    std::string pattern;     // the pattern tried, e.g. "relu_bwd+bn_bwd"
    std::vector<size_t> ops; // indices into the op list: the candidate, and its consumer if any
    bool fused = false;
    std::string reason;
};

// ops must be in topological order. decisions, when given, receives one entry
// per candidate of every fusion pass.
std::vector<op_group> partition_ops(const std::vector<op> &ops,
        std::vector<fusion_decision> *decisions = nullptr);
// The pattern name of a partition holding only this op.
const char *single_pattern_name(op::kind k);

} // namespace bpg::passes
