// Builds, compiles and runs a BatchNormTrainingBackprop (optionally fed by a
// ReLUBackprop) through the public API on a chosen backend.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bpg/graph.hpp"

namespace bpg::test {

struct bn_case {
    dims shape;                       // src shape
    dims stat_shape;                  // {C} or rank-matched
    dims stat_strides;                // empty: dense
    bool nxc = false;                 // data_format
    dims data_strides;                // empty: dense
    data_type dt = data_type::f32;
    data_type stat_dt = data_type::f32;
    float epsilon = 1e-3f;
    bool global_stats = false, gamma = true, three_outputs = true;
    int relu = -1;                    // -1 none; 0 or 1: ReLUBackprop feeds that BN input
    bool misaligned = false;          // buffers start 4 bytes past a 64-byte boundary (else on one)
    std::string name() const;
};

// Inputs by tensor id (values as f32, C order): src 0, diff_dst 1, mean 2,
// variance 3, gamma 4; with relu: relu input 10, relu diff_dst 11 (and the
// BN input it feeds is its output). Deterministic from seed; variances > 0.
std::map<size_t, std::vector<float>> bn_inputs(const bn_case &c, uint32_t seed);

// The case's ops: [ReLUBackprop,] BatchNormTrainingBackprop, tensor ids as
// below; and its (fused) partition compiled for backend b.
std::vector<op> bn_case_ops(const bn_case &c);
compiled_partition compile_bn_case(const bn_case &c, backend_kind b);
compiled_partition compile_bn_case(const bn_case &c, const compile_options &opts);

// Outputs by id: diff_src 5, diff_gamma 6, diff_beta 7 (f32, C order).
// read_diff_src = false skips copying diff_src back (huge tests).
std::map<size_t, std::vector<float>> run_bn(const bn_case &c, backend_kind b, const std::map<size_t, std::vector<float>> &in,
        bool fused = true, bool read_diff_src = true);

// Expects tbb's outputs within the kernel tolerance of the reference's:
// 2e-5 of the largest magnitude, plus the rounding of a 16-bit diff_src or
// statistics dtype (gtest failures, at most 3 per output).
void expect_bn_close(const std::map<size_t, std::vector<float>> &got, const std::map<size_t, std::vector<float>> &want,
        const bn_case &c);

} // namespace bpg::test
