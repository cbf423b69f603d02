// Catalogue rows: graph structure (add_op, finalize) and partition::compile.
#include <limits>

#include "support/bad_input.hpp"
#include "support/backends_in_build.hpp"

namespace bpg::test {
namespace {

using A = op::attr;
using dt = data_type;

op relu(size_t id, size_t in, size_t dd, size_t out, dt type = dt::f32, dims shape = {2, 3}) {
    return op(id, op::kind::ReLUBackprop, {lt(in, type, shape), lt(dd, type, shape)}, {lt(out, type, shape)},
            "R" + std::to_string(id));
}

// InterpolateBackprop 1x2x4x4 -> 1x2x8x8 (linear, NCX, sizes) with the given
// logical tensors for src (0), diff_dst (1) and diff_src (2).
op interp(logical_tensor src, logical_tensor dd, logical_tensor ds, const char *coord = "half_pixel") {
    op o(3, op::kind::InterpolateBackprop, {src, dd}, {ds}, "UP");
    o.set_attr(A::mode, "linear").set_attr(A::data_format, "NCX").set_attr(A::sizes, std::vector<int64_t> {8, 8});
    o.set_attr(A::coordinate_transformation_mode, coord);
    return o;
}
const dims unknown4 = {-1, -1, -1, -1};
op interp_unknown_shapes() {
    return interp(lt(0, dt::f32, unknown4), lt(1, dt::f32, unknown4), logical_tensor(2, dt::f32));
}

// Compiles the only partition of ops with these input tensors and outputs
// (empty: as declared).
void compile_with(const std::vector<op> &ops, const std::vector<logical_tensor> &ins,
        const std::vector<logical_tensor> &outs = {}, const compile_options &opts = {}) {
    const graph g = graph_of(ops);
    const partition p = g.get_partitions().at(0);
    p.compile(ins, outs.empty() ? p.get_output_ports() : outs, engine(), opts);
}

// The same op with src and diff_dst of unknown rank at add_op (every rule
// that needs the rank waits for compile) and these sizes.
op interp_unknown_ranks(std::vector<int64_t> sizes) {
    op o = interp(logical_tensor(0, dt::f32), logical_tensor(1, dt::f32), logical_tensor(2, dt::f32));
    o.set_attr(A::sizes, std::move(sizes));
    return o;
}

// Interpolate with a runtime sizes input (tensor 3) declared as given.
op interp_sizes_input(logical_tensor sizes) {
    op o(3, op::kind::InterpolateBackprop, {logical_tensor(0, dt::f32), logical_tensor(1, dt::f32), sizes},
            {logical_tensor(2, dt::f32)}, "UP");
    o.set_attr(A::mode, "linear").set_attr(A::data_format, "NCX");
    return o;
}

bad_input row(std::string name, std::function<void()> attempt, status code, std::vector<std::string> has) {
    return {std::move(name), [attempt](sentinel_buffers &) { attempt(); }, code, std::move(has)};
}

std::vector<bad_input> rows() {
    const status arg = status::invalid_argument, shape = status::invalid_shape,
                 type = status::invalid_data_type, structure = status::invalid_graph;
    const logical_tensor src = lt(0, dt::f32, {1, 2, 4, 4}), dd = lt(1, dt::f32, {1, 2, 8, 8});
    return {
            row("op_ids_collide", [] { graph_of({relu(1, 0, 1, 2), relu(1, 3, 4, 5)}); }, structure,
                    {"ReLUBackprop op 1 (\"R1\"): op id 1 is already used by ReLUBackprop op 1"}),
            row("tensor_produced_twice", [] { graph_of({relu(1, 0, 1, 2), relu(2, 3, 4, 2)}); }, structure,
                    {"ReLUBackprop op 2", "tensor 2 is already the output of ReLUBackprop op 1", "at most one producer"}),
            row("tensor_id_reused_with_other_dtype", [] { graph_of({relu(1, 0, 1, 2), relu(2, 2, 3, 4, dt::bf16)}); }, structure,
                    {"ReLUBackprop op 2", "tensor 2 has data type bf16 here and f32 elsewhere"}),
            row("tensor_id_reused_with_other_shape", [] { graph_of({relu(1, 0, 1, 2), relu(2, 2, 3, 4, dt::f32, {3, 2})}); }, structure,
                    {"ReLUBackprop op 2", "tensor 2 has another shape"}),
            row("cycle_of_two_ops", [] { graph_of({relu(1, 0, 1, 2), relu(2, 2, 3, 1)}); }, structure,
                    {"the ops form a cycle", "ReLUBackprop op 1 (\"R1\")", "ReLUBackprop op 2 (\"R2\")"}),
            row("finalize_empty_graph", [] { graph_of({}); }, structure, {"graph::finalize: the graph has no ops"}),
            row("add_op_after_finalize", [] {
                    graph g = graph_of({relu(1, 0, 1, 2)});
                    g.add_op(relu(2, 3, 4, 5)); },
                    structure, {"ReLUBackprop op 2", "the graph is finalized"}),
            row("partitions_before_finalize", [] {
                    graph g;
                    g.add_op(relu(1, 0, 1, 2));
                    g.get_partitions(); },
                    structure, {"get_partitions: call finalize() first"}),
            row("compile_dangling_input_without_shape", [] { compile_with({interp_unknown_shapes()}, {}); }, shape,
                    {"partition 0 (interpolate_bwd): input tensor 0 needs a known shape", "got shape ?x?x?x?"}),
            row("compile_input_not_a_port", [=] { compile_with({interp(src, dd, logical_tensor(2, dt::f32))}, {src, dd, lt(9, dt::f32, {2})}); },
                    arg, {"tensor 9 given to compile is not an input port"}),
            row("compile_output_not_a_port", [=] { compile_with({interp(src, dd, logical_tensor(2, dt::f32))}, {src, dd}, {lt(0, dt::f32, {1})}); },
                    arg, {"tensor 0 given to compile is not an output port"}),
            row("compile_input_dtype_differs", [=] { compile_with({interp_unknown_shapes()}, {lt(0, dt::bf16, {1, 2, 4, 4}), dd}); },
                    type, {"input tensor 0 is bf16 but the graph declared f32"}),
            row("compile_input_shape_differs", [=] { compile_with({interp(src, lt(1, dt::f32, {1, 2, 8, -1}), logical_tensor(2, dt::f32))}, {src, lt(1, dt::f32, {1, 2, 9, 8})}); },
                    shape, {"input tensor 1 has shape 1x2x9x8 but the graph declared 1x2x8x?"}),
            row("compile_diff_dst_not_sizes", [=] { compile_with({interp_unknown_shapes()}, {src, lt(1, dt::f32, {1, 2, 8, 6})}); },
                    shape, {"InterpolateBackprop op 3 (\"UP\"): diff_dst (input 1, tensor 1) spatial axis 3 has size 6", "'sizes'[1] = 8"}),
            row("compile_output_strides_overlap", [=] { compile_with({interp_unknown_shapes()}, {src, dd}, {logical_tensor(2, dt::f32, {1, 2, 4, 4}, {0, 1, 4, 1})}); },
                    shape, {"output tensor 2 has strides [0, 1, 4, 1] that make elements of shape 1x2x4x4 overlap"}),
            row("compile_input_span_overflows", [=] { compile_with({interp_unknown_shapes()}, {src, logical_tensor(1, dt::f32, {1, 2, 8, 8}, {1, int64_t(1) << 62, 8, 1})}); },
                    shape, {"logical tensor 1: memory size overflows"}),
            row("compile_input_negative_stride", [=] { compile_with({interp_unknown_shapes()}, {src, logical_tensor(1, dt::f32, {1, 2, 8, 8}, {128, 64, -8, 1})}); },
                    shape, {"tensor 1 has negative stride -8"}),
            row("compile_output_declared_other_shape", [=] { compile_with({interp_unknown_shapes()}, {src, dd}, {lt(2, dt::f32, {1, 2, 8, 8})}); },
                    shape, {"output tensor 2 is declared with shape 1x2x8x8 but the op produces 1x2x4x4"}),
            row("compile_output_other_dtype", [=] { compile_with({interp_unknown_shapes()}, {src, dd}, {lt(2, dt::f16, {1, 2, 4, 4})}); },
                    type, {"output tensor 2 is f16 but the graph declared f32"}),
            row("compile_input_element_count_overflows", [=] {
                    const int64_t d = int64_t(1) << 60; // d * 2 * 4 * 4 > 2^63
                    compile_with({interp(lt(0, dt::f32, {-1, 2, 4, 4}), lt(1, dt::f32, {-1, 2, 8, 8}), logical_tensor(2, dt::f32))},
                            {lt(0, dt::f32, {d, 2, 4, 4}), lt(1, dt::f32, {d, 2, 8, 8})}); },
                    shape, {"partition 0 (interpolate_bwd): logical tensor 0: element count overflows int64"}),
            // Legal, but oneDNN's resampling has no align_corners: not the caller's fault.
            row("compile_forced_backend_cannot_run", [=] {
                    compile_options o;
                    o.backend = backend_kind::dnnl;
                    compile_with({interp(src, dd, logical_tensor(2, dt::f32), "align_corners")}, {src, dd}, {}, o); },
                    status::unimplemented,
                    test::dnnl_in_build() ? std::vector<std::string> {"dnnl", "align_corners"}
                                          : std::vector<std::string> {"'dnnl' is not available in this build", "BPG_WITH_DNNL=OFF"}),
            // Ranks known only at compile: add_op's rules run again on the concrete tensors.
            row("compile_src_rank_differs_from_diff_dst", [=] {
                    op o = interp(logical_tensor(0, dt::f32), lt(1, dt::f32, {1, 2, 8, 8, 8}), logical_tensor(2, dt::f32));
                    o.set_attr(A::sizes, std::vector<int64_t> {8, 8, 8});
                    compile_with({o}, {src, lt(1, dt::f32, {1, 2, 8, 8, 8})}); },
                    shape, {"InterpolateBackprop op 3 (\"UP\"): diff_dst (input 1, tensor 1) has rank 5 but src has rank 4"}),
            row("compile_rank5_with_two_sizes", [] {
                    compile_with({interp_unknown_ranks({8, 8})}, {lt(0, dt::f32, {1, 2, 4, 4, 4}), lt(1, dt::f32, {1, 2, 8, 8, 8})}); },
                    arg, {"InterpolateBackprop op 3", "attribute 'sizes' has 2 values; it needs one per spatial axis (3 for a rank-5 src)"}),
            row("compile_rank7_with_two_sizes", [] {
                    compile_with({interp_unknown_ranks({8, 8})},
                            {lt(0, dt::f32, {1, 2, 4, 4, 4, 4, 4}), lt(1, dt::f32, {1, 2, 8, 8, 8, 8, 8})}); },
                    shape, {"InterpolateBackprop op 3", "src (input 0, tensor 0) has rank 7", "allowed ranks: 3 to 6"}),
            row("compile_sizes_input_too_short", [=] {
                    compile_with({interp_sizes_input(lt(3, dt::s32, {-1}))}, {src, dd, lt(3, dt::s32, {1})}); },
                    shape, {"InterpolateBackprop op 3", "sizes (input 2, tensor 3) has 1 elements; it needs one per spatial axis (2)"}),
            row("compile_sizes_input_rank2", [=] {
                    compile_with({interp_sizes_input(logical_tensor(3, dt::s32))}, {src, dd, lt(3, dt::s32, {2, 1})}); },
                    shape, {"InterpolateBackprop op 3", "sizes (input 2, tensor 3) has rank 2", "allowed ranks: 1 to 1"}),
            row("compile_input_given_twice", [=] {
                    compile_with({interp(src, dd, logical_tensor(2, dt::f32))}, {src, dd, lt(0, dt::f32, {1, 2, 4, 4})}); },
                    arg, {"partition 0 (interpolate_bwd): tensor 0 is given twice among the inputs to compile"}),
            row("compile_output_among_inputs", [=] {
                    compile_with({interp(src, dd, logical_tensor(2, dt::f32))}, {src, dd, lt(2, dt::f32, {1, 2, 4, 4})}); },
                    arg, {"tensor 2 given to compile is not an input port of this partition (it is an output port"}),
            row("compile_output_given_twice", [=] {
                    const logical_tensor ds = lt(2, dt::f32, {1, 2, 4, 4});
                    compile_with({interp(src, dd, logical_tensor(2, dt::f32))}, {src, dd}, {ds, ds}); },
                    arg, {"partition 0 (interpolate_bwd): tensor 2 is given twice among the outputs to compile"}),
            row("compile_empty_partition", [] { partition().compile({}, {}, engine()); }, arg,
                    {"partition::compile: empty partition"}),
    };
}

INSTANTIATE_TEST_SUITE_P(GraphAndCompile, BadInput, ::testing::ValuesIn(rows()), row_name);

} // namespace
} // namespace bpg::test
