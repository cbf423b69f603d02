// Builders of resolved problems (core/problems.hpp) for tests that exercise a
// backend directly, without going through graph compile; plus strided host
// buffers to feed them. Every field of a problem is filled consistently, the
// way compile() is meant to: dense row-major strides unless strides are given,
// statistics strides seen in src's rank with 0 on reduced axes.
#pragma once

#include <cstdint>
#include <vector>

#include "core/problems.hpp"

namespace bpg::test {

enum class layout { ncx, nxc };

// Tensor axes holding the spatial dimensions, outer to inner.
std::vector<int> spatial_axes_of(layout fmt, int rank);
int channel_axis_of(layout fmt, int rank);

core::tensor_desc make_desc(size_t id, data_type dt, const dims &shape, const dims &strides = {});

// src_shape and dst_shape are full tensor shapes (N, C and spatial); the axis
// maps come from them. Empty strides mean dense; src_strides apply to
// diff_src, dst_strides to diff_dst.
core::interpolate_bwd_problem make_interp_problem(core::interp_mode mode,
        kernels::coord_mode coord, kernels::nearest_rounding rounding, layout fmt,
        const dims &src_shape, const dims &dst_shape, data_type dt = data_type::f32,
        const dims &src_strides = {}, const dims &dst_strides = {});

// Switches every spatial axis to the DirectML pixel-offset mapping; the
// vectors have one value per spatial axis.
void set_pixel_offsets(core::interpolate_bwd_problem &p, const std::vector<float> &scales,
        const std::vector<float> &input_offsets, const std::vector<float> &output_offsets);

struct bn_spec {
    dims src_shape;
    // Rank 1 ({C}): channel mode, the channel axis given by fmt. Same rank as
    // src: DirectML mode, reduced axes are those of size 1, fmt ignored.
    dims stat_shape;
    layout fmt = layout::nxc;
    float epsilon = 1e-5f;
    bool use_global_stats = false;
    bool has_gamma = true;
    bool has_diff_scale_shift = true;
    data_type dt = data_type::f32;      // src, diff_dst, diff_src
    data_type stat_dt = data_type::f32; // mean, variance, gamma, diff_gamma, diff_beta
    dims src_strides, diff_dst_strides, diff_src_strides; // empty: dense
};
core::bn_bwd_problem make_bn_problem(const bn_spec &spec);

// Dense shape of the statistics seen in src's rank: src's shape with the
// reduced axes set to 1. Statistics vectors in tests are dense in this shape.
dims bn_group_shape(const core::bn_bwd_problem &p);

core::relu_bwd_problem make_relu_problem(const dims &shape, data_type dt = data_type::f32,
        const dims &input_strides = {}, const dims &diff_dst_strides = {},
        const dims &diff_src_strides = {});

// Strides of `shape` laid out with its axes in memory order `order` (outer to
// inner), e.g. {0, 2, 3, 1} gives an NCHW shape channels-last strides.
dims permuted_strides(const dims &shape, const std::vector<int> &order);
// Dense row-major strides with `pad` extra elements after every row of every axis.
dims padded_strides(const dims &shape, int64_t pad);

// Host memory for one strided tensor. Elements outside the tensor's view
// (padding) hold a sentinel value so a stray write is detectable.
class buffer {
public:
    explicit buffer(const core::tensor_desc &d);
    buffer(const core::tensor_desc &d, const std::vector<double> &dense_values);

    void *data() { return bytes_.data(); }
    const void *data() const { return bytes_.data(); }
    const core::tensor_desc &desc() const { return desc_; }

    // Values in row-major logical order, converted to double.
    std::vector<double> dense() const;
    void set_dense(const std::vector<double> &values);
    // True when no element outside the view was written.
    bool padding_intact() const;

private:
    core::tensor_desc desc_;
    std::vector<unsigned char> bytes_; // each element accessed through one dtype only
    std::vector<bool> in_view_;
    double sentinel_ = 0.0; // the padding value, as stored in this dtype
};

} // namespace bpg::test
