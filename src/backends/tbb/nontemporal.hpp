// Writing a large output with non-temporal stores: an ordinary store first
// reads the line it writes (write-allocate), a fifth more memory traffic for
// a kernel that reads two tensors and writes one. The kernels compute a run
// into a small per-thread stage buffer, then copy it out with this.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bpg::tbb_backend {

// Outputs at least this large are written non-temporally: they leave the
// cache anyway, and the next reader finds them in memory either way.
constexpr int64_t nontemporal_min_bytes = int64_t(16) << 20;

// Copies bytes to dst, streaming the 64-byte-aligned middle past the caches
// (AVX-512 or AVX2; plain memcpy otherwise). Ends with a store fence.
void copy_nontemporal(void *dst, const void *src, size_t bytes);

// A per-thread scratch buffer of at least `bytes` (64-byte aligned), reused.
void *stage_buffer(size_t bytes);

} // namespace bpg::tbb_backend
