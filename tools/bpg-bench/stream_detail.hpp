// Internals shared by the streaming kernels (stream_interp.cpp, stream_bn.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include <tbb/blocked_range.h>

#include "bpg/status.hpp"
#include "bpg/tensor.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bpg::bench::detail {

using range = tbb::blocked_range<int64_t>;

// Elements per task: large enough that scheduling costs nothing next to the
// memory traffic, small enough to balance two threads on 2-D shapes.
constexpr int64_t grain = int64_t(1) << 16;

// Outputs are computed into a tile that stays in L1 and then copied to the
// tensor (store_tile), so the compute loops stay plain and vectorisable
// whichever way the bytes leave.
constexpr int64_t tile_elems = 1024;

// Arithmetic type of the elementwise work: float for f32; for 16-bit data the
// raw values themselves (sums wrap modulo 2^16, as a uint16 store would).
template <typename T> struct acc_of { using type = float; };
template <> struct acc_of<uint16_t> { using type = uint16_t; };
template <typename T> using acc_t = typename acc_of<T>::type;

// Reductions work on raw bit patterns with integer add and xor: integer
// arithmetic is associative, so the compiler vectorises the loop as it
// stands, whereas a float sum in a fixed order is one long latency chain
// that would make the yardstick slower than the memory.
inline uint32_t raw(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline uint32_t raw(uint16_t h) { return h; }

// Copies a computed tile to the tensor. Non-temporal stores skip the read
// for ownership of each destination line (faster when the output is far
// larger than the cache, slower when it would have stayed there); the caller
// measures both and keeps the faster.
template <typename T> void store_tile(T *dst, const T *tile, int64_t n, bool nontemporal) {
    size_t bytes = size_t(n) * sizeof(T);
#if defined(__SSE2__)
    if (nontemporal) {
        char *d = reinterpret_cast<char *>(dst);
        const char *s = reinterpret_cast<const char *>(tile);
        const size_t head = std::min(bytes, size_t((16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15));
        std::memcpy(d, s, head);
        d += head;
        s += head;
        bytes -= head;
        for (; bytes >= 16; bytes -= 16, d += 16, s += 16)
            _mm_stream_si128(reinterpret_cast<__m128i *>(d), _mm_loadu_si128(reinterpret_cast<const __m128i *>(s)));
        std::memcpy(d, s, bytes);
        return;
    }
#endif
    (void)nontemporal;
    std::memcpy(dst, tile, bytes);
}

// Non-temporal stores are weakly ordered: fence them before a task ends.
inline void end_task(bool nontemporal) {
#if defined(__SSE2__)
    if (nontemporal) _mm_sfence();
#endif
    (void)nontemporal;
}

template <typename T> double checksum(const T *p, int64_t n) {
    return n == 0 ? 0.0 : double(p[0]) + double(p[n / 2]) + double(p[n - 1]);
}

// Calls f(T {}) with the element type of dt: float for f32, uint16_t for
// bf16 and f16 (moved as raw 16-bit values).
template <typename F> double for_dtype(data_type dt, F &&f) {
    if (dt == data_type::f32) return f(float {});
    if (dt == data_type::bf16 || dt == data_type::f16) return f(uint16_t {});
    throw error(status::invalid_argument, std::string("streaming kernel: no data type ") + to_string(dt));
}

} // namespace bpg::bench::detail
