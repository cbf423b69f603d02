// Every kind of partition (each op alone, BN's variants, ReLU fused into BN's
// src or diff_dst) built over one data shape, with buffers for all its ports:
// for tests that run every kind on every backend (zero-size tensors,
// allocation faults).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bpg/graph.hpp"

namespace bpg::test {

enum class partition_kind {
    interpolate_nearest,
    interpolate_linear,
    relu,
    bn,              // diff_src, diff_gamma, diff_beta
    bn_global_stats, // use_global_stats, three outputs
    bn_diff_src,     // one output
    relu_into_bn_src,
    relu_into_bn_diff_dst,
};
const std::vector<partition_kind> &all_partition_kinds();
std::string name_of(partition_kind k);
bool is_interpolate(partition_kind k);

struct kind_case {
    partition_kind kind = partition_kind::bn;
    dims src;          // rank 4: N, C, H, W (NCX) or N, H, W, C (NXC)
    bool nxc = false;
    data_type dt = data_type::f32; // data, and BN's statistics
    // Interpolate: diff_dst in memory order N, C, W, H, so that neither C nor
    // W has stride 1 (the tbb backend copies it to a dense layout).
    bool transposed_diff_dst = false;
};
std::string name_of(const kind_case &c);

// The graph of c: one op, or ReLU + BN (one fused partition). Interpolate's
// diff_dst has 2H and W + 1, given by the `sizes` attribute.
graph build_graph(const kind_case &c);
// Its one partition compiled on backend b.
compiled_partition compile_case(const kind_case &c, backend_kind b);

// Buffers of every port of a compiled partition. An empty tensor gets a null
// data pointer; inputs hold values in [0.5, 1.5); outputs hold `sentinel` in
// every byte until a run writes them.
class case_buffers {
public:
    case_buffers(const compiled_partition &cp, uint32_t seed, uint8_t sentinel);
    case_buffers(const case_buffers &) = delete;
    case_buffers &operator=(const case_buffers &) = delete;
    void execute(const compiled_partition &cp);
    void reset_outputs(); // every byte back to the sentinel
    // Bytes of each output, in the order of cp.get_outputs().
    const std::vector<std::vector<uint8_t>> &outputs() const { return out_; }
    bool outputs_untouched() const;

private:
    uint8_t sentinel_;
    std::vector<std::vector<uint8_t>> in_, out_;
    std::vector<tensor> in_t_, out_t_;
};

} // namespace bpg::test
