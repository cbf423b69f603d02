#include "support/bad_input.hpp"

#include <cstring>

namespace bpg::test {

void *sentinel_buffers::get(size_t bytes) {
    buffers_.emplace_back(bytes > 0 ? bytes : 1, pattern);
    return buffers_.back().data();
}

int sentinel_buffers::first_touched() const {
    for (size_t i = 0; i < buffers_.size(); ++i)
        for (uint8_t b : buffers_[i])
            if (b != pattern) return int(i);
    return -1;
}

std::string row_name(const ::testing::TestParamInfo<bad_input> &info) { return info.param.name; }

bad_input add_op_row(std::string name, const op_spec &valid, std::function<void(op_spec &)> change, status code,
        std::vector<std::string> message_has) {
    message_has.insert(message_has.begin(),
            std::string(to_string(valid.kind)) + " op " + std::to_string(valid.id) + " (\"" + valid.name + "\")");
    return {std::move(name),
            [valid, change](sentinel_buffers &) {
                op_spec s = valid;
                change(s);
                graph g;
                g.add_op(s.build());
            },
            code, std::move(message_has)};
}

graph graph_of(const std::vector<op> &ops) {
    graph g;
    for (const op &o : ops) g.add_op(o);
    g.finalize();
    return g;
}

compiled_partition compile_single(const std::vector<op> &ops, const compile_options &opts) {
    const graph g = graph_of(ops);
    const auto parts = g.get_partitions();
    if (parts.size() != 1) throw std::logic_error("compile_single: graph has several partitions");
    return parts[0].compile(parts[0].get_input_ports(), parts[0].get_output_ports(), engine(), opts);
}

tensor bind_output(sentinel_buffers &pool, const logical_tensor &lt) {
    return tensor(lt, engine(), pool.get(lt.get_mem_size()));
}

std::vector<tensor> bind_inputs(const compiled_partition &cp, std::vector<std::vector<uint8_t>> &keep) {
    std::vector<tensor> ts;
    keep.reserve(keep.size() + cp.get_inputs().size());
    for (const logical_tensor &lt : cp.get_inputs()) {
        keep.emplace_back(std::max<size_t>(lt.get_mem_size(), 1), 0);
        ts.emplace_back(lt, engine(), keep.back().data());
    }
    return ts;
}

} // namespace bpg::test
