// graph: collects checked ops, then finalize() checks the structure (every
// tensor produced at most once, no cycles) and runs the pattern passes.
#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "graph/graph_internal.hpp"
#include "graph/op_schema.hpp"
#include "core/verbose.hpp"
#include "graph/verbose_text.hpp"
#include "passes/partitioning.hpp"

namespace bpg {

using graph_impl::op_label;

graph::graph(engine::kind k, fpmath_mode m) : impl_(std::make_shared<impl>()) {
    impl_->engine_kind = k;
    impl_->fpmath = m;
}

namespace {

// A tensor id used by several ops must describe one tensor everywhere: b,
// a use in op o, against the facts of the earlier uses.
void check_consistent(const op &o, const tensor_facts &a, const logical_tensor &b) {
    auto mismatch = [&](const std::string &what) {
        throw error(status::invalid_graph,
                op_label(o) + ": tensor " + std::to_string(b.get_id()) + " " + what
                        + " than where another op already uses the same id; one id is one tensor");
    };
    // undef (a framework op that does not say) agrees with any type.
    if (a.dt != data_type::undef && b.get_data_type() != data_type::undef && a.dt != b.get_data_type())
        mismatch(std::string("has data type ") + to_string(b.get_data_type()) + " here and "
                + to_string(a.dt) + " elsewhere; other data type");
    if (a.rank >= 0 && b.ndims() >= 0) {
        if (a.rank != b.ndims()) mismatch("has another rank");
        for (int i = 0; i < a.rank; ++i) {
            dim x = a.shape[i], y = b.get_dims()[i];
            if (x >= 0 && y >= 0 && x != y) mismatch("has another shape");
        }
        if (b.get_layout_type() == layout_type::strided && !a.strides.empty()
                && !b.get_strides().empty() && a.strides != b.get_strides())
            mismatch("has other strides");
    }
}

// Adds what b knows to the facts of its id (b is consistent with them).
void learn(tensor_facts &a, const logical_tensor &b) {
    if (b.get_data_type() != data_type::undef) a.dt = b.get_data_type();
    if (b.ndims() < 0) return;
    if (a.rank < 0) {
        a.rank = b.ndims();
        a.shape = b.get_dims();
    }
    for (int i = 0; i < a.rank; ++i)
        if (a.shape[i] < 0) a.shape[i] = b.get_dims()[i];
    if (a.strides.empty() && b.get_layout_type() == layout_type::strided) a.strides = b.get_strides();
}

// Partitions of op groups, with their ports: inputs are the tensors a group
// reads and does not produce; outputs those it produces and that are read
// outside it or by nothing (internal tensors are neither).
std::vector<partition> make_partitions(const std::vector<op> &ops, const std::vector<passes::op_group> &groups,
        engine::kind ek) {
    std::unordered_map<size_t, std::vector<size_t>> consumers; // tensor -> op indices
    for (size_t i = 0; i < ops.size(); ++i)
        for (const logical_tensor &lt : ops[i].get_inputs()) consumers[lt.get_id()].push_back(i);
    std::vector<partition> parts;
    for (const passes::op_group &g : groups) {
        auto p = std::make_shared<partition::impl>();
        p->id = parts.size();
        p->pattern = g.pattern;
        p->engine_kind = ek;
        p->supported = is_implemented(ops[g.ops.front()].get_kind());
        std::unordered_set<size_t> inside(g.ops.begin(), g.ops.end()), produced, seen_in;
        for (size_t i : g.ops) p->ops.push_back(ops[i]);
        for (size_t i : g.ops)
            for (const logical_tensor &lt : ops[i].get_outputs()) produced.insert(lt.get_id());
        for (size_t i : g.ops) {
            for (const logical_tensor &lt : ops[i].get_inputs())
                if (!produced.count(lt.get_id()) && seen_in.insert(lt.get_id()).second) p->inputs.push_back(lt);
            for (const logical_tensor &lt : ops[i].get_outputs()) {
                bool used_outside = false, used_inside = false;
                for (size_t c : consumers[lt.get_id()]) (inside.count(c) ? used_inside : used_outside) = true;
                if (used_outside || !used_inside) p->outputs.push_back(lt);
            }
        }
        parts.push_back(partition(p));
    }
    return parts;
}

} // namespace

status graph::add_op(const op &o, bool allow_exception) {
    if (allow_exception) {
        add_checked_op(o);
        return status::success;
    }
    try {
        add_checked_op(o);
    } catch (const error &e) {
        return e.code();
    }
    return status::success;
}

void graph::add_checked_op(const op &o) {
    if (impl_->finalized)
        throw error(status::invalid_graph,
                op_label(o) + ": the graph is finalized; add ops before finalize()");
    auto same_id = impl_->op_index.find(o.get_id());
    if (same_id != impl_->op_index.end())
        throw error(status::invalid_graph,
                op_label(o) + ": op id " + std::to_string(o.get_id()) + " is already used by "
                        + op_label(impl_->ops[same_id->second]));
    graph_impl::validate_op(o);
    for (const auto *mine : {&o.get_inputs(), &o.get_outputs()})
        for (const logical_tensor &b : *mine) {
            auto it = impl_->tensors.find(b.get_id());
            if (it != impl_->tensors.end()) check_consistent(o, it->second, b);
        }
    for (const logical_tensor &b : o.get_outputs()) {
        auto it = impl_->producer.find(b.get_id());
        if (it != impl_->producer.end())
            throw error(status::invalid_graph,
                    op_label(o) + ": tensor " + std::to_string(b.get_id()) + " is already the output of "
                            + op_label(impl_->ops[it->second]) + "; a tensor has at most one producer");
    }
    // Checked: nothing below throws, so a refused op leaves no trace.
    const size_t index = impl_->ops.size();
    impl_->op_index.emplace(o.get_id(), index);
    for (const auto *mine : {&o.get_inputs(), &o.get_outputs()})
        for (const logical_tensor &b : *mine) learn(impl_->tensors[b.get_id()], b);
    for (const logical_tensor &b : o.get_outputs()) impl_->producer.emplace(b.get_id(), index);
    impl_->ops.push_back(o);
}

void graph::finalize() {
    if (impl_->finalized) return;
    const auto &ops = impl_->ops;
    if (ops.empty()) throw error(status::invalid_graph, "graph::finalize: the graph has no ops");
    // Kahn's algorithm; ties keep insertion order so partitions are stable.
    std::unordered_map<size_t, size_t> producer;
    for (size_t i = 0; i < ops.size(); ++i)
        for (const logical_tensor &lt : ops[i].get_outputs()) producer[lt.get_id()] = i;
    std::vector<std::vector<size_t>> next(ops.size());
    std::vector<size_t> indegree(ops.size(), 0);
    for (size_t i = 0; i < ops.size(); ++i) {
        std::unordered_set<size_t> preds;
        for (const logical_tensor &lt : ops[i].get_inputs()) {
            auto it = producer.find(lt.get_id());
            if (it != producer.end() && preds.insert(it->second).second) {
                next[it->second].push_back(i);
                ++indegree[i];
            }
        }
    }
    // The ready op added first goes next: a min-heap of insertion indices.
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
    for (size_t i = 0; i < ops.size(); ++i)
        if (indegree[i] == 0) ready.push(i);
    std::vector<size_t> order;
    std::vector<bool> done(ops.size(), false);
    while (!ready.empty()) {
        const size_t pick = ready.top();
        ready.pop();
        done[pick] = true;
        order.push_back(pick);
        for (size_t n : next[pick])
            if (--indegree[n] == 0) ready.push(n);
    }
    if (order.size() < ops.size()) {
        std::string cycle;
        for (size_t i = 0; i < ops.size(); ++i)
            if (!done[i]) cycle += (cycle.empty() ? "" : ", ") + op_label(ops[i]);
        throw error(status::invalid_graph, "graph::finalize: the ops form a cycle: " + cycle);
    }
    for (size_t i : order) impl_->sorted_ops.push_back(ops[i]);

    std::vector<passes::fusion_decision> decisions;
    impl_->partitions = make_partitions(impl_->sorted_ops,
            passes::partition_ops(impl_->sorted_ops, &decisions), impl_->engine_kind);
    if (get_verbose() >= 2)
        for (const passes::fusion_decision &d : decisions) {
            std::vector<op> involved;
            for (size_t i : d.ops) involved.push_back(impl_->sorted_ops[i]);
            core::verbose_print("fusion," + d.pattern + "," + graph_impl::verbose_ops(involved) + ","
                    + (d.fused ? "fused," : "not_fused,") + d.reason);
        }
    std::vector<passes::op_group> singles; // partition_policy::debug: one op each, in execution order
    for (size_t i = 0; i < impl_->sorted_ops.size(); ++i)
        singles.push_back({passes::single_pattern_name(impl_->sorted_ops[i].get_kind()), {i}});
    impl_->debug_partitions = make_partitions(impl_->sorted_ops, singles, impl_->engine_kind);
    impl_->finalized = true;
}

bool graph::is_finalized() const { return impl_->finalized; }

std::vector<partition> graph::get_partitions(partition_policy policy) const {
    if (!impl_->finalized)
        throw error(status::invalid_graph, "graph::get_partitions: call finalize() first");
    return policy == partition_policy::fusion ? impl_->partitions : impl_->debug_partitions;
}

const std::vector<op> &graph::get_ops() const { return impl_->ops; }
engine::kind graph::get_engine_kind() const { return impl_->engine_kind; }
fpmath_mode graph::get_fpmath_mode() const { return impl_->fpmath; }

void graph::set_fpmath_mode(fpmath_mode m, bool apply_to_int) {
    if (impl_->finalized)
        throw error(status::invalid_graph, "graph::set_fpmath_mode: the graph is finalized; set it before finalize()");
    impl_->fpmath = m;
    impl_->fpmath_apply_to_int = apply_to_int;
}

void graph::get_fpmath_mode(fpmath_mode &m, bool &apply_to_int) const {
    m = impl_->fpmath;
    apply_to_int = impl_->fpmath_apply_to_int;
}

std::vector<logical_tensor> graph::get_input_tensors() const {
    std::unordered_set<size_t> produced, seen;
    for (const op &o : impl_->ops)
        for (const logical_tensor &lt : o.get_outputs()) produced.insert(lt.get_id());
    std::vector<logical_tensor> v;
    for (const op &o : impl_->ops)
        for (const logical_tensor &lt : o.get_inputs())
            if (!produced.count(lt.get_id()) && seen.insert(lt.get_id()).second) v.push_back(lt);
    return v;
}

std::vector<logical_tensor> graph::get_output_tensors() const {
    std::unordered_set<size_t> consumed;
    for (const op &o : impl_->ops)
        for (const logical_tensor &lt : o.get_inputs()) consumed.insert(lt.get_id());
    std::vector<logical_tensor> v;
    for (const op &o : impl_->ops)
        for (const logical_tensor &lt : o.get_outputs())
            if (!consumed.count(lt.get_id())) v.push_back(lt);
    return v;
}

} // namespace bpg
