// bpg-run's file contract: every file or folder problem exits 2 with one
// stderr line naming the path and the problem, a failed run leaves no
// outputs, --inputs must name a folder, and text quoted from the user
// (file names, op names) stays on one line.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "io/npy.hpp"
#include "tools/tool_runner.hpp"

namespace bpg::test {
namespace {

namespace fs = std::filesystem;

// Any valid graph whose tensor 0 is an input: the project's own example.
const std::string graph_file = std::string(BPG_SOURCE_DIR) + "/examples/graphs/decoder_block_bwd.json";

size_t lines(const std::string &s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

// Runs bpg-run and expects exit 2 and one stderr line holding every piece.
void expect_refused(const std::string &args, std::initializer_list<std::string> pieces, const std::string &prefix = "") {
    SCOPED_TRACE(args);
    const tool_result r = run_tool("bpg-run", args, prefix);
    EXPECT_EQ(r.exit_code, 2) << r.err << r.out;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    for (const std::string &p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << "lacks [" << p << "]: " << r.err;
}

// Every entry of a folder, for "nothing was left" checks.
std::vector<std::string> entries(const std::string &dir) {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

TEST(BpgRunFiles, InputsMustNameAnExistingFolder) {
    const std::string dir = temp_dir("inputs-folder");
    std::ofstream(dir + "/file") << "x";
    // Both used to fall back to the built-in fill and exit 0.
    expect_refused(graph_file + " --inputs " + dir + "/missing", {"--inputs " + dir + "/missing: no such folder"});
    expect_refused(graph_file + " --inputs " + dir + "/file", {"--inputs " + dir + "/file: is not a folder"});
}

TEST(BpgRunFiles, AnInputEntryThatCannotBeReadIsAnError) {
    const std::string dir = temp_dir("inputs-entries");
    fs::create_directory(dir + "/0.npy");
    // Was "internal error: basic_filebuf::underflow error reading the file", exit 1.
    expect_refused(graph_file + " --inputs " + dir, {dir + "/0.npy: is a folder, not a file"});
    fs::remove(dir + "/0.npy");
    // A link to nothing is something the user put there: not skipped.
    fs::create_symlink(dir + "/nowhere.npy", dir + "/1.npy");
    expect_refused(graph_file + " --inputs " + dir, {dir + "/1.npy: cannot open the file for reading: No such file or directory"});
}

TEST(BpgRunFiles, UnreadableInputFolder) {
    if (::geteuid() == 0) GTEST_SKIP() << "root reads any folder; run the suite as a user to cover this";
    const std::string dir = temp_dir("inputs-unreadable");
    io::npy_array a {"<f4", {2}, std::vector<uint8_t>(8)};
    io::write_npy(dir + "/0.npy", a);
    fs::permissions(dir, fs::perms::none);
    // Was "internal error: filesystem error", exit 1.
    expect_refused(graph_file + " --inputs " + dir, {dir + "/0.npy: cannot look it up: Permission denied"});
    fs::permissions(dir, fs::perms::owner_all);
}

TEST(BpgRunFiles, OutputsFolderThatIsAFileOrCannotBeMade) {
    const std::string dir = temp_dir("outputs-folder");
    std::ofstream(dir + "/file") << "x";
    // Each was "internal error: filesystem error", exit 1.
    expect_refused(graph_file + " --outputs " + dir + "/file", {"--outputs " + dir + "/file: is not a folder"});
    expect_refused(graph_file + " --outputs " + dir + "/file/sub", {"--outputs " + dir + "/file/sub: " + dir + "/file is not a folder"});
    if (fs::is_directory("/proc/self"))
        expect_refused(graph_file + " --outputs /proc/self/bpg-out/x", {"--outputs /proc/self/bpg-out/x: cannot create the folder /proc/self/bpg-out"});
    EXPECT_EQ(entries(dir), std::vector<std::string> {"file"});
}

// Two ReLU backward ops: output 2 is small, output 5 is 256 KB and written second.
const char *const two_outputs = R"({"graph": [
  {"id": 0, "kind": "ReLUBackward", "inputs": [
     {"id": 0, "dtype": "f32", "shape": [2, 3], "stride": [3, 1], "layout_type": "strided"},
     {"id": 1, "dtype": "f32", "shape": [2, 3], "stride": [3, 1], "layout_type": "strided"}],
   "outputs": [{"id": 2, "dtype": "f32", "shape": [2, 3], "stride": [3, 1], "layout_type": "strided"}]},
  {"id": 1, "kind": "ReLUBackward", "inputs": [
     {"id": 3, "dtype": "f32", "shape": [256, 256], "stride": [256, 1], "layout_type": "strided"},
     {"id": 4, "dtype": "f32", "shape": [256, 256], "stride": [256, 1], "layout_type": "strided"}],
   "outputs": [{"id": 5, "dtype": "f32", "shape": [256, 256], "stride": [256, 1], "layout_type": "strided"}]}]})";

TEST(BpgRunFiles, AFailedOutputLeavesNothingBehind) {
    const std::string dir = temp_dir("outputs-partial"), graph = dir + "/g.json";
    std::ofstream(graph) << two_outputs;
    ASSERT_EQ(run_tool("bpg-run", graph + " --outputs " + dir + "/ok").exit_code, 0);
    EXPECT_EQ(entries(dir + "/ok"), (std::vector<std::string> {"2.npy", "5.npy"}));

    // The second output's name is taken by a folder: 2.npy used to be left.
    fs::create_directories(dir + "/taken/5.npy");
    expect_refused(graph + " --outputs " + dir + "/taken", {dir + "/taken/5.npy: is a folder"});
    EXPECT_EQ(entries(dir + "/taken"), std::vector<std::string> {"5.npy"});

    // The second write fails (files limited to 64 KB): the folder this run
    // made is gone, and so is the first output.
    const std::string limit = "trap '' XFSZ; ulimit -f 64; ";
    expect_refused(graph + " --outputs " + dir + "/new/out", {"5.npy", "write error: File too large"}, limit);
    EXPECT_FALSE(fs::exists(dir + "/new"));
    // Older files of an existing folder are kept as they were.
    fs::create_directory(dir + "/old");
    std::ofstream(dir + "/old/2.npy") << "older run";
    expect_refused(graph + " --outputs " + dir + "/old", {"write error: File too large"}, limit);
    EXPECT_EQ(entries(dir + "/old"), std::vector<std::string> {"2.npy"});
    EXPECT_EQ(read_text(dir + "/old/2.npy"), "older run");
}

TEST(BpgRunFiles, UserTextStaysOnOneLine) {
    const std::string dir = temp_dir("one-line");
    // An op name with a newline in a JSON file whose name has one too.
    std::string text = two_outputs;
    text.replace(text.find("\"kind\": \"ReLUBackward\""), 22, "\"name\": \"a\\nb\", \"kind\": \"ReLUBackwards\"");
    const std::string bad = dir + "/bad\nname.json";
    std::ofstream(bad) << text;
    expect_refused("'" + bad + "'", {"bad\\nname.json", "(\"a\\nb\"): kind: unknown op kind"});
    expect_refused("'" + dir + "/missing\nname.json'", {"missing\\nname.json: cannot open the file for reading"});
    // A successful run prints the names escaped too.
    const std::string good = dir + "/good\nname.json";
    std::ofstream(good) << two_outputs;
    fs::create_directory(dir + "/in\nputs");
    const tool_result r = run_tool("bpg-run", "'" + good + "' --inputs '" + dir + "/in\nputs' --outputs '" + dir + "/out\nputs'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("bpg-run: " + dir + "/good\\nname.json: 2 ops"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("outputs: " + dir + "/out\\nputs/{2,5}.npy\n"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(dir + "/out\nputs/5.npy"));
}

// A float option value below the smallest float is a number (it rounds to
// 0 or a denormal); one above the largest is out of range.
TEST(BpgRunFilesConformance, FloatOptionValuesUnderflowToTheNearestFloat) {
    BPG_REQUIRE_CONFORMANCE();
    const std::string bn = conformance("bnorm_bwd.json");
    for (const auto &[value, written] : {std::pair<const char *, const char *> {"1e-46", "\"value\": 0.0"},
                 {"1e-40", "\"value\": 9.99995e-41"}}) {
        SCOPED_TRACE(value);
        // Was: --op-attrs: "1e-46" is not a number.
        const tool_result r = run_tool("bpg-run", bn + " --no-check --print-graph --op-attrs 0:epsilon:" + value);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const size_t at = r.out.find("\"epsilon\"");
        ASSERT_NE(at, std::string::npos) << r.out;
        EXPECT_NE(r.out.find(written, at), std::string::npos) << r.out.substr(at, 80);
    }
    expect_refused(bn + " --op-attrs 0:epsilon:1e39", {"--op-attrs: 'epsilon': 1e39 is out of the range of f32"});
    expect_refused(bn + " --op-attrs 0:epsilon:-1e39", {"'epsilon': -1e39 is out of the range of f32"});
    expect_refused(graph_file + " --in-shapes 0:2x99999999999999999999", {"--in-shapes: 99999999999999999999 is out of the range of int64"});
}

} // namespace
} // namespace bpg::test
