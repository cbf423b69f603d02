// tbb::parallel_for over a range of int64_t, as the oneTBB kernels run it. Under ThreadSanitizer it
// also tells TSan what oneTBB's (uninstrumented) scheduler guarantees: a task
// starts after the caller's writes, and the caller resumes after every
// task's writes. Tasks get no edge with one another, so two tasks touching
// the same element, or two executes sharing state, are still reported.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace bpg::tbb_backend {

template <typename Body> void parallel_tasks(const tbb::blocked_range<int64_t> &range, const Body &body) {
#if defined(__SANITIZE_THREAD__)
    char started = 0, finished = 0; // addresses only: this call's own sync points
    __tsan_release(&started);
    tbb::parallel_for(range, [&](const tbb::blocked_range<int64_t> &r) {
        __tsan_acquire(&started);
        body(r);
        __tsan_release(&finished);
    });
    __tsan_acquire(&finished);
#else
    tbb::parallel_for(range, body);
#endif
}

} // namespace bpg::tbb_backend
