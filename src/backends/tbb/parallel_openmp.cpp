// The openmp runtime's loop (parallel.hpp). Not used under ThreadSanitizer.
#include <atomic>
#include <deque>
#include <exception>
#include <vector>

#include <tbb/blocked_range.h>

#include "backends/tbb/parallel.hpp"

namespace bpg::tbb_backend {

namespace {

// Cuts `range` the way oneTBB does (halves, never below its grain size) into
// about four pieces per thread, so that uneven tasks still balance.
std::vector<task_range> cut(const task_range &range, int threads) {
    const size_t want = threads > 1 ? size_t(4) * size_t(threads) : 1;
    std::deque<task_range> pieces {range};
    for (size_t whole = 0; pieces.size() < want && whole < pieces.size();) {
        task_range r = pieces.front();
        pieces.pop_front();
        if (r.is_divisible()) {
            task_range right(r, tbb::split());
            pieces.push_back(r);
            pieces.push_back(right);
            whole = 0;
        } else {
            pieces.push_back(r);
            ++whole;
        }
    }
    return {pieces.begin(), pieces.end()};
}

} // namespace

void parallel_tasks_openmp(const task_range &range, task_body body, const void *context, int threads) {
    if (range.empty()) return;
    const std::vector<task_range> pieces = cut(range, threads);
    const int64_t n = int64_t(pieces.size());
    // An exception must not leave a parallel region: the first one is kept,
    // the pieces not yet started are skipped, and it is thrown here.
    std::exception_ptr failure;
    std::atomic<bool> failed {false};
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && n > 1)
    for (int64_t i = 0; i < n; ++i) {
        if (failed.load(std::memory_order_relaxed)) continue;
        try {
            body(context, pieces[size_t(i)]);
        } catch (...) {
#pragma omp critical(bpg_parallel_tasks_failure)
            if (!failure) failure = std::current_exception();
            failed.store(true, std::memory_order_relaxed);
        }
    }
    if (failure) std::rethrow_exception(failure);
}

} // namespace bpg::tbb_backend
