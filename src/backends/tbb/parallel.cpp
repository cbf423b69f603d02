#include "backends/tbb/parallel.hpp"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#if defined(BPG_ANNOTATE_FOR_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace bpg::tbb_backend {

void parallel_tasks_annotated(const task_range &range, task_body body, const void *context) {
#if defined(BPG_ANNOTATE_FOR_TSAN)
    char started = 0, finished = 0; // addresses only: this call's own sync points
    __tsan_release(&started);
    tbb::this_task_arena::isolate([&] {
        tbb::parallel_for(range, [&](const task_range &r) {
            __tsan_acquire(&started);
            body(context, r);
            __tsan_release(&finished);
        });
    });
    __tsan_acquire(&finished);
#else
    tbb::this_task_arena::isolate([&] { tbb::parallel_for(range, [&](const task_range &r) { body(context, r); }); });
#endif
}

} // namespace bpg::tbb_backend
