// Runs one compiled partition from several threads at once, each on its own
// buffers, and expects every run to give the bits of a sequential run on the
// same buffers (tests/concurrency).
#pragma once

#include <cstdint>

#include "bpg/graph.hpp"

namespace bpg::test {

// `threads` threads, `runs_per_thread` executes each; thread t's inputs are
// filled from seed first_seed + t (port_buffers).
void expect_concurrent_runs_give_sequential_bits(const compiled_partition &cp, int threads, int runs_per_thread,
        uint32_t first_seed);

} // namespace bpg::test
