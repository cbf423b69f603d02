#include "io/benchdnn_rewrite.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <unordered_map>

#include "graph/op_schema.hpp"

namespace bpg::io {

namespace {

[[noreturn]] void bad(const std::string &knob, const std::string &what) {
    throw error(status::invalid_argument, "--" + knob + ": " + what);
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> parts;
    std::string cur;
    for (char c : s) {
        if (c == sep) { parts.push_back(cur); cur.clear(); }
        else cur += c;
    }
    parts.push_back(cur);
    return parts;
}

// A whole string as a number: strtoll / strtof must use every char. A value
// too small for a float is a number and reads as the nearest float (0 or a
// denormal, as strtof rounds it); one too large for the type is an error.
int64_t parse_int(const std::string &knob, const std::string &s, const std::string &what = "") {
    const std::string at = what.empty() ? "" : what + ": ";
    errno = 0;
    char *end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || end != s.c_str() + s.size()) bad(knob, at + "\"" + s + "\" is not an integer");
    if (errno == ERANGE) bad(knob, at + s + " is out of the range of int64");
    return v;
}

float parse_float(const std::string &knob, const std::string &what, const std::string &s) {
    errno = 0;
    char *end = nullptr;
    const float v = std::strtof(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) bad(knob, what + ": \"" + s + "\" is not a number");
    if (errno == ERANGE && std::isinf(v))
        bad(knob, what + ": " + s + " is out of the range of f32 (largest magnitude 3.40282e+38)");
    return v;
}

dims parse_shape(const std::string &knob, const std::string &s) {
    dims d;
    for (const std::string &p : split(s, 'x')) d.push_back(parse_int(knob, p));
    return d;
}

// Every tensor with this id, in every op.
template <typename F> void for_each_tensor(graph_document &doc, size_t id, F &&f) {
    for (op &o : doc.ops) {
        std::vector<logical_tensor> in = o.get_inputs(), out = o.get_outputs();
        bool hit = false;
        for (auto *v : {&in, &out})
            for (logical_tensor &lt : *v)
                if (lt.get_id() == id) { lt = f(lt); hit = true; }
        if (!hit) continue;
        op n(o.get_id(), o.get_kind(), in, out, o.get_name());
        for (const auto &[a, v] : o.get_attrs()) n.set_attr(a, v);
        o = n;
    }
}

void rewrite_in_shapes(graph_document &doc, const std::string &spec) {
    for (const std::string &item : split(spec, '+')) {
        const auto colon = item.find(':');
        if (colon == std::string::npos) bad("in-shapes", "\"" + item + "\" is not ID:SHAPE[*TAG]");
        const size_t id = size_t(parse_int("in-shapes", item.substr(0, colon)));
        std::string shape_s = item.substr(colon + 1), tag;
        if (auto star = shape_s.find('*'); star != std::string::npos) {
            tag = shape_s.substr(star + 1);
            shape_s = shape_s.substr(0, star);
        }
        const dims shape = parse_shape("in-shapes", shape_s);
        const dims strides = tag.empty() ? dense_strides(shape) : strides_of_tag(shape, tag);
        bool found = false;
        for_each_tensor(doc, id, [&](const logical_tensor &lt) {
            found = true;
            return logical_tensor(id, lt.get_data_type(), shape, strides, lt.get_property_type());
        });
        if (!found) bad("in-shapes", "no tensor with id " + std::to_string(id) + " in the graph");
    }
}

attr_value parse_attr_value(op::attr a, const std::string &s) {
    const std::string knob = "op-attrs";
    const std::string what = std::string("'") + to_string(a) + "'";
    switch (a) {
        case op::attr::sizes: {
            std::vector<int64_t> v;
            for (const std::string &p : split(s, 'x')) v.push_back(parse_int(knob, p, what));
            return v;
        }
        case op::attr::scales:
        case op::attr::input_pixel_offsets:
        case op::attr::output_pixel_offsets: {
            std::vector<float> v;
            for (const std::string &p : split(s, 'x')) v.push_back(parse_float(knob, what, p));
            return v;
        }
        case op::attr::epsilon: return parse_float(knob, what, s);
        case op::attr::use_global_stats:
        case op::attr::use_dst:
            if (s == "1" || s == "true") return true;
            if (s == "0" || s == "false") return false;
            bad(knob, std::string("'") + to_string(a) + "' takes 0/1/true/false, got \"" + s + "\"");
        default: return s;
    }
}

void rewrite_op_attrs(graph_document &doc, const std::string &spec) {
    for (const std::string &item : split(spec, '+')) {
        const auto colon = item.find(':');
        if (colon == std::string::npos) bad("op-attrs", "\"" + item + "\" is not OPID:NAME:VALUE[*NAME:VALUE]");
        const size_t id = size_t(parse_int("op-attrs", item.substr(0, colon)));
        auto it = std::find_if(doc.ops.begin(), doc.ops.end(), [&](const op &o) { return o.get_id() == id; });
        if (it == doc.ops.end()) bad("op-attrs", "no op with id " + std::to_string(id));
        for (const std::string &kv : split(item.substr(colon + 1), '*')) {
            const auto c = kv.find(':');
            if (c == std::string::npos) bad("op-attrs", "\"" + kv + "\" is not NAME:VALUE");
            op::attr a;
            if (!attr_from_string(kv.substr(0, c), a)) bad("op-attrs", "unknown attribute \"" + kv.substr(0, c) + "\"");
            it->set_attr(a, parse_attr_value(a, kv.substr(c + 1)));
        }
    }
}

bool is_bn_statistic(const op &o, size_t id) {
    if (o.get_kind() != op::kind::BatchNormTrainingBackprop) return false;
    for (size_t i = 2; i < o.get_inputs().size(); ++i)
        if (o.get_inputs()[i].get_id() == id) return true;
    for (size_t i = 1; i < o.get_outputs().size(); ++i)
        if (o.get_outputs()[i].get_id() == id) return true;
    return false;
}

void rewrite_dtype(graph_document &doc, data_type dt) {
    std::vector<size_t> ids;
    for (const op &o : doc.ops)
        for (const auto *v : {&o.get_inputs(), &o.get_outputs()})
            for (const logical_tensor &lt : *v) {
                bool stat = false;
                for (const op &x : doc.ops) stat = stat || is_bn_statistic(x, lt.get_id());
                if (is_floating(lt.get_data_type()) && !stat) ids.push_back(lt.get_id());
            }
    for (size_t id : ids)
        for_each_tensor(doc, id, [&](const logical_tensor &lt) {
            return lt.get_layout_type() == layout_type::strided && lt.get_strides().size() == lt.get_dims().size()
                    ? logical_tensor(id, dt, lt.get_dims(), lt.get_strides(), lt.get_property_type())
                    : logical_tensor(id, dt, lt.get_dims(), lt.get_layout_type(), lt.get_property_type());
        });
}

// The axis order (outermost first) of a strided layout; ties keep axis order.
std::vector<int> axis_order(const logical_tensor &lt) {
    std::vector<int> order(lt.get_dims().size());
    std::iota(order.begin(), order.end(), 0);
    if (lt.get_strides().size() != order.size()) return order;
    std::stable_sort(order.begin(), order.end(),
            [&](int a, int b) { return lt.get_strides()[a] > lt.get_strides()[b]; });
    return order;
}

dims strides_in_order(const dims &shape, const std::vector<int> &order) {
    dims s(shape.size(), 1);
    int64_t acc = 1;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        s[*it] = acc;
        acc *= std::max<int64_t>(shape[*it], 1);
    }
    return s;
}

// Re-infers every op output after the inputs changed, in dependency order.
void reinfer_outputs(graph_document &doc) {
    std::vector<bool> done(doc.ops.size(), false);
    std::unordered_map<size_t, logical_tensor> produced; // id -> re-inferred
    std::vector<size_t> op_outputs;
    for (const op &x : doc.ops)
        for (const logical_tensor &y : x.get_outputs()) op_outputs.push_back(y.get_id());
    for (size_t round = 0; round < doc.ops.size(); ++round) {
        for (size_t i = 0; i < doc.ops.size(); ++i) {
            if (done[i]) continue;
            op &o = doc.ops[i];
            std::vector<logical_tensor> in = o.get_inputs();
            bool ready = true;
            for (logical_tensor &lt : in) {
                if (std::find(op_outputs.begin(), op_outputs.end(), lt.get_id()) == op_outputs.end())
                    continue; // a graph input: keeps its (possibly rewritten) shape
                auto it = produced.find(lt.get_id());
                if (it == produced.end()) ready = false;
                else lt = it->second;
            }
            if (!ready) continue;
            std::vector<logical_tensor> unknown_out;
            for (const logical_tensor &lt : o.get_outputs())
                unknown_out.emplace_back(lt.get_id(), lt.get_data_type(), layout_type::any);
            op probe(o.get_id(), o.get_kind(), in, unknown_out, o.get_name());
            for (const auto &[a, v] : o.get_attrs()) probe.set_attr(a, v);
            graph_impl::validate_op(probe); // infer needs a valid op
            const std::vector<dims> shapes = graph_impl::infer_output_shapes(probe, in);
            const std::vector<int> order = axis_order(in[0]);
            std::vector<logical_tensor> out;
            for (size_t k = 0; k < shapes.size(); ++k) {
                const logical_tensor &decl = o.get_outputs()[k];
                const dims strides = shapes[k].size() == order.size() ? strides_in_order(shapes[k], order)
                                                                      : dense_strides(shapes[k]);
                out.emplace_back(decl.get_id(), decl.get_data_type(), shapes[k], strides, decl.get_property_type());
                produced[decl.get_id()] = out.back();
            }
            op n(o.get_id(), o.get_kind(), in, out, o.get_name());
            for (const auto &[a, v] : o.get_attrs()) n.set_attr(a, v);
            o = n;
            done[i] = true;
        }
    }
}

} // namespace

dims strides_of_tag(const dims &shape, const std::string &tag) {
    if (tag.size() != shape.size())
        bad("in-shapes", "memory tag \"" + tag + "\" has " + std::to_string(tag.size())
                        + " letters for a rank-" + std::to_string(shape.size()) + " shape");
    std::vector<int> order;
    for (char c : tag) {
        const int a = c - 'a';
        if (a < 0 || a >= int(shape.size()) || std::find(order.begin(), order.end(), a) != order.end())
            bad("in-shapes", "memory tag \"" + tag + "\" is not a permutation of the first "
                            + std::to_string(shape.size()) + " letters");
        order.push_back(a);
    }
    return strides_in_order(shape, order);
}

void apply_rewrite(graph_document &doc, const benchdnn_rewrite &r) {
    if (r.empty()) return;
    if (r.dt) rewrite_dtype(doc, *r.dt);
    if (!r.in_shapes.empty()) rewrite_in_shapes(doc, r.in_shapes);
    if (!r.op_attrs.empty()) rewrite_op_attrs(doc, r.op_attrs);
    reinfer_outputs(doc);
}

} // namespace bpg::io
