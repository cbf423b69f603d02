// The tensor sizes from which the oneTBB kernels take another path (streamed
// stores, column prefetch), read through one function so that tests can
// lower them all at once and reach those paths with small tensors.
#pragma once

#include <atomic>
#include <cstdint>

namespace bpg::tbb_backend {

// Tests only: every threshold is divided by 2^shift (0: as built). Read when
// a partition is compiled or executed; not for users.
inline std::atomic<int> &test_size_threshold_shift() {
    static std::atomic<int> shift {0};
    return shift;
}

// `bytes`, a threshold of the kernels, as lowered by the tests' knob.
inline int64_t size_threshold(int64_t bytes) {
    return bytes >> test_size_threshold_shift().load(std::memory_order_relaxed);
}

} // namespace bpg::tbb_backend
