// partition::compile: concrete shapes in, shape inference op by op, resolved
// problems, one backend chosen by the dispatch rule, kernel compiled once.
#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "bpg/threading.hpp"
#include "core/layout_checks.hpp"
#include "core/verbose.hpp"
#include "graph/graph_internal.hpp"
#include "graph/op_schema.hpp"
#include "graph/port_layout.hpp"
#include "graph/resolve.hpp"
#include "graph/verbose_text.hpp"

namespace bpg {

using graph_impl::op_label;
using graph_impl::list_text;
using graph_impl::shape_text;

size_t partition::get_id() const { return impl_ ? impl_->id : size_t(-1); }

std::vector<size_t> partition::get_ops() const {
    std::vector<size_t> ids;
    if (impl_)
        for (const op &o : impl_->ops) ids.push_back(o.get_id());
    return ids;
}

partition::partition(const op &o, engine::kind k) {
    graph g(k);
    g.add_op(o);
    g.finalize();
    *this = g.get_partitions().at(0);
}

size_t partition::get_ops_num() const { return impl_ ? impl_->ops.size() : 0; }
bool partition::is_supported() const { return impl_ && impl_->supported; }
engine::kind partition::get_engine_kind() const { return impl_ ? impl_->engine_kind : engine::kind::cpu; }

std::string partition::get_pattern_name() const { return impl_ ? impl_->pattern : ""; }

const std::vector<logical_tensor> &partition::get_input_ports() const {
    static const std::vector<logical_tensor> none;
    return impl_ ? impl_->inputs : none;
}
const std::vector<logical_tensor> &partition::get_output_ports() const {
    static const std::vector<logical_tensor> none;
    return impl_ ? impl_->outputs : none;
}

namespace {

std::string where(const partition::impl &p) {
    return "partition " + std::to_string(p.id) + " (" + p.pattern + ")";
}

const logical_tensor *find_by_id(const std::vector<logical_tensor> &v, size_t id) {
    for (const logical_tensor &lt : v)
        if (lt.get_id() == id) return &lt;
    return nullptr;
}

bool is_concrete(const logical_tensor &lt) {
    return lt.has_known_shape() && lt.get_layout_type() == layout_type::strided
            && lt.get_strides().size() == lt.get_dims().size();
}

void check_strides(const std::string &who, const logical_tensor &lt, bool is_output) {
    for (dim s : lt.get_strides())
        if (s < 0)
            throw error(status::invalid_shape,
                    who + ": tensor " + std::to_string(lt.get_id()) + " has negative stride "
                            + std::to_string(s));
    try {
        lt.element_count(); // throws on overflow
        lt.get_mem_size();  // throws on overflow
    } catch (const error &e) {
        throw error(e.code(), who + ": " + e.what());
    }
    if (is_output && !core::is_non_overlapping(lt.get_dims(), lt.get_strides()))
        throw error(status::invalid_shape,
                who + ": output tensor " + std::to_string(lt.get_id()) + " has strides "
                        + list_text(lt.get_strides()) + " that make elements of shape "
                        + shape_text(lt.get_dims()) + " overlap");
}

// The concrete logical tensor of an input port: what the caller gave, which
// must agree with what add_op saw.
logical_tensor concrete_input(const partition::impl &p, const logical_tensor &port,
        const std::vector<logical_tensor> &given) {
    const logical_tensor *g = find_by_id(given, port.get_id());
    const logical_tensor &lt = g ? *g : port;
    const std::string who = where(p);
    if (!is_concrete(lt))
        throw error(status::invalid_shape,
                who + ": input tensor " + std::to_string(port.get_id())
                        + " needs a known shape and strided layout at compile time (got shape "
                        + (lt.ndims() < 0 ? std::string("unknown") : shape_text(lt.get_dims()))
                        + ", layout " + to_string(lt.get_layout_type()) + ")");
    if (lt.get_data_type() != port.get_data_type())
        throw error(status::invalid_data_type,
                who + ": input tensor " + std::to_string(port.get_id()) + " is "
                        + to_string(lt.get_data_type()) + " but the graph declared "
                        + to_string(port.get_data_type()));
    if (port.ndims() >= 0) {
        bool same = port.ndims() == lt.ndims();
        for (int i = 0; same && i < lt.ndims(); ++i)
            same = port.get_dims()[i] < 0 || port.get_dims()[i] == lt.get_dims()[i];
        if (!same)
            throw error(status::invalid_shape,
                    who + ": input tensor " + std::to_string(port.get_id()) + " has shape "
                            + shape_text(lt.get_dims()) + " but the graph declared "
                            + shape_text(port.get_dims()));
    }
    check_strides(who, lt, false);
    return lt;
}

// The concrete logical tensor of an op output: inferred shape, the caller's
// strides when given (ports only), else the axis order of its model input
// (layout_model), else dense.
logical_tensor concrete_output(const partition::impl &p, const logical_tensor &declared,
        const logical_tensor *given, const dims &shape, const logical_tensor *model) {
    const logical_tensor &req = given ? *given : declared;
    const std::string who = where(p);
    if (req.get_data_type() != declared.get_data_type())
        throw error(status::invalid_data_type,
                who + ": output tensor " + std::to_string(declared.get_id()) + " is "
                        + to_string(req.get_data_type()) + " but the graph declared "
                        + to_string(declared.get_data_type()));
    for (const logical_tensor *lt : {&declared, &req}) {
        if (lt->ndims() < 0) continue;
        bool same = lt->ndims() == int(shape.size());
        for (size_t i = 0; same && i < shape.size(); ++i)
            same = lt->get_dims()[i] < 0 || lt->get_dims()[i] == shape[i];
        if (!same)
            throw error(status::invalid_shape,
                    who + ": output tensor " + std::to_string(declared.get_id())
                            + " is declared with shape " + shape_text(lt->get_dims())
                            + " but the op produces " + shape_text(shape));
    }
    // Strides: the caller's at compile, else those declared at add_op, else
    // the model's order, else dense.
    const bool has_strides = req.get_layout_type() == layout_type::strided
            && req.get_strides().size() == shape.size() && !shape.empty();
    const dims strides = has_strides ? req.get_strides()
            : model                  ? graph_impl::strides_in_order_of(*model, shape)
                                     : dense_strides(shape);
    logical_tensor out(declared.get_id(), declared.get_data_type(), shape, strides, declared.get_property_type());
    check_strides(who, out, true);
    return out;
}

// Every tensor given to compile is a port of its side, given once (a second
// description of one id would be silently ignored).
void check_given(const partition::impl &p, const std::vector<logical_tensor> &given,
        const std::vector<logical_tensor> &ports, const std::vector<logical_tensor> &other,
        const char *side) {
    std::unordered_set<size_t> seen;
    for (const logical_tensor &lt : given) {
        const char *other_side = side[0] == 'i' ? "output" : "input";
        if (!find_by_id(ports, lt.get_id()))
            throw error(status::invalid_argument,
                    where(p) + ": tensor " + std::to_string(lt.get_id()) + " given to compile is not an "
                            + side + " port of this partition"
                            + (find_by_id(other, lt.get_id()) ? std::string(" (it is an ") + other_side
                                            + " port; give it among the " + other_side + "s only)"
                                                              : std::string()));
        if (!seen.insert(lt.get_id()).second)
            throw error(status::invalid_argument,
                    where(p) + ": tensor " + std::to_string(lt.get_id()) + " is given twice among the "
                            + side + "s to compile; give each port once");
    }
}

// Input ports whose data no op of the partition reads.
std::vector<size_t> shape_only_ports(const partition::impl &p) {
    std::unordered_set<size_t> read, shape_only;
    for (const op &o : p.ops)
        for (size_t i = 0; i < o.get_inputs().size(); ++i)
            (graph_impl::is_shape_only_input(o, i) ? shape_only : read).insert(o.get_inputs()[i].get_id());
    std::vector<size_t> ids;
    for (const logical_tensor &port : p.inputs)
        if (shape_only.count(port.get_id()) && !read.count(port.get_id())) ids.push_back(port.get_id());
    return ids;
}

backends::op_problem resolve(const op &o, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out) {
    switch (o.get_kind()) {
        case op::kind::InterpolateBackprop: return graph_impl::resolve_interpolate_bwd(o, in, out);
        case op::kind::BatchNormTrainingBackprop: return graph_impl::resolve_batchnorm_bwd(o, in, out);
        case op::kind::ReLUBackprop: return graph_impl::resolve_relu_bwd(o, in, out);
        case op::kind::BatchNormTrainingBackpropSums:
        case op::kind::BatchNormTrainingBackpropFromSums:
        case op::kind::BatchNormForwardSums: return graph_impl::resolve_batchnorm_bwd(o, in, out);
        default: break;
    }
    throw error(status::unimplemented, graph_impl::op_label(o) + ": bpg does not implement this op kind");
}

// compile_options' threads and runtime, checked; max_threads 0 takes the
// library default now (a later set_max_threads does not change this partition).
core::run_threads resolved_threads(const compile_options &opts) {
    if (opts.max_threads < 0 || opts.max_threads > core::thread_limit)
        throw error(status::invalid_argument,
                "compile_options.max_threads = " + std::to_string(opts.max_threads) + " must be in [0, "
                        + std::to_string(core::thread_limit) + "] (0: bpg::get_max_threads())");
    if (opts.runtime != threading_runtime::tbb_arena && opts.runtime != threading_runtime::openmp)
        throw error(status::invalid_argument,
                "compile_options.runtime = " + std::to_string(int(opts.runtime))
                        + " is not a threading_runtime (tbb_arena or openmp)");
    return {opts.max_threads > 0 ? opts.max_threads : get_max_threads(), opts.runtime};
}

} // namespace

compiled_partition partition::compile(const std::vector<logical_tensor> &inputs,
        const std::vector<logical_tensor> &outputs, const engine &e,
        const compile_options &opts) const {
    if (!impl_) throw error(status::invalid_argument, "partition::compile: empty partition");
    const partition::impl &p = *impl_;
    if (!p.supported)
        throw error(status::unimplemented,
                where(p) + ": " + graph_impl::op_label(p.ops.front())
                        + " is an op kind bpg does not implement; this partition is unsupported "
                          "(is_supported() == false) and is for the framework to run");
    if (e.get_kind() != p.engine_kind)
        throw error(status::invalid_argument, where(p) + ": engine kind does not match the graph's");
    check_given(p, inputs, p.inputs, p.outputs, "input");
    check_given(p, outputs, p.outputs, p.inputs, "output");
    const core::run_threads run = resolved_threads(opts);

    const double start_ms = core::verbose_now_ms();
    auto cp = std::make_shared<compiled_partition::impl>();
    std::unordered_map<size_t, logical_tensor> concrete;
    for (const logical_tensor &port : p.inputs) {
        concrete[port.get_id()] = concrete_input(p, port, inputs);
        cp->inputs.push_back(concrete[port.get_id()]);
    }
    cp->problem.pattern = p.pattern;
    for (const op &o : p.ops) {
        std::vector<logical_tensor> in, out;
        for (const logical_tensor &lt : o.get_inputs()) in.push_back(concrete.at(lt.get_id()));
        const std::vector<dims> shapes = graph_impl::infer_output_shapes(o, in);
        // add_op's rules again, now on concrete tensors: the ones that waited
        // for an unknown rank or dim run here.
        std::vector<logical_tensor> inferred;
        for (size_t k = 0; k < o.get_outputs().size(); ++k) {
            const logical_tensor &decl = o.get_outputs()[k];
            inferred.emplace_back(decl.get_id(), decl.get_data_type(), shapes[k], layout_type::strided,
                    decl.get_property_type());
        }
        graph_impl::validate_op(o, in, inferred);
        for (size_t k = 0; k < o.get_outputs().size(); ++k) {
            const logical_tensor &decl = o.get_outputs()[k];
            const bool is_port = find_by_id(p.outputs, decl.get_id()) != nullptr;
            logical_tensor lt = concrete_output(p, decl,
                    is_port ? find_by_id(outputs, decl.get_id()) : nullptr, shapes[k],
                    graph_impl::layout_model(o, k, in));
            if (!is_port) {
                // Internal to the partition: the shape was checked above, the
                // buffer is the executor's own, dense whatever was declared.
                lt = logical_tensor(decl.get_id(), decl.get_data_type(), shapes[k], layout_type::strided);
                cp->problem.internal.push_back(core::desc_of(lt));
            }
            concrete[decl.get_id()] = lt;
            out.push_back(lt);
        }
        cp->problem.ops.push_back(resolve(o, in, out));
    }
    for (const logical_tensor &port : p.outputs) cp->outputs.push_back(concrete.at(port.get_id()));
    const std::vector<size_t> shape_only = shape_only_ports(p);
    for (const logical_tensor &port : cp->inputs) {
        cp->input_is_shape_only.push_back(std::find(shape_only.begin(), shape_only.end(), port.get_id()) != shape_only.end());
        cp->input_bytes.push_back(port.get_mem_size());
    }
    for (const logical_tensor &port : cp->outputs) cp->output_bytes.push_back(port.get_mem_size());

    // The run is set while the backends decide and compile: oneDNN sizes some
    // primitives for the OpenMP team they will run on.
    {
        const core::run_scope scope(run);
        const backends::backend &b = backends::choose_backend(
                cp->problem, opts.backend, std::getenv("BPG_BACKEND"), &cp->dispatch_reason);
        cp->backend = b.kind();
        cp->kernel = b.compile(cp->problem);
        cp->kernel_path = cp->kernel->path();
    }
    cp->threads = std::make_unique<core::partition_threads>(
            run.max_threads, run.runtime, cp->backend == backend_kind::tbb, cp->kernel->one_task());
    cp->verbose_fields = p.pattern + "," + graph_impl::verbose_ops(p.ops) + "," + to_string(cp->backend)
            + "," + graph_impl::verbose_ports(cp->inputs, cp->outputs) + "," + graph_impl::verbose_attrs(p.ops);
    if (get_verbose() >= 2)
        core::verbose_print("dispatch," + p.pattern + "," + graph_impl::verbose_ops(p.ops) + ","
                + to_string(cp->backend) + "," + cp->dispatch_reason);
    if (get_verbose() >= 2)
        core::verbose_print("path," + p.pattern + "," + graph_impl::verbose_ops(p.ops) + ","
                + to_string(cp->backend) + "," + cp->kernel_path);
    if (get_verbose() >= 2)
        core::verbose_print("threads," + p.pattern + "," + graph_impl::verbose_ops(p.ops) + ","
                + to_string(cp->backend) + "," + cp->threads->text());
    if (get_verbose() >= 1)
        core::verbose_print("compile," + cp->verbose_fields + "," + std::to_string(core::verbose_now_ms() - start_ms));
    return compiled_partition(cp);
}

} // namespace bpg
