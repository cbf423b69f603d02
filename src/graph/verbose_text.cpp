#include "graph/verbose_text.hpp"

#include <sstream>

#include "graph/op_schema.hpp"

namespace bpg::graph_impl {

namespace {

template <typename T> std::string joined(const std::vector<T> &v) {
    std::ostringstream os;
    for (size_t i = 0; i < v.size(); ++i) os << (i ? "x" : "") << v[i];
    return os.str();
}

std::string value_of(const attr_value &v) {
    std::ostringstream os;
    switch (v.index()) {
        case 0: os << (std::get<bool>(v) ? "true" : "false"); break;
        case 1: os << std::get<int64_t>(v); break;
        case 2: os << std::get<float>(v); break;
        case 3: os << std::get<std::string>(v); break;
        case 4: os << joined(std::get<std::vector<int64_t>>(v)); break;
        case 5: os << joined(std::get<std::vector<float>>(v)); break;
    }
    return os.str();
}

std::string tensor_of(const logical_tensor &lt) {
    return std::to_string(lt.get_id()) + ":" + to_string(lt.get_data_type()) + ":"
            + joined(lt.get_dims()) + ":" + joined(lt.get_strides());
}

} // namespace

std::string verbose_ops(const std::vector<op> &ops) {
    std::string s;
    for (const op &o : ops)
        s += (s.empty() ? "" : ";") + std::string(to_string(o.get_kind())) + ":" + std::to_string(o.get_id());
    return s;
}

std::string verbose_ports(const std::vector<logical_tensor> &in, const std::vector<logical_tensor> &out) {
    std::string s = "in=";
    for (size_t i = 0; i < in.size(); ++i) s += (i ? " " : "") + tensor_of(in[i]);
    s += ";out=";
    for (size_t i = 0; i < out.size(); ++i) s += (i ? " " : "") + tensor_of(out[i]);
    return s;
}

std::string verbose_attrs(const std::vector<op> &ops) {
    std::string s;
    for (const op &o : ops) {
        s += (s.empty() ? "op" : " op") + std::to_string(o.get_id()) + "{";
        // Every attribute in effect: those set, and the schema's defaults.
        bool first = true;
        for (const attr_spec &spec : schema_of(o.get_kind()).attrs) {
            const attr_value *v = o.find_attr(spec.name);
            if (!v && !spec.default_value) continue;
            s += (first ? "" : ";") + std::string(to_string(spec.name)) + "="
                    + value_of(v ? *v : *spec.default_value);
            first = false;
        }
        s += "}";
    }
    return s;
}

} // namespace bpg::graph_impl
