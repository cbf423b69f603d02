// The JSON fuzz target's recipes (fuzz/json_generator.hpp) reach what they
// are for: the depth limit, long arrays and names, many ops, duplicate keys.
#include <vector>

#include <gtest/gtest.h>

#include "../../fuzz/json_generator.hpp"
#include "bpg/json.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

std::string generate(std::vector<uint8_t> bytes) { return fuzz::json_generator(bytes.data(), bytes.size()).text(); }

TEST(FuzzJsonGenerator, DeepRecipesReachTheDepthLimit) {
    for (uint8_t place = 0; place < 4; ++place) {
        SCOPED_TRACE(int(place));
        // 100000 levels (0x0186a0 - 1), alternating arrays and objects.
        const std::string text = generate({0x00, 0x9f, 0x86, 0x01, 0, 0x55, place});
        EXPECT_GT(text.size(), 400000u);
        expect_error([&] { parse_graph_json(text); }, status::invalid_argument, {"limit of 64 levels"});
    }
    EXPECT_EQ(parse_graph_json(generate({0x00, 9, 0, 0, 0, 0x55, 0})).ops.size(), 1u); // 10 levels are read
}

TEST(FuzzJsonGenerator, LongAndManyRecipesAreRead) {
    const std::string arr = generate({0x01, 0xff, 0xff, 0x01, 0, 0, 0}); // 131071 1s under "x" (the cap, 2^17 - 1)
    EXPECT_GT(arr.size(), 3u * 131071u);
    EXPECT_EQ(make_graph(parse_graph_json(arr)).get_ops().size(), 1u);
    EXPECT_EQ(parse_graph_json(generate({0x02, 0xff, 0x07, 0})).ops.size(), 2048u);
    // A megabyte name of newlines: the error is one line.
    const std::string name = generate({0x03, 0xff, 0xff, 0x0f, 0, '\n', 0});
    EXPECT_GT(name.size(), 6000000u);
    try {
        make_graph(parse_graph_json(name));
        ADD_FAILURE() << "the unknown attribute 'bogus' was accepted";
    } catch (const error &e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.find('\n'), std::string::npos);
        EXPECT_NE(msg.find("bogus"), std::string::npos);
    }
}

TEST(FuzzJsonGenerator, DuplicateKeyRecipesAreRefused) {
    for (uint8_t where = 0; where < 4; ++where) {
        SCOPED_TRACE(int(where));
        expect_error([&] { parse_graph_json(generate({0x04, where})); }, status::invalid_argument, {"duplicate key"});
    }
}

TEST(FuzzJsonGenerator, ShiftsMakeSmallVariants) {
    // The 100000-level recipe shifted by 12: 25 levels, which are read.
    EXPECT_EQ(parse_graph_json(generate({0x00, 0x9f, 0x86, 0x01, 12, 0x55, 0})).ops.size(), 1u);
    EXPECT_EQ(parse_graph_json(generate({0x02, 0xff, 0x07, 8})).ops.size(), 8u);
}

TEST(FuzzJsonGenerator, OtherInputsAreTheTextItself) {
    EXPECT_EQ(generate({'{', '}'}), "{}");
    EXPECT_EQ(generate({}), "");
}

} // namespace
} // namespace bpg::test
