// compiled_partition::execute: bind buffers by id, check what only exists at
// execute (pointers, aliasing, runtime sizes values), then run the kernel.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "core/inline_list.hpp"
#include "core/verbose.hpp"
#include "graph/graph_internal.hpp"
#include "graph/op_schema.hpp"

namespace bpg {

using graph_impl::list_text;
using graph_impl::shape_text;

namespace {

const compiled_partition::impl &checked(const std::shared_ptr<const compiled_partition::impl> &p) {
    if (!p) throw error(status::invalid_argument, "compiled_partition: empty (not compiled)");
    return *p;
}

std::string label(const compiled_partition::impl &cp) {
    return "compiled partition " + cp.problem.pattern;
}

// Finds the tensor bound to a port; the bound tensor must describe the same
// layout as compiled (a tensor of unknown rank takes the compiled one).
const tensor &bound(const compiled_partition::impl &cp, const logical_tensor &port,
        const std::vector<tensor> &ts, const char *side, bool may_be_null = false) {
    const tensor *found = nullptr;
    for (const tensor &t : ts)
        if (t.get_logical_tensor().get_id() == port.get_id()) {
            if (found)
                throw error(status::invalid_argument,
                        label(cp) + ": " + side + " tensor " + std::to_string(port.get_id())
                                + " is bound twice");
            found = &t;
        }
    if (!found)
        throw error(status::invalid_argument,
                label(cp) + ": " + side + " tensor " + std::to_string(port.get_id())
                        + " is not bound; execute needs every port");
    const logical_tensor &lt = found->get_logical_tensor();
    if (lt.ndims() >= 0 && lt.get_dims() != port.get_dims())
        throw error(status::invalid_shape,
                label(cp) + ": " + side + " tensor " + std::to_string(port.get_id())
                        + " is bound with shape " + shape_text(lt.get_dims())
                        + " but was compiled with " + shape_text(port.get_dims()));
    if (lt.ndims() >= 0 && lt.get_layout_type() == layout_type::strided
            && !lt.get_strides().empty() && lt.get_strides() != port.get_strides())
        throw error(status::invalid_shape,
                label(cp) + ": " + side + " tensor " + std::to_string(port.get_id())
                        + " is bound with strides " + list_text(lt.get_strides())
                        + " but was compiled with " + list_text(port.get_strides()));
    if (lt.get_data_type() != data_type::undef && lt.get_data_type() != port.get_data_type())
        throw error(status::invalid_data_type,
                label(cp) + ": " + side + " tensor " + std::to_string(port.get_id()) + " is "
                        + to_string(lt.get_data_type()) + " but was compiled as "
                        + to_string(port.get_data_type()));
    if (!found->get_data_handle() && port.element_count() > 0 && !may_be_null)
        throw error(status::invalid_argument,
                label(cp) + ": " + side + " tensor " + std::to_string(port.get_id())
                        + " has a null data pointer");
    return *found;
}

bool has_port(const std::vector<logical_tensor> &ports, size_t id) {
    for (const logical_tensor &port : ports)
        if (port.get_id() == id) return true;
    return false;
}

// Every tensor bound on one side is a port of that side; a port of the other
// side is named as such (an output passed among the inputs).
void check_sides(const compiled_partition::impl &cp, const std::vector<tensor> &ts,
        const std::vector<logical_tensor> &ports, const std::vector<logical_tensor> &other,
        const char *side) {
    for (const tensor &t : ts) {
        const size_t id = t.get_logical_tensor().get_id();
        if (has_port(ports, id)) continue;
        const char *other_side = side[0] == 'i' ? "output" : "input";
        throw error(status::invalid_argument,
                label(cp) + ": tensor " + std::to_string(id) + " is not an " + side
                        + " of this partition"
                        + (has_port(other, id) ? std::string(" (it is an ") + other_side
                                        + "; bind it among the " + other_side + "s only)"
                                               : std::string()));
    }
}

struct byte_range { const char *lo, *hi; size_t id; };
// Ports of one side; inline up to the most ports a partition of bpg has.
using byte_ranges = core::inline_list<byte_range, 16>;

// Kernels read inputs while writing outputs: an output overlapping any other
// bound buffer would silently corrupt results.
void check_no_aliasing(const compiled_partition::impl &cp, const byte_ranges &in, const byte_ranges &out) {
    for (size_t i = 0; i < out.size(); ++i) {
        auto clash = [&](const byte_range &o) {
            return out[i].lo < o.hi && o.lo < out[i].hi && out[i].lo != out[i].hi && o.lo != o.hi;
        };
        for (size_t j = 0; j < in.size(); ++j)
            if (clash(in[j]))
                throw error(status::invalid_argument,
                        label(cp) + ": output tensor " + std::to_string(out[i].id)
                                + " overlaps input tensor " + std::to_string(in[j].id)
                                + " in memory; in-place execution is not supported");
        for (size_t j = i + 1; j < out.size(); ++j)
            if (clash(out[j]))
                throw error(status::invalid_argument,
                        label(cp) + ": output tensors " + std::to_string(out[i].id) + " and "
                                + std::to_string(out[j].id) + " overlap in memory");
    }
}

// A runtime `sizes` input must agree with diff_dst's spatial shape. Reading
// one value per spatial axis stays inside it: compile's validate_op checked
// that it is s32 of shape [number of spatial axes].
void check_runtime_sizes(const compiled_partition::impl &cp, const backends::buffer_map &b) {
    for (const backends::op_problem &op : cp.problem.ops) {
        const auto *p = std::get_if<core::interpolate_bwd_problem>(&op);
        if (!p || !p->sizes) continue;
        const core::tensor_desc &sz = *p->sizes;
        const void *base = b.at(sz.id);
        for (size_t i = 0; i < p->spatial_axes.size(); ++i) {
            const int32_t v = static_cast<const int32_t *>(base)[int64_t(i) * sz.strides[0]];
            const dim want = p->diff_dst.shape[p->spatial_axes[i]];
            if (v != want)
                throw error(status::invalid_argument,
                        std::string("InterpolateBackprop op ") + std::to_string(p->op_id)
                                + ": sizes input (tensor " + std::to_string(sz.id) + ")[" + std::to_string(i)
                                + "] = " + std::to_string(v) + " but diff_dst spatial axis "
                                + std::to_string(p->spatial_axes[i]) + " has size "
                                + std::to_string(want) + "; they must match");
        }
    }
}

} // namespace

void compiled_partition::execute(const stream &s, const std::vector<tensor> &inputs,
        const std::vector<tensor> &outputs) const {
    const impl &cp = checked(impl_);
    (void)s;
    // Nothing here allocates on success: an execute of a small partition
    // costs about as much as its kernel.
    backends::buffer_map buffers;
    byte_ranges in_ranges, out_ranges;
    for (size_t i = 0; i < cp.inputs.size(); ++i) {
        const logical_tensor &port = cp.inputs[i];
        const bool shape_only = cp.input_is_shape_only[i];
        const tensor &t = bound(cp, port, inputs, "input", shape_only);
        const char *p = static_cast<const char *>(t.get_data_handle());
        buffers[port.get_id()] = t.get_data_handle();
        // Never read, so it cannot be clobbered: no aliasing rule applies.
        if (!shape_only) in_ranges.push_back({p, p + cp.input_bytes[i], port.get_id()});
    }
    for (size_t i = 0; i < cp.outputs.size(); ++i) {
        const logical_tensor &port = cp.outputs[i];
        const tensor &t = bound(cp, port, outputs, "output");
        const char *p = static_cast<const char *>(t.get_data_handle());
        buffers[port.get_id()] = t.get_data_handle();
        out_ranges.push_back({p, p + cp.output_bytes[i], port.get_id()});
    }
    check_sides(cp, inputs, cp.inputs, cp.outputs, "input");
    check_sides(cp, outputs, cp.outputs, cp.inputs, "output");
    check_no_aliasing(cp, in_ranges, out_ranges);
    check_runtime_sizes(cp, buffers);

    // Tensors internal to a fused partition are the kernel's business: the
    // fused tbb kernel never stores them, the ref kernel allocates its own.
    const bool verbose = get_verbose() >= 1;
    const double start_ms = verbose ? core::verbose_now_ms() : 0.0;
    try {
        cp.threads->execute([&] { cp.kernel->execute(buffers); });
    } catch (const std::bad_alloc &) {
        // Small bookkeeping outside core::allocate (containers, oneTBB tasks).
        throw error(status::out_of_memory, label(cp) + ": out of memory");
    }
    if (verbose)
        core::verbose_print("exec," + cp.verbose_fields + "," + std::to_string(core::verbose_now_ms() - start_ms));
}

logical_tensor compiled_partition::query_logical_tensor(size_t id) const {
    const impl &cp = checked(impl_);
    for (const auto *side : {&cp.inputs, &cp.outputs})
        for (const logical_tensor &lt : *side)
            if (lt.get_id() == id) return lt;
    throw error(status::invalid_argument,
            label(cp) + ": tensor " + std::to_string(id) + " is not a port of this partition");
}

const std::vector<logical_tensor> &compiled_partition::get_inputs() const { return checked(impl_).inputs; }
const std::vector<logical_tensor> &compiled_partition::get_outputs() const { return checked(impl_).outputs; }
backend_kind compiled_partition::get_backend() const { return checked(impl_).backend; }
std::string compiled_partition::get_backend_name() const { return to_string(checked(impl_).backend); }
std::string compiled_partition::get_dispatch_reason() const { return checked(impl_).dispatch_reason; }
std::string compiled_partition::get_kernel_path() const { return checked(impl_).kernel_path; }

std::string compiled_partition::describe() const {
    const impl &cp = checked(impl_);
    auto lt_text = [](const logical_tensor &lt) {
        return std::to_string(lt.get_id()) + ":" + to_string(lt.get_data_type()) + ":"
                + shape_text(lt.get_dims()) + (lt.get_strides() == dense_strides(lt.get_dims())
                                                      ? std::string()
                                                      : ":strides=" + list_text(lt.get_strides()));
    };
    std::string s = cp.problem.pattern + " on " + to_string(cp.backend) + " (" + cp.kernel_path + ") | in";
    for (const logical_tensor &lt : cp.inputs) s += " " + lt_text(lt);
    s += " | out";
    for (const logical_tensor &lt : cp.outputs) s += " " + lt_text(lt);
    return s;
}

} // namespace bpg
