#include "core/partition_threads.hpp"

#include <algorithm>

#include <tbb/info.h>

#if defined(BPG_ANNOTATE_FOR_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace bpg::core {

partition_threads::partition_threads(int max_threads, threading_runtime runtime, bool tbb_kernels, bool one_task)
    : run_ {max_threads, runtime}, one_task_(one_task), one_thread_ {1, runtime} {
    // One slot is reserved for the thread that calls execute, the others go
    // to oneTBB's workers; max_threads = 1 runs everything on the caller.
    // oneTBB has no more workers than its default concurrency (it warns on
    // stderr when an arena asks for more): slots beyond it would stay empty.
    if (tbb_kernels && !one_task && !loops_on_openmp(run_)) {
        arena_slots_ = std::min(max_threads, tbb::info::default_concurrency());
        arena_ = std::make_unique<tbb::task_arena>(arena_slots_);
        // oneTBB starts its workers with the first work it is given: give it a
        // no-op now, so that the first execute does not wait for them to start.
        if (arena_slots_ > 1) arena_->enqueue([] {});
    }
}

partition_threads::~partition_threads() = default;

void partition_threads::execute(const std::function<void()> &f) const {
    if (one_task_) {
        // A run of one thread: any loop of the kernel runs inline (parallel.hpp).
        const run_scope scope(one_thread_);
        f();
        return;
    }
    // No arena, or the caller's own has as many slots as ours: the run goes
    // on in the caller's arena. oneTBB's workers already serving it need not
    // move to another arena, which costs tens of microseconds a call (a run
    // of a few hundred; bench/NOTES.md).
    if (!arena_ || tbb::this_task_arena::max_concurrency() == arena_slots_) {
        const run_scope scope(run_);
        f();
        return;
    }
#if defined(BPG_ANNOTATE_FOR_TSAN)
    // Under ThreadSanitizer this file is built uninstrumented, like
    // backends/tbb/parallel.cpp: f may run on a oneTBB worker (when every slot
    // is taken), and TSan is told that it starts after the caller's writes and
    // that the caller resumes after f's.
    char entered = 0, left = 0;
    struct leaving {
        char *at;
        ~leaving() { __tsan_release(at); }
    };
    __tsan_release(&entered);
    arena_->execute([&] {
        __tsan_acquire(&entered);
        const leaving on_exit {&left};
        const run_scope scope(run_);
        f();
    });
    __tsan_acquire(&left);
#else
    arena_->execute([&] {
        const run_scope scope(run_);
        f();
    });
#endif
}

std::string partition_threads::text() const {
    return "threads=" + std::to_string(run_.max_threads) + " runtime=" + to_string(run_.runtime)
            + (one_task_ ? " one_task" : "");
}

} // namespace bpg::core
