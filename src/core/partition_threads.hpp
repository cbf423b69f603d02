// How one compiled partition's kernels get their threads (docs/threading.md).
// The tbb backend's kernels run in a oneTBB arena of the partition's own,
// max_threads slots, made once and shared by concurrent executes (oneTBB's
// arena is thread-safe), or in the caller's arena when that has as many
// slots, or, with runtime openmp, as OpenMP parallel regions on the calling
// thread. Either way no process-wide setting changes.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <tbb/task_arena.h>

#include "core/run_threads.hpp"

namespace bpg::core {

class partition_threads {
public:
    // max_threads > 0 (compile resolves 0 to get_max_threads()). tbb_kernels:
    // the partition runs the tbb backend, whose loops may need the arena.
    // one_task: its kernel runs as one task (backends::kernel::one_task), so
    // every execute runs it on the calling thread as a run of one thread, and
    // no arena is made: nothing of oneTBB's or OpenMP's starts for it.
    partition_threads(int max_threads, threading_runtime runtime, bool tbb_kernels, bool one_task = false);
    ~partition_threads(); // where the arena is made (partition_threads.cpp)

    const run_threads &run() const { return run_; }
    // "threads=N runtime=R[ one_task]", for the verbose lines.
    std::string text() const;

    // Runs f as this partition's run: inside its arena when it has one and
    // the caller's arena has another number of slots (the run is set there,
    // on whichever thread the arena runs f), else on the calling thread. f's
    // exceptions reach the caller.
    void execute(const std::function<void()> &f) const;

private:
    run_threads run_;
    bool one_task_ = false;
    run_threads one_thread_; // the run of a one_task execute
    std::unique_ptr<tbb::task_arena> arena_;
    int arena_slots_ = 0;
};

} // namespace bpg::core
