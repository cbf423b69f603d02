// Import and export of the oneDNN Graph JSON serialization (bpg/json.hpp).
//
// Reading is strict about everything it understands and says exactly where a
// problem is: each error names the op (id and name) and the field path, e.g.
//   op 0 ("RESAMPLING_0"): inputs[1].stride: expected 4 values (rank of shape), got 3
// Statuses: JSON that is malformed or has bad values -> invalid_argument; an op
// kind we do not know -> invalid_graph; shapes/strides that contradict each
// other -> invalid_shape; legal oneDNN values this library does not support
// (engine "gpu", layout "opaque", dtype "s8", ...) -> unimplemented.
//
// Where oneDNN's format is ambiguous, these are the choices (tests pin them):
// - shape: oneDNN's writer replaces any shape that is not fully known by [-1],
//   dropping the rank. So [-1] and a missing "shape" read as *unknown rank*:
//   reading it as "1-D of unknown size" would make a 4-D tensor dumped before
//   shape inference fail the op's rank check. [] is a 0-D (scalar) tensor.
//   Our writer keeps partly known shapes as they are ([2, -1, 7]) and writes
//   unknown rank as [-1]; the one thing that does not survive a round trip is
//   a 1-D tensor of unknown size (it comes back as unknown rank).
// - stride: only meaningful for layout "strided". A missing stride or [-1]
//   (oneDNN's "not known" marker) means dense row-major strides when the shape
//   is known and no strides otherwise, as the logical_tensor constructor does.
//   Otherwise the stride array must have the shape's rank; each value >= -1.
//   With shape [-1] and a full stride array, the rank is taken from the
//   strides (every dim unknown).
//   For "any" and "undef" the stride is ignored; we write it as [].
// - Optional with defaults: version ("3.0.0"), engine_kind ("cpu"),
//   fpmath_mode ("strict"), the ports, an op's name ("") and attrs ({}), a
//   tensor's shape (unknown rank), stride and property_type ("undef").
//   Required: graph; op id, kind, inputs, outputs; tensor id, dtype, layout_type.
//   Unknown keys are ignored, so newer dumps (fpmath_mode_apply_to_int, ...) load.
// - A key twice in one object is an error (JSON leaves it open; nlohmann
//   would keep the last silently), and so is nesting deeper than
//   io::max_json_depth (64) levels: see src/io/json_precheck.hpp.
// - We write oneDNN v3's op kind names (InterpolateBackward, ...), not the
//   canonical technical-preview names: benchdnn --graph reads only those, and
//   our reader accepts both.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "bpg/json.hpp"
#include "io/file_bytes.hpp"
#include "io/json_precheck.hpp"

namespace bpg {
namespace {

// ordered_json keeps the file's key order, so attributes keep their order
// through parse -> write -> parse.
using json = nlohmann::ordered_json;

// Where we are in the document: "graph JSON" at the top, `op 3 ("X")` in an op.
struct context {
    std::string where;

    [[noreturn]] void fail(status s, const std::string &path, const std::string &what) const {
        throw error(s, where + ": " + (path.empty() ? "" : path + ": ") + what);
    }
};

// A JSON value for a message, cut short so a huge array does not flood it.
std::string show(const json &j) {
    std::string s = j.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

std::string in_quotes(const std::string &s) { return "\"" + s + "\""; }

const json &require(const json &obj, const char *key, const context &ctx, const std::string &path) {
    auto it = obj.find(key);
    if (it == obj.end())
        ctx.fail(status::invalid_argument, path.empty() ? key : path + "." + key,
                "required field is missing");
    return *it;
}

const json *optional(const json &obj, const char *key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

const json &require_object(const json &j, const context &ctx, const std::string &path) {
    if (!j.is_object()) ctx.fail(status::invalid_argument, path, "expected an object, got " + show(j));
    return j;
}

const json &require_array(const json &j, const context &ctx, const std::string &path) {
    if (!j.is_array()) ctx.fail(status::invalid_argument, path, "expected an array, got " + show(j));
    return j;
}

std::string as_string(const json &j, const context &ctx, const std::string &path) {
    if (!j.is_string()) ctx.fail(status::invalid_argument, path, "expected a string, got " + show(j));
    return j.get<std::string>();
}

size_t as_id(const json &j, const context &ctx, const std::string &path) {
    if (!j.is_number_unsigned())
        ctx.fail(status::invalid_argument, path,
                "expected a non-negative integer id, got " + show(j));
    return j.get<size_t>();
}

// JSON integers that fit int64 (nlohmann keeps big positives as unsigned).
bool fits_int64(const json &j) {
    if (j.is_number_unsigned())
        return j.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max());
    return j.is_number_integer();
}

std::vector<size_t> as_id_array(const json &j, const context &ctx, const std::string &path) {
    require_array(j, ctx, path);
    std::vector<size_t> ids;
    for (size_t i = 0; i < j.size(); ++i)
        ids.push_back(as_id(j[i], ctx, path + "[" + std::to_string(i) + "]"));
    return ids;
}

// Integers >= -1 (-1 = unknown), for shapes and strides.
dims as_dims(const json &j, const context &ctx, const std::string &path) {
    require_array(j, ctx, path);
    dims d;
    for (size_t i = 0; i < j.size(); ++i) {
        const json &v = j[i];
        if (!fits_int64(v))
            ctx.fail(status::invalid_argument, path + "[" + std::to_string(i) + "]",
                    "expected an integer, got " + show(v));
        dim x = v.get<int64_t>();
        if (x < -1)
            ctx.fail(status::invalid_shape, path + "[" + std::to_string(i) + "]",
                    "must be >= 0 (or -1 for unknown), got " + std::to_string(x));
        d.push_back(x);
    }
    return d;
}

// ---- enumerations ---------------------------------------------------------

// dtype names oneDNN writes that this library does not support: reported as
// unimplemented rather than as a typo.
const char *const onednn_only_dtypes[] = {"f64", "s8", "u8", "s4", "u4", "boolean", "f8_e5m2",
        "f8_e4m3", "e8m0", "f4_e2m1", "f4_e3m0"};

data_type parse_dtype(const json &j, const context &ctx, const std::string &path) {
    std::string s = as_string(j, ctx, path);
    for (data_type dt : {data_type::undef, data_type::f32, data_type::bf16, data_type::f16,
                 data_type::s32})
        if (s == to_string(dt)) return dt;
    for (const char *name : onednn_only_dtypes)
        if (s == name)
            ctx.fail(status::unimplemented, path,
                    "data type " + in_quotes(s) + " is not supported (f32, bf16, f16, s32, undef)");
    ctx.fail(status::invalid_argument, path,
            "unknown data type " + in_quotes(s) + "; known: f32, bf16, f16, s32, undef");
}

layout_type parse_layout(const json &j, const context &ctx, const std::string &path) {
    std::string s = as_string(j, ctx, path);
    for (layout_type lt : {layout_type::undef, layout_type::any, layout_type::strided})
        if (s == to_string(lt)) return lt;
    if (s == "opaque")
        ctx.fail(status::unimplemented, path,
                "layout type \"opaque\" is not supported (strided, any, undef)");
    ctx.fail(status::invalid_argument, path,
            "unknown layout type " + in_quotes(s) + "; known: strided, any, undef");
}

property_type parse_property(const json &j, const context &ctx, const std::string &path) {
    std::string s = as_string(j, ctx, path);
    for (property_type pt : {property_type::undef, property_type::variable, property_type::constant})
        if (s == to_string(pt)) return pt;
    if (s == "host_scalar") // newer oneDNN: a scalar passed by value
        ctx.fail(status::unimplemented, path, "property type \"host_scalar\" is not supported");
    ctx.fail(status::invalid_argument, path,
            "unknown property type " + in_quotes(s) + "; known: undef, variable, constant");
}

std::string known_kinds_text() {
    std::string text;
    for (op::kind k : all_op_kinds()) {
        const std::vector<std::string> names = op_kind_names(k); // canonical first
        if (!text.empty()) text += ", ";
        text += names[0];
        for (size_t i = 1; i < names.size(); ++i)
            text += (i == 1 ? (names.size() == 2 ? " (alias " : " (aliases ") : ", ") + names[i]
                    + (i + 1 == names.size() ? ")" : "");
    }
    return text;
}

std::string known_attrs_text() {
    std::string text;
    for (op::attr a : all_attrs()) text += (text.empty() ? "" : ", ") + std::string(to_string(a));
    return text;
}

// ---- attributes -----------------------------------------------------------

float as_f32(const json &v, const context &ctx, const std::string &path, const std::string &type) {
    if (!v.is_number())
        ctx.fail(status::invalid_argument, path,
                "attribute of type " + type + " needs numbers, got " + show(v));
    double d = v.get<double>();
    if (std::fabs(d) > double(std::numeric_limits<float>::max()))
        ctx.fail(status::invalid_argument, path,
                "value " + show(v) + " is out of the range of type " + type);
    return float(d);
}

int64_t as_s64(const json &v, const context &ctx, const std::string &path, const std::string &type) {
    if (!fits_int64(v))
        ctx.fail(status::invalid_argument, path,
                "attribute of type " + type + " needs integers (int64), got " + show(v));
    return v.get<int64_t>();
}

attr_value parse_attr_value(const json &entry, const context &ctx, const std::string &path) {
    require_object(entry, ctx, path);
    const std::string type = as_string(require(entry, "type", ctx, path), ctx, path + ".type");
    const json &v = require(entry, "value", ctx, path);
    const std::string vpath = path + ".value";
    if (type == "bool") {
        if (v.is_boolean()) return v.get<bool>();
        // oneDNN writes bools as 0 / 1.
        if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
            return v.get<int64_t>() == 1;
        ctx.fail(status::invalid_argument, vpath,
                "attribute of type bool needs true/false or 0/1, got " + show(v));
    }
    if (type == "s64") return as_s64(v, ctx, vpath, type);
    if (type == "f32") return as_f32(v, ctx, vpath, type);
    if (type == "string") {
        if (!v.is_string())
            ctx.fail(status::invalid_argument, vpath,
                    "attribute of type string needs a string, got " + show(v));
        return v.get<std::string>();
    }
    if (type == "s64[]" || type == "f32[]") {
        if (!v.is_array())
            ctx.fail(status::invalid_argument, vpath,
                    "attribute of type " + type + " needs an array, got " + show(v));
        std::vector<int64_t> ints;
        std::vector<float> floats;
        for (size_t i = 0; i < v.size(); ++i) {
            std::string ipath = vpath + "[" + std::to_string(i) + "]";
            if (type == "s64[]") ints.push_back(as_s64(v[i], ctx, ipath, type));
            else floats.push_back(as_f32(v[i], ctx, ipath, type));
        }
        if (type == "s64[]") return ints;
        return floats;
    }
    ctx.fail(status::invalid_argument, path + ".type",
            "unknown attribute type " + in_quotes(type) + " (value " + show(v)
                    + "); known: bool, s64, f32, string, s64[], f32[]");
}

// ---- logical tensors ------------------------------------------------------

bool is_unknown_marker(const dims &d) { return d.size() == 1 && d[0] == -1; }

logical_tensor parse_tensor(const json &j, const context &ctx, const std::string &path) {
    require_object(j, ctx, path);
    const size_t id = as_id(require(j, "id", ctx, path), ctx, path + ".id");
    const data_type dt = parse_dtype(require(j, "dtype", ctx, path), ctx, path + ".dtype");
    const layout_type layout
            = parse_layout(require(j, "layout_type", ctx, path), ctx, path + ".layout_type");
    property_type prop = property_type::undef;
    if (const json *p = optional(j, "property_type"))
        prop = parse_property(*p, ctx, path + ".property_type");

    bool rank_known = false;
    dims shape;
    if (const json *s = optional(j, "shape")) {
        shape = as_dims(*s, ctx, path + ".shape");
        rank_known = !is_unknown_marker(shape);
    }
    bool strides_given = false;
    dims strides;
    if (const json *s = optional(j, "stride")) {
        strides = as_dims(*s, ctx, path + ".stride");
        strides_given = !is_unknown_marker(strides);
    }

    // oneDNN writes [-1] for a shape with any unknown dim; known strides
    // still tell the rank, so keep it (every dim unknown).
    if (!rank_known && layout == layout_type::strided && strides_given && !strides.empty()) {
        shape.assign(strides.size(), unknown_dim);
        rank_known = true;
    }
    if (!rank_known) {
        // logical_tensor has no constructor taking both unknown rank and a
        // property; rather than drop the property silently, refuse it.
        if (prop != property_type::undef)
            ctx.fail(status::unimplemented, path + ".property_type",
                    std::string("property type \"") + to_string(prop)
                            + "\" on a tensor of unknown rank cannot be represented");
        return logical_tensor(id, dt, layout);
    }
    if (layout != layout_type::strided || !strides_given)
        return logical_tensor(id, dt, shape, layout, prop);
    if (strides.size() != shape.size())
        ctx.fail(status::invalid_shape, path + ".stride",
                "expected " + std::to_string(shape.size()) + " values (rank of shape), got "
                        + std::to_string(strides.size()));
    return logical_tensor(id, dt, shape, strides, prop);
}

std::vector<logical_tensor> parse_tensors(
        const json &j, const context &ctx, const std::string &path) {
    require_array(j, ctx, path);
    std::vector<logical_tensor> lts;
    for (size_t i = 0; i < j.size(); ++i)
        lts.push_back(parse_tensor(j[i], ctx, path + "[" + std::to_string(i) + "]"));
    return lts;
}

// ---- ops ------------------------------------------------------------------

op parse_op(const json &j, size_t index) {
    context ctx {"graph[" + std::to_string(index) + "]"};
    require_object(j, ctx, "");
    const size_t id = as_id(require(j, "id", ctx, ""), ctx, "id");
    ctx.where = "op " + std::to_string(id);
    std::string name;
    if (const json *n = optional(j, "name")) name = as_string(*n, ctx, "name");
    ctx.where += " (" + in_quotes(name) + ")";

    const std::string kind_name = as_string(require(j, "kind", ctx, ""), ctx, "kind");
    op::kind kind;
    if (!op_kind_from_string(kind_name, kind))
        ctx.fail(status::invalid_graph, "kind",
                "unknown op kind " + in_quotes(kind_name) + "; known kinds: " + known_kinds_text()
                        + ", and oneDNN's other op kinds (Wildcard, End, Convolution, ...), which "
                          "become unsupported partitions");
    op o(id, kind, name);

    if (const json *attrs = optional(j, "attrs")) {
        require_object(*attrs, ctx, "attrs");
        for (auto it = attrs->begin(); it != attrs->end(); ++it) {
            const std::string path = "attrs." + it.key();
            op::attr a;
            if (!attr_from_string(it.key(), a))
                ctx.fail(status::invalid_argument, path,
                        "unknown attribute " + in_quotes(it.key()) + "; known: " + known_attrs_text());
            o.set_attr(a, parse_attr_value(it.value(), ctx, path));
        }
    }
    o.add_inputs(parse_tensors(require(j, "inputs", ctx, ""), ctx, "inputs"));
    o.add_outputs(parse_tensors(require(j, "outputs", ctx, ""), ctx, "outputs"));
    return o;
}

// ---- writing --------------------------------------------------------------

// The shortest decimal that reads back as the same float, so 1.66667f is
// written as 1.66667 rather than as its double expansion 1.6666699647903442.
double shortest_decimal(float f) {
    char buf[32];
    for (int precision = 6; precision <= 9; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, double(f));
        if (std::strtof(buf, nullptr) == f) break;
    }
    return std::strtod(buf, nullptr);
}

json write_f32(float f, size_t op_id, op::attr a) {
    if (!std::isfinite(f))
        throw error(status::invalid_argument,
                "op " + std::to_string(op_id) + ": attrs." + to_string(a)
                        + ": non-finite value cannot be written to JSON");
    return shortest_decimal(f);
}

json write_attr(const attr_value &v, size_t op_id, op::attr a) {
    json e = json::object();
    e["type"] = attr_type_name(v);
    switch (v.index()) {
        case 0: e["value"] = std::get<bool>(v) ? 1 : 0; break; // oneDNN writes 0 / 1
        case 1: e["value"] = std::get<int64_t>(v); break;
        case 2: e["value"] = write_f32(std::get<float>(v), op_id, a); break;
        case 3: e["value"] = std::get<std::string>(v); break;
        case 4: e["value"] = std::get<std::vector<int64_t>>(v); break;
        case 5: {
            json arr = json::array();
            for (float f : std::get<std::vector<float>>(v)) arr.push_back(write_f32(f, op_id, a));
            e["value"] = arr;
            break;
        }
    }
    return e;
}

json write_tensor(const logical_tensor &lt) {
    json j = json::object();
    j["id"] = lt.get_id();
    j["dtype"] = to_string(lt.get_data_type());
    const bool rank_known = lt.ndims() != unknown_rank;
    j["shape"] = rank_known ? json(lt.get_dims()) : json::array({-1});
    if (lt.get_layout_type() != layout_type::strided)
        j["stride"] = json::array();
    else if (rank_known && lt.get_strides().size() == lt.get_dims().size())
        j["stride"] = lt.get_strides();
    else
        j["stride"] = json::array({-1}); // strides not known yet
    j["layout_type"] = to_string(lt.get_layout_type());
    j["property_type"] = to_string(lt.get_property_type());
    return j;
}

// oneDNN v3 names, see the note at the top.
const char *onednn_v3_name(op::kind k) {
    switch (k) {
        case op::kind::InterpolateBackprop: return "InterpolateBackward";
        case op::kind::BatchNormTrainingBackprop: return "BatchNormTrainingBackward";
        case op::kind::ReLUBackprop: return "ReLUBackward";
        default: break; // bpg's own ops keep their names
    }
    return to_string(k);
}

json write_op(const op &o) {
    json j = json::object();
    j["id"] = o.get_id();
    j["name"] = o.get_name();
    j["kind"] = onednn_v3_name(o.get_kind());
    json attrs = json::object();
    for (const auto &kv : o.get_attrs())
        attrs[to_string(kv.first)] = write_attr(kv.second, o.get_id(), kv.first);
    j["attrs"] = attrs;
    json ins = json::array(), outs = json::array();
    for (const auto &lt : o.get_inputs()) ins.push_back(write_tensor(lt));
    for (const auto &lt : o.get_outputs()) outs.push_back(write_tensor(lt));
    j["inputs"] = ins;
    j["outputs"] = outs;
    return j;
}

} // namespace

graph_document parse_graph_json(const std::string &text) {
    const context top {"graph JSON"};
    // Syntax, depth and duplicate keys first, without a tree: nlohmann
    // copies and dumps trees recursively, so a deep one would overflow the stack.
    io::precheck_json(text, top.where);
    const json root = json::parse(text);
    if (!root.is_object())
        top.fail(status::invalid_argument, "",
                "the top level must be an object with a \"graph\" array, got " + show(root));

    graph_document doc;
    if (const json *v = optional(root, "version")) doc.version = as_string(*v, top, "version");
    if (const json *e = optional(root, "engine_kind")) {
        std::string s = as_string(*e, top, "engine_kind");
        if (s != "cpu")
            top.fail(status::unimplemented, "engine_kind",
                    "engine kind " + in_quotes(s) + " is not supported (only \"cpu\")");
        doc.engine_kind = engine::kind::cpu;
    }
    if (const json *f = optional(root, "fpmath_mode")) {
        std::string s = as_string(*f, top, "fpmath_mode");
        if (!fpmath_mode_from_string(s, doc.fpmath))
            top.fail(status::invalid_argument, "fpmath_mode",
                    "unknown fpmath mode " + in_quotes(s) + "; known: strict, bf16, f16, any, tf32");
    }
    const json *in_ports = optional(root, "input_ports");
    const json *out_ports = optional(root, "output_ports");
    doc.has_ports = in_ports || out_ports;
    if (in_ports) doc.input_ports = as_id_array(*in_ports, top, "input_ports");
    if (out_ports) doc.output_ports = as_id_array(*out_ports, top, "output_ports");

    const json &ops = require_array(require(root, "graph", top, ""), top, "graph");
    for (size_t i = 0; i < ops.size(); ++i)
        doc.ops.push_back(parse_op(ops[i], i));
    return doc;
}

graph_document read_graph_json_file(const std::string &path) {
    const std::vector<uint8_t> bytes = io::read_file_bytes(path);
    try {
        return parse_graph_json(std::string(bytes.begin(), bytes.end()));
    } catch (const error &e) {
        throw error(e.code(), path + ": " + e.what());
    }
}

std::string write_graph_json(const graph_document &doc) {
    json root = json::object();
    root["version"] = doc.version;
    root["engine_kind"] = "cpu"; // engine::kind has cpu only
    root["fpmath_mode"] = to_string(doc.fpmath);
    if (doc.has_ports) {
        root["input_ports"] = doc.input_ports;
        root["output_ports"] = doc.output_ports;
    }
    json ops = json::array();
    for (const op &o : doc.ops) ops.push_back(write_op(o));
    root["graph"] = ops;
    try {
        return root.dump(2) + "\n";
    } catch (const json::type_error &e) { // a name that is not valid UTF-8
        throw error(status::invalid_argument, std::string("graph JSON: cannot write: ") + e.what());
    }
}

graph_document document_of(const graph &g) {
    graph_document doc;
    doc.engine_kind = g.get_engine_kind();
    doc.fpmath = g.get_fpmath_mode();
    doc.ops = g.get_ops();
    // Like oneDNN's dumps, state the graph's boundary: tensors no op produces
    // and tensors no op consumes.
    doc.has_ports = true;
    for (const auto &lt : g.get_input_tensors()) doc.input_ports.push_back(lt.get_id());
    for (const auto &lt : g.get_output_tensors()) doc.output_ports.push_back(lt.get_id());
    return doc;
}

graph make_graph(const graph_document &doc) {
    graph g(doc.engine_kind, doc.fpmath);
    for (const op &o : doc.ops) g.add_op(o);
    // Ports may list tensors that are also used inside the graph (oneDNN
    // allows an output that another op consumes), so they need not equal the
    // graph's boundary; they must name tensors that exist.
    if (doc.has_ports) {
        std::set<size_t> ids;
        for (const op &o : doc.ops) {
            for (const auto &lt : o.get_inputs()) ids.insert(lt.get_id());
            for (const auto &lt : o.get_outputs()) ids.insert(lt.get_id());
        }
        auto check = [&](const std::vector<size_t> &ports, const char *field) {
            for (size_t i = 0; i < ports.size(); ++i)
                if (!ids.count(ports[i]))
                    throw error(status::invalid_graph,
                            std::string("graph JSON: ") + field + "[" + std::to_string(i)
                                    + "]: no op has a tensor with id " + std::to_string(ports[i]));
        };
        check(doc.input_ports, "input_ports");
        check(doc.output_ports, "output_ports");
    }
    g.finalize();
    return g;
}

} // namespace bpg
