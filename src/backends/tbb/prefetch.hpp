// Software prefetch for data streaming from memory, shared by the oneTBB
// kernels.
#pragma once

#include <cstdint>

#include <xmmintrin.h>

namespace bpg::tbb_backend {

// The line `bytes` past p, prefetched into L2 (T1). An address only: a
// prefetch never faults, past a tensor's end included, so it is computed as
// an integer rather than by pointer arithmetic.
inline __attribute__((always_inline)) void prefetch_l2_ahead(const void *p, int64_t bytes) {
    _mm_prefetch(reinterpret_cast<const char *>(reinterpret_cast<uintptr_t>(p) + uintptr_t(bytes)), _MM_HINT_T1);
}

// The lines of [from, to) into L2 (addresses: see above).
inline __attribute__((always_inline)) void prefetch_l2_lines(uintptr_t from, uintptr_t to) {
    for (uintptr_t line = from & ~uintptr_t(63); line < to; line += 64)
        _mm_prefetch(reinterpret_cast<const char *>(line), _MM_HINT_T1);
}

} // namespace bpg::tbb_backend
