// Ops, graphs, partitions and compiled partitions, in the style of dnnl::graph.
//
//   graph g;                                  // build
//   g.add_op(op(...).set_attr(...));          //   schema-checked here
//   g.finalize();                             //   structure-checked here
//   for (auto &p : g.get_partitions()) {      // pattern passes decide these
//       auto cp = p.compile(ins, outs, eng);  //   shapes, dtypes, kernel choice
//       cp.execute(strm, in_tensors, out_tensors);
//   }
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "bpg/status.hpp"
#include "bpg/tensor.hpp"

#pragma GCC visibility push(default)
namespace bpg {

// A typed attribute value. bool is its own alternative so that JSON "bool"
// and "s64" attributes keep their declared types.
using attr_value = std::variant<bool, int64_t, float, std::string,
        std::vector<int64_t>, std::vector<float>>;
// Type names as the oneDNN Graph serialization writes them:
// "bool", "s64", "f32", "string", "s64[]", "f32[]".
const char *attr_type_name(const attr_value &v);

class op {
public:
    // BatchNormTrainingBackpropSums and BatchNormTrainingBackpropFromSums
    // split BatchNormTrainingBackprop where its per-channel sums are reduced
    // across processes (SyncBatchNorm); BatchNormForwardSums gives the sums
    // of the forward statistics. bpg extensions (docs/semantics.md).
    // After them, oneDNN v3's other op kinds: a graph takes them, and
    // get_partitions() returns each as an unsupported partition for the
    // framework to run (docs/dnnl-graph-compat.md). The oneDNN names of the
    // first three are aliases at the end.
    enum class kind {
        InterpolateBackprop,
        BatchNormTrainingBackprop,
        ReLUBackprop,
        BatchNormTrainingBackpropSums,
        BatchNormTrainingBackpropFromSums,
        BatchNormForwardSums,
        Abs, AbsBackward, Add, AvgPool, AvgPoolBackward, BatchNormForwardTraining,
        BatchNormInference, BiasAdd, BiasAddBackward, Clamp, ClampBackward, Concat,
        Convolution, ConvolutionBackwardData, ConvolutionBackwardWeights, ConvTranspose,
        ConvTransposeBackwardData, ConvTransposeBackwardWeights, Dequantize, Divide,
        DynamicDequantize, DynamicQuantize, Elu, EluBackward, End, Exp, GELU, GELUBackward,
        GroupNorm, HardSigmoid, HardSigmoidBackward, HardSwish, HardSwishBackward,
        Interpolate, LayerNorm, LayerNormBackward, LeakyReLU, Log, LogSoftmax,
        LogSoftmaxBackward, MatMul, Maximum, MaxPool, MaxPoolBackward, Minimum, Mish,
        MishBackward, Multiply, Pow, PReLU, PReLUBackward, Quantize, Reciprocal, ReduceL1,
        ReduceL2, ReduceMax, ReduceMean, ReduceMin, ReduceProd, ReduceSum, ReLU, Reorder,
        Round, Select, Sigmoid, SigmoidBackward, SoftMax, SoftMaxBackward, SoftPlus,
        SoftPlusBackward, Sqrt, SqrtBackward, Square, SquaredDifference, StaticReshape,
        StaticTranspose, Subtract, Tanh, TanhBackward, TypeCast, Wildcard, GenIndex,
        GreaterEqual,
        InterpolateBackward = InterpolateBackprop,
        BatchNormTrainingBackward = BatchNormTrainingBackprop,
        ReLUBackward = ReLUBackprop,
    };
    // bpg's attributes, then the rest of oneDNN v3's (for unsupported ops).
    enum class attr {
        mode,
        coordinate_transformation_mode,
        nearest_mode,
        sizes,
        scales,
        data_format,
        input_pixel_offsets,
        output_pixel_offsets,
        epsilon,
        use_global_stats,
        use_dst,
        global_count,
        alpha, beta, max, min, momentum, axis, begin_norm_axis, groups, axes, dilations,
        dst_shape, kernel, order, output_padding, pads_begin, pads_end, shape, src_shape,
        strides, weights_shape, zps, group_shape, exclude_pad, keep_dims, keep_stats,
        per_channel_broadcast, special_zero, transpose_a, transpose_b, use_affine,
        auto_broadcast, auto_pad, qtype, rounding_type, weights_format,
    };

    op(size_t id, kind k, std::string name = "");
    op(size_t id, kind k, std::vector<logical_tensor> inputs,
            std::vector<logical_tensor> outputs, std::string name = "");

    op &add_input(const logical_tensor &lt);
    op &add_inputs(const std::vector<logical_tensor> &lts);
    op &add_output(const logical_tensor &lt);
    op &add_outputs(const std::vector<logical_tensor> &lts);

    // Any value that names an attribute type: bool; any integer (s64); float
    // or double (f32); a string; a range of integers (s64[]) or of floats
    // (f32[]); an attr_value. As oneDNN's set_attr<T>, T may be given.
    template <typename T> op &set_attr(attr a, const T &v);
    // A braced list: set_attr(op::attr::sizes, {8, 8}).
    template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
    op &set_attr(attr a, std::initializer_list<T> v) {
        return set_attr(a, std::vector<T>(v));
    }

    size_t get_id() const { return id_; }
    kind get_kind() const { return kind_; }
    const std::string &get_name() const { return name_; }
    const std::vector<logical_tensor> &get_inputs() const { return inputs_; }
    const std::vector<logical_tensor> &get_outputs() const { return outputs_; }
    const std::vector<std::pair<attr, attr_value>> &get_attrs() const { return attrs_; }
    bool has_attr(attr a) const;
    const attr_value *find_attr(attr a) const; // nullptr when absent

private:
    size_t id_;
    kind kind_;
    std::string name_;
    std::vector<logical_tensor> inputs_;
    std::vector<logical_tensor> outputs_;
    std::vector<std::pair<attr, attr_value>> attrs_; // insertion order, unique keys

    op &store_attr(attr a, attr_value v);
    template <typename T> int64_t to_s64(attr a, T v) const;
    template <typename T> float to_f32(attr a, T v) const;
    [[noreturn]] void refuse_attr(attr a, const std::string &value, const char *type) const;
};

template <typename T> int64_t op::to_s64(attr a, T v) const {
    if constexpr (std::is_unsigned_v<T>)
        if (v > T(std::numeric_limits<int64_t>::max())) refuse_attr(a, std::to_string(v), "s64");
    return int64_t(v);
}

template <typename T> float op::to_f32(attr a, T v) const {
    if (std::isfinite(v) && std::fabs(double(v)) > double(std::numeric_limits<float>::max()))
        refuse_attr(a, std::to_string(v), "f32");
    return float(v);
}

template <typename T> op &op::set_attr(attr a, const T &v) {
    if constexpr (std::is_same_v<T, attr_value>) {
        return store_attr(a, v);
    } else if constexpr (std::is_same_v<T, bool>) {
        return store_attr(a, attr_value(v));
    } else if constexpr (std::is_integral_v<T>) {
        return store_attr(a, attr_value(to_s64(a, v)));
    } else if constexpr (std::is_floating_point_v<T>) {
        return store_attr(a, attr_value(to_f32(a, v)));
    } else if constexpr (std::is_convertible_v<const T &, std::string_view>) {
        if constexpr (std::is_pointer_v<T>)
            if (!v) refuse_attr(a, "a null pointer", "string");
        return store_attr(a, attr_value(std::string(std::string_view(v))));
    } else {
        using element = std::decay_t<decltype(*std::begin(v))>;
        static_assert(std::is_arithmetic_v<element> && !std::is_same_v<element, bool>,
                "set_attr takes bool, a number, a string or a range of numbers");
        if constexpr (std::is_integral_v<element>) {
            std::vector<int64_t> list;
            for (const element &e : v) list.push_back(to_s64(a, e));
            return store_attr(a, attr_value(std::move(list)));
        } else {
            std::vector<float> list;
            for (const element &e : v) list.push_back(to_f32(a, e));
            return store_attr(a, attr_value(std::move(list)));
        }
    }
}

const char *to_string(op::kind k);
const char *to_string(op::attr a);
// Canonical names and the aliases of docs/semantics.md, and the names of
// oneDNN's other op kinds; false when unknown.
bool op_kind_from_string(const std::string &s, op::kind &k);
bool attr_from_string(const std::string &s, op::attr &a);
// Whether bpg runs ops of this kind (false: an unsupported partition).
bool is_implemented(op::kind k);
// The op kinds bpg implements; the oneDNN kinds it only carries; every
// attribute; every name accepted for a kind (canonical first).
std::vector<op::kind> all_op_kinds();
std::vector<op::kind> unimplemented_op_kinds();
std::vector<op::attr> all_attrs();
std::vector<std::string> op_kind_names(op::kind k);

// Which implementation runs a compiled partition. auto_select applies the
// library's dispatch rule; the others force a backend (an error if it cannot
// run the partition). The environment variable BPG_BACKEND=ref|tbb|dnnl|auto
// overrides auto_select.
enum class backend_kind { auto_select, ref, tbb, dnnl };
const char *to_string(backend_kind b);
bool backend_from_string(const std::string &s, backend_kind &b);

// Where the oneTBB backend's parallel loops run. tbb_arena: a oneTBB task
// arena of the partition's own (max_threads threads), or the caller's arena
// when it has as many (docs/threading.md). openmp: OpenMP parallel
// regions on the calling thread's team, for hosts that already keep an OpenMP
// pool busy (PyTorch): their spinning workers then do bpg's work instead of
// competing with it. Results are the same bits either way.
enum class threading_runtime { tbb_arena, openmp };
const char *to_string(threading_runtime r);

struct compile_options {
    backend_kind backend = backend_kind::auto_select;
    // Threads the partition's kernels may use (oneTBB arena size, and the
    // OpenMP team size of oneDNN primitives, set for the call only on the
    // calling thread). 0: bpg::get_max_threads(). Never a process-wide change.
    int max_threads = 0;
    threading_runtime runtime = threading_runtime::tbb_arena;
};

class compiled_partition {
public:
    compiled_partition() = default;
    // The concrete logical tensor (shape, strides) of a port after compile.
    logical_tensor query_logical_tensor(size_t id) const;
    const std::vector<logical_tensor> &get_inputs() const;
    const std::vector<logical_tensor> &get_outputs() const;
    // (input id, output id) pairs that may share a buffer: none, bpg refuses
    // outputs that overlap inputs.
    std::vector<std::pair<size_t, size_t>> get_inplace_ports() const { return {}; }
    // Binds tensors by logical tensor id and runs. Every input and output
    // port must be bound to a non-null buffer laid out as compiled, but
    // InterpolateBackprop's src, whose shape alone is read.
    void execute(const stream &s, const std::vector<tensor> &inputs,
            const std::vector<tensor> &outputs) const;
    backend_kind get_backend() const;
    std::string get_backend_name() const;
    // Why the dispatch rule chose that backend (and what it passed over).
    std::string get_dispatch_reason() const;
    // The kernel path the backend chose at compile, e.g. "bn:channel_tasks:
    // sums=planar:update=planar:cached" (docs/verbose.md lists them).
    std::string get_kernel_path() const;
    // One line: ops, backend and kernel path, shapes, dtypes (for logs and bpg-run).
    std::string describe() const;

    struct impl;
    explicit compiled_partition(std::shared_ptr<const impl> p) : impl_(std::move(p)) {}

private:
    std::shared_ptr<const impl> impl_;
};

// How get_partitions groups ops (as in oneDNN Graph): `fusion` runs the
// pattern passes (ReLUBackprop -> BatchNormTrainingBackprop becomes one
// partition); `debug` gives every op a partition of its own.
enum class partition_policy { fusion, debug };

class partition {
public:
    using policy = partition_policy; // dnnl::graph::partition::policy
    partition() = default;
    size_t get_id() const;
    std::vector<size_t> get_ops() const;      // op ids, in execution order
    size_t get_ops_num() const;
    std::string get_pattern_name() const;     // e.g. "interpolate_bwd", "relu_bwd+bn_bwd"
    const std::vector<logical_tensor> &get_input_ports() const;
    const std::vector<logical_tensor> &get_output_ports() const;
    // false for a partition of an op kind bpg does not implement (Wildcard,
    // Convolution, ...): the framework runs it; compile() refuses it.
    bool is_supported() const;
    engine::kind get_engine_kind() const;

    // inputs/outputs: concrete logical tensors for the ports (matched by id;
    // every input port must be given, outputs may be omitted or have
    // unknown shape / any layout, and are then inferred).
    compiled_partition compile(const std::vector<logical_tensor> &inputs,
            const std::vector<logical_tensor> &outputs, const engine &e,
            const compile_options &opts = {}) const;

    // oneDNN's one-op partition: the op alone in a graph of engine kind k.
    partition(const op &o, engine::kind k);

    struct impl;
    explicit partition(std::shared_ptr<const impl> p) : impl_(std::move(p)) {}

private:
    std::shared_ptr<const impl> impl_;
};

enum class fpmath_mode { strict, bf16, f16, any, tf32 };
const char *to_string(fpmath_mode m);
bool fpmath_mode_from_string(const std::string &s, fpmath_mode &m);

class graph {
public:
    explicit graph(engine::kind k = engine::kind::cpu,
            fpmath_mode m = fpmath_mode::strict);

    // Checks the op against its schema (arity, dtypes, attributes, shapes
    // where known) and against the ops already added (id collisions, a tensor
    // id reused with another dtype or shape). Throws bpg::error.
    // With allow_exception = false, returns the error's status instead.
    status add_op(const op &o, bool allow_exception = true);
    // Checks the whole graph (cycles, tensors produced twice) and runs the
    // pattern passes. add_op is refused after this.
    void finalize();
    bool is_finalized() const;
    std::vector<partition> get_partitions(partition_policy policy = partition_policy::fusion) const;

    const std::vector<op> &get_ops() const;
    engine::kind get_engine_kind() const;
    fpmath_mode get_fpmath_mode() const;
    // oneDNN's forms; apply_to_int is kept and returned (bpg has no integer ops).
    void set_fpmath_mode(fpmath_mode m, bool apply_to_int = false);
    void get_fpmath_mode(fpmath_mode &m, bool &apply_to_int) const;
    // Graph inputs: tensors no op produces; outputs: tensors no op consumes.
    std::vector<logical_tensor> get_input_tensors() const;
    std::vector<logical_tensor> get_output_tensors() const;

    struct impl;

private:
    void add_checked_op(const op &o);
    std::shared_ptr<impl> impl_;
};

} // namespace bpg
#pragma GCC visibility pop
