// The README's "Using the library" snippet must compile and run: it is the
// marked region of examples/readme_snippet.cpp (built and run by ctest as
// example.readme_snippet), and this test fails when the two differ.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tools/tool_runner.hpp"

namespace bpg::test {
namespace {

// The text between the line holding `begin` and the line holding `end`.
std::string between_lines(const std::string &text, const std::string &begin, const std::string &end) {
    const size_t b = text.find(begin);
    if (b == std::string::npos) return "<no line with " + begin + ">";
    const size_t from = text.find('\n', b) + 1;
    const size_t e = text.find(end, from);
    if (e == std::string::npos) return "<no line with " + end + ">";
    return text.substr(from, text.rfind('\n', e) + 1 - from);
}

TEST(Readme, SnippetIsTheBuiltExample) {
    const std::string src_dir(BPG_SOURCE_DIR);
    const std::string readme = read_text(src_dir + "/README.md");
    const size_t section = readme.find("\n## Using the library\n");
    ASSERT_NE(section, std::string::npos) << "README.md has no section \"## Using the library\"";
    const std::string block = between_lines(readme.substr(section), "```cpp", "```");
    const std::string example = between_lines(
            read_text(src_dir + "/examples/readme_snippet.cpp"), "// [readme-snippet begin]", "// [readme-snippet end]");
    EXPECT_FALSE(example.empty());
    EXPECT_EQ(block, example) << "README.md's ```cpp block under \"## Using the library\" differs from the marked "
                                 "region of examples/readme_snippet.cpp; change both together";
}

TEST(Readme, IsAGuideOf250LinesAtMost) {
    const std::string readme = read_text(std::string(BPG_SOURCE_DIR) + "/README.md");
    size_t lines = 0;
    for (char c : readme) lines += c == '\n';
    EXPECT_LE(lines, 250u) << "README.md is a guide; measurement history goes to bench/NOTES.md, design notes to "
                              "docs/design.md";
}

// The repository stands alone: every link of the README is a file or folder in it.
TEST(Readme, EveryLinkPointsInsideTheRepository) {
    const std::string src_dir(BPG_SOURCE_DIR);
    const std::string readme = read_text(src_dir + "/README.md");
    int links = 0;
    for (size_t at = readme.find("]("); at != std::string::npos; at = readme.find("](", at + 2)) {
        const std::string target = readme.substr(at + 2, readme.find(')', at) - at - 2);
        if (target.empty() || target[0] == '#') continue;
        ++links;
        EXPECT_EQ(target.find("://"), std::string::npos) << "README links outside the repository: " << target;
        EXPECT_NE(target.rfind("..", 0), 0u) << "README links outside the repository: " << target;
        const std::string path = target.substr(0, target.find('#'));
        EXPECT_TRUE(std::filesystem::exists(src_dir + "/" + path)) << "README links a missing file: " << target;
    }
    EXPECT_GT(links, 0);
}

} // namespace
} // namespace bpg::test
