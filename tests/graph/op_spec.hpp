// A mutable description of an op for table-driven schema tests: tests start
// from a valid op, change one thing, and check the verdict of add_op.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bpg/graph.hpp"

namespace bpg::test {

struct op_spec {
    size_t id = 0;
    op::kind kind = op::kind::InterpolateBackprop;
    std::string name;
    std::vector<logical_tensor> in, out;
    std::vector<std::pair<op::attr, attr_value>> attrs;

    op build() const {
        op o(id, kind, in, out, name);
        for (const auto &[a, v] : attrs) o.set_attr(a, v);
        return o;
    }
    op_spec &set(op::attr a, attr_value v) {
        for (auto &kv : attrs)
            if (kv.first == a) { kv.second = std::move(v); return *this; }
        attrs.emplace_back(a, std::move(v));
        return *this;
    }
    op_spec &erase(op::attr a) {
        for (size_t i = 0; i < attrs.size(); ++i)
            if (attrs[i].first == a) attrs.erase(attrs.begin() + long(i));
        return *this;
    }
};

inline logical_tensor lt(size_t id, data_type dt, dims shape) {
    return logical_tensor(id, dt, std::move(shape), layout_type::strided);
}

struct verdict_row {
    verdict_row(std::string n, std::function<void(op_spec &)> c, bool ok, status s = status::success,
            std::vector<std::string> has = {})
        : name(std::move(n)), change(std::move(c)), accepted(ok), code(s), message_has(std::move(has)) {}
    std::string name;
    std::function<void(op_spec &)> change;
    bool accepted;
    status code;
    std::vector<std::string> message_has; // substrings the error message must contain
};

// Runs add_op on base+change and checks the verdict; returns a failure text.
inline void expect_verdict(const op_spec &base, const verdict_row &row) {
    SCOPED_TRACE(row.name);
    op_spec s = base;
    row.change(s);
    graph g;
    if (row.accepted) {
        try {
            g.add_op(s.build());
        } catch (const error &e) {
            ADD_FAILURE() << "rejected: " << e.what();
        }
        return;
    }
    try {
        g.add_op(s.build());
        ADD_FAILURE() << "accepted, expected status " << to_string(row.code);
    } catch (const error &e) {
        EXPECT_EQ(e.code(), row.code) << e.what();
        const std::string msg = e.what();
        EXPECT_NE(msg.find("op " + std::to_string(s.id)), std::string::npos)
                << "message does not name the op id: " << msg;
        for (const std::string &part : row.message_has)
            EXPECT_NE(msg.find(part), std::string::npos)
                    << "message lacks \"" << part << "\": " << msg;
    }
}

} // namespace bpg::test
