#include "input_fill.hpp"

#include "core/tensor_desc.hpp"
#include "graph/schemas/checks.hpp"

namespace bpg::tools {

namespace {

enum class role { data, variance, sizes };

role role_of(const std::vector<op> &ops, size_t id, std::vector<int64_t> *sizes) {
    for (const op &o : ops)
        for (size_t i = 0; i < o.get_inputs().size(); ++i) {
            if (o.get_inputs()[i].get_id() != id) continue;
            const bool bn = o.get_kind() == op::kind::BatchNormTrainingBackprop
                    || o.get_kind() == op::kind::BatchNormTrainingBackpropFromSums;
            if (bn && i == 3) return role::variance;
            if (o.get_kind() == op::kind::InterpolateBackprop && i == 2) {
                const logical_tensor &dd = o.get_inputs()[1];
                std::string fmt = "NXC";
                if (auto *v = o.find_attr(op::attr::data_format)) fmt = std::get<std::string>(*v);
                const int r = dd.ndims();
                for (int a : graph_impl::spatial_axes(fmt == "NXC", r)) sizes->push_back(dd.get_dims()[size_t(a)]);
                return role::sizes;
            }
        }
    return role::data;
}

uint32_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return uint32_t(x);
}

} // namespace

void fill_input(const std::vector<op> &ops, host_buffer &b) {
    const logical_tensor &lt = b.lt();
    std::vector<int64_t> sizes;
    const role r = role_of(ops, lt.get_id(), &sizes);
    int64_t i = 0;
    core::for_each_index(lt.get_dims(), lt.get_strides(), [&](const dims &, int64_t off) {
        const uint32_t h = mix((uint64_t(lt.get_id()) << 40) ^ uint64_t(i));
        double v;
        switch (r) {
            case role::variance: v = double(h % 97 + 16) / 32.0; break; // [0.5, 3.5]
            case role::sizes: v = double(i < int64_t(sizes.size()) ? sizes[size_t(i)] : 1); break;
            default: v = (double(h % 257) - 128.0) / 64.0; break;
        }
        core::store_from_double(b.data(), lt.get_data_type(), off, v);
        ++i;
    });
}

} // namespace bpg::tools
