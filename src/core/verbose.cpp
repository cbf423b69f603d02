#include "core/verbose.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace bpg {

namespace {

// -1: not decided yet (BPG_VERBOSE is read at the first get_verbose()).
std::atomic<int> verbose_level {-1};

int level_from_env() {
    const char *v = std::getenv("BPG_VERBOSE");
    if (!v || !*v) return 0;
    const int n = std::atoi(v);
    return n < 0 ? 0 : n;
}

} // namespace

void set_verbose(int level) { verbose_level.store(level < 0 ? 0 : level); }

// Read on every execute: one relaxed load once the level is decided.
int get_verbose() {
    int l = verbose_level.load(std::memory_order_relaxed);
    if (l < 0) {
        int expected = -1;
        verbose_level.compare_exchange_strong(expected, level_from_env());
        l = verbose_level.load();
    }
    return l;
}

namespace core {

void verbose_print(const std::string &line) {
    static std::mutex m;
    const std::string text = "bpg_verbose," + line + "\n";
    std::lock_guard<std::mutex> lock(m);
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
}

double verbose_now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

} // namespace core
} // namespace bpg
