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
// the partial lines at either end in plain stores. No fence: the caller
// calls store_fence() before its task ends (a fence a call drains the
// write-combining buffers each time, and cost more than the streaming
// saved). Needs AVX-512 (has_avx512f()): the plan chooses it only there.
void narrow_stream(const float *s, bf16_t *d, int64_t n);
void narrow_stream(const float *s, f16_t *d, int64_t n);

// The same, bf16 rounded by AVX512_BF16's vcvtneps2bf16 (the same bits; a
// vector holding a denormal, which it reads as zero, takes the integer
// formula). Needs has_avx512_bf16().
void narrow_stream_bf16_hw(const float *s, bf16_t *d, int64_t n);

// The streamed lines are visible to other threads after this (sfence).
void store_fence();

} // namespace bpg::tbb_backend
