#include <algorithm>
#include <cstring>

#include "bpg/graph.hpp"

namespace bpg {

const char *attr_type_name(const attr_value &v) {
    switch (v.index()) {
        case 0: return "bool";
        case 1: return "s64";
        case 2: return "f32";
        case 3: return "string";
        case 4: return "s64[]";
        case 5: return "f32[]";
    }
    return "unknown";
}

op::op(size_t id, kind k, std::string name) : id_(id), kind_(k), name_(std::move(name)) {}

op::op(size_t id, kind k, std::vector<logical_tensor> inputs,
        std::vector<logical_tensor> outputs, std::string name)
    : id_(id), kind_(k), name_(std::move(name)), inputs_(std::move(inputs)),
      outputs_(std::move(outputs)) {}

op &op::add_input(const logical_tensor &lt) { inputs_.push_back(lt); return *this; }
op &op::add_inputs(const std::vector<logical_tensor> &lts) {
    inputs_.insert(inputs_.end(), lts.begin(), lts.end());
    return *this;
}
op &op::add_output(const logical_tensor &lt) { outputs_.push_back(lt); return *this; }
op &op::add_outputs(const std::vector<logical_tensor> &lts) {
    outputs_.insert(outputs_.end(), lts.begin(), lts.end());
    return *this;
}

op &op::set_attr(attr a, attr_value v) {
    for (auto &kv : attrs_)
        if (kv.first == a) { kv.second = std::move(v); return *this; }
    attrs_.emplace_back(a, std::move(v));
    return *this;
}

bool op::has_attr(attr a) const { return find_attr(a) != nullptr; }

const attr_value *op::find_attr(attr a) const {
    for (auto &kv : attrs_)
        if (kv.first == a) return &kv.second;
    return nullptr;
}

namespace {

struct kind_name { op::kind kind; const char *name; };
// The first name of each kind is canonical (oneDNN Graph technical preview);
// the others are what oneDNN v3.x writes in its graph dumps.
const kind_name kind_names[] = {
        {op::kind::InterpolateBackprop, "InterpolateBackprop"},
        {op::kind::InterpolateBackprop, "InterpolateBackward"},
        {op::kind::BatchNormTrainingBackprop, "BatchNormTrainingBackprop"},
        {op::kind::BatchNormTrainingBackprop, "BatchNormTrainingBackward"},
        {op::kind::BatchNormTrainingBackprop, "BatchNormBackprop"},
        {op::kind::ReLUBackprop, "ReLUBackprop"},
        {op::kind::ReLUBackprop, "ReLUBackward"},
        {op::kind::BatchNormTrainingBackpropSums, "BatchNormTrainingBackpropSums"},
        {op::kind::BatchNormTrainingBackpropFromSums, "BatchNormTrainingBackpropFromSums"},
        {op::kind::BatchNormForwardSums, "BatchNormForwardSums"},
};

struct attr_name { op::attr attr; const char *name; };
const attr_name attr_names[] = {
        {op::attr::mode, "mode"},
        {op::attr::coordinate_transformation_mode, "coordinate_transformation_mode"},
        {op::attr::nearest_mode, "nearest_mode"},
        {op::attr::sizes, "sizes"},
        {op::attr::scales, "scales"},
        {op::attr::data_format, "data_format"},
        {op::attr::input_pixel_offsets, "input_pixel_offsets"},
        {op::attr::output_pixel_offsets, "output_pixel_offsets"},
        {op::attr::epsilon, "epsilon"},
        {op::attr::use_global_stats, "use_global_stats"},
        {op::attr::use_dst, "use_dst"},
        {op::attr::global_count, "global_count"},
};

} // namespace

const char *to_string(op::kind k) {
    for (auto &kn : kind_names)
        if (kn.kind == k) return kn.name;
    return "unknown";
}

bool op_kind_from_string(const std::string &s, op::kind &k) {
    for (auto &kn : kind_names)
        if (s == kn.name) { k = kn.kind; return true; }
    return false;
}

std::vector<op::kind> all_op_kinds() {
    std::vector<op::kind> v;
    for (auto &kn : kind_names)
        if (v.empty() || v.back() != kn.kind) v.push_back(kn.kind);
    return v;
}

std::vector<op::attr> all_attrs() {
    std::vector<op::attr> v;
    for (auto &an : attr_names) v.push_back(an.attr);
    return v;
}

std::vector<std::string> op_kind_names(op::kind k) {
    std::vector<std::string> v;
    for (auto &kn : kind_names)
        if (kn.kind == k) v.push_back(kn.name);
    return v;
}

const char *to_string(op::attr a) {
    for (auto &an : attr_names)
        if (an.attr == a) return an.name;
    return "unknown";
}

bool attr_from_string(const std::string &s, op::attr &a) {
    for (auto &an : attr_names)
        if (s == an.name) { a = an.attr; return true; }
    return false;
}

const char *to_string(backend_kind b) {
    switch (b) {
        case backend_kind::auto_select: return "auto";
        case backend_kind::ref: return "ref";
        case backend_kind::tbb: return "tbb";
        case backend_kind::dnnl: return "dnnl";
    }
    return "unknown";
}

bool backend_from_string(const std::string &s, backend_kind &b) {
    for (backend_kind k : {backend_kind::auto_select, backend_kind::ref, backend_kind::tbb,
                 backend_kind::dnnl})
        if (s == to_string(k)) { b = k; return true; }
    return false;
}

const char *to_string(fpmath_mode m) {
    switch (m) {
        case fpmath_mode::strict: return "strict";
        case fpmath_mode::bf16: return "bf16";
        case fpmath_mode::f16: return "f16";
        case fpmath_mode::any: return "any";
        case fpmath_mode::tf32: return "tf32";
    }
    return "unknown";
}

bool fpmath_mode_from_string(const std::string &s, fpmath_mode &m) {
    for (fpmath_mode k : {fpmath_mode::strict, fpmath_mode::bf16, fpmath_mode::f16,
                 fpmath_mode::any, fpmath_mode::tf32})
        if (s == to_string(k)) { m = k; return true; }
    return false;
}

} // namespace bpg
