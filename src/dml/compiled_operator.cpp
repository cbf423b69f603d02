// compiled_operator: a bpg partition compiled for a DirectML operator, bound
// in DirectML's order. FLOAT16 statistics of batch normalization pass through
// dense f32 copies, because bpg's BatchNormTrainingBackprop keeps statistics
// in f32 for 16-bit data (docs/semantics.md dtypes).
#include <cstdint>
#include <tuple>

#include "core/allocate.hpp"
#include "dml/dml_internal.hpp"
#include "kernels/dtype_convert.hpp"

namespace bpg::dml {

namespace {

const compiled_operator::impl &checked(const std::shared_ptr<const compiled_operator::impl> &p) {
    if (!p) throw error(status::invalid_argument, "bpg::dml::compiled_operator: empty (not compiled)");
    return *p;
}

// Calls f(dense index, element offset) for every element of a strided layout,
// the dense index running in row-major order.
template <typename F> void for_each_element(const dims &sizes, const dims &strides, F f) {
    int64_t count = 1;
    for (dim s : sizes) count *= s;
    dims idx(sizes.size(), 0);
    int64_t offset = 0;
    for (int64_t n = 0; n < count; ++n) {
        f(n, offset);
        for (size_t a = sizes.size(); a-- > 0;) { // odometer step
            offset += strides[a];
            if (++idx[a] < sizes[a]) break;
            offset -= strides[a] * sizes[a];
            idx[a] = 0;
        }
    }
}

// f16 tensors staged as dense f32 for the bpg partition (core::allocate:
// out of memory is bpg::error before anything is written).
core::checked_vector<float> widen(const binding &b, const void *p) {
    core::checked_vector<float> dense(size_t(b.lt.element_count()));
    const auto *h = static_cast<const uint16_t *>(p);
    for_each_element(b.dml_sizes, b.dml_strides,
            [&](int64_t n, int64_t off) { dense[size_t(n)] = kernels::f16_to_f32(h[off]); });
    return dense;
}

void narrow(const binding &b, const core::checked_vector<float> &dense, void *p) {
    auto *h = static_cast<uint16_t *>(p);
    for_each_element(b.dml_sizes, b.dml_strides,
            [&](int64_t n, int64_t off) { h[off] = kernels::f32_to_f16(dense[size_t(n)]); });
}

std::string field_list(const std::vector<binding> &v) {
    std::string s;
    for (const binding &b : v) s += (s.empty() ? "" : ", ") + b.field;
    return s;
}

} // namespace

compiled_operator compile_graph_op(const char *name, const op &o, std::vector<binding> inputs,
        std::vector<binding> outputs, std::vector<logical_tensor> shape_only_inputs,
        const compile_options &opts) {
    auto p = std::make_shared<compiled_operator::impl>();
    p->name = name;
    try {
        graph g;
        g.add_op(o);
        g.finalize();
        std::vector<logical_tensor> ins = shape_only_inputs, outs;
        for (const binding &b : inputs) ins.push_back(b.lt);
        for (const binding &b : outputs) outs.push_back(b.lt);
        p->partition = g.get_partitions().at(0).compile(ins, outs, engine(), opts);
    } catch (const error &e) {
        fail(name, e.code(), std::string("as bpg ") + to_string(o.get_kind()) + ": " + e.what());
    }
    p->inputs = std::move(inputs);
    p->outputs = std::move(outputs);
    p->shape_only_inputs = std::move(shape_only_inputs);
    return compiled_operator(p);
}

void compiled_operator::execute(const std::vector<const void *> &inputs, const std::vector<void *> &outputs) const {
    const impl &op = checked(impl_);
    for (auto [side, given, want] : {std::tuple{"input", inputs.size(), &op.inputs},
                 std::tuple{"output", outputs.size(), &op.outputs}})
        if (given != want->size())
            fail(op.name, status::invalid_argument,
                    std::string("execute got ") + std::to_string(given) + " " + side + " buffers; it binds "
                            + std::to_string(want->size()) + " (" + field_list(*want) + "), in that order");
    auto check_pointer = [&](const binding &b, const void *ptr) {
        if (!ptr) fail(op.name, status::invalid_argument, "the buffer bound to " + b.field + " is null");
    };
    const engine eng;
    std::vector<tensor> in_tensors, out_tensors;
    // The shape-only inputs are never read: zero strides make them one element.
    static const float never_read[2] = {0.f, 0.f};
    for (const logical_tensor &lt : op.shape_only_inputs)
        in_tensors.emplace_back(lt, eng, const_cast<float *>(never_read));
    std::vector<core::checked_vector<float>> staged_in, staged_out(op.outputs.size());
    staged_in.reserve(op.inputs.size());
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        const binding &b = op.inputs[i];
        check_pointer(b, inputs[i]);
        void *ptr = const_cast<void *>(inputs[i]); // bpg reads inputs only
        if (b.staged) {
            staged_in.push_back(widen(b, inputs[i]));
            ptr = staged_in.back().data();
        }
        in_tensors.emplace_back(b.lt, eng, ptr);
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
        const binding &b = op.outputs[i];
        check_pointer(b, outputs[i]);
        void *ptr = outputs[i];
        if (b.staged) {
            staged_out[i].resize(size_t(b.lt.element_count()));
            ptr = staged_out[i].data();
        }
        out_tensors.emplace_back(b.lt, eng, ptr);
    }
    op.partition.execute(stream(eng), in_tensors, out_tensors);
    for (size_t i = 0; i < op.outputs.size(); ++i)
        if (op.outputs[i].staged) narrow(op.outputs[i], staged_out[i], outputs[i]);
}

const char *compiled_operator::name() const { return checked(impl_).name; }
backend_kind compiled_operator::get_backend() const { return checked(impl_).partition.get_backend(); }

std::string compiled_operator::describe() const {
    const impl &op = checked(impl_);
    return std::string(op.name) + " as " + op.partition.describe() + "\n    backend: "
            + op.partition.get_dispatch_reason();
}

} // namespace bpg::dml
