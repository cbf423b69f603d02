// Working memory of the tasks of one kernel run, made before the run writes
// any output: running out of memory (core::allocate) then leaves no output
// partly written. One T per task that can run at once (tasks_at_once(), at
// most the number of tasks); a task borrows a free one while it runs.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "backends/tbb/parallel.hpp"
#include "bpg/status.hpp"
#include "core/allocate.hpp"

namespace bpg::tbb_backend {

// How many items a task_pool of `tasks` tasks makes.
inline int64_t task_pool_size(int64_t tasks) { return std::max<int64_t>(1, std::min<int64_t>(tasks, tasks_at_once())); }

template <typename T> class task_pool {
public:
    // make() builds one T, allocating through core::allocate.
    template <typename Make> task_pool(int64_t tasks, Make &&make) {
        const int64_t n = task_pool_size(tasks);
        items_.reserve(size_t(n));
        for (int64_t i = 0; i < n; ++i) items_.push_back(make());
        busy_ = core::allocate_array<std::atomic<bool>>(size_t(n), "task flags");
        for (int64_t i = 0; i < n; ++i) busy_[size_t(i)].store(false, std::memory_order_relaxed);
    }

    class borrowed {
    public:
        borrowed(const task_pool &pool, size_t i) : pool_(pool), i_(i) {}
        borrowed(const borrowed &) = delete;
        borrowed &operator=(const borrowed &) = delete;
        ~borrowed() { pool_.busy_[i_].store(false, std::memory_order_release); }
        T &operator*() const { return pool_.items_[i_]; }
        T *operator->() const { return &**this; }

    private:
        const task_pool &pool_;
        size_t i_;
    };

    // A task body runs no nested parallel work, so at most one per thread
    // of the run (arena slot or OpenMP team member) holds an item: one is
    // always free.
    borrowed borrow() const {
        for (size_t i = 0; i < items_.size(); ++i) {
            bool free = false;
            if (busy_[i].compare_exchange_strong(free, true, std::memory_order_acquire)) return borrowed(*this, i);
        }
        throw error(status::runtime_error, "tbb backend: more tasks at once than threads in the run");
    }

private:
    mutable core::checked_vector<T> items_;
    core::array<std::atomic<bool>> busy_;
};

} // namespace bpg::tbb_backend
