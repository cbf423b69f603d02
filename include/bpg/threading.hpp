// How many threads the library's backends use by default. This is the
// library's own default for compiled partitions whose compile_options leave
// max_threads at 0; it changes no process-wide setting (no
// omp_set_num_threads, no tbb::global_control): each partition runs in its own
// oneTBB arena, and oneDNN's OpenMP team is sized for the call only.
#pragma once

#pragma GCC visibility push(default)
namespace bpg {

void set_max_threads(int n); // n >= 0; 0 restores the default (all cores)
int get_max_threads();       // what a partition with max_threads = 0 uses now

} // namespace bpg
#pragma GCC visibility pop
