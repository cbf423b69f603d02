// Writing f32 results into a large 16-bit output past the caches: narrowed
// 16 lanes at a time in AVX-512 registers (convert_lanes.hpp, the bits of
// row_io), whole 64-byte lines written with non-temporal stores. A cached
// store would first read each line it writes (nontemporal.hpp); for the
// gradient of downsampling, diff_src is most of the bytes moved.
#pragma once

#include <cstdint>

#include "backends/tbb/convert_rows.hpp"

namespace bpg::tbb_backend {

// d[k] = s[k] narrowed, k < n: the 64-byte-aligned lines of d streamed,
// the partial lines at either end in plain stores, then a store fence.
// Needs AVX-512 (has_avx512f()): the plan chooses it only there.
void narrow_stream(const float *s, bf16_t *d, int64_t n);
void narrow_stream(const float *s, f16_t *d, int64_t n);

} // namespace bpg::tbb_backend
