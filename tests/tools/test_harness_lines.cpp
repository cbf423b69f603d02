// Every benchdnn command line of oneDNN's graph harness files that runs the
// four conformance JSON cases (benchdnn_harness_lines.txt of BPG_CONFORMANCE_DIR),
// through bpg-run's rewrite knobs. Each line must run, or be refused with the
// rule of docs/semantics.md it breaks:
//  - 'sizes' given fractional values (e.g. sizes:1.666667x1): sizes are s64;
//  - 'scales' whose floor(in * scale) is not diff_dst's size (e.g. 17 * 1.235294
//    = 20.99999 -> 20, not 21): docs/semantics.md defines the output size of a scale
//    as that floor, and oneDNN's backward never checks it.
#include <fstream>
#include <sstream>
#include <set>

#include <gtest/gtest.h>

#include "tools/tool_runner.hpp"

namespace bpg::test {
namespace {

struct harness_line {
    std::string text; // the benchdnn arguments after "--reset"
    std::string args; // the same for bpg-run
};

std::vector<harness_line> read_lines() {
    std::ifstream f(conformance("benchdnn_harness_lines.txt"));
    std::vector<harness_line> lines;
    std::set<std::string> seen;
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        // <path>:<line>:<text>
        const size_t a = line.find(':'), b = line.find(':', a + 1);
        std::string text = line.substr(b + 1);
        if (!seen.insert(text).second) continue; // same line in two harness files
        std::string args, file;
        std::istringstream words(text);
        for (std::string w; words >> w;) {
            if (w == "--reset") continue;
            if (w.rfind("--case=", 0) == 0) {
                file = w.substr(w.rfind('/') + 1);
                continue;
            }
            const size_t eq = w.find('=');
            args += " " + (eq == std::string::npos ? w : w.substr(0, eq) + " " + w.substr(eq + 1));
        }
        lines.push_back({text, conformance(file) + args});
    }
    return lines;
}

TEST(HarnessLinesConformance, EveryLineRunsOrIsRefusedByARule) {
    BPG_REQUIRE_CONFORMANCE();
    const auto lines = read_lines();
    ASSERT_GT(lines.size(), 200u);
    int ran = 0, refused_sizes = 0, refused_scales = 0, skipped = 0;
    for (const harness_line &l : lines) {
        SCOPED_TRACE(l.text);
        // 96x192x71x71 moves several GB through the f64 reference: kept for
        // bpg-bench, skipped here to keep the suite fast on 2 cores.
        if (l.args.find("96x192x71x71") != std::string::npos) {
            ++skipped;
            continue;
        }
        const tool_result r = run_tool("bpg-run", l.args + " --no-check");
        if (r.exit_code == 0) {
            ++ran;
            EXPECT_NE(r.out.find("ran on"), std::string::npos) << r.out;
            continue;
        }
        EXPECT_EQ(r.exit_code, 2) << r.err;
        const bool fractional_sizes = l.text.find("sizes:") != std::string::npos
                && r.err.find("is not an integer") != std::string::npos;
        const bool scale_floor = l.text.find("scales:") != std::string::npos
                && r.err.find("the output size of 'scales'") != std::string::npos;
        EXPECT_TRUE(fractional_sizes || scale_floor) << "refused for another reason: " << r.err;
        refused_sizes += fractional_sizes;
        refused_scales += scale_floor;
    }
    std::printf("harness lines: %d ran, %d refused (fractional sizes), %d refused (floor(in * scale) != "
                "diff_dst), %d skipped (size)\n",
            ran, refused_sizes, refused_scales, skipped);
    // The README quotes these numbers.
    EXPECT_EQ(ran, 199);
    EXPECT_EQ(refused_sizes, 8);
    EXPECT_EQ(refused_scales, 18);
}

} // namespace
} // namespace bpg::test
