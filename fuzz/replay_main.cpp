// A main() for the fuzz targets without libFuzzer: runs each seed, then a fixed
// number of deterministic mutations of it, through LLVMFuzzerTestOneInput. The
// tests run it in every build (ctest label "fuzz"), the sanitizer suite
// included; scripts/fuzz.sh does coverage-guided fuzzing with clang.
//
//   <target>_replay [--mutations=N] [--seed=S] [--dict=FILE] [--max-len=N] FILE|DIR...
//
// An input that crashes the target is written to ./replay-crash-<target> first.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "replay_mutations.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

namespace {

// The input being run, for the crash handlers (plain globals: a signal
// handler may only read them).
const uint8_t *current_data = nullptr;
size_t current_size = 0;
char crash_path[256] = "replay-crash";

void write_current_input() {
    const int fd = ::open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    size_t done = 0;
    while (done < current_size) {
        const ssize_t n = ::write(fd, current_data + done, current_size - done);
        if (n <= 0) break;
        done += size_t(n);
    }
    ::close(fd);
    static const char note[] = "replay: the crashing input is in ./";
    [[maybe_unused]] ssize_t w = ::write(2, note, sizeof note - 1);
    w = ::write(2, crash_path, std::strlen(crash_path));
    w = ::write(2, "\n", 1);
}

extern "C" void on_fatal_signal(int sig) {
    write_current_input();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

std::vector<uint8_t> read_file(const std::filesystem::path &p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::filesystem::path> input_files(const std::vector<std::string> &paths) {
    std::vector<std::filesystem::path> files;
    for (const std::string &p : paths) {
        if (!std::filesystem::is_directory(p)) {
            files.emplace_back(p);
            continue;
        }
        std::vector<std::filesystem::path> in_dir;
        for (const auto &e : std::filesystem::directory_iterator(p))
            if (e.is_regular_file()) in_dir.push_back(e.path());
        std::sort(in_dir.begin(), in_dir.end());
        files.insert(files.end(), in_dir.begin(), in_dir.end());
    }
    return files;
}

void run_one(const std::vector<uint8_t> &input) {
    current_data = input.data();
    current_size = input.size();
    LLVMFuzzerTestOneInput(input.data(), input.size());
}

} // namespace

int main(int argc, char **argv) {
    int mutations = 0;
    uint32_t seed = 1;
    size_t max_len = 8192;
    std::vector<std::vector<uint8_t>> dictionary;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.rfind("--mutations=", 0) == 0) mutations = std::atoi(a.c_str() + 12);
        else if (a.rfind("--seed=", 0) == 0) seed = uint32_t(std::strtoul(a.c_str() + 7, nullptr, 10));
        else if (a.rfind("--max-len=", 0) == 0) max_len = size_t(std::strtoul(a.c_str() + 10, nullptr, 10));
        else if (a.rfind("--dict=", 0) == 0) dictionary = bpg::fuzz::read_dictionary(a.substr(7));
        else if (a.rfind("--", 0) == 0) {
            std::cerr << "replay: unknown option " << a << "\n";
            return 2;
        } else paths.push_back(a);
    }
    const std::vector<std::filesystem::path> files = input_files(paths);
    if (files.empty()) {
        std::cerr << "replay: no inputs in the paths given\n";
        return 2;
    }
    std::snprintf(crash_path, sizeof crash_path, "replay-crash-%s",
            std::filesystem::path(argv[0]).filename().string().c_str());
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_fatal_signal);
    std::set_terminate([] {
        write_current_input();
        std::abort();
    });
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);

    std::vector<std::vector<uint8_t>> seeds;
    for (const auto &f : files) seeds.push_back(read_file(f));
    const auto start = std::chrono::steady_clock::now();
    size_t runs = 0;
    for (size_t s = 0; s < seeds.size(); ++s) {
        run_one(seeds[s]);
        ++runs;
        std::mt19937 rng(seed * 7919u + uint32_t(s));
        for (int m = 0; m < mutations; ++m) {
            run_one(bpg::fuzz::mutate(seeds[s], seeds, dictionary, max_len, rng));
            ++runs;
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "replay: " << seeds.size() << " seeds and " << runs - seeds.size() << " mutations ran in " << seconds
              << " s\n";
    return 0;
}
