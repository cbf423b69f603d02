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

#include <cstdint>
#include <memory>
#include <string>
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
    enum class kind {
        InterpolateBackprop,
        BatchNormTrainingBackprop,
        ReLUBackprop,
        BatchNormTrainingBackpropSums,
        BatchNormTrainingBackpropFromSums,
        BatchNormForwardSums,
    };
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
    };

    op(size_t id, kind k, std::string name = "");
    op(size_t id, kind k, std::vector<logical_tensor> inputs,
            std::vector<logical_tensor> outputs, std::string name = "");

    op &add_input(const logical_tensor &lt);
    op &add_inputs(const std::vector<logical_tensor> &lts);
    op &add_output(const logical_tensor &lt);
    op &add_outputs(const std::vector<logical_tensor> &lts);

    op &set_attr(attr a, attr_value v);
    // Conveniences so that literals pick the intended alternative.
    op &set_attr(attr a, const char *v) { return set_attr(a, attr_value(std::string(v))); }
    op &set_attr(attr a, bool v) { return set_attr(a, attr_value(v)); }
    op &set_attr(attr a, int v) { return set_attr(a, attr_value(int64_t(v))); }
    op &set_attr(attr a, int64_t v) { return set_attr(a, attr_value(v)); }
    op &set_attr(attr a, float v) { return set_attr(a, attr_value(v)); }
    op &set_attr(attr a, double v) { return set_attr(a, attr_value(float(v))); }

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
};

const char *to_string(op::kind k);
const char *to_string(op::attr a);
// Canonical names and the aliases of docs/semantics.md; false when unknown.
bool op_kind_from_string(const std::string &s, op::kind &k);
bool attr_from_string(const std::string &s, op::attr &a);
// Every op kind and attribute; every name accepted for a kind (canonical first).
std::vector<op::kind> all_op_kinds();
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
// arena of the partition's own (max_threads threads). openmp: OpenMP parallel
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
    // Binds tensors by logical tensor id and runs. Every input and output
    // port must be bound to a non-null buffer laid out as compiled.
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

class partition {
public:
    partition() = default;
    size_t get_id() const;
    std::vector<size_t> get_ops() const;      // op ids, in execution order
    std::string get_pattern_name() const;     // e.g. "interpolate_bwd", "relu_bwd+bn_bwd"
    const std::vector<logical_tensor> &get_input_ports() const;
    const std::vector<logical_tensor> &get_output_ports() const;
    bool is_supported() const { return impl_ != nullptr; }

    // inputs/outputs: concrete logical tensors for the ports (matched by id;
    // every input port must be given, outputs may be omitted or have
    // unknown shape / any layout, and are then inferred).
    compiled_partition compile(const std::vector<logical_tensor> &inputs,
            const std::vector<logical_tensor> &outputs, const engine &e,
            const compile_options &opts = {}) const;

    struct impl;
    explicit partition(std::shared_ptr<const impl> p) : impl_(std::move(p)) {}

private:
    std::shared_ptr<const impl> impl_;
};

// How get_partitions groups ops (as in oneDNN Graph): `fusion` runs the
// pattern passes (ReLUBackprop -> BatchNormTrainingBackprop becomes one
// partition); `debug` gives every op a partition of its own.
enum class partition_policy { fusion, debug };

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
    void add_op(const op &o);
    // Checks the whole graph (cycles, tensors produced twice) and runs the
    // pattern passes. add_op is refused after this.
    void finalize();
    bool is_finalized() const;
    std::vector<partition> get_partitions(partition_policy policy = partition_policy::fusion) const;

    const std::vector<op> &get_ops() const;
    engine::kind get_engine_kind() const;
    fpmath_mode get_fpmath_mode() const;
    // Graph inputs: tensors no op produces; outputs: tensors no op consumes.
    std::vector<logical_tensor> get_input_tensors() const;
    std::vector<logical_tensor> get_output_tensors() const;

    struct impl;

private:
    std::shared_ptr<impl> impl_;
};

} // namespace bpg
#pragma GCC visibility pop
