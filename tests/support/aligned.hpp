// Placing test buffers on cache lines: the kernels stream whole lines from
// their registers only where an output starts 64-byte aligned, so tests that
// reach those paths (and their unaligned fallbacks) start buffers there.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bpg::test {

// Bytes from p to the next 64-byte boundary (0 when p is on one).
inline size_t bytes_to_line(const void *p) { return size_t((64 - reinterpret_cast<uintptr_t>(p) % 64) % 64); }

} // namespace bpg::test
