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

op &op::store_attr(attr a, attr_value v) {
    for (auto &kv : attrs_)
        if (kv.first == a) { kv.second = std::move(v); return *this; }
    attrs_.emplace_back(a, std::move(v));
    return *this;
}

void op::refuse_attr(attr a, const std::string &value, const char *type) const {
    std::string who = std::string(to_string(kind_)) + " op " + std::to_string(id_);
    if (!name_.empty()) who += " (\"" + name_ + "\")";
    throw error(status::invalid_argument,
            who + ": attribute '" + to_string(a) + "' cannot take " + value + ": it is not a "
                    + type + " value");
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

// oneDNN v3's op kinds bpg carries in a graph without running them.
#define BPG_KIND(name) {op::kind::name, #name}
const kind_name unimplemented_kind_names[] = {BPG_KIND(Abs), BPG_KIND(AbsBackward), BPG_KIND(Add),
        BPG_KIND(AvgPool), BPG_KIND(AvgPoolBackward), BPG_KIND(BatchNormForwardTraining),
        BPG_KIND(BatchNormInference), BPG_KIND(BiasAdd), BPG_KIND(BiasAddBackward), BPG_KIND(Clamp),
        BPG_KIND(ClampBackward), BPG_KIND(Concat), BPG_KIND(Convolution), BPG_KIND(ConvolutionBackwardData),
        BPG_KIND(ConvolutionBackwardWeights), BPG_KIND(ConvTranspose), BPG_KIND(ConvTransposeBackwardData),
        BPG_KIND(ConvTransposeBackwardWeights), BPG_KIND(Dequantize), BPG_KIND(Divide),
        BPG_KIND(DynamicDequantize), BPG_KIND(DynamicQuantize), BPG_KIND(Elu), BPG_KIND(EluBackward),
        BPG_KIND(End), BPG_KIND(Exp), BPG_KIND(GELU), BPG_KIND(GELUBackward), BPG_KIND(GroupNorm),
        BPG_KIND(HardSigmoid), BPG_KIND(HardSigmoidBackward), BPG_KIND(HardSwish),
        BPG_KIND(HardSwishBackward), BPG_KIND(Interpolate), BPG_KIND(LayerNorm),
        BPG_KIND(LayerNormBackward), BPG_KIND(LeakyReLU), BPG_KIND(Log), BPG_KIND(LogSoftmax),
        BPG_KIND(LogSoftmaxBackward), BPG_KIND(MatMul), BPG_KIND(Maximum), BPG_KIND(MaxPool),
        BPG_KIND(MaxPoolBackward), BPG_KIND(Minimum), BPG_KIND(Mish), BPG_KIND(MishBackward),
        BPG_KIND(Multiply), BPG_KIND(Pow), BPG_KIND(PReLU), BPG_KIND(PReLUBackward), BPG_KIND(Quantize),
        BPG_KIND(Reciprocal), BPG_KIND(ReduceL1), BPG_KIND(ReduceL2), BPG_KIND(ReduceMax),
        BPG_KIND(ReduceMean), BPG_KIND(ReduceMin), BPG_KIND(ReduceProd), BPG_KIND(ReduceSum),
        BPG_KIND(ReLU), BPG_KIND(Reorder), BPG_KIND(Round), BPG_KIND(Select), BPG_KIND(Sigmoid),
        BPG_KIND(SigmoidBackward), BPG_KIND(SoftMax), BPG_KIND(SoftMaxBackward), BPG_KIND(SoftPlus),
        BPG_KIND(SoftPlusBackward), BPG_KIND(Sqrt), BPG_KIND(SqrtBackward), BPG_KIND(Square),
        BPG_KIND(SquaredDifference), BPG_KIND(StaticReshape), BPG_KIND(StaticTranspose),
        BPG_KIND(Subtract), BPG_KIND(Tanh), BPG_KIND(TanhBackward), BPG_KIND(TypeCast),
        BPG_KIND(Wildcard), BPG_KIND(GenIndex), BPG_KIND(GreaterEqual)};
#undef BPG_KIND

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
        {op::attr::alpha, "alpha"},
        {op::attr::beta, "beta"},
        {op::attr::max, "max"},
        {op::attr::min, "min"},
        {op::attr::momentum, "momentum"},
        {op::attr::axis, "axis"},
        {op::attr::begin_norm_axis, "begin_norm_axis"},
        {op::attr::groups, "groups"},
        {op::attr::axes, "axes"},
        {op::attr::dilations, "dilations"},
        {op::attr::dst_shape, "dst_shape"},
        {op::attr::kernel, "kernel"},
        {op::attr::order, "order"},
        {op::attr::output_padding, "output_padding"},
        {op::attr::pads_begin, "pads_begin"},
        {op::attr::pads_end, "pads_end"},
        {op::attr::shape, "shape"},
        {op::attr::src_shape, "src_shape"},
        {op::attr::strides, "strides"},
        {op::attr::weights_shape, "weights_shape"},
        {op::attr::zps, "zps"},
        {op::attr::group_shape, "group_shape"},
        {op::attr::exclude_pad, "exclude_pad"},
        {op::attr::keep_dims, "keep_dims"},
        {op::attr::keep_stats, "keep_stats"},
        {op::attr::per_channel_broadcast, "per_channel_broadcast"},
        {op::attr::special_zero, "special_zero"},
        {op::attr::transpose_a, "transpose_a"},
        {op::attr::transpose_b, "transpose_b"},
        {op::attr::use_affine, "use_affine"},
        {op::attr::auto_broadcast, "auto_broadcast"},
        {op::attr::auto_pad, "auto_pad"},
        {op::attr::qtype, "qtype"},
        {op::attr::rounding_type, "rounding_type"},
        {op::attr::weights_format, "weights_format"},
};

} // namespace

const char *to_string(op::kind k) {
    for (auto &kn : kind_names)
        if (kn.kind == k) return kn.name;
    for (auto &kn : unimplemented_kind_names)
        if (kn.kind == k) return kn.name;
    return "unknown";
}

bool op_kind_from_string(const std::string &s, op::kind &k) {
    for (auto &kn : kind_names)
        if (s == kn.name) { k = kn.kind; return true; }
    for (auto &kn : unimplemented_kind_names)
        if (s == kn.name) { k = kn.kind; return true; }
    return false;
}

bool is_implemented(op::kind k) {
    for (auto &kn : kind_names)
        if (kn.kind == k) return true;
    return false;
}

std::vector<op::kind> unimplemented_op_kinds() {
    std::vector<op::kind> v;
    for (auto &kn : unimplemented_kind_names) v.push_back(kn.kind);
    return v;
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
    for (auto &kn : unimplemented_kind_names)
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
