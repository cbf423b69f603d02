// 8 f16 values to and from the f32 lanes of a 32-byte vector by F16C's
// vcvtph2ps and vcvtps2ph (round to nearest even): the values of
// f16_to_f32_inline (a signalling NaN comes out quiet, which no result
// computed from it can show, see convert_rows.hpp) and the bits of
// f32_to_f16_inline. For the loops of the BN kernels' f16c instances only,
// built for "avx2,f16c" (bn_kernels.hpp). Inline asm, not intrinsics: the
// generic loops these sit in are written once for every instance, without
// that target, and GCC inlines an intrinsic only into its own target.
#pragma once

#include <cstdint>

#include "backends/tbb/convert_rows.hpp"

namespace bpg::tbb_backend {

typedef float f32x8 __attribute__((vector_size(32)));
typedef uint16_t u16x8_f16c __attribute__((vector_size(16), may_alias));

inline __attribute__((always_inline)) void widen8(const f16c_t *p, f32x8 &v) {
    asm("vcvtph2ps %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const u16x8_f16c *>(p)));
}

inline __attribute__((always_inline)) void narrow8(f16c_t *p, const f32x8 &v) {
    // imm 0: round to nearest even, whatever MXCSR says.
    asm("vcvtps2ph $0, %1, %0" : "=m"(*reinterpret_cast<u16x8_f16c *>(p)) : "x"(v));
}

// The same into a register: v's 8 f16 bits.
typedef uint16_t u16x8_bits __attribute__((vector_size(16)));
inline __attribute__((always_inline)) void narrow8_bits(const f32x8 &v, u16x8_bits &h) {
    asm("vcvtps2ph $0, %1, %0" : "=x"(h) : "x"(v));
}

} // namespace bpg::tbb_backend
