#include "passes/partitioning.hpp"

#include <algorithm>
#include <unordered_map>

namespace bpg::passes {

const char *single_pattern_name(op::kind k) {
    switch (k) {
        case op::kind::InterpolateBackprop: return "interpolate_bwd";
        case op::kind::BatchNormTrainingBackprop: return "bn_bwd";
        case op::kind::ReLUBackprop: return "relu_bwd";
        case op::kind::BatchNormTrainingBackpropSums: return "bn_bwd_sums";
        case op::kind::BatchNormTrainingBackpropFromSums: return "bn_bwd_from_sums";
        case op::kind::BatchNormForwardSums: return "bn_fwd_sums";
        default: break;
    }
    return "unsupported";
}

namespace {

// tensor id -> indices of the ops consuming it (once per op).
std::unordered_map<size_t, std::vector<size_t>> consumers_of(const std::vector<op> &ops) {
    std::unordered_map<size_t, std::vector<size_t>> c;
    for (size_t i = 0; i < ops.size(); ++i) {
        std::vector<size_t> seen;
        for (const logical_tensor &lt : ops[i].get_inputs()) {
            bool dup = false;
            for (size_t id : seen) dup = dup || id == lt.get_id();
            if (dup) continue;
            seen.push_back(lt.get_id());
            c[lt.get_id()].push_back(i);
        }
    }
    return c;
}

// Pass 1: ReLUBackprop -> BatchNormTrainingBackprop (input 0 or 1). Every
// ReLUBackprop is a candidate; the decision says why it was (not) fused.
void fuse_relu_bwd_into_bn_bwd(const std::vector<op> &ops,
        const std::unordered_map<size_t, std::vector<size_t>> &consumers,
        std::vector<bool> &claimed, std::vector<op_group> &groups,
        std::vector<fusion_decision> &decisions) {
    const char *pattern = "relu_bwd+bn_bwd";
    for (size_t r = 0; r < ops.size(); ++r) {
        if (claimed[r] || ops[r].get_kind() != op::kind::ReLUBackprop) continue;
        const size_t t = ops[r].get_outputs()[0].get_id();
        const std::string out = "output tensor " + std::to_string(t);
        auto it = consumers.find(t);
        if (it == consumers.end() || it->second.size() != 1) {
            const size_t n = it == consumers.end() ? 0 : it->second.size();
            decisions.push_back({pattern, {r}, false,
                    out + " is read by " + std::to_string(n)
                            + " ops; fusion needs exactly one reader (a BatchNormTrainingBackprop)"});
            continue;
        }
        const size_t b = it->second[0];
        if (ops[b].get_kind() != op::kind::BatchNormTrainingBackprop) {
            decisions.push_back({pattern, {r, b}, false,
                    out + " is read by a " + std::string(to_string(ops[b].get_kind()))
                            + "; only BatchNormTrainingBackprop fuses a ReLUBackprop"});
            continue;
        }
        if (claimed[b]) {
            decisions.push_back({pattern, {r, b}, false,
                    "the BatchNormTrainingBackprop already fused another ReLUBackprop"});
            continue;
        }
        const auto &in = ops[b].get_inputs();
        if (in[0].get_id() != t && in[1].get_id() != t) {
            decisions.push_back({pattern, {r, b}, false,
                    out + " feeds a statistics input of the BatchNormTrainingBackprop; "
                          "only src (input 0) or diff_dst (input 1) fuse"});
            continue;
        }
        claimed[r] = claimed[b] = true;
        groups.push_back({pattern, {r, b}});
        decisions.push_back({pattern, {r, b}, true,
                out + " feeds only the BatchNormTrainingBackprop as its "
                        + (in[1].get_id() == t ? "diff_dst (input 1)" : "src (input 0)")
                        + "; fused: the ReLU runs inside both BN passes and the tensor is never written"});
    }
}

} // namespace

std::vector<op_group> partition_ops(const std::vector<op> &ops, std::vector<fusion_decision> *decisions) {
    std::vector<bool> claimed(ops.size(), false);
    std::vector<op_group> groups;
    std::vector<fusion_decision> local;
    fuse_relu_bwd_into_bn_bwd(ops, consumers_of(ops), claimed, groups, decisions ? *decisions : local);
    for (size_t i = 0; i < ops.size(); ++i)
        if (!claimed[i]) groups.push_back({single_pattern_name(ops[i].get_kind()), {i}});
    // Partitions in the order of their first op (ops are topologically sorted).
    std::stable_sort(groups.begin(), groups.end(),
            [](const op_group &a, const op_group &b) { return a.ops.front() < b.ops.front(); });
    return groups;
}

} // namespace bpg::passes
