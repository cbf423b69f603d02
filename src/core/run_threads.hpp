// The threads of the run in progress on the calling thread: how many a
// compiled partition may use and which runtime runs the oneTBB kernels'
// parallel loops. compiled_partition sets it around compile and execute; the
// kernels read it (tbb backend: parallel.hpp; dnnl backend: the OpenMP team of
// the call). One thread_local, restored on scope exit, so concurrent runs on
// other threads and nested runs never see each other's settings.
#pragma once

#include "bpg/graph.hpp"

namespace bpg::core {

struct run_threads {
    int max_threads = 1;
    threading_runtime runtime = threading_runtime::tbb_arena;
};

// The most threads a partition or set_max_threads accepts: far above any
// machine's cores, low enough that an arena or team of it can be made.
inline constexpr int thread_limit = 4096;

// The calling thread's run; nullptr outside compile and execute (a kernel
// called directly, as some tests do, then takes the caller's oneTBB arena).
const run_threads *current_run();

// Makes `run` the calling thread's run for the scope's lifetime.
class run_scope {
public:
    explicit run_scope(const run_threads &run);
    ~run_scope();
    run_scope(const run_scope &) = delete;
    run_scope &operator=(const run_scope &) = delete;

private:
    const run_threads *previous_;
};

// Whether this build runs the openmp runtime's loops on OpenMP. Not under
// ThreadSanitizer, which cannot see libgomp's uninstrumented synchronisation:
// there they stay on oneTBB, in the partition's own arena. (The files built
// uninstrumented in that build define BPG_ANNOTATE_FOR_TSAN instead.)
#if defined(__SANITIZE_THREAD__) || defined(BPG_ANNOTATE_FOR_TSAN)
inline constexpr bool openmp_loops_in_this_build = false;
#else
inline constexpr bool openmp_loops_in_this_build = true;
#endif

// True when the oneTBB kernels' loops of `run` are OpenMP parallel regions.
inline bool loops_on_openmp(const run_threads &run) {
    return openmp_loops_in_this_build && run.runtime == threading_runtime::openmp;
}

} // namespace bpg::core
