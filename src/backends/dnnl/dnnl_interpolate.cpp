// The rules are listed in dnnl_interpolate.hpp; resampling_model.hpp explains
// the per-axis arithmetic checks.
#include "backends/dnnl/dnnl_interpolate.hpp"

#include <climits>

#include "backends/dnnl/dnnl_common.hpp"
#include "backends/dnnl/dnnl_compat.hpp"
#include "backends/dnnl/primitive_cache.hpp"
#include "backends/dnnl/resampling_model.hpp"

namespace bpg::backends::dnnl_impl {
namespace {

using kernels::coord_mode;
using kernels::nearest_rounding;

std::string who(const core::interpolate_bwd_problem &p) {
    return "InterpolateBackprop op " + std::to_string(p.op_id) + ": ";
}

// Everything decided from the problem alone, before asking oneDNN.
struct plan {
    std::string refusal;
    bool empty = false; // no element to compute
    dnnl::algorithm alg = dnnl::algorithm::resampling_nearest;
    dnnl::memory::desc diff_src_md, diff_dst_md;
    std::string key; // for the primitive cache
};

std::string attribute_refusal(const core::interpolate_bwd_problem &p) {
    const bool nearest = p.mode == core::interp_mode::nearest;
    if (nearest && p.rounding != nearest_rounding::round_prefer_ceil)
        return std::string("nearest_mode ") + kernels::to_string(p.rounding)
                + ": oneDNN's resampling rounds ties up only (round_prefer_ceil)";
    const size_t nsp = p.axes.size();
    if (nsp < 1 || nsp > 3)
        return std::to_string(nsp) + " spatial axes: " + onednn_name() + " resampling has 1 to 3";
    for (size_t k = 0; k < nsp; ++k) {
        const kernels::axis_map &m = p.axes[k];
        const std::string axis = "spatial axis " + std::to_string(p.spatial_axes[k]);
        if (m.mode == coord_mode::pixel_offsets)
            return axis + ": DirectML pixel offsets: oneDNN maps coordinates from the shape ratio (half_pixel) only";
        if (m.mode == coord_mode::pytorch_half_pixel && m.out == 1)
            return axis + ": pytorch_half_pixel with output size 1 maps to -0.5, not the half_pixel "
                          "coordinate oneDNN uses";
        if (m.mode != coord_mode::half_pixel && m.mode != coord_mode::pytorch_half_pixel)
            return axis + ": coordinate_transformation_mode " + kernels::to_string(m.mode)
                    + ": oneDNN's resampling implements half_pixel only";
    }
    if (p.diff_dst.dt != p.diff_src.dt)
        return std::string("diff_dst is ") + to_string(p.diff_dst.dt) + " but diff_src is "
                + to_string(p.diff_src.dt) + ": oneDNN's resampling backward wants one data type";
    if (!to_dnnl(p.diff_src.dt))
        return std::string("data type ") + to_string(p.diff_src.dt)
                + ": the dnnl backend lowers f32 and bf16 resampling only (docs/onednn-versions.md)";
    for (const core::tensor_desc *t : {&p.diff_src, &p.diff_dst})
        for (dim d : t->shape)
            if (d > INT_MAX)
                return "size " + std::to_string(d) + " of tensor " + std::to_string(t->id)
                        + ": " + onednn_name() + "'s resampling kernels index sizes as int";
    return {};
}

plan plan_of(const core::interpolate_bwd_problem &p) {
    plan pl;
    pl.refusal = attribute_refusal(p);
    if (!pl.refusal.empty()) return pl;
    pl.empty = p.diff_src.element_count() == 0 || p.diff_dst.element_count() == 0;
    if (pl.empty) return pl;

    // oneDNN's logical order: N, C, spatial... N is the non-spatial axis
    // that is not the channel.
    const int rank = p.diff_src.ndims();
    std::vector<bool> spatial(size_t(rank), false);
    for (int a : p.spatial_axes) spatial[size_t(a)] = true;
    std::vector<int> order;
    for (int a = 0; a < rank; ++a)
        if (!spatial[size_t(a)] && a != p.channel_axis) order.push_back(a);
    order.push_back(p.channel_axis);
    order.insert(order.end(), p.spatial_axes.begin(), p.spatial_axes.end());
    if (int(order.size()) != rank) {
        pl.refusal = "the axes are not N, C and the spatial axes";
        return pl;
    }

    pl.alg = p.mode == core::interp_mode::nearest ? dnnl::algorithm::resampling_nearest
                                                   : dnnl::algorithm::resampling_linear;
    const dnnl::memory::data_type dt = *to_dnnl(p.diff_src.dt);
    try {
        pl.diff_src_md = permuted_desc(p.diff_src, order, dt);
        pl.diff_dst_md = permuted_desc(p.diff_dst, order, dt);
    } catch (const dnnl::error &e) {
        pl.refusal = std::string("oneDNN does not accept these strides: ") + e.what();
        return pl;
    }
    auto text = [&](const core::tensor_desc &t) { return permuted_text(t, order); };
    pl.key = std::string("resampling_bwd ") + (p.mode == core::interp_mode::nearest ? "nearest " : "linear ")
            + to_string(p.diff_src.dt) + " diff_src " + text(p.diff_src) + " diff_dst " + text(p.diff_dst);
    return pl;
}

// Creates the primitive descriptor, then applies the per-axis arithmetic
// rules to the implementation oneDNN picked; creates the primitive only when
// the problem is supported.
cached_primitive create(const plan &pl) {
    cached_primitive c;
    const dnnl::engine &eng = cpu_engine();
    dnnl::resampling_backward::primitive_desc bwd;
    try {
        bwd = make_resampling_bwd_pd(eng, pl.alg, pl.diff_src_md, pl.diff_dst_md, user_scratchpad_attr());
    } catch (const dnnl::error &e) {
        c.refusal = onednn_name() + " has no resampling_backward for these tensors: " + e.what();
        return c;
    }
    c.impl = bwd.impl_info_str();
    const resampling_kernel kind = resampling_kernel_of(c.impl);
    if (kind == resampling_kernel::unknown) {
        c.refusal = "oneDNN picked implementation '" + c.impl
                + "', whose coordinate arithmetic this backend does not model";
        return c;
    }
    const dnnl::memory::dims in = dims_of(pl.diff_src_md), out = dims_of(pl.diff_dst_md);
    for (size_t k = 2; k < in.size(); ++k) {
        const std::string axis = "spatial axis #" + std::to_string(k - 2) + " (" + c.impl + "): ";
        if (pl.alg == dnnl::algorithm::resampling_nearest) {
            const std::string m = nearest_axis_mismatch(kind, in[k], out[k]);
            if (!m.empty()) {
                c.refusal = axis + m;
                return c;
            }
        } else {
            const linear_axis_report r = linear_axis_check(in[k], out[k]);
            if (!r.mismatch.empty()) {
                c.refusal = axis + r.mismatch;
                return c;
            }
            if (r.max_weight_error > max_linear_weight_error) {
                c.refusal = axis + "oneDNN's f32 coordinates put linear weights up to "
                        + std::to_string(r.max_weight_error) + " from the exact ones (in "
                        + std::to_string(in[k]) + ", out " + std::to_string(out[k])
                        + "); this backend accepts at most 2^-16";
                return c;
            }
        }
    }
    c.primitive = dnnl::resampling_backward(bwd);
    c.scratchpad = bwd.scratchpad_desc();
    return c;
}

primitive_cache::entry lookup(const plan &pl) {
    return team_primitive(pl.key, [&] { return create(pl); });
}

class interpolate_kernel : public kernel {
public:
    interpolate_kernel(const core::interpolate_bwd_problem &p, const plan &pl, primitive_cache::entry e)
        : entry_(std::move(e)), diff_dst_md_(pl.diff_dst_md), diff_src_md_(pl.diff_src_md),
          diff_dst_id_(p.diff_dst.id), diff_src_id_(p.diff_src.id) {}

    void execute(const buffer_map &buffers) const override {
        if (!entry_) return; // zero elements: nothing to write
        const dnnl::engine &eng = cpu_engine();
        std::unordered_map<int, dnnl::memory> args {
                {DNNL_ARG_DIFF_DST, dnnl::memory(diff_dst_md_, eng, buffers.at(diff_dst_id_))},
                {DNNL_ARG_DIFF_SRC, dnnl::memory(diff_src_md_, eng, buffers.at(diff_src_id_))},
        };
        execute_on_cpu(entry_->primitive, args, entry_->scratchpad);
    }

    std::string path() const override { return entry_ ? "resampling:" + entry_->impl : "resampling:zero_sized"; }

private:
    primitive_cache::entry entry_; // shared with the cache: one primitive per problem
    dnnl::memory::desc diff_dst_md_, diff_src_md_;
    size_t diff_dst_id_, diff_src_id_;
};

} // namespace

std::string interpolate_why_unsupported(const core::interpolate_bwd_problem &p) {
    const plan pl = plan_of(p);
    if (!pl.refusal.empty()) return who(p) + pl.refusal;
    if (pl.empty) return {};
    const primitive_cache::entry e = lookup(pl);
    return e->refusal.empty() ? std::string() : who(p) + e->refusal;
}

std::unique_ptr<kernel> compile_interpolate(const core::interpolate_bwd_problem &p) {
    const plan pl = plan_of(p);
    if (!pl.refusal.empty()) throw error(status::unimplemented, who(p) + pl.refusal);
    if (pl.empty) return std::make_unique<interpolate_kernel>(p, pl, nullptr);
    primitive_cache::entry e = lookup(pl);
    if (!e->refusal.empty()) throw error(status::unimplemented, who(p) + e->refusal);
    return std::make_unique<interpolate_kernel>(p, pl, std::move(e));
}

} // namespace bpg::backends::dnnl_impl
