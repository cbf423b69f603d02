#include "core/partition_threads.hpp"

#include <algorithm>

#include <tbb/info.h>

namespace bpg::core {

partition_threads::partition_threads(int max_threads, threading_runtime runtime, bool tbb_kernels)
    : run_ {max_threads, runtime} {
    // One slot is reserved for the thread that calls execute, the others go
    // to oneTBB's workers; max_threads = 1 runs everything on the caller.
    // oneTBB has no more workers than its default concurrency (it warns on
    // stderr when an arena asks for more): slots beyond it would stay empty.
    if (tbb_kernels && !loops_on_openmp(run_))
        arena_ = std::make_unique<tbb::task_arena>(std::min(max_threads, tbb::info::default_concurrency()));
}

std::string partition_threads::text() const {
    return "threads=" + std::to_string(run_.max_threads) + " runtime=" + to_string(run_.runtime);
}

} // namespace bpg::core
