// The openmp runtime's loop (parallel.hpp). Not used under ThreadSanitizer.
#include <atomic>
#include <chrono>
#include <cstddef>
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

// Starting a parallel region costs microseconds when the team spins, tens of
// them when it sleeps or shares the cores with other processes: tiny runs
// (small tensors) are cheaper on the calling thread alone.
constexpr std::chrono::microseconds inline_budget {30};

void parallel_tasks_openmp(const task_range &range, task_body body, const void *context, int threads) {
    if (range.empty()) return;
    std::vector<task_range> pieces = cut(range, threads);
    // The caller first runs small pieces of the first piece (so that a large
    // run loses little parallel time) and keeps going while the run is still
    // tiny; the team takes whatever is left.
    if (threads > 1) {
        const std::vector<task_range> probe = cut(pieces.front(), threads);
        const auto start = std::chrono::steady_clock::now();
        size_t done = 0;
        while (done < probe.size() && std::chrono::steady_clock::now() - start < inline_budget)
            body(context, probe[done++]);
        pieces.erase(pieces.begin());
        pieces.insert(pieces.begin(), probe.begin() + std::ptrdiff_t(done), probe.end());
        size_t whole = 0;
        while (whole < pieces.size() && std::chrono::steady_clock::now() - start < inline_budget)
            body(context, pieces[whole++]);
        pieces.erase(pieces.begin(), pieces.begin() + std::ptrdiff_t(whole));
        if (pieces.empty()) return;
    }
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
