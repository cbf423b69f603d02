#include "graph/schemas/checks.hpp"

namespace bpg::graph_impl {

std::string port_label(const op &o, bool is_input, size_t index, const char *name) {
    std::string s = std::string(name) + " (" + (is_input ? "input " : "output ")
            + std::to_string(index);
    const auto &ports = is_input ? o.get_inputs() : o.get_outputs();
    if (index < ports.size()) s += ", tensor " + std::to_string(ports[index].get_id());
    return s + ")";
}

void check_dtype_in(const op &o, const logical_tensor &lt, const std::string &label,
        std::initializer_list<data_type> allowed) {
    std::string names;
    for (data_type dt : allowed) {
        if (dt == lt.get_data_type()) return;
        names += std::string(names.empty() ? "" : ", ") + to_string(dt);
    }
    fail(o, status::invalid_data_type,
            label + " has data type " + to_string(lt.get_data_type()) + "; allowed: " + names);
}

void check_same_dtype(const op &o, const logical_tensor &a, const std::string &a_label,
        const logical_tensor &b, const std::string &b_label) {
    if (a.get_data_type() != b.get_data_type())
        fail(o, status::invalid_data_type,
                b_label + " has data type " + to_string(b.get_data_type()) + " but " + a_label
                        + " has " + to_string(a.get_data_type()) + "; they must match");
}

void check_rank(const op &o, const logical_tensor &lt, const std::string &label, int lo, int hi) {
    if (lt.ndims() == unknown_rank) return;
    if (lt.ndims() < lo || lt.ndims() > hi)
        fail(o, status::invalid_shape,
                label + " has rank " + std::to_string(lt.ndims()) + " (shape "
                        + shape_text(lt.get_dims()) + "); allowed ranks: " + std::to_string(lo)
                        + " to " + std::to_string(hi));
}

void check_same_shape(const op &o, const logical_tensor &a, const std::string &a_label,
        const logical_tensor &b, const std::string &b_label) {
    if (a.ndims() == unknown_rank || b.ndims() == unknown_rank) return;
    bool same = a.ndims() == b.ndims();
    for (int i = 0; same && i < a.ndims(); ++i)
        same = !known(a.get_dims()[i]) || !known(b.get_dims()[i])
                || a.get_dims()[i] == b.get_dims()[i];
    if (!same)
        fail(o, status::invalid_shape,
                b_label + " has shape " + shape_text(b.get_dims()) + " but " + a_label
                        + " has shape " + shape_text(a.get_dims()) + "; they must match");
}

std::vector<int> spatial_axes(bool channels_last, int rank) {
    std::vector<int> axes;
    for (int a = channels_last ? 1 : 2; a < (channels_last ? rank - 1 : rank); ++a)
        axes.push_back(a);
    return axes;
}

} // namespace bpg::graph_impl
