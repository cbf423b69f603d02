#include "support/small_partitions.hpp"

#include <cstring>
#include <random>
#include <stdexcept>

#include "core/tensor_desc.hpp"

namespace bpg::test {

namespace {
compiled_partition compile_only_partition(const op &o, backend_kind b) {
    graph g;
    g.add_op(o);
    g.finalize();
    const partition p = g.get_partitions().at(0);
    compile_options opts;
    opts.backend = b;
    return p.compile(p.get_input_ports(), p.get_output_ports(), engine(), opts);
}
} // namespace

compiled_partition compile_interp(const dims &src, const dims &diff_dst, const char *mode, backend_kind b,
        const char *coordinate_mode) {
    op o(0, op::kind::InterpolateBackprop, {logical_tensor(0, data_type::f32, src), logical_tensor(1, data_type::f32, diff_dst)},
            {logical_tensor(2, data_type::f32)}, "UP");
    o.set_attr(op::attr::mode, mode).set_attr(op::attr::data_format, "NCX");
    o.set_attr(op::attr::coordinate_transformation_mode, coordinate_mode);
    o.set_attr(op::attr::sizes, std::vector<int64_t>(diff_dst.begin() + 2, diff_dst.end()));
    return compile_only_partition(o, b);
}

compiled_partition compile_bn(const dims &src, backend_kind b) {
    const dims c = {src[1]};
    auto t = [](size_t id, const dims &d) { return logical_tensor(id, data_type::f32, d); };
    op o(0, op::kind::BatchNormTrainingBackprop, {t(0, src), t(1, src), t(2, c), t(3, c), t(4, c)},
            {logical_tensor(5, data_type::f32), logical_tensor(6, data_type::f32), logical_tensor(7, data_type::f32)}, "BN");
    o.set_attr(op::attr::epsilon, 1e-3f).set_attr(op::attr::data_format, "NCX");
    return compile_only_partition(o, b);
}

port_buffers::port_buffers(const compiled_partition &cp, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(0.5f, 1.5f);
    // Whole floats covering the tensor's span; 16-bit tensors hold two
    // elements in each, every element slot of the span filled.
    auto floats = [](const logical_tensor &lt) { return std::max<size_t>((lt.get_mem_size() + 3) / sizeof(float), 1); };
    in_.reserve(cp.get_inputs().size());
    for (const logical_tensor &lt : cp.get_inputs()) {
        in_.emplace_back(floats(lt));
        const data_type dt = lt.get_data_type();
        const int64_t slots = int64_t(in_.back().size() * sizeof(float) / size_of(dt));
        for (int64_t i = 0; i < slots; ++i) core::store_from_double(in_.back().data(), dt, i, value(rng));
        in_ids_.push_back(lt.get_id());
        in_t_.emplace_back(lt, engine(), in_.back().data());
    }
    out_.reserve(cp.get_outputs().size());
    for (const logical_tensor &lt : cp.get_outputs()) {
        out_.emplace_back(floats(lt));
        out_ids_.push_back(lt.get_id());
        out_t_.emplace_back(lt, engine(), out_.back().data());
    }
}

float *port_buffers::input(size_t id) {
    for (size_t i = 0; i < in_ids_.size(); ++i)
        if (in_ids_[i] == id) return in_[i].data();
    throw std::logic_error("port_buffers: no input " + std::to_string(id));
}

const std::vector<float> &port_buffers::output(size_t id) const {
    for (size_t i = 0; i < out_ids_.size(); ++i)
        if (out_ids_[i] == id) return out_[i];
    throw std::logic_error("port_buffers: no output " + std::to_string(id));
}

void port_buffers::poison_outputs() {
    for (auto &o : out_) std::memset(o.data(), 0xff, o.size() * sizeof(float));
}

void port_buffers::execute(const compiled_partition &cp) { cp.execute(stream(engine()), in_t_, out_t_); }

std::vector<uint32_t> port_buffers::output_bits() const {
    std::vector<uint32_t> bits;
    for (const auto &o : out_) {
        const size_t at = bits.size();
        bits.resize(at + o.size());
        std::memcpy(bits.data() + at, o.data(), o.size() * sizeof(float));
    }
    return bits;
}

} // namespace bpg::test
