#include "support/problem_builders.hpp"

#include <stdexcept>

namespace bpg::test {

std::vector<int> spatial_axes_of(layout fmt, int rank) {
    std::vector<int> axes;
    const int first = fmt == layout::ncx ? 2 : 1;
    for (int a = first; a < first + rank - 2; ++a) axes.push_back(a);
    return axes;
}

int channel_axis_of(layout fmt, int rank) { return fmt == layout::ncx ? 1 : rank - 1; }

core::tensor_desc make_desc(size_t id, data_type dt, const dims &shape, const dims &strides) {
    core::tensor_desc d;
    d.id = id;
    d.dt = dt;
    d.shape = shape;
    d.strides = strides.empty() ? dense_strides(shape) : strides;
    if (d.strides.size() != shape.size()) throw std::invalid_argument("make_desc: stride rank");
    return d;
}

core::interpolate_bwd_problem make_interp_problem(core::interp_mode mode,
        kernels::coord_mode coord, kernels::nearest_rounding rounding, layout fmt,
        const dims &src_shape, const dims &dst_shape, data_type dt, const dims &src_strides,
        const dims &dst_strides) {
    const int rank = int(src_shape.size());
    if (rank < 3 || dst_shape.size() != src_shape.size())
        throw std::invalid_argument("make_interp_problem: ranks");
    core::interpolate_bwd_problem p;
    p.mode = mode;
    p.rounding = rounding;
    p.channels_last = fmt == layout::nxc;
    p.spatial_axes = spatial_axes_of(fmt, rank);
    p.channel_axis = channel_axis_of(fmt, rank);
    for (int a : p.spatial_axes) {
        kernels::axis_map m;
        m.in = src_shape[a];
        m.out = dst_shape[a];
        m.mode = coord;
        p.axes.push_back(m);
    }
    p.src = make_desc(0, dt, src_shape);
    p.diff_dst = make_desc(1, dt, dst_shape, dst_strides);
    p.diff_src = make_desc(2, dt, src_shape, src_strides);
    return p;
}

void set_pixel_offsets(core::interpolate_bwd_problem &p, const std::vector<float> &scales,
        const std::vector<float> &input_offsets, const std::vector<float> &output_offsets) {
    const size_t n = p.axes.size();
    if (scales.size() != n || input_offsets.size() != n || output_offsets.size() != n)
        throw std::invalid_argument("set_pixel_offsets: one value per spatial axis");
    for (size_t k = 0; k < n; ++k) {
        p.axes[k].mode = kernels::coord_mode::pixel_offsets;
        p.axes[k].scale = scales[k];
        p.axes[k].input_offset = input_offsets[k];
        p.axes[k].output_offset = output_offsets[k];
    }
}

core::bn_bwd_problem make_bn_problem(const bn_spec &spec) {
    const int rank = int(spec.src_shape.size());
    core::bn_bwd_problem p;
    p.epsilon = spec.epsilon;
    p.use_global_stats = spec.use_global_stats;
    p.reduced.assign(size_t(rank), true);

    // Strides of a statistics tensor seen with src's rank.
    dims stat_strides(size_t(rank), 0);
    if (spec.stat_shape.size() == 1) {
        const int c = channel_axis_of(spec.fmt, rank);
        if (spec.stat_shape[0] != spec.src_shape[size_t(c)])
            throw std::invalid_argument("make_bn_problem: stat size != channels");
        p.reduced[size_t(c)] = false;
        stat_strides[size_t(c)] = 1;
    } else if (int(spec.stat_shape.size()) == rank) {
        const dims own = dense_strides(spec.stat_shape);
        for (int a = 0; a < rank; ++a) {
            if (spec.stat_shape[a] == 1) continue;
            if (spec.stat_shape[a] != spec.src_shape[a])
                throw std::invalid_argument("make_bn_problem: stat shape vs src shape");
            p.reduced[size_t(a)] = false;
            stat_strides[size_t(a)] = own[size_t(a)];
        }
    } else {
        throw std::invalid_argument("make_bn_problem: stat rank must be 1 or src's");
    }
    for (int a = 0; a < rank; ++a)
        if (p.reduced[size_t(a)]) p.reduce_count *= spec.src_shape[size_t(a)];

    p.src = make_desc(0, spec.dt, spec.src_shape, spec.src_strides);
    p.diff_dst = make_desc(1, spec.dt, spec.src_shape, spec.diff_dst_strides);
    p.mean = make_desc(2, spec.stat_dt, spec.stat_shape);
    p.variance = make_desc(3, spec.stat_dt, spec.stat_shape);
    p.mean_strides = p.variance_strides = stat_strides;
    if (spec.has_gamma) {
        p.gamma = make_desc(4, spec.stat_dt, spec.stat_shape);
        p.gamma_strides = stat_strides;
    }
    p.diff_src = make_desc(5, spec.dt, spec.src_shape, spec.diff_src_strides);
    if (spec.has_diff_scale_shift) {
        p.diff_gamma = make_desc(6, spec.stat_dt, spec.stat_shape);
        p.diff_beta = make_desc(7, spec.stat_dt, spec.stat_shape);
        p.diff_gamma_strides = p.diff_beta_strides = stat_strides;
    }
    return p;
}

dims bn_group_shape(const core::bn_bwd_problem &p) {
    dims g = p.src.shape;
    for (size_t a = 0; a < g.size(); ++a)
        if (p.reduced[a]) g[a] = 1;
    return g;
}

core::relu_bwd_problem make_relu_problem(const dims &shape, data_type dt,
        const dims &input_strides, const dims &diff_dst_strides, const dims &diff_src_strides) {
    core::relu_bwd_problem p;
    p.input = make_desc(0, dt, shape, input_strides);
    p.diff_dst = make_desc(1, dt, shape, diff_dst_strides);
    p.diff_src = make_desc(2, dt, shape, diff_src_strides);
    return p;
}

dims permuted_strides(const dims &shape, const std::vector<int> &order) {
    if (order.size() != shape.size()) throw std::invalid_argument("permuted_strides: rank");
    dims s(shape.size(), 0);
    int64_t acc = 1;
    for (size_t k = order.size(); k-- > 0;) {
        s[size_t(order[k])] = acc;
        if (shape[size_t(order[k])] > 1) acc *= shape[size_t(order[k])];
    }
    return s;
}

dims padded_strides(const dims &shape, int64_t pad) {
    dims s(shape.size(), 1);
    for (size_t a = shape.size(); a-- > 1;) s[a - 1] = s[a] * shape[a] + pad;
    return s;
}

namespace {
constexpr double sentinel_value = 12345.678;

// Elements between the lowest and the highest offset the view reaches.
int64_t span_of(const core::tensor_desc &d) {
    if (d.element_count() == 0) return 0;
    int64_t last = 0;
    for (size_t a = 0; a < d.shape.size(); ++a) {
        if (d.strides[a] < 0) throw std::invalid_argument("buffer: negative stride");
        last += (d.shape[a] - 1) * d.strides[a];
    }
    return last + 1;
}
} // namespace

buffer::buffer(const core::tensor_desc &d) : desc_(d) {
    const int64_t span = span_of(d);
    bytes_.assign(size_t(span) * size_of(d.dt), 0);
    in_view_.assign(size_t(span), false);
    for (int64_t i = 0; i < span; ++i) core::store_from_double(data(), d.dt, i, sentinel_value);
    if (span > 0) sentinel_ = core::load_as_double(data(), d.dt, 0);
    core::for_each_index(d.shape, d.strides,
            [&](const dims &, int64_t off) { in_view_[size_t(off)] = true; });
}

buffer::buffer(const core::tensor_desc &d, const std::vector<double> &dense_values) : buffer(d) {
    set_dense(dense_values);
}

std::vector<double> buffer::dense() const {
    std::vector<double> v;
    v.reserve(size_t(desc_.element_count()));
    core::for_each_index(desc_.shape, desc_.strides, [&](const dims &, int64_t off) {
        v.push_back(core::load_as_double(data(), desc_.dt, off));
    });
    return v;
}

void buffer::set_dense(const std::vector<double> &values) {
    if (int64_t(values.size()) != desc_.element_count())
        throw std::invalid_argument("buffer::set_dense: element count");
    size_t i = 0;
    core::for_each_index(desc_.shape, desc_.strides, [&](const dims &, int64_t off) {
        core::store_from_double(data(), desc_.dt, off, values[i++]);
    });
}

bool buffer::padding_intact() const {
    for (size_t i = 0; i < in_view_.size(); ++i)
        if (!in_view_[i] && core::load_as_double(data(), desc_.dt, int64_t(i)) != sentinel_)
            return false;
    return true;
}

} // namespace bpg::test
