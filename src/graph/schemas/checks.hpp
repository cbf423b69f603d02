// Small named checks shared by the op schemas. Each throws through fail()
// with a message naming the op, the tensor and the rule.
#pragma once

#include <initializer_list>
#include <string>

#include "graph/op_schema.hpp"

namespace bpg::graph_impl {

// "diff_dst (input 1, tensor 7)"
std::string port_label(const op &o, bool is_input, size_t index, const char *name);

void check_dtype_in(const op &o, const logical_tensor &lt, const std::string &label,
        std::initializer_list<data_type> allowed);
void check_same_dtype(const op &o, const logical_tensor &a, const std::string &a_label,
        const logical_tensor &b, const std::string &b_label);
// Rank in [lo, hi] when known.
void check_rank(const op &o, const logical_tensor &lt, const std::string &label, int lo, int hi);
// Equal shapes where both dims are known (unknown dims and ranks are skipped).
void check_same_shape(const op &o, const logical_tensor &a, const std::string &a_label,
        const logical_tensor &b, const std::string &b_label);

inline bool known(dim d) { return d >= 0; }

// Axes of a data_format for a tensor of rank r.
inline int channel_axis(bool channels_last, int rank) { return channels_last ? rank - 1 : 1; }
std::vector<int> spatial_axes(bool channels_last, int rank);

} // namespace bpg::graph_impl
