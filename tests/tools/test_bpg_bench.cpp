// bpg-bench smoke tests: tiny cases through the JSON output (fields, positive
// times, byte counts, n/a with a reason for a backend that cannot run a case),
// the table, the default suites (listed, so checked by the library, not run)
// and their classes, the per call and first call cases, the per-class
// summary, the error contract (exit 2, one stderr line, nothing on stdout),
// and the streaming kernel's claim that it reads every input exactly once.
//
// No timing is asserted beyond "positive": performance lives in the
// benchmark's numbers, never in tests.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tools/tool_runner.hpp"
#include "support/backends_in_build.hpp"

// The streaming kernel is compiled into bpg-bench, not into the library;
// the test builds its sources here to check them directly.
#include "../../tools/bpg-bench/stream_bn.cpp"
#include "../../tools/bpg-bench/stream_interp.cpp"

namespace bpg::test {
namespace {

using nlohmann::json;

// Tiny cases: each run takes milliseconds.
const std::string fast = " --repeat 2 --warmup 0 --json";

json run_json(const std::string &args) {
    const tool_result r = run_tool("bpg-bench", args + fast);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    EXPECT_EQ(r.err, "") << args;
    return json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

// Whether this bpg-bench times oneDNN Graph's partitions (built against
// oneDNN 3.x with its graph API): then --backend all ends with that row.
bool has_onednn_graph_row() {
    static const bool has = run_tool("bpg-bench", "--shape 2x3 --backend onednn_graph" + fast).exit_code == 0;
    return has;
}

// The rows of --backend all: the backends of this build, then onednn_graph.
std::vector<std::string> all_rows() {
    std::vector<std::string> rows = in_build({"dnnl", "tbb", "ref"});
    if (has_onednn_graph_row()) rows.push_back("onednn_graph");
    return rows;
}

// Every result is either ok with positive times or n/a with a reason.
void check_results(const json &c, const std::vector<std::string> &backends) {
    ASSERT_EQ(c.at("results").size(), backends.size());
    EXPECT_GT(c.at("stream_ms").get<double>(), 0);
    EXPECT_GT(c.at("bytes").get<int64_t>(), 0);
    for (size_t i = 0; i < backends.size(); ++i) {
        const json &r = c.at("results")[i];
        EXPECT_EQ(r.at("backend"), backends[i]);
        const std::string st = r.at("status");
        if (st == "ok") {
            EXPECT_TRUE(r.at("reason").is_null());
            EXPECT_GT(r.at("median_ms").get<double>(), 0);
            EXPECT_GT(r.at("min_ms").get<double>(), 0);
            EXPECT_LE(r.at("min_ms").get<double>(), r.at("median_ms").get<double>());
            EXPECT_GT(r.at("gbps").get<double>(), 0);
            EXPECT_GT(r.at("x_stream").get<double>(), 0);
            EXPECT_TRUE(r.at("ran_on").is_string());
        } else {
            EXPECT_EQ(st, "n/a");
            EXPECT_FALSE(r.at("reason").get<std::string>().empty());
            EXPECT_TRUE(r.at("median_ms").is_null());
            EXPECT_TRUE(r.at("x_stream").is_null());
        }
    }
}

const json *result_of(const json &c, const std::string &backend) {
    for (const json &r : c.at("results"))
        if (r.at("backend") == backend) return &r;
    return nullptr;
}

TEST(BpgBench, InterpolateOnRefReportsEveryField) {
    const json doc = run_json("--op interpolate --mode bilinear --src 2x3x5x4 --dst 2x3x10x7 --format NCX "
                              "--dtype f32 --backend ref");
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(doc.at("tool"), "bpg-bench");
    EXPECT_FALSE(doc.at("machine").at("cpu").get<std::string>().empty());
    EXPECT_GE(doc.at("machine").at("cores").get<int>(), 1);
    EXPECT_EQ(doc.at("date").get<std::string>().size(), 20u); // 2026-11-01T00:00:00Z
    EXPECT_EQ(doc.at("threads"), 2);                          // the default
    EXPECT_EQ(doc.at("repeat"), 2);
    // The tool restarts itself with OMP_WAIT_POLICY=passive unless it is set.
    const char *policy = std::getenv("OMP_WAIT_POLICY");
    EXPECT_EQ(doc.at("omp_wait_policy"), policy ? policy : "passive");
    ASSERT_EQ(doc.at("cases").size(), 1u);
    const json &c = doc.at("cases")[0];
    EXPECT_EQ(c.at("op"), "interpolate");
    EXPECT_EQ(c.at("mode"), "bilinear");
    EXPECT_EQ(c.at("coord"), "half_pixel");
    EXPECT_TRUE(c.at("nearest_mode").is_null());
    EXPECT_EQ(c.at("src"), json({2, 3, 5, 4}));
    EXPECT_EQ(c.at("dst"), json({2, 3, 10, 7}));
    EXPECT_EQ(c.at("format"), "NCX");
    EXPECT_EQ(c.at("dtype"), "f32");
    EXPECT_EQ(c.at("bytes"), 4 * (2 * 3 * 5 * 4 + 2 * 3 * 10 * 7)); // diff_src + diff_dst
    EXPECT_EQ(c.at("stream_runs"), 2); // --repeat 2, one before each run of the one backend
    check_results(c, {"ref"});
    const json &ref = c.at("results")[0];
    EXPECT_EQ(ref.at("status"), "ok");
    EXPECT_EQ(ref.at("ran_on"), "ref");
    EXPECT_TRUE(ref.at("x_dnnl").is_null()); // dnnl did not run
}

TEST(BpgBench, InterpolateAllBackendsNxcF16Nearest) {
    const json doc = run_json("--src 1x6x5x3 --dst 1x12x9x3 --format NXC --dtype f16 --mode nearest "
                              "--nearest-mode floor --coord asymmetric --backend all");
    const json &c = doc.at("cases")[0];
    EXPECT_EQ(c.at("nearest_mode"), "floor");
    EXPECT_EQ(c.at("bytes"), 2 * (6 * 5 * 3 + 12 * 9 * 3));
    check_results(c, all_rows());
    EXPECT_EQ(result_of(c, "ref")->at("status"), "ok"); // tiny: ref is not skipped
    // The streaming kernel runs once before every timed run of every backend that ran.
    int ran = 0;
    for (const json &r : c.at("results")) ran += r.at("status") == "ok";
    EXPECT_EQ(c.at("stream_runs"), doc.at("repeat").get<int>() * ran);
    const json *dnnl = result_of(c, "dnnl");
    EXPECT_EQ(dnnl != nullptr, dnnl_in_build()); // no dnnl row without oneDNN
    for (const json &r : c.at("results"))
        if (dnnl && r.at("status") == "ok" && dnnl->at("status") == "ok") {
            EXPECT_GT(r.at("x_dnnl").get<double>(), 0);
        }
}

TEST(BpgBench, BackendThatCannotRunTheCaseIsNotApplicable) {
    // oneDNN's resampling has no align_corners: n/a whether or not the dnnl
    // backend is in this build, and the run still succeeds.
    const json doc = run_json("--src 1x2x4x4 --dst 1x2x8x8 --coord align_corners --backend dnnl");
    const json &r = doc.at("cases")[0].at("results")[0];
    EXPECT_EQ(r.at("status"), "n/a");
    EXPECT_NE(r.at("reason").get<std::string>().find("dnnl"), std::string::npos) << r.at("reason");
    // The streaming kernel is still timed, once a round.
    EXPECT_EQ(doc.at("cases")[0].at("stream_runs"), doc.at("repeat"));
    EXPECT_GT(doc.at("cases")[0].at("stream_ms").get<double>(), 0);
}

TEST(BpgBench, AllSkipsRefAboveItsSizeLimit) {
    const json doc = run_json("--src 1x1x1024x1030 --dst 1x1x2048x2060 --mode nearest --backend all");
    const json *ref = result_of(doc.at("cases")[0], "ref");
    ASSERT_NE(ref, nullptr);
    EXPECT_EQ(ref->at("status"), "n/a");
    EXPECT_EQ(ref->at("reason"), "too large for ref; use --backend ref explicitly");
}

TEST(BpgBench, BatchnormBytesFollowTheBounds) {
    const int64_t n = 2 * 3 * 4 * 5;
    const json train = run_json("--op batchnorm --shape 2x3x4x5 --format NCX --dtype f32 --backend all");
    const json &c = train.at("cases")[0];
    EXPECT_EQ(c.at("op"), "batchnorm");
    EXPECT_EQ(c.at("shape"), json({2, 3, 4, 5}));
    EXPECT_EQ(c.at("global_stats"), false);
    EXPECT_EQ(c.at("outputs"), 3);
    EXPECT_EQ(c.at("gamma"), true);
    EXPECT_EQ(c.at("bytes"), 4 * 5 * n); // src and diff_dst twice, diff_src once
    check_results(c, all_rows());
    EXPECT_EQ(result_of(c, "ref")->at("status"), "ok");

    const json global = run_json("--op batchnorm --shape 2x4x5x3 --format NXC --dtype bf16 --global-stats "
                                 "--no-gamma --backend ref");
    const json &g = global.at("cases")[0];
    EXPECT_EQ(g.at("global_stats"), true);
    EXPECT_EQ(g.at("gamma"), false);
    EXPECT_EQ(g.at("bytes"), 2 * 3 * n); // one pass: src, diff_dst, diff_src
    check_results(g, {"ref"});

    const json one = run_json("--shape 2x3x4x5 --global-stats --outputs 1 --backend ref");
    EXPECT_EQ(one.at("cases")[0].at("bytes"), 4 * 2 * n); // no diff_gamma: src is not read
    check_results(one.at("cases")[0], {"ref"});
}

// A fused ReLUBackprop -> BN case also times its two ops apart, in the same
// rounds, on each backend that ran it fused; --apart times only that.
TEST(BpgBench, FusedCaseAlsoTimesTheOpsApart) {
    const json doc = run_json("--shape 2x3x4x5 --relu --backend all");
    const json &c = doc.at("cases")[0];
    // oneDNN has no fused primitive: n/a, and no apart row follows it. A
    // build without oneDNN has no dnnl row: r[0] is null there.
    json r = c.at("results");
    if (!dnnl_in_build()) r.insert(r.begin(), nullptr);
    // Built against oneDNN 3.x, oneDNN Graph's own rows close the list.
    while (!r.empty() && r.back().is_object() && r.back().at("backend") == "onednn_graph") r.erase(r.size() - 1);
    ASSERT_EQ(r.size(), 5u);
    if (dnnl_in_build()) {
        EXPECT_EQ(r[0].at("backend"), "dnnl");
        EXPECT_EQ(r[0].at("status"), "n/a");
        EXPECT_FALSE(r[0].at("apart").get<bool>());
        EXPECT_TRUE(r[0].at("runs_ms").empty());
    }
    const char *backends[] = {"tbb", "tbb", "ref", "ref"};
    for (size_t i = 1; i < 5; ++i) {
        EXPECT_EQ(r[i].at("backend"), backends[i - 1]);
        EXPECT_EQ(r[i].at("status"), "ok") << r[i];
        const bool apart = i % 2 == 0;
        EXPECT_EQ(r[i].at("apart").get<bool>(), apart);
        if (!apart) {
            EXPECT_TRUE(r[i].at("fusion_gain").is_null());
            continue;
        }
        // The gain is the ratio of the two medians it stands beside.
        EXPECT_NEAR(r[i].at("fusion_gain").get<double>(),
                r[i].at("median_ms").get<double>() / r[i - 1].at("median_ms").get<double>(), 1e-9);
        EXPECT_NE(r[i].at("ran_on").get<std::string>().find('+'), std::string::npos) << r[i]; // two partitions
    }
    // The yardstick runs before each run of each backend that ran.
    int ran = 0;
    for (const json &result : c.at("results")) ran += result.at("status") == "ok";
    EXPECT_EQ(ran, int(c.at("results").size()) - (dnnl_in_build() ? 1 : 0)); // all but dnnl's n/a
    EXPECT_EQ(c.at("stream_runs"), doc.at("repeat").get<int>() * ran);
    // Each result's raw runs, and the yardstick run before each, back its median.
    for (size_t i = 1; i < 5; ++i) {
        std::vector<double> runs = r[i].at("runs_ms").get<std::vector<double>>();
        ASSERT_EQ(runs.size(), size_t(doc.at("repeat").get<int>())) << r[i];
        EXPECT_EQ(r[i].at("stream_before_ms").size(), runs.size()) << r[i];
        std::sort(runs.begin(), runs.end());
        const size_t h = runs.size() / 2;
        const double median = runs.size() % 2 ? runs[h] : (runs[h - 1] + runs[h]) / 2;
        EXPECT_DOUBLE_EQ(median, r[i].at("median_ms").get<double>()) << r[i];
    }
    // The yardstick moves what a two-pass fused kernel must: the ReLU's
    // input, its diff_dst and src in pass 1, the last two again in pass 2,
    // diff_src once.
    EXPECT_EQ(c.at("bytes"), 4 * 6 * 120);
    EXPECT_EQ(run_json("--shape 2x3x4x5 --relu --global-stats --backend tbb").at("cases")[0].at("bytes"), 4 * 4 * 120);
    EXPECT_EQ(run_json("--shape 2x3x4x5 --relu --global-stats --outputs 1 --backend tbb").at("cases")[0].at("bytes"),
            4 * 3 * 120);

    const tool_result table = run_tool("bpg-bench", "--shape 2x3x4x5 --relu --backend tbb --repeat 2 --warmup 0");
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("tbb:apart"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("tbb: fused "), std::string::npos) << table.out;

    const json apart = run_json("--shape 2x3x4x5 --relu --apart --backend tbb");
    const json &a = apart.at("cases")[0].at("results");
    ASSERT_EQ(a.size(), 1u);
    EXPECT_FALSE(a[0].contains("apart"));
}

TEST(BpgBench, TableAndJsonFile) {
    const std::string file = temp_dir("bench-json") + "/out.json";
    const tool_result r = run_tool("bpg-bench", "--shape 2x3x4 --backend ref --repeat 2 --warmup 0 --json " + file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("threads used"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bn training NCX f32 2x3x4"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("stream"), std::string::npos) << r.out;
    const json doc = json::parse(read_text(file), nullptr, false);
    ASSERT_TRUE(doc.is_object());
    check_results(doc.at("cases")[0], {"ref"});
}

TEST(BpgBench, DefaultSuitesAreValidCases) {
    const tool_result all = run_tool("bpg-bench", "--list");
    ASSERT_EQ(all.exit_code, 0) << all.err;
    const tool_result interp = run_tool("bpg-bench", "--list --suite interpolate");
    const tool_result bn = run_tool("bpg-bench", "--list --op batchnorm");
    ASSERT_EQ(interp.exit_code, 0) << interp.err;
    ASSERT_EQ(bn.exit_code, 0) << bn.err;
    EXPECT_EQ(all.out, interp.out + bn.out);
    EXPECT_NE(interp.out.find("interp bilinear NCX f32 16x64x56x56->16x64x112x112"), std::string::npos);
    EXPECT_NE(interp.out.find("interp trilinear NXC f32 2x32x32x32x32->2x64x64x64x32"), std::string::npos);
    EXPECT_NE(bn.out.find("bn global_stats NXC f32 16x112x112x64"), std::string::npos);
    EXPECT_NE(bn.out.find("bn global_stats NCX f32 16x64x112x112 1 output"), std::string::npos);
    EXPECT_NE(bn.out.find("bn training NXC f16 16x112x112x64"), std::string::npos);
    EXPECT_NE(bn.out.find("bn training NXC f16 16x56x56x256"), std::string::npos);
}

// Each line of --list: the class, then the description.
std::vector<std::pair<std::string, std::string>> listed(const std::string &args) {
    const tool_result r = run_tool("bpg-bench", "--list " + args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    std::vector<std::pair<std::string, std::string>> lines;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
        const size_t space = line.find(' ');
        const size_t desc = line.find_first_not_of(' ', space);
        EXPECT_NE(desc, std::string::npos) << line;
        if (desc != std::string::npos) lines.emplace_back(line.substr(0, space), line.substr(desc));
    }
    return lines;
}

TEST(BpgBench, ListShowsTheClassOfEveryCase) {
    const auto all = listed("");
    std::set<std::string> classes;
    for (const auto &[cls, desc] : all) classes.insert(cls);
    for (const char *want : {"default", "short_rows", "batch1", "1d", "non_integer", "align_corners", "down", "3d",
                 "bn_rank2", "bn_7x7", "bn_3d", "overhead", "first_call"})
        EXPECT_TRUE(classes.count(want)) << want;
    // Every interpolate problem is in the suite in all three dtypes.
    std::set<std::string> descriptions;
    for (const auto &[cls, desc] : all) descriptions.insert(cls + " " + desc);
    int interp_f32 = 0;
    for (const auto &[cls, desc] : all) {
        const size_t at = desc.find(" f32 ");
        if (desc.rfind("interp ", 0) != 0 || at == std::string::npos || cls == "overhead" || cls == "first_call")
            continue;
        ++interp_f32;
        for (const char *dt : {" bf16 ", " f16 "}) {
            const std::string other = cls + " " + desc.substr(0, at) + dt + desc.substr(at + 5);
            EXPECT_TRUE(descriptions.count(other)) << other;
        }
    }
    EXPECT_GE(interp_f32, 20);
}

TEST(BpgBench, ClassSelectsTheCasesOfThatClass) {
    const auto all = listed("");
    const auto some = listed("--class short_rows,1d");
    std::vector<std::pair<std::string, std::string>> want;
    for (const auto &line : all)
        if (line.first == "short_rows" || line.first == "1d") want.push_back(line);
    EXPECT_EQ(some, want);
    EXPECT_FALSE(want.empty());
    // Within a suite, the class keeps to that suite's cases.
    const auto bn = listed("--suite batchnorm --class overhead");
    ASSERT_EQ(bn.size(), 1u);
    EXPECT_EQ(bn[0].second.rfind("bn ", 0), 0u) << bn[0].second;

    const tool_result bad = run_tool("bpg-bench", "--class short_row");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--class short_row is not one of"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("short_rows"), std::string::npos) << bad.err; // the names to choose from
}

TEST(BpgBench, ListJsonCarriesTheCaseFields) {
    const tool_result r = run_tool("bpg-bench", "--list --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out, nullptr, false);
    ASSERT_TRUE(doc.is_object());
    const auto lines = listed("");
    ASSERT_EQ(doc.at("cases").size(), lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
        const json &c = doc.at("cases")[i];
        EXPECT_EQ(c.at("class"), lines[i].first);
        EXPECT_EQ(c.at("description"), lines[i].second);
        EXPECT_GT(c.at("bytes").get<int64_t>(), 0);
        const std::string kind = c.at("kind");
        EXPECT_EQ(kind, lines[i].first == "overhead" || lines[i].first == "first_call" ? lines[i].first : "throughput");
        EXPECT_TRUE(c.at("op") == "interpolate" ? c.contains("src") && c.contains("coord") : c.contains("shape"));
    }
    const std::string file = temp_dir("bench-list") + "/cases.json";
    const tool_result to_file = run_tool("bpg-bench", "--list --class 1d --json " + file);
    ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
    EXPECT_EQ(to_file.out, "");
    EXPECT_EQ(json::parse(read_text(file), nullptr, false).at("cases").size(), 6u); // 3 dtypes x 2 layouts
}

// The per call cases: blocks of calls, and the time per call beyond the
// streaming kernel's; the class summary takes the worst of them.
TEST(BpgBench, OverheadCasesReportMicrosecondsPerCall) {
    const json doc = run_json("--class overhead --backend tbb");
    ASSERT_EQ(doc.at("cases").size(), 2u);
    double worst = -1e9;
    for (const json &c : doc.at("cases")) {
        EXPECT_EQ(c.at("kind"), "overhead");
        EXPECT_EQ(c.at("class"), "overhead");
        EXPECT_EQ(c.at("calls_per_run"), 100);
        check_results(c, {"tbb"});
        const json &r = c.at("results")[0];
        EXPECT_EQ(r.at("runs_ms").size(), 10 * doc.at("repeat").get<size_t>()); // 10 blocks per --repeat
        const double us = r.at("overhead_us").get<double>();
        EXPECT_NEAR(us, (r.at("median_ms").get<double>() - c.at("stream_ms").get<double>()) * 1e3, 1e-9);
        EXPECT_EQ(r.at("goal").at("met").get<bool>(), us < 3) << r;
        worst = std::max(worst, us);
    }
    ASSERT_EQ(doc.at("classes").size(), 1u);
    const json &s = doc.at("classes")[0];
    EXPECT_EQ(s.at("class"), "overhead");
    EXPECT_EQ(s.at("backend"), "tbb");
    EXPECT_EQ(s.at("cases"), 2);
    EXPECT_EQ(s.at("ran"), 2);
    EXPECT_DOUBLE_EQ(s.at("worst_overhead_us").get<double>(), worst);
    EXPECT_TRUE(s.at("worst_x_stream").is_null());

    const tool_result table = run_tool("bpg-bench", "--class overhead --repeat 1 --warmup 0 --backend tbb");
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("tbb: "), std::string::npos) << table.out;
    EXPECT_NE(table.out.find(" us per call, "), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("per class:"), std::string::npos) << table.out;
}

// The first call case: timed in this process after another shape ran, and in
// fresh processes (the tool started again with --first-call-child).
TEST(BpgBench, FirstCallCasesTimeTheFirstExecute) {
    const json doc = run_json("--class first_call --backend tbb");
    ASSERT_EQ(doc.at("cases").size(), 2u);
    for (const json &c : doc.at("cases")) {
        EXPECT_EQ(c.at("kind"), "first_call");
        check_results(c, {"tbb"});
        const json &r = c.at("results")[0];
        for (const char *field : {"compile_ms", "first_ms", "fresh_compile_ms", "fresh_first_ms"})
            EXPECT_GT(r.at(field).get<double>(), 0) << field;
        EXPECT_EQ(r.at("fresh_runs"), doc.at("repeat")); // one fresh process per --repeat
        const bool met = r.at("first_ms").get<double>() < 1 && r.at("fresh_first_ms").get<double>() < 1;
        EXPECT_EQ(r.at("goal").at("met").get<bool>(), met) << r;
    }
    // The child's side alone: one JSON object.
    const tool_result child = run_tool("bpg-bench", "--shape 2x3x4x4 --backend tbb --first-call-child");
    ASSERT_EQ(child.exit_code, 0) << child.err;
    const json times = json::parse(child.out, nullptr, false);
    ASSERT_TRUE(times.is_object()) << child.out;
    EXPECT_GT(times.at("first_ms").get<double>(), 0);
    EXPECT_GT(times.at("compile_ms").get<double>(), 0);
}

// The goal marks follow the numbers of the same run (never asserted as
// performance): x stream within 1.3 (f32) and faster than dnnl when it ran.
TEST(BpgBench, GoalMarksFollowTheRatios) {
    const json doc = run_json("--shape 2x3x4x5 --backend all");
    const json &c = doc.at("cases")[0];
    EXPECT_EQ(c.at("class"), "cli");
    for (const json &r : c.at("results")) {
        if (r.at("backend") != "tbb") {
            EXPECT_TRUE(r.at("goal").is_null()) << r; // the goals are about bpg's own kernels
            continue;
        }
        bool met = r.at("x_stream").get<double>() <= 1.3;
        for (const json &other : c.at("results"))
            if ((other.at("backend") == "dnnl" || other.at("backend") == "onednn_graph") && other.at("status") == "ok")
                met = met && r.at("median_ms").get<double>() < other.at("median_ms").get<double>();
        EXPECT_EQ(r.at("goal").at("met").get<bool>(), met) << r;
    }
    // One summary entry per backend row of the one class.
    const json &classes = doc.at("classes");
    ASSERT_EQ(classes.size(), c.at("results").size());
    for (size_t i = 0; i < classes.size(); ++i) {
        EXPECT_EQ(classes[i].at("class"), "cli");
        EXPECT_EQ(classes[i].at("backend"), c.at("results")[i].at("backend"));
        EXPECT_EQ(classes[i].at("worst_x_stream"), c.at("results")[i].at("x_stream"));
    }
}

// bench/torch_suite.py times torch's backward on the cases of a bpg-bench
// run and bench/merge_suite.py puts the two side by side (run_suite.sh runs
// the three in a row). Skipped where Debian's python3-torch is missing.
TEST(BpgBench, TorchSuiteAndMergeTakeTheRunsCases) {
    if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no torch";
    const std::string dir = temp_dir("bench-torch"), bench = std::string(BPG_SOURCE_DIR) + "/bench/";
    const auto python = [&](const std::string &args) {
        return std::system(("/usr/bin/python3 " + bench + args + " >" + dir + "/py.out 2>" + dir + "/py.err").c_str());
    };
    const tool_result run = run_tool("bpg-bench", "--class overhead,first_call --backend tbb --repeat 2 --warmup 0 "
                                                  "--json " + dir + "/run.bpg.json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    ASSERT_EQ(python("torch_suite.py --cases " + dir + "/run.bpg.json --json " + dir + "/run.torch.json"), 0)
            << read_text(dir + "/py.err");
    const json torch_doc = json::parse(read_text(dir + "/run.torch.json"), nullptr, false);
    const json bpg_doc = json::parse(read_text(dir + "/run.bpg.json"), nullptr, false);
    ASSERT_EQ(torch_doc.at("cases").size(), bpg_doc.at("cases").size());
    EXPECT_EQ(torch_doc.at("repeat"), 2); // the bpg-bench run's
    for (size_t i = 0; i < bpg_doc.at("cases").size(); ++i) {
        const json &t = torch_doc.at("cases")[i];
        EXPECT_EQ(t.at("description"), bpg_doc.at("cases")[i].at("description"));
        EXPECT_EQ(t.at("status"), "ok") << t;
        EXPECT_GT(t.at("median_ms").get<double>(), 0);
        if (t.at("kind") == "first_call") {
            EXPECT_GT(t.at("first_ms").get<double>(), 0);
        }
    }
    ASSERT_EQ(python("merge_suite.py " + dir + "/run.bpg.json " + dir + "/run.torch.json --commit abc1234"), 0)
            << read_text(dir + "/py.err");
    const std::string table = read_text(dir + "/py.out");
    EXPECT_NE(table.find("commit abc1234"), std::string::npos) << table;
    EXPECT_NE(table.find("| interp bilinear NCX f32 1x1x2x2->1x1x4x4 per call |"), std::string::npos) << table;
    EXPECT_NE(table.find("## First call"), std::string::npos) << table;

    // goal_runs.py counts the runs meeting each goal (here one run, of one needed).
    const int goals = python("goal_runs.py " + dir + "/run --need 1");
    const std::string counted = read_text(dir + "/py.out");
    EXPECT_NE(counted.find("| overhead | bn training NCX f32 1x1x2x2 per call | "), std::string::npos) << counted;
    const bool all_met = counted.find("\n0 of 4 cases fail.") != std::string::npos;
    EXPECT_EQ(WEXITSTATUS(goals), all_met ? 0 : 1) << counted << read_text(dir + "/py.err");

    // Each op the script times gives autograd's gradient (a reduced copy of
    // each case), so the mapping of modes and layouts is right.
    ASSERT_EQ(run_tool("bpg-bench", "--list --json " + dir + "/list.json").exit_code, 0);
    EXPECT_EQ(python("torch_suite.py --check --cases " + dir + "/list.json"), 0) << read_text(dir + "/py.err");
}

TEST(BpgBench, BadOptionsExit2WithOneLine) {
    const char *bad[] = {
            "--src 1x2x4 --dst 1x2x8x8",                     // ranks differ
            "--src 1x2x4x4 --dst 1x3x8x8",                   // C differs
            "--src 1x2x4x4 --dst 1x2x8x8 --mode cubic",      // unknown mode
            "--src 1x2x4x4 --dst 1x2x8x8 --coord middle",    // unknown coordinate mode
            "--src 1x2x4x4 --dst 1x2x8x8 --nearest-mode up", // unknown nearest mode
            "--src 1x2x4x4 --dst 1x2x8x8 --format NHWC",     // unknown format
            "--src 1x2x4x4 --dst 1x2x8x8 --dtype f64",       // unknown dtype
            "--src 1x2xfourx4 --dst 1x2x8x8",                // not a shape
            "--src 1x0x4 --dst 1x0x8",                       // zero dimension
            "--src 1x2x4x4",                                 // no --dst
            "--src 2x3 --dst 2x3",                           // rank 2 interpolate
            "--shape 4",                                     // rank 1 batchnorm
            "--shape 2x3 --outputs 2",                       // 2 outputs
            "--shape 2x3 --mode nearest",                    // interpolate option on batchnorm
            "--src 1x2x4 --dst 1x2x8 --global-stats",        // batchnorm option on interpolate
            "--op conv",                                     // unknown op
            "--suite everything",                            // unknown suite
            "--class nope",                                  // unknown class
            "--class default,",                              // empty class name
            "--suite batchnorm --class 1d",                  // no case of the class in the suite
            "--shape 2x3 --class default",                   // class and case
            "--first-call-child",                            // internal flag without a case
            "--dtype bf16",                                  // case option without a case
            "--shape 2x3 --suite batchnorm",                 // suite and case
            "--shape 2x3 --backend cuda",                    // unknown backend
            "--shape 2x3 --repeat 0",                        // no timed runs
            "--shape 2x3 --threads -2",                      // negative threads
            "--shape 2x3 --json /nonexistent-dir/out.json",  // unwritable file
            "--frobnicate",                                  // unknown option
    };
    for (const char *args : bad) {
        const tool_result r = run_tool("bpg-bench", args);
        EXPECT_EQ(r.exit_code, 2) << args;
        EXPECT_EQ(r.out, "") << args;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
        EXPECT_EQ(r.err.rfind("bpg-bench: error: ", 0), 0u) << args << ": " << r.err;
    }
}

// Runs stream_reduce with the output `offset` elements into its buffer (an
// odd offset gives the non-temporal path an unaligned head and tail) and
// counts outputs that are not the sum of their group
// [floor(j*n_in/n_out), floor((j+1)*n_in/n_out)).
template <typename T> int64_t wrong_sums(data_type dt, int64_t n_in, int64_t n_out, bool nt, int64_t offset) {
    std::vector<T> in(static_cast<size_t>(n_in)), buf(static_cast<size_t>(n_out + offset), T(99));
    for (int64_t i = 0; i < n_in; ++i) in[size_t(i)] = T(i % 7 + 1);
    bench::stream_reduce(dt, in.data(), n_in, buf.data() + offset, n_out, nt);
    int64_t wrong = buf[0] != T(99) && offset > 0;
    for (int64_t j = 0; j < n_out; ++j) {
        T want = 0;
        for (int64_t i = j * n_in / n_out; i < (j + 1) * n_in / n_out; ++i) want = T(want + in[size_t(i)]);
        wrong += buf[size_t(j + offset)] != want;
    }
    return wrong;
}

// Every input is read once, for every kind of ratio (integer up, integer
// down, fractional both ways), both element widths and both ways of storing.
TEST(BpgBench, StreamKernelReadsEveryInputOnce) {
    const int64_t sizes[] = {1, 2, 3, 7, 8, 21, 64, 999, 65537, 200003, 1 << 18};
    for (int64_t n_in : sizes)
        for (int64_t n_out : sizes)
            for (bool nt : {false, true})
                for (int64_t offset : {0, 1}) {
                    EXPECT_EQ(wrong_sums<float>(data_type::f32, n_in, n_out, nt, offset), 0)
                            << n_in << " -> " << n_out << " nt " << nt << " offset " << offset;
                    EXPECT_EQ(wrong_sums<uint16_t>(data_type::bf16, n_in, n_out, nt, offset), 0)
                            << n_in << " -> " << n_out << " nt " << nt << " offset " << offset;
                }
}

// The batchnorm yardsticks write every diff_src element (an odd length, so
// the tail of the last task is covered too).
TEST(BpgBench, StreamBatchnormKernelsWriteEveryOutput) {
    const int64_t n = 300007;
    std::vector<float> src(static_cast<size_t>(n)), dd(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        src[size_t(i)] = float(i % 11) - 5;
        dd[size_t(i)] = float(i % 3) + 1;
    }
    for (int pass : {1, 2})
        for (bool nt : {false, true})
            for (const float *third : {static_cast<const float *>(nullptr), static_cast<const float *>(src.data())}) {
                std::vector<float> ds(static_cast<size_t>(n), std::nanf(""));
                if (pass == 1) bench::stream_bn_one_pass(data_type::f32, src.data(), dd.data(), third, ds.data(), n, nt);
                else bench::stream_bn_two_pass(data_type::f32, src.data(), dd.data(), third, ds.data(), n, nt);
                EXPECT_EQ(std::count_if(ds.begin(), ds.end(), [](float v) { return std::isnan(v); }), 0)
                        << pass << " pass(es), nt " << nt << (third ? ", a third stream" : "");
            }
}

} // namespace
} // namespace bpg::test
