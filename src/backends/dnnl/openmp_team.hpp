// oneDNN's threads for one call. Debian's oneDNN runs on OpenMP and sizes its
// parallel regions (and, at creation, some primitives) from the calling
// thread's nthreads-var, omp_get_max_threads(). That ICV belongs to the
// calling thread's current task: set for the call and restored when the call
// ends, also by an exception, no other thread and no later call of this one
// sees a change. This is the only omp_set_num_threads of the library.
#pragma once

#include <omp.h>

#include "core/run_threads.hpp"

namespace bpg::backends::dnnl_impl {

class openmp_team_for_call {
public:
    // The current run's max_threads; outside a run (a kernel called
    // directly) the thread's setting stands.
    openmp_team_for_call() : saved_(omp_get_max_threads()) {
        const core::run_threads *run = core::current_run();
        if (run && run->max_threads != saved_) {
            omp_set_num_threads(run->max_threads);
            changed_ = true;
        }
    }
    ~openmp_team_for_call() {
        if (changed_) omp_set_num_threads(saved_);
    }
    openmp_team_for_call(const openmp_team_for_call &) = delete;
    openmp_team_for_call &operator=(const openmp_team_for_call &) = delete;

private:
    int saved_;
    bool changed_ = false;
};

// The team size the current run gives oneDNN, for primitive-cache keys.
inline int openmp_team_size() {
    const core::run_threads *run = core::current_run();
    return run ? run->max_threads : omp_get_max_threads();
}

} // namespace bpg::backends::dnnl_impl
