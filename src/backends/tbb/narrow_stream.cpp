// narrow_lanes (row_io's AVX-512 narrowing, convert_rows.hpp) and narrow_stream:
// f32 narrowed to 16-bit in registers, stored plain or past the caches.
#include "backends/tbb/narrow_stream.hpp"

#include <algorithm>

#include <immintrin.h>

#include "backends/tbb/convert_lanes.hpp"
#include "backends/tbb/cpu.hpp"

namespace bpg::tbb_backend {

namespace {

// (A vector-extension shuffle joins the halves: GCC 12's insert intrinsic
// warns of its own undefined operand.)
typedef long long v4di __attribute__((vector_size(32)));

// The first n (<= 16) values of s narrowed to d in plain stores; reads
// nothing past them.
template <typename T> __attribute__((target("avx512f"), always_inline)) inline void narrow_plain(const float *s, T *d, int64_t n) {
    const __mmask16 m = n >= 16 ? __mmask16(0xffff) : __mmask16((1u << n) - 1u);
    convert16::store_first(d, _mm512_maskz_loadu_ps(m, s), n);
}

template <typename T> __attribute__((target("avx512f"))) void narrow_lanes_avx512(const float *s, T *d, int64_t n) {
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) convert16::store16(d + k, _mm512_loadu_ps(s + k));
    if (k < n) narrow_plain(s + k, d + k, n - k);
}

template <typename T, bool HW = false> __attribute__((target("avx512f"))) void narrow_stream_avx512(const float *s, T *d, int64_t n) {
    // Values up to the first 64-byte line of d (d is 2-byte aligned).
    const int64_t head = std::min<int64_t>(n, int64_t((64 - reinterpret_cast<uintptr_t>(d) % 64) % 64) / 2);
    for (int64_t k = 0; k < head; k += 16) narrow_plain(s + k, d + k, std::min<int64_t>(16, head - k));
    s += head, d += head, n -= head;
    for (; n >= 32; n -= 32, s += 32, d += 32) {
        const __m512 lo = _mm512_loadu_ps(s), hi = _mm512_loadu_ps(s + 16);
        if constexpr (HW) {
            _mm512_stream_si512(reinterpret_cast<__m512i *>(d), convert16::narrow_pair_bf16_hw(lo, hi));
        } else {
            const v4di l = v4di(convert16::narrow(lo, d)), h = v4di(convert16::narrow(hi, d));
            _mm512_stream_si512(
                    reinterpret_cast<__m512i *>(d), __m512i(__builtin_shufflevector(l, h, 0, 1, 2, 3, 4, 5, 6, 7)));
        }
    }
    for (int64_t k = 0; k < n; k += 16) narrow_plain(s + k, d + k, std::min<int64_t>(16, n - k));
}

} // namespace

bool narrow_lanes_available() { return has_avx512f(); }
void narrow_lanes(const float *s, bf16_t *d, int64_t n) { narrow_lanes_avx512(s, d, n); }
void narrow_lanes(const float *s, f16_t *d, int64_t n) { narrow_lanes_avx512(s, d, n); }

void store_fence() { _mm_sfence(); }

void narrow_stream(const float *s, bf16_t *d, int64_t n) { narrow_stream_avx512(s, d, n); }
void narrow_stream_bf16_hw(const float *s, bf16_t *d, int64_t n) { narrow_stream_avx512<bf16_t, true>(s, d, n); }
void narrow_stream(const float *s, f16_t *d, int64_t n) { narrow_stream_avx512(s, d, n); }

} // namespace bpg::tbb_backend
