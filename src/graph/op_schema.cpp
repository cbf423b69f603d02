#include "graph/op_schema.hpp"

#include <sstream>

namespace bpg::graph_impl {

const op_schema &interpolate_bwd_schema();
const op_schema &batchnorm_bwd_schema();
const op_schema &relu_bwd_schema();
const op_schema &batchnorm_bwd_sums_schema();
const op_schema &batchnorm_bwd_from_sums_schema();
const op_schema &batchnorm_fwd_sums_schema();

const op_schema &schema_of(op::kind k) {
    switch (k) {
        case op::kind::InterpolateBackprop: return interpolate_bwd_schema();
        case op::kind::BatchNormTrainingBackprop: return batchnorm_bwd_schema();
        case op::kind::ReLUBackprop: return relu_bwd_schema();
        case op::kind::BatchNormTrainingBackpropSums: return batchnorm_bwd_sums_schema();
        case op::kind::BatchNormTrainingBackpropFromSums: return batchnorm_bwd_from_sums_schema();
        case op::kind::BatchNormForwardSums: return batchnorm_fwd_sums_schema();
        default: break;
    }
    throw error(status::unimplemented,
            std::string("op kind ") + to_string(k) + " has no schema: bpg does not implement it");
}

std::string op_label(const op &o) {
    std::string s = std::string(to_string(o.get_kind())) + " op " + std::to_string(o.get_id());
    if (!o.get_name().empty()) s += " (\"" + o.get_name() + "\")";
    return s;
}

void fail(const op &o, status s, const std::string &what) {
    throw error(s, op_label(o) + ": " + what);
}

std::string shape_text(const dims &d) {
    std::string s;
    for (size_t i = 0; i < d.size(); ++i) {
        if (i) s += "x";
        s += d[i] < 0 ? std::string("?") : std::to_string(d[i]);
    }
    return d.empty() ? "[] (scalar)" : s;
}

std::string list_text(const std::vector<float> &v) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
    return os.str();
}

std::string list_text(const std::vector<int64_t> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

namespace {

std::string value_text(const attr_value &v) {
    std::ostringstream os;
    switch (v.index()) {
        case 0: os << (std::get<bool>(v) ? "true" : "false"); break;
        case 1: os << std::get<int64_t>(v); break;
        case 2: os << std::get<float>(v); break;
        case 3: os << '"' << std::get<std::string>(v) << '"'; break;
        case 4: os << list_text(std::get<std::vector<int64_t>>(v)); break;
        case 5: os << list_text(std::get<std::vector<float>>(v)); break;
    }
    return os.str();
}

const char *type_name_of(attr_type t) {
    static const attr_value samples[] = {false, int64_t(0), 0.f, std::string(),
            std::vector<int64_t>(), std::vector<float>()};
    return attr_type_name(samples[size_t(t)]);
}

void check_arity(const op &o, const char *what, const std::vector<port_spec> &ports, size_t n) {
    size_t required = 0;
    for (const port_spec &p : ports) required += p.optional ? 0 : 1;
    if (n < required || n > ports.size()) {
        std::string names;
        for (const port_spec &p : ports)
            names += std::string(names.empty() ? "" : ", ") + p.name + (p.optional ? "?" : "");
        std::string expect = required == ports.size()
                ? std::to_string(required)
                : std::to_string(required) + " to " + std::to_string(ports.size());
        fail(o, status::invalid_graph,
                std::string("expects ") + expect + " " + what + " (" + names + "), got "
                        + std::to_string(n));
    }
}

void check_attrs(const op &o, const op_schema &s) {
    for (const auto &[name, value] : o.get_attrs()) {
        const attr_spec *spec = nullptr;
        for (const attr_spec &a : s.attrs)
            if (a.name == name) spec = &a;
        if (!spec) {
            std::string known;
            for (const attr_spec &a : s.attrs)
                known += std::string(known.empty() ? "" : ", ") + bpg::to_string(a.name);
            fail(o, status::invalid_argument,
                    std::string("attribute '") + bpg::to_string(name)
                            + "' does not apply to this op (its attributes: " + known + ")");
        }
        if (value.index() != size_t(spec->type))
            fail(o, status::invalid_argument,
                    std::string("attribute '") + bpg::to_string(name) + "' must be of type "
                            + type_name_of(spec->type) + ", got "
                            + attr_type_name(value) + " " + value_text(value));
        if (!spec->allowed.empty()) {
            const std::string &sv = std::get<std::string>(value);
            bool ok = false;
            std::string allowed;
            for (const std::string &a : spec->allowed) {
                ok = ok || a == sv;
                allowed += (allowed.empty() ? "" : ", ") + a;
            }
            if (!ok)
                fail(o, status::invalid_argument,
                        std::string("attribute '") + bpg::to_string(name) + "' = \"" + sv
                                + "\" is not one of: " + allowed);
        }
    }
    for (const attr_spec &a : s.attrs)
        if (a.required && !o.has_attr(a.name))
            fail(o, status::invalid_argument,
                    std::string("required attribute '") + bpg::to_string(a.name)
                            + "' is missing");
}

void check_tensor_ids(const op &o, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out) {
    auto check_one = [&](const logical_tensor &lt, const char *side, size_t i) {
        const std::string where = std::string(side) + "[" + std::to_string(i) + "] (tensor "
                + std::to_string(lt.get_id()) + ")";
        if (lt.get_id() == size_t(-1))
            fail(o, status::invalid_graph, where + " has no id");
        if (lt.ndims() > 8)
            fail(o, status::invalid_shape, where + " has rank " + std::to_string(lt.ndims())
                            + "; at most 8 is supported");
        for (dim d : lt.get_dims())
            if (d < 0 && d != unknown_dim)
                fail(o, status::invalid_shape,
                        where + " has a negative dimension " + std::to_string(d)
                                + " (only -1, unknown, is allowed)");
        if (lt.get_layout_type() == layout_type::strided && lt.ndims() >= 0
                && !lt.get_strides().empty() && lt.get_strides().size() != lt.get_dims().size())
            fail(o, status::invalid_shape,
                    where + " has " + std::to_string(lt.get_strides().size())
                            + " strides for rank " + std::to_string(lt.ndims()));
        for (dim s : lt.get_strides())
            if (s < 0 && s != unknown_dim)
                fail(o, status::invalid_shape,
                        where + " has a negative stride " + std::to_string(s));
        if (lt.has_known_shape()) {
            try {
                lt.element_count();
            } catch (const error &e) {
                fail(o, e.code(), where + ": " + e.what());
            }
        }
    };
    for (size_t i = 0; i < in.size(); ++i) check_one(in[i], "inputs", i);
    for (size_t i = 0; i < out.size(); ++i) check_one(out[i], "outputs", i);
    for (const logical_tensor &y : out)
        for (const logical_tensor &x : in)
            if (y.get_id() == x.get_id())
                fail(o, status::invalid_graph,
                        "tensor " + std::to_string(y.get_id())
                                + " is both an input and an output of the op (a cycle)");
    for (size_t i = 0; i < out.size(); ++i)
        for (size_t j = i + 1; j < out.size(); ++j)
            if (out[i].get_id() == out[j].get_id())
                fail(o, status::invalid_graph,
                        "outputs[" + std::to_string(i) + "] and outputs[" + std::to_string(j)
                                + "] share tensor id " + std::to_string(out[i].get_id()));
}

} // namespace

void validate_op(const op &o, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out) {
    // A kind bpg does not run has no rules here beyond a graph's: the
    // framework that runs its partition knows them.
    if (!is_implemented(o.get_kind())) return check_tensor_ids(o, in, out);
    const op_schema &s = schema_of(o.get_kind());
    check_arity(o, "inputs", s.inputs, in.size());
    check_arity(o, "outputs", s.outputs, out.size());
    check_tensor_ids(o, in, out);
    check_attrs(o, s);
    s.check(o, in, out);
}

void validate_op(const op &o) { validate_op(o, o.get_inputs(), o.get_outputs()); }

std::vector<dims> infer_output_shapes(const op &o, const std::vector<logical_tensor> &inputs) {
    return schema_of(o.get_kind()).infer(o, inputs);
}

} // namespace bpg::graph_impl
