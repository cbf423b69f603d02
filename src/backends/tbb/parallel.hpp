// tbb::parallel_for over a range of int64_t, as the oneTBB kernels run it:
// isolated, so that a thread waiting for its own run's tasks takes no task of
// another run (a run's working memory, task_pool.hpp, is one item per thread
// of the arena; isolation keeps the threads running its tasks within that).
// Under ThreadSanitizer the loop runs in parallel.cpp, built uninstrumented
// (oneTBB's inlined task code works on its own uninstrumented pools, which
// TSan would report), and TSan is told what oneTBB's scheduler guarantees: a
// task starts after the caller's writes, and the caller resumes after every
// task's. Tasks get no edge with one another, so two tasks touching the same
// element, or two executes sharing state, are still reported.
#pragma once

#include <cstdint>

#include <tbb/blocked_range.h>
#if !defined(__SANITIZE_THREAD__)
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#endif

namespace bpg::tbb_backend {

using task_range = tbb::blocked_range<int64_t>;

// The loop of the TSan build: body(context, r) for the ranges r of `range`
// (parallel.cpp is compiled with BPG_ANNOTATE_FOR_TSAN there).
void parallel_tasks_annotated(const task_range &range, void (*body)(const void *context, const task_range &r),
        const void *context);

template <typename Body> void parallel_tasks(const task_range &range, const Body &body) {
#if defined(__SANITIZE_THREAD__)
    parallel_tasks_annotated(
            range, [](const void *b, const task_range &r) { (*static_cast<const Body *>(b))(r); }, &body);
#else
    tbb::this_task_arena::isolate([&] { tbb::parallel_for(range, body); });
#endif
}

} // namespace bpg::tbb_backend
