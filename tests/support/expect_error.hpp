// Runs f and expects a bpg::error with status s whose message contains every
// one of the given pieces.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>

#include <gtest/gtest.h>

#include "bpg/status.hpp"

namespace bpg::test {

inline void expect_error(const std::function<void()> &f, status s, std::initializer_list<std::string> pieces) {
    try {
        f();
        ADD_FAILURE() << "no bpg::error thrown; expected " << to_string(s);
    } catch (const error &e) {
        EXPECT_EQ(to_string(e.code()), std::string(to_string(s))) << e.what();
        for (const auto &p : pieces)
            EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "message lacks [" << p << "]: " << e.what();
    }
}

} // namespace bpg::test
