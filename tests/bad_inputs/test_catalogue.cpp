// Runs every row of the bad-input catalogue (the tables are in the other
// files of this folder) and counts them.
#include <iostream>
#include <set>

#include "support/bad_input.hpp"

namespace bpg::test {
namespace {

// A row passes when its attempt throws bpg::error with the row's status, the
// message is one line with every expected piece, and no output buffer changed.
TEST_P(BadInput, FailsCleanly) {
    const bad_input &row = GetParam();
    sentinel_buffers outputs;
    try {
        row.attempt(outputs);
        ADD_FAILURE() << "no bpg::error thrown; expected " << to_string(row.code);
    } catch (const error &e) {
        const std::string msg = e.what();
        EXPECT_EQ(std::string(to_string(e.code())), to_string(row.code)) << msg;
        for (const std::string &piece : row.message_has)
            EXPECT_NE(msg.find(piece), std::string::npos) << "message lacks [" << piece << "]: " << msg;
        EXPECT_EQ(msg.find_first_of("\n\r"), std::string::npos) << "message is not one line: " << msg;
    }
    EXPECT_EQ(outputs.first_touched(), -1) << "an output buffer was written";
}

// The catalogue is every instantiation of BadInput, whichever file holds it.
TEST(BadInputCatalogue, CountsRows) {
    const auto &unit = *::testing::UnitTest::GetInstance();
    size_t rows = 0;
    std::set<std::string> tables;
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
        const std::string suite = unit.GetTestSuite(i)->name();
        const std::string tail = "/BadInput";
        if (suite.size() > tail.size() && suite.compare(suite.size() - tail.size(), tail.size(), tail) == 0) {
            rows += size_t(unit.GetTestSuite(i)->total_test_count());
            tables.insert(suite.substr(0, suite.size() - tail.size()));
        }
    }
    std::cout << "bad-input catalogue: " << rows << " rows in " << tables.size() << " tables\n";
    EXPECT_GE(rows, 60u);
}

} // namespace
} // namespace bpg::test
