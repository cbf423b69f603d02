#include "backends/tbb/nontemporal.hpp"

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <memory>

#include <immintrin.h>

#include "backends/tbb/cpu.hpp"
#include "bpg/status.hpp"
#include "core/allocate.hpp"

namespace bpg::tbb_backend {

namespace {

__attribute__((target("avx512f"))) void copy_avx512(char *d, const char *s, size_t n) {
    for (; n >= 64; n -= 64, d += 64, s += 64) _mm512_stream_si512(reinterpret_cast<__m512i *>(d), _mm512_loadu_si512(s));
    std::memcpy(d, s, n);
    _mm_sfence();
}

__attribute__((target("avx2"))) void copy_avx2(char *d, const char *s, size_t n) {
    for (; n >= 32; n -= 32, d += 32, s += 32)
        _mm256_stream_si256(reinterpret_cast<__m256i *>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s)));
    std::memcpy(d, s, n);
    _mm_sfence();
}

} // namespace

void copy_nontemporal(void *dst, const void *src, size_t bytes) {
    static const int isa = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
    char *d = static_cast<char *>(dst);
    const char *s = static_cast<const char *>(src);
    const size_t head = std::min(bytes, size_t((64 - reinterpret_cast<uintptr_t>(d) % 64) % 64));
    std::memcpy(d, s, head); // up to the first aligned line
    d += head, s += head, bytes -= head;
    if (isa == 2) return copy_avx512(d, s, bytes);
    if (isa == 1) return copy_avx2(d, s, bytes);
    std::memcpy(d, s, bytes);
}

bool streams_to(const void *p) {
    return has_avx512f() && reinterpret_cast<uintptr_t>(p) % 64 == 0;
}

void *stage_buffer(size_t bytes) {
    thread_local core::aligned_buffer buf;
    thread_local size_t size = 0;
    if (bytes > size) {
        buf.reset();
        size = 0;
        try {
            buf = core::allocate((bytes + 4095) / 4096 * 4096, "a non-temporal stage");
        } catch (const error &) {
            return nullptr; // out of memory: the run writes straight to its output
        }
        size = (bytes + 4095) / 4096 * 4096;
    }
    return buf.get();
}

} // namespace bpg::tbb_backend
