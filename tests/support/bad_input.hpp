// The bad-input catalogue: one row = one malformed input given to a public
// path (graph API, JSON import, .npy reader), the status it must fail with,
// and the pieces its message must contain (the op / id / attribute or tensor
// / value / rule). Each rows file of tests/bad_inputs instantiates the one
// parameterized test BadInput over its table; tests/bad_inputs/test_catalogue
// counts the rows of every table.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bpg/graph.hpp"
#include "graph/op_spec.hpp"

namespace bpg::test {

// Output buffers handed to a row: filled with a sentinel byte pattern, so the
// runner can check that a failing call wrote nothing.
class sentinel_buffers {
public:
    static constexpr uint8_t pattern = 0xA5;
    void *get(size_t bytes);
    // Index of the first buffer whose bytes changed, or -1.
    int first_touched() const;
    size_t count() const { return buffers_.size(); }

private:
    std::vector<std::vector<uint8_t>> buffers_;
};

struct bad_input {
    std::string name; // unique; letters, digits and '_' (gtest parameter name)
    std::function<void(sentinel_buffers &)> attempt;
    status code;
    std::vector<std::string> message_has;
};
inline void PrintTo(const bad_input &r, std::ostream *os) { *os << r.name; }

class BadInput : public ::testing::TestWithParam<bad_input> {};
std::string row_name(const ::testing::TestParamInfo<bad_input> &info);

// Builders shared by the rows files.
// A row that changes a valid op and expects add_op to refuse it; the message
// must also name the op ("Kind op ID (\"NAME\")").
bad_input add_op_row(std::string name, const op_spec &valid, std::function<void(op_spec &)> change, status code,
        std::vector<std::string> message_has);
// Adds the ops to a fresh graph and finalizes it.
graph graph_of(const std::vector<op> &ops);
// Compiles the only partition of a graph of these ops (inputs as declared).
compiled_partition compile_single(const std::vector<op> &ops, const compile_options &opts = {});
// A tensor bound to lt with a sentinel buffer of lt's size from the pool.
tensor bind_output(sentinel_buffers &pool, const logical_tensor &lt);
// Input tensors for every input port of cp, with zeroed buffers owned by
// `keep` (ports of s32 sizes are filled with diff_dst's spatial sizes by the
// caller where it matters).
std::vector<tensor> bind_inputs(const compiled_partition &cp, std::vector<std::vector<uint8_t>> &keep);

} // namespace bpg::test
