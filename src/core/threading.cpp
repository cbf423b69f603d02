#include "bpg/threading.hpp"

#include <algorithm>
#include <atomic>
#include <string>

#include <omp.h>

#include "bpg/graph.hpp"
#include "bpg/status.hpp"
#include "core/run_threads.hpp"

namespace bpg {

namespace {
// The library's default only: read when a partition with max_threads = 0 is
// compiled. Changing it touches no OpenMP or oneTBB setting.
std::atomic<int> default_threads {0};

thread_local const core::run_threads *this_thread_run = nullptr;
} // namespace

void set_max_threads(int n) {
    if (n < 0 || n > core::thread_limit)
        throw error(status::invalid_argument, "set_max_threads: " + std::to_string(n) + " must be in [0, "
                        + std::to_string(core::thread_limit) + "] (0: all processors)");
    default_threads.store(n, std::memory_order_relaxed);
}

int get_max_threads() {
    const int n = default_threads.load(std::memory_order_relaxed);
    // omp_get_num_procs: the processors this process may run on (its affinity
    // mask), not OMP_NUM_THREADS, which is the host's setting for its own team.
    return n > 0 ? n : std::max(1, omp_get_num_procs());
}

const char *to_string(threading_runtime r) {
    switch (r) {
        case threading_runtime::tbb_arena: return "tbb_arena";
        case threading_runtime::openmp: return "openmp";
    }
    return "unknown";
}

namespace core {

const run_threads *current_run() { return this_thread_run; }

run_scope::run_scope(const run_threads &run) : previous_(this_thread_run) { this_thread_run = &run; }
run_scope::~run_scope() { this_thread_run = previous_; }

} // namespace core

} // namespace bpg
