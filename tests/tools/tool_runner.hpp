// Runs a built tool (build/bin) as a subprocess and captures its result.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <system_error>
#include <vector>

#include "support/conformance.hpp"

namespace bpg::test {

struct tool_result {
    int exit_code = -1;
    std::string out, err;
};

inline std::string read_text(const std::string &path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Every temporary directory this test process made, removed when the process exits (each ctest
// test is its own process), so test runs do not litter the temp directory. Set
// BPG_KEEP_TEST_FILES=1 to keep them for a post-mortem.
class temp_dir_registry {
public:
    static temp_dir_registry &instance() {
        static temp_dir_registry r;
        return r;
    }
    void add(const std::filesystem::path &d) { dirs_.push_back(d); }
    ~temp_dir_registry() {
        const char *keep = std::getenv("BPG_KEEP_TEST_FILES");
        if (keep && std::string(keep) == "1") return;
        std::error_code ec;
        for (const auto &d : dirs_) std::filesystem::remove_all(d, ec);
    }

private:
    std::vector<std::filesystem::path> dirs_;
};

// A fresh, empty temporary directory for one test.
inline std::string temp_dir(const std::string &name) {
    auto d = std::filesystem::temp_directory_path() / ("bpg-test-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    temp_dir_registry::instance().add(d);
    return d.string();
}

// The tools are built beside the test executables (build/bin): found from this process, so no
// build path is compiled into the tests (one compiler cache serves several build trees).
inline std::string bin_dir() { return std::filesystem::read_symlink("/proc/self/exe").parent_path().string(); }

// shell_prefix runs first in the same shell (e.g. "ulimit -f 64; ").
inline tool_result run_tool(const std::string &tool, const std::string &args, const std::string &shell_prefix = "") {
    static int counter = 0;
    const std::string tmp = temp_dir("tool-io") + "/" + std::to_string(counter++);
    const std::string cmd = shell_prefix + bin_dir() + "/" + tool + " " + args + " >" + tmp + ".out 2>"
            + tmp + ".err";
    tool_result r;
    const int status = std::system(cmd.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(tmp + ".out");
    r.err = read_text(tmp + ".err");
    return r;
}

} // namespace bpg::test
