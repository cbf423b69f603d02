#include "ops/settings.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace bpg_torch {

namespace {

std::atomic<int64_t> own_threads {0};

// BPG_TORCH_RUNTIME=openmp|tbb_arena, read once. OpenMP by default: torch's
// own OpenMP workers, already spinning after a torch op, then run bpg's loops
// instead of competing with a second pool. Under OMP_WAIT_POLICY=passive they
// sleep, and waking them costs more than a oneTBB arena (bench/NOTES.md).
int runtime_from_env() {
    const char *v = std::getenv("BPG_TORCH_RUNTIME");
    if (!v || !*v) {
        const char *policy = std::getenv("OMP_WAIT_POLICY");
        const bool passive = policy && (std::strcmp(policy, "passive") == 0 || std::strcmp(policy, "PASSIVE") == 0);
        return passive ? BPG_CAPI_RUNTIME_TBB_ARENA : BPG_CAPI_RUNTIME_OPENMP;
    }
    if (std::strcmp(v, "openmp") == 0) return BPG_CAPI_RUNTIME_OPENMP;
    if (std::strcmp(v, "tbb_arena") == 0) return BPG_CAPI_RUNTIME_TBB_ARENA;
    TORCH_CHECK(false, "bpg_torch: BPG_TORCH_RUNTIME must be openmp or tbb_arena, got '", v, "'");
}

// BPG_TORCH_CACHE_CAPACITY=n (n >= 1, read once): compiled partitions kept.
bool apply_cache_capacity_from_env() {
    const char *v = std::getenv("BPG_TORCH_CACHE_CAPACITY");
    if (!v || !*v) return false;
    char *end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    TORCH_CHECK(*end == '\0' && n >= 1, "bpg_torch: BPG_TORCH_CACHE_CAPACITY must be an integer >= 1, got '", v,
            "'");
    bpg_capi_cache_set_capacity(n);
    return true;
}

} // namespace

void set_num_threads(int64_t n) {
    TORCH_CHECK(n >= 0 && n <= 65536, "bpg_torch.set_num_threads: n must be 0 (follow torch) to 65536, got ", n);
    own_threads.store(n, std::memory_order_relaxed);
}

int64_t get_num_threads() {
    const int64_t n = own_threads.load(std::memory_order_relaxed);
    return n > 0 ? n : int64_t(at::get_num_threads());
}

// Waking a team costs more than a tiny problem takes (on a busy machine a
// descheduled team member stalls the whole region): small calls run on
// fewer threads. bpg's results do not depend on the thread count.
bpg_capi_call call_settings(int64_t elements) {
    static const int runtime = runtime_from_env();
    static const bool capacity_from_env = apply_cache_capacity_from_env();
    (void)capacity_from_env;
    bpg_capi_call c;
    const int64_t by_size = std::max<int64_t>(1, elements / elements_per_thread);
    c.max_threads = int(std::min(get_num_threads(), by_size));
    c.runtime = runtime;
    return c;
}

const char *runtime_name(int runtime) {
    return runtime == BPG_CAPI_RUNTIME_TBB_ARENA ? "tbb_arena" : "openmp";
}

bool verbose() {
    static const bool on = [] {
        const char *v = std::getenv("BPG_TORCH_VERBOSE");
        return v && std::strcmp(v, "0") != 0 && *v;
    }();
    return on;
}

void verbose_line(const std::string &line) {
    static std::mutex m; // whole lines, even from concurrent calls
    std::lock_guard<std::mutex> lock(m);
    std::fprintf(stderr, "bpg_torch,%s\n", line.c_str());
    std::fflush(stderr);
}

} // namespace bpg_torch
