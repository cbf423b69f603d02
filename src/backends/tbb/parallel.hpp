// The parallel loop of the oneTBB kernels, and how many of its tasks may run
// at once. The run (core/run_threads.hpp, set by compiled_partition) says
// where the loop runs:
// - tbb_arena: tbb::parallel_for in the partition's own arena, isolated, so
//   that a thread waiting for its own run's tasks takes no task of another
//   run (a run's working memory, task_pool.hpp, is one item per task that can
//   run at once; isolation keeps the threads running its tasks within that).
// - openmp: an OpenMP parallel region of max_threads threads on the calling
//   thread (parallel_openmp.cpp), whose team a host such as PyTorch already
//   keeps spinning. The range is cut as oneTBB would cut it; the kernels'
//   results never depend on the cut.
// Under ThreadSanitizer the loop always runs on oneTBB, in parallel.cpp built
// uninstrumented (oneTBB's inlined task code works on its own uninstrumented
// pools, which TSan would report), and TSan is told what oneTBB's scheduler
// guarantees: a task starts after the caller's writes, and the caller resumes
// after every task's. Tasks get no edge with one another, so two tasks
// touching the same element, or two executes sharing state, are still reported.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <tbb/blocked_range.h>
#include <tbb/task_arena.h>
#if !defined(__SANITIZE_THREAD__)
#include <tbb/parallel_for.h>
#endif

#include "core/run_threads.hpp"

namespace bpg::tbb_backend {

using task_range = tbb::blocked_range<int64_t>;
using task_body = void (*)(const void *context, const task_range &r);

// How many tasks of a kernel may run at once in the current run: the run's
// max_threads (its arena's slots or its OpenMP team); outside a run (a kernel
// called directly, as tests do) the concurrency of the caller's arena.
inline int64_t tasks_at_once() {
    const core::run_threads *run = core::current_run();
    return run ? run->max_threads : tbb::this_task_arena::max_concurrency();
}

// The TSan build's loop: body(context, r) for the ranges r of `range`
// (parallel.cpp is compiled with BPG_ANNOTATE_FOR_TSAN there).
void parallel_tasks_annotated(const task_range &range, task_body body, const void *context);
// The openmp runtime's loop: a parallel region of `threads` threads.
void parallel_tasks_openmp(const task_range &range, task_body body, const void *context, int threads);

// Tests only: counts the task bodies running at once, to check that a run
// never exceeds tasks_at_once(). Off unless a test turns it on. Each counted
// body first sleeps hold_us, so that tasks overlap even on a busy machine.
struct task_census {
    std::atomic<bool> on {false};
    std::atomic<int> running {0};
    std::atomic<int> peak {0};
    std::atomic<int> hold_us {0};
};
inline task_census &test_task_census() {
    static task_census census;
    return census;
}

// One task body, counted when the census is on.
template <typename Body> void run_task(const Body &body, const task_range &r) {
    task_census &census = test_task_census();
    if (!census.on.load(std::memory_order_relaxed)) return body(r);
    const int now = census.running.fetch_add(1, std::memory_order_acq_rel) + 1;
    for (int peak = census.peak.load(std::memory_order_relaxed);
            now > peak && !census.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed);) {}
    struct leave {
        task_census &c;
        ~leave() { c.running.fetch_sub(1, std::memory_order_acq_rel); }
    } on_exit {census};
    if (const int us = census.hold_us.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::microseconds(us));
    body(r);
}

// One task on the calling thread: no parallel region, no oneTBB tasks. The
// kernels' results never depend on how a range is cut, so this gives the
// bits of any other cut.
template <typename Body> void inline_task(const task_range &range, const Body &body) {
    if (!range.empty()) run_task(body, range);
}

template <typename Body> void parallel_tasks(const task_range &range, const Body &body) {
    // A one-thread run gains nothing from a loop: an OpenMP region of one
    // thread still allocates its team, and oneTBB still makes its tasks.
    if (tasks_at_once() == 1) return inline_task(range, body);
    const task_body call = [](const void *b, const task_range &r) { run_task(*static_cast<const Body *>(b), r); };
#if defined(__SANITIZE_THREAD__)
    parallel_tasks_annotated(range, call, &body);
#else
    if (const core::run_threads *run = core::current_run(); run && core::loops_on_openmp(*run)) {
        parallel_tasks_openmp(range, call, &body, run->max_threads);
        return;
    }
    tbb::this_task_arena::isolate([&] { tbb::parallel_for(range, [&](const task_range &r) { run_task(body, r); }); });
#endif
}

} // namespace bpg::tbb_backend
