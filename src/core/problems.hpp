// Resolved op descriptions: what compile() hands to a backend once the schema
// checks passed and every shape is concrete. Attributes are decoded into
// enums and per-axis maps here, once, so no kernel parses an attribute.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor_desc.hpp"
#include "kernels/interp_coords.hpp"

namespace bpg::core {

enum class interp_mode { nearest, linear };

struct interpolate_bwd_problem {
    size_t op_id = 0;
    interp_mode mode = interp_mode::nearest;
    kernels::nearest_rounding rounding = kernels::nearest_rounding::round_prefer_ceil;
    bool channels_last = true;           // data_format NXC
    std::vector<int> spatial_axes;       // tensor axes, outer to inner
    std::vector<kernels::axis_map> axes; // one per spatial axis, same order
    int channel_axis = 1;
    tensor_desc src;      // only dtype and shape are meaningful
    tensor_desc diff_dst; // input 1
    tensor_desc diff_src; // output 0
    std::optional<tensor_desc> sizes; // input 2: s32 [spatial], checked at execute
};

// Which part of the BN backward an op computes: all of it, or one side of
// the split where SyncBatchNorm reduces the per-channel sums across processes.
enum class bn_bwd_part {
    whole,      // BatchNormTrainingBackprop
    local_sums, // BatchNormTrainingBackpropSums: sum_diff_dst, sum_diff_dst_centered (no diff_src)
    from_sums,  // BatchNormTrainingBackpropFromSums: diff_src etc. from the sums over the global batch
    // BatchNormForwardSums: sum (src - shift), sum (src - shift)^2, as
    // local_sums with diff_dst = src and mean = shift, then shifted.
    forward_sums,
};

// The parts that end with their sums (no variance, no diff_src).
inline bool ends_with_sums(bn_bwd_part p) { return p == bn_bwd_part::local_sums || p == bn_bwd_part::forward_sums; }

struct bn_bwd_problem {
    size_t op_id = 0;
    bn_bwd_part part = bn_bwd_part::whole;
    float epsilon = 0.f;
    bool use_global_stats = false;
    std::vector<bool> reduced;  // per src axis: in the reduction set R
    int64_t reduce_count = 1;   // M: elements in one reduction (from_sums: global_count)
    tensor_desc src, diff_dst, diff_src; // local_sums: no diff_src
    tensor_desc mean, variance;          // local_sums: no variance
    // The sums of the split (local_sums: outputs; from_sums: inputs, over
    // the global batch): sum of diff_dst, sum of diff_dst * (src - mean).
    std::optional<tensor_desc> sum_diff_dst, sum_diff_dst_centered;
    dims sum_diff_dst_strides, sum_diff_dst_centered_strides;
    std::optional<tensor_desc> gamma;
    std::optional<tensor_desc> diff_gamma, diff_beta; // both or neither
    // Strides of each statistics tensor seen with src's rank: the stat
    // element of src element idx is at sum idx[a] * stat_strides[a]
    // (0 on reduced axes). Filled for mean, variance, gamma, diff_gamma,
    // diff_beta from their own strides.
    dims mean_strides, variance_strides, gamma_strides, diff_gamma_strides, diff_beta_strides;
};

struct relu_bwd_problem {
    size_t op_id = 0;
    bool use_dst = true;
    tensor_desc input; // src or dst (use_dst)
    tensor_desc diff_dst;
    tensor_desc diff_src;
};

} // namespace bpg::core
