// Declarative op schemas (oneDNN Graph style, without macros or string-keyed
// property bags): ports, attributes with types, defaults and allowed values,
// plus small named constraint functions per op.
//
// An op is checked twice through the same function, validate_op: at add_op
// with its own logical tensors (shapes may be partly unknown, rules whose
// inputs are unknown wait), and at compile with the concrete tensors (inputs
// as given, outputs of the inferred shapes), where every rule runs. Nothing
// is checked at execute except what only exists then (bound buffers, the
// values of a runtime `sizes` tensor).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "bpg/graph.hpp"
#include "core/problems.hpp"

namespace bpg::graph_impl {

struct port_spec {
    const char *name;
    bool optional;
};

// An attribute's type: the attr_value alternative it holds (same order).
enum class attr_type : size_t { boolean, s64, f32, string, s64_list, f32_list };
static_assert(std::is_same_v<std::variant_alternative_t<size_t(attr_type::f32_list), attr_value>, std::vector<float>>);
static_assert(std::is_same_v<std::variant_alternative_t<size_t(attr_type::string), attr_value>, std::string>);

struct attr_spec {
    op::attr name;
    attr_type type;
    bool required;
    std::optional<attr_value> default_value;
    std::vector<std::string> allowed; // for strings; empty = any value
};

// One op's rules. check() sees the op's attributes with the logical tensors
// of its ports (in, out: the op's own at add_op, the concrete ones at compile;
// ids are the op's) and throws on any violation it can detect. infer() is the
// shape formula only: concrete inputs in, output shapes out; it checks
// nothing, so compile runs validate_op on its result.
struct op_schema {
    op::kind kind;
    std::vector<port_spec> inputs;
    std::vector<port_spec> outputs;
    std::vector<attr_spec> attrs;
    std::function<void(const op &, const std::vector<logical_tensor> &in,
            const std::vector<logical_tensor> &out)>
            check;
    std::function<std::vector<dims>(const op &, const std::vector<logical_tensor> &)> infer;
};

const op_schema &schema_of(op::kind k);

// Generic checks every op gets (arity, tensor ids and shapes, attribute
// names/types/allowed values), then the op's own check(), on the op's
// attributes with these port tensors (same count and ids as the op's).
void validate_op(const op &o, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out);
// The same with the op's own tensors (add_op).
void validate_op(const op &o);

// Concrete output shapes from concrete input logical tensors of an op that
// passed add_op (arity known); validate_op then checks them.
std::vector<dims> infer_output_shapes(const op &o, const std::vector<logical_tensor> &inputs);

// ---- helpers shared by the op schemas --------------------------------------

// "InterpolateBackprop op 3 (\"RESAMPLING_0\")"
std::string op_label(const op &o);
[[noreturn]] void fail(const op &o, status s, const std::string &what);

// The attribute's value, or the schema default, or nullopt.
template <typename T> std::optional<T> attr_or_default(const op &o, op::attr a) {
    if (const attr_value *v = o.find_attr(a)) return std::get<T>(*v);
    for (const attr_spec &s : schema_of(o.get_kind()).attrs)
        if (s.name == a && s.default_value) return std::get<T>(*s.default_value);
    return std::nullopt;
}

std::string shape_text(const dims &d);                // "2x17x7x14"
std::string list_text(const std::vector<float> &v);   // "[1.5, 2]"
std::string list_text(const std::vector<int64_t> &v); // "[6, 12]"

} // namespace bpg::graph_impl
