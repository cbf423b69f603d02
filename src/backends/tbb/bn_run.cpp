// Execution of a bn_plan (see bn_plan.hpp). Per-channel math in double from
// kernels/bn_math.hpp; the streaming loops in f32, compiled per instruction set.
#include <cmath>
#include <immintrin.h>
#include <memory>
#include <numeric>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/tbb/bn_plan.hpp"
#include "backends/tbb/bn_relu_mask.hpp"
#include "backends/tbb/channel_blocks.hpp"
#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/nontemporal.hpp"
#include "backends/tbb/prefetch.hpp"
#include "core/tensor_desc.hpp"
#include "kernels/bn_math.hpp"

namespace bpg::tbb_backend {

namespace {

#define BPG_ALWAYS_INLINE inline __attribute__((always_inline))
#define BPG_LAMBDA_INLINE __attribute__((always_inline))

constexpr int64_t planar_chunk = 4096; // elements of a run summed in f32 lanes
constexpr int64_t vector_chunk = 256;  // rows summed in f32 per channel
constexpr int lanes = 16;
typedef float lanes16 __attribute__((vector_size(64)));
typedef uint32_t u32x16 __attribute__((vector_size(64)));
typedef uint16_t u16x16 __attribute__((vector_size(32)));
typedef uint16_t u16x32 __attribute__((vector_size(64)));

// Data pointers of one execute (typed by the kernels that read them).
struct data {
    const void *src = nullptr, *dd = nullptr, *relu_in = nullptr, *relu_dd = nullptr;
    void *ds = nullptr;
    bool nontemporal = false; // diff_src is large: write it past the caches
    uint16_t *relu_mask = nullptr; // see bn_relu_mask.hpp: set when that path runs
    relu_mask_rows mask_rows {};    // its tensors
};


// The values BN sees, with a fused ReLUBackprop computed on the fly.
template <typename T, bn_fusion F> struct reader {
    const T *src_p, *dd_p, *x_p, *g_p;
    reader(const data &d)
        : src_p(static_cast<const T *>(d.src)), dd_p(static_cast<const T *>(d.dd)),
          x_p(static_cast<const T *>(d.relu_in)), g_p(static_cast<const T *>(d.relu_dd)) {}
    BPG_ALWAYS_INLINE static float relu(float x, float g) { return x > 0.f ? g : 0.f; }
    BPG_ALWAYS_INLINE float src(int64_t at_src, int64_t at_relu) const {
        if constexpr (F == bn_fusion::relu_into_src) return relu(to_f32(x_p[at_relu]), to_f32(g_p[at_relu]));
        else return to_f32(src_p[at_src]);
    }
    BPG_ALWAYS_INLINE float dd(int64_t at_dd, int64_t at_relu) const {
        if constexpr (F == bn_fusion::relu_into_dd) return relu(to_f32(x_p[at_relu]), to_f32(g_p[at_relu]));
        else return to_f32(dd_p[at_dd]);
    }
    // The lines `bytes` past these offsets of every tensor read, into L2.
    BPG_ALWAYS_INLINE void prefetch(int64_t at_dd, int64_t at_src, int64_t at_relu, int64_t bytes) const {
        if constexpr (F != bn_fusion::none) {
            prefetch_l2_ahead(x_p + at_relu, bytes);
            prefetch_l2_ahead(g_p + at_relu, bytes);
        }
        if constexpr (F != bn_fusion::relu_into_dd) prefetch_l2_ahead(dd_p + at_dd, bytes);
        if constexpr (F != bn_fusion::relu_into_src) prefetch_l2_ahead(src_p + at_src, bytes);
    }
};

// Pass 1 over channels-last rows prefetches this far ahead: the hardware
// prefetchers alone left it at 1.16-1.21x the time of a plain read of the
// same bytes, 1.07-1.14x with it (NXC f32 training 0.97 -> 0.94 x stream,
// 11 interleaved runs; 2 and 8 KB no better, pass 2 no faster with it).
constexpr int64_t rows_prefetch_bytes = 4096;

// Element offset of (a, k, b) in a view.
BPG_ALWAYS_INLINE int64_t at(const bn_view &v, int64_t a, int64_t k, int64_t b) { return a * v.a + k * v.k + b * v.b; }

// Per-channel coefficients of pass 2: ds = a*dd + c2*(src - mean) + c0.
struct coeffs {
    std::vector<float> mean, a, c2, c0;
};

// 16 consecutive elements (channels, or of a planar row) of diff_dst (g) and
// src (x) as f32 vectors, from their element offsets (d for diff_dst, s for
// src, r for the relu tensors).
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void load_dd_block(const reader<T, F> &rd, int64_t d, int64_t r, lanes16 &g) {
    float gb[lanes];
    for (int l = 0; l < lanes; ++l) gb[l] = rd.dd(d + l, r + l);
    __builtin_memcpy(&g, gb, sizeof g);
}
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void load_block(const reader<T, F> &rd, int64_t d, int64_t s, int64_t r, lanes16 &g, lanes16 &x) {
    load_dd_block(rd, d, r, g);
    float xb[lanes];
    for (int l = 0; l < lanes; ++l) xb[l] = rd.src(s + l, r + l);
    __builtin_memcpy(&x, xb, sizeof x);
}

// Pass 2's diff_src of the element at offsets (d, s, r) (as load_block's),
// with its channel's constants: with use_global_stats a*dd, and src not read.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE float diff_src_one(const reader<T, F> &rd, bool global, int64_t d, int64_t s, int64_t r, float ak,
        float c2, float m, float c0) {
    const float g = rd.dd(d, r), x = global ? 0.f : rd.src(s, r);
    float out;
    kernels::bn_folded_diff_src(out, global, ak, g, c2, x, m, c0);
    return out;
}
// The same for 16 consecutive elements (C: one channel's float constant, or a
// vector of 16 channels').
template <typename T, bn_fusion F, typename C>
BPG_ALWAYS_INLINE void diff_src_block(const reader<T, F> &rd, bool global, int64_t d, int64_t s, int64_t r, const C &ak,
        const C &c2, const C &m, const C &c0, lanes16 &out) {
    lanes16 g, x;
    if (global) {
        load_dd_block(rd, d, r, g);
        return kernels::bn_global_diff_src(out, ak, g);
    }
    load_block(rd, d, s, r, g, x);
    kernels::bn_folded_diff_src(out, false, ak, g, c2, x, m, c0);
}

// The sums of one chunk [b0, b1) of a planar row, as pass 1 defines them:
// 16 f32 lanes over the whole vectors (add), the tail's elements into lanes
// 0, 1, ... and the lanes summed in order into a pair of partials (finish).
// Every planar pass-1 loop goes through this, so they agree bit for bit.
struct chunk_sums {
    lanes16 v1 = {}, v2 = {}, mv;
    float m;
    explicit chunk_sums(float mean) : mv(lanes16 {} + mean), m(mean) {}
    BPG_ALWAYS_INLINE void add(const lanes16 &g, const lanes16 &x) { kernels::bn_accumulate(v1, v2, g, x, mv); }
    template <typename T, bn_fusion F>
    BPG_ALWAYS_INLINE void finish(const reader<T, F> &rd, int64_t b, int64_t b1, int64_t d0, int64_t s0, int64_t x0,
            double *pair) const {
        float s1[lanes], s2[lanes];
        lanes_with_tail(rd, b, b1, d0, s0, x0, s1, s2);
        pair_of(s1, s2, pair);
    }
    // finish() in two steps: the lanes with the tail's elements added...
    template <typename T, bn_fusion F>
    BPG_ALWAYS_INLINE void lanes_with_tail(const reader<T, F> &rd, int64_t b, int64_t b1, int64_t d0, int64_t s0,
            int64_t x0, float *s1, float *s2) const {
        __builtin_memcpy(s1, &v1, sizeof v1);
        __builtin_memcpy(s2, &v2, sizeof v2);
        for (int l = 0; b < b1; ++b, ++l)
            kernels::bn_accumulate(s1[l], s2[l], rd.dd(d0 + b, x0 + b), rd.src(s0 + b, x0 + b), m);
    }
    // ... then summed in order, in double (pairs_of_8 does the same
    // additions for 8 chunks at once).
    static BPG_ALWAYS_INLINE void pair_of(const float *s1, const float *s2, double *pair) {
        double t1 = 0, t2 = 0;
        for (int l = 0; l < lanes; ++l) t1 += s1[l], t2 += s2[l];
        pair[0] = t1;
        pair[1] = t2;
    }
};

// 16 consecutive elements of T as f32 lanes with AVX-512: bf16 widened and
// shifted (bf16_to_f32_inline's bits), f16 by vcvtph2ps (the values of
// f16_to_f32_inline; a signalling NaN comes out quiet, which no result
// computed from it can show, see convert_rows.hpp). Per lane (load_block),
// GCC converted f16 in 8-lane halves through the stack: NCX f16 pass 1 took
// twice the time of the reads it does.
__attribute__((target("avx512f"), always_inline)) inline __m512 lanes_f32(const float *p) { return _mm512_loadu_ps(p); }
// (Zero-masking forms: GCC 12's unmasked intrinsics warn of their own
// undefined operand.)
__attribute__((target("avx512f"), always_inline)) inline __m512 lanes_f32(const bf16_t *p) {
    const __m512i w = _mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, w, 16));
}
__attribute__((target("avx512f"), always_inline)) inline __m512 lanes_f32(const f16_t *p) {
    return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
}
template <typename T> BPG_ALWAYS_INLINE const T *tensor(const void *base, int64_t at) {
    return static_cast<const T *>(base) + at;
}

// 16 consecutive elements of diff_dst (g) and src (x) as BN sees them, with
// AVX-512: a fused ReLU as reader::relu computes it (relu_dd where the relu
// input is > 0, compared ordered, so NaN gives 0; else +0), by a mask
// (load_block's per-lane select measured 1.8x slower here). The ReLU's
// decisions (the lanes whose relu input is > 0) go to `passed`.
template <typename T>
__attribute__((target("avx512f"), always_inline)) inline __m512 relu_lanes(const data &d, int64_t relu_at,
        __mmask16 &passed) {
    const __m512 in = lanes_f32(tensor<T>(d.relu_in, relu_at));
    passed = _mm512_cmp_ps_mask(in, _mm512_setzero_ps(), _CMP_GT_OQ);
    return _mm512_maskz_mov_ps(passed, lanes_f32(tensor<T>(d.relu_dd, relu_at)));
}
template <typename T, bn_fusion F>
__attribute__((target("avx512f"), always_inline)) inline void load_lanes(const data &d, int64_t dd_at, int64_t src_at,
        int64_t relu_at, lanes16 &g, lanes16 &x, __mmask16 &passed) {
    __m512 relu = _mm512_setzero_ps();
    passed = 0xffff;
    if constexpr (F != bn_fusion::none) relu = relu_lanes<T>(d, relu_at, passed);
    g = lanes16(F == bn_fusion::relu_into_dd ? relu : lanes_f32(tensor<T>(d.dd, dd_at)));
    x = lanes16(F == bn_fusion::relu_into_src ? relu : lanes_f32(tensor<T>(d.src, src_at)));
}
template <typename T, bn_fusion F>
__attribute__((target("avx512f"), always_inline)) inline void load_lanes(const data &d, int64_t dd_at, int64_t src_at,
        int64_t relu_at, lanes16 &g, lanes16 &x) {
    __mmask16 passed;
    load_lanes<T, F>(d, dd_at, src_at, relu_at, g, x, passed);
}
// diff_dst alone (use_global_stats: src, or a ReLU fused into it, not read).
template <typename T, bn_fusion F>
__attribute__((target("avx512f"), always_inline)) inline void load_dd_lanes(const data &d, int64_t dd_at,
        int64_t relu_at, lanes16 &g) {
    __mmask16 passed;
    if constexpr (F == bn_fusion::relu_into_dd) g = lanes16(relu_lanes<T>(d, relu_at, passed));
    else g = lanes16(lanes_f32(tensor<T>(d.dd, dd_at)));
}

// f32 with the ReLU's decisions already known (kept by pass 1): the relu
// input is not read. (Without a ReLU, the plain loads.)
template <bn_fusion F>
__attribute__((target("avx512f"), always_inline)) inline void load_lanes_f32_passed(const data &d, int64_t dd_at,
        int64_t src_at, int64_t relu_at, __mmask16 passed, lanes16 &g, lanes16 &x) {
    if constexpr (F == bn_fusion::none) return load_lanes<float, F>(d, dd_at, src_at, relu_at, g, x);
    const __m512 relu = _mm512_maskz_loadu_ps(passed, tensor<float>(d.relu_dd, relu_at));
    g = lanes16(F == bn_fusion::relu_into_dd ? relu : _mm512_loadu_ps(tensor<float>(d.dd, dd_at)));
    x = lanes16(F == bn_fusion::relu_into_src ? relu : _mm512_loadu_ps(tensor<float>(d.src, src_at)));
}

// diff_src_block with AVX-512 loads (C: one channel's float constant, or a
// vector of 16 channels'); `passed`: f32 decisions kept by pass 1, or null.
template <typename T, bn_fusion F, typename C>
__attribute__((target("avx512f"), always_inline)) inline void diff_src_lanes(const data &d, bool global, int64_t dd_at,
        int64_t src_at, int64_t relu_at, const C &ak, const C &c2, const C &m, const C &c0, lanes16 &r,
        const uint16_t *passed = nullptr) {
    lanes16 g, x;
    if (global) {
        load_dd_lanes<T, F>(d, dd_at, relu_at, g);
        return kernels::bn_global_diff_src(r, ak, g);
    }
    if constexpr (std::is_same_v<T, float>) {
        if (passed) load_lanes_f32_passed<F>(d, dd_at, src_at, relu_at, *passed, g, x);
        else load_lanes<T, F>(d, dd_at, src_at, relu_at, g, x);
    } else {
        load_lanes<T, F>(d, dd_at, src_at, relu_at, g, x);
    }
    kernels::bn_folded_diff_src(r, false, ak, g, c2, x, m, c0);
}

// 16 f32 lanes as diff_src's T: f32 as they are; bf16 rounded by
// kernels::bf16_bits_of_f32_bits, 16 lanes at a time (the formula of
// f32_to_bf16_inline); f16 by vcvtps2ph, which gives f32_to_f16_inline's bits
// (see convert_rows.hpp). Per lane, GCC's code for from_f32 left NXC bf16
// pass 2 at twice the time of the reads and writes it does.
__attribute__((target("avx512f"), always_inline)) inline u16x16 to_16bit(bf16_t *, const lanes16 &r) {
    u32x16 bits;
    kernels::bf16_bits_of_f32_bits(bits, (u32x16)r); // (u32x16)r: the bits, by a same-size vector cast
    return __builtin_convertvector(bits, u16x16);
}
__attribute__((target("avx512f"), always_inline)) inline u16x16 to_16bit(f16_t *, const lanes16 &r) {
    // (The zero-masking form: GCC 12's unmasked one warns of its own undefined operand.)
    return u16x16(_mm512_maskz_cvtps_ph(0xffff, __m512(r), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Two consecutive vectors of lanes out to diff_src at `out` (64-byte
// aligned) with non-temporal stores of whole lines: a 16-bit pair fills one
// line (Zen 4 runs half-line non-temporal stores several times slower:
// NXC bf16 pass 2 measured 1.7x slower with them than with ordinary stores).
__attribute__((target("avx512f"), always_inline)) inline void stream_pair(float *out, const lanes16 &r0, const lanes16 &r1) {
    _mm512_stream_ps(out, __m512(r0));
    _mm512_stream_ps(out + 16, __m512(r1));
}
template <typename T>
__attribute__((target("avx512f"), always_inline)) inline void stream_pair(T *out, const lanes16 &r0, const lanes16 &r1) {
    const u16x16 lo = to_16bit(out, r0), hi = to_16bit(out, r1);
    const u16x32 line = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
            18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    _mm512_stream_si512(reinterpret_cast<__m512i *>(out), __m512i(line));
}
// One vector alone (the last of an odd count), with an ordinary store.
__attribute__((target("avx512f"), always_inline)) inline void store_one(float *out, const lanes16 &r) {
    _mm512_storeu_ps(out, __m512(r));
}
template <typename T>
__attribute__((target("avx512f"), always_inline)) inline void store_one(T *out, const lanes16 &r) {
    const u16x16 v = to_16bit(out, r);
    __builtin_memcpy(out, &v, sizeof v);
}

// diff_src vectors leaving in memory order (put() at consecutive places from
// a 64-byte-aligned start when streaming): with `stream`, straight from the
// registers with non-temporal stores of whole lines, f32 a vector a line,
// 16-bit a pair held until its second vector comes (channels-last: even from
// the next row, K = 112 has 7 vectors a row); else ordinary stores.
// finish(): a vector still held goes out with an ordinary store, then the
// store fence.
template <typename T> struct vector_out {
    bool stream;
    lanes16 held = {};
    T *held_at = nullptr;
    __attribute__((target("avx512f"), always_inline)) void put(T *at, const lanes16 &r) {
        if (!stream) return store_one(at, r);
        if constexpr (std::is_same_v<T, float>) {
            _mm512_stream_ps(at, __m512(r));
        } else if (held_at) {
            stream_pair(held_at, held, r);
            held_at = nullptr;
        } else {
            held = r;
            held_at = at;
        }
    }
    __attribute__((target("avx512f"), always_inline)) void finish() {
        if (held_at) store_one(held_at, held);
        held_at = nullptr;
        if (stream) _mm_sfence(); // the streamed lines are visible before the task ends
    }
};

// Channels-last rows [a0, a1) of diff_src, K = 16 * NB channels, one after
// another from a 64-byte-aligned start: lanes(a, nb, r) gives row a's
// channels [16 nb, 16 nb + 16), in row order, and they go out in pairs with
// non-temporal stores of whole lines. With NB odd two rows make a unit of
// whole pairs, and a last row of an odd count ends in an ordinary store.
template <typename T, int NB, typename Lanes>
__attribute__((target("avx512f"), always_inline)) inline void stream_rows(const bn_plan &p, const data &d, int64_t a0,
        int64_t a1, Lanes &lanes) {
    constexpr int rows = NB % 2 == 0 ? 1 : 2;
    int64_t a = a0;
    for (; a + rows <= a1; a += rows) {
        T *out = static_cast<T *>(d.ds) + a * p.K;
#pragma GCC unroll 4 // NB at once, so a caller's per-block sums stay in registers
        for (int j = 0; j < rows * NB; j += 2) {
            lanes16 r0, r1;
            lanes(a + j / NB, j % NB, r0);
            lanes(a + (j + 1) / NB, (j + 1) % NB, r1);
            stream_pair(out + 16 * j, r0, r1);
        }
    }
    for (; a < a1; ++a)
        for (int nb = 0; nb < NB; nb += 2) {
            T *out = static_cast<T *>(d.ds) + a * p.K + 16 * nb;
            lanes16 r0, r1;
            lanes(a, nb, r0);
            if (nb + 1 == NB) {
                store_one(out, r0);
                break;
            }
            lanes(a, nb + 1, r1);
            stream_pair(out, r0, r1);
        }
    _mm_sfence(); // the streamed lines are visible before the task ends
}

// Pass 1 on planar row (a, k) with AVX-512: the chunks of sums_planar,
// summed in the same order (same bits); each whole vector's diff_dst lanes,
// offset b and ReLU decisions also go to `each` (a functor, so it can carry
// the target attribute a lambda would not).
template <typename T, bn_fusion F, typename Each>
__attribute__((target("avx512f"), always_inline)) inline void planar_row_sums_avx512(const bn_plan &p, const data &d,
        const float *mean, double *partial, int64_t r, Each &each) {
    const reader<T, F> rd(d);
    const int64_t nch = (p.B + planar_chunk - 1) / planar_chunk;
    const int64_t k = r / p.A, a = r % p.A;
    const int64_t s0 = at(p.src, a, k, 0), d0 = at(p.dd, a, k, 0), x0 = at(p.relu_in, a, k, 0);
    for (int64_t c = 0; c < nch; ++c) {
        const int64_t b0 = c * planar_chunk, b1 = std::min(p.B, b0 + planar_chunk);
        chunk_sums cs(mean[k]);
        int64_t b = b0;
        for (; b + lanes <= b1; b += lanes) {
            lanes16 g, x;
            __mmask16 passed;
            load_lanes<T, F>(d, d0 + b, s0 + b, x0 + b, g, x, passed);
            cs.add(g, x);
            each(b, g, passed);
        }
        cs.finish(rd, b, b1, d0, s0, x0, partial + 2 * (r * nch + c));
    }
}

// use_global_stats with its sums, planar row r = (k, a) with AVX-512: the sums
// of sums_planar, chunk by chunk in the same order, and diff_src = a *
// diff_dst into `out` (see vector_out): with `stream` (diff_src of the row,
// 64-byte aligned) straight from the registers instead of through a staged
// run (NCX f32 use_global_stats 1.16 -> 0.94 x stream, 9 interleaved runs),
// else with ordinary stores (16-bit per lane had left small NCX f16 problems
// at 6-11x the streaming kernel).
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void global_sums_row_avx512(const bn_plan &p, const data &d, const float *mean,
        const coeffs &cf, double *partial, int64_t r, T *out, bool stream) {
    const int64_t k = r / p.A, a = r % p.A;
    struct diff_src_out {
        T *out;
        float ak;
        vector_out<T> vo;
        __attribute__((target("avx512f"), always_inline)) void operator()(int64_t b, const lanes16 &g, __mmask16) {
            lanes16 ds;
            kernels::bn_global_diff_src(ds, ak, g);
            vo.put(out + b, ds);
        }
    } each {out, cf.a[size_t(k)], {stream}};
    planar_row_sums_avx512<T, F>(p, d, mean, partial, r, each);
    each.vo.finish();
    // The tail (B % 16 elements, all in the last chunk) element by element.
    const reader<T, F> rd(d);
    const int64_t d0 = at(p.dd, a, k, 0), x0 = at(p.relu_in, a, k, 0);
    for (int64_t j = p.B / lanes * lanes; j < p.B; ++j) {
        float ds;
        kernels::bn_global_diff_src(ds, each.ak, rd.dd(d0 + j, x0 + j));
        out[j] = from_f32<T>(ds);
    }
}

// Pass 1 on planar 16-bit row r with the AVX-512 loads: the sums of
// sums_planar (same bits).
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void row_sums_avx512(const bn_plan &p, const data &d, const float *mean,
        double *partial, int64_t r) {
    struct nothing_else {
        __attribute__((target("avx512f"), always_inline)) void operator()(int64_t, const lanes16 &, __mmask16) {}
    } each;
    planar_row_sums_avx512<T, F>(p, d, mean, partial, r, each);
}

// chunk_sums::pair_of for 8 chunks at once (chunk i's lanes s1[i], s2[i]),
// one chunk per f64 lane: the same additions in the same order, so the same
// bits. One chunk at a time, these 32 dependent additions took most of pass
// 1 on 7x7 rows.
__attribute__((target("avx512f"), always_inline)) inline void pairs_of_8(const float (*s1)[lanes],
        const float (*s2)[lanes], double *t1, double *t2) {
    const __m256i rows = _mm256_setr_epi32(0, lanes, 2 * lanes, 3 * lanes, 4 * lanes, 5 * lanes, 6 * lanes, 7 * lanes);
    __m512d u1 = _mm512_setzero_pd(), u2 = u1;
    for (int l = 0; l < lanes; ++l) {
        u1 = _mm512_add_pd(u1, _mm512_maskz_cvtps_pd(0xff, _mm256_i32gather_ps(&s1[0][l], rows, 4)));
        u2 = _mm512_add_pd(u2, _mm512_maskz_cvtps_pd(0xff, _mm256_i32gather_ps(&s2[0][l], rows, 4)));
    }
    _mm512_storeu_pd(t1, u1), _mm512_storeu_pd(t2, u2);
}

// Pass 1 on planar rows (a, k), k in [k0, k1), each row one chunk (B <=
// planar_chunk): each row's lanes as chunk_sums leaves them, then their
// pairs 8 rows at a time (same bits as sums_planar).
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void short_rows_sums_avx512(const bn_plan &p, const data &d, const float *mean,
        double *partial, int64_t a, int64_t k0, int64_t k1) {
    const reader<T, F> rd(d);
    alignas(64) float s1[16][lanes], s2[16][lanes];
    for (int64_t j0 = k0; j0 < k1; j0 += 16) {
        const int n = int(std::min<int64_t>(16, k1 - j0));
        if (n % 8) { // rows n.. of the last 8 are added too (and dropped): defined values
            __builtin_memset(s1[n], 0, sizeof(float) * lanes * size_t(8 - n % 8));
            __builtin_memset(s2[n], 0, sizeof(float) * lanes * size_t(8 - n % 8));
        }
        for (int i = 0; i < n; ++i) {
            const int64_t k = j0 + i;
            const int64_t s0 = at(p.src, a, k, 0), d0 = at(p.dd, a, k, 0), x0 = at(p.relu_in, a, k, 0);
            chunk_sums cs(mean[k]);
            int64_t b = 0;
            for (; b + lanes <= p.B; b += lanes) {
                lanes16 g, x;
                load_lanes<T, F>(d, d0 + b, s0 + b, x0 + b, g, x);
                cs.add(g, x);
            }
            cs.lanes_with_tail(rd, b, p.B, d0, s0, x0, s1[i], s2[i]);
        }
        double t1[16], t2[16];
        pairs_of_8(s1, s2, t1, t2);
        if (n > 8) pairs_of_8(s1 + 8, s2 + 8, t1 + 8, t2 + 8);
        for (int i = 0; i < n; ++i) {
            double *pair = partial + 2 * ((j0 + i) * p.A + a); // row (a, k)'s only chunk
            pair[0] = t1[i], pair[1] = t2[i];
        }
    }
}

// Pass 1, planar: row (k, a) of B contiguous elements, in chunks. With
// use_global_stats, diff_src = a * diff_dst needs no sums, so the same sweep
// writes it (global != nullptr): one pass instead of two.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void sums_planar(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t r0, int64_t r1,
        const coeffs *global = nullptr) {
    const reader<T, F> rd(d);
    const int64_t nch = (p.B + planar_chunk - 1) / planar_chunk;
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t k = r / p.A, a = r % p.A;
        if (global && has_avx512f()) {
            T *dst = static_cast<T *>(d.ds) + at(p.ds, a, k, 0);
            const bool stream = d.nontemporal && streams_to(dst);
            const out_run<T> o(dst, p.B, d.nontemporal && !stream);
            global_sums_row_avx512<T, F>(p, d, mean, *global, partial, r, o.out, stream);
            o.finish();
            continue;
        }
        if constexpr (!std::is_same_v<T, float>)
            if (!global && has_avx512f()) {
                row_sums_avx512<T, F>(p, d, mean, partial, r);
                continue;
            }
        const int64_t s0 = at(p.src, a, k, 0), d0 = at(p.dd, a, k, 0), x0 = at(p.relu_in, a, k, 0);
        for (int64_t c = 0; c < nch; ++c) {
            const int64_t b0 = c * planar_chunk, b1 = std::min(p.B, b0 + planar_chunk);
            // 16 f32 lanes as one vector value (one zmm register with AVX-512).
            chunk_sums cs(mean[k]);
            int64_t b = b0;
            for (; b + lanes <= b1; b += lanes) {
                lanes16 g, x;
                load_block(rd, d0 + b, s0 + b, x0 + b, g, x);
                cs.add(g, x);
            }
            cs.finish(rd, b, b1, d0, s0, x0, partial + 2 * (r * nch + c));
            if (global) {
                const out_run<T> o(static_cast<T *>(d.ds) + at(p.ds, a, k, b0), b1 - b0, d.nontemporal);
                const float ak = global->a[size_t(k)];
                for (int64_t j = b0; j < b1; ++j) {
                    float ds;
                    kernels::bn_global_diff_src(ds, ak, rd.dd(d0 + j, x0 + j));
                    o.out[j - b0] = from_f32<T>(ds);
                }
                o.finish();
            }
        }
    }
}

// Pass 1, vector, K = 16 * NB channels (NB <= 4): the sums of chunk c's
// rows in registers, each channel summed in row order as in the generic loop
// of sums_vector (same bits); add() also gives the row's diff_dst lanes.
template <int NB> struct sums_block {
    lanes16 v1[NB] = {}, v2[NB] = {}, mv[NB];
    explicit sums_block(const float *mean) { __builtin_memcpy(mv, mean, sizeof mv); }
    template <typename T, bn_fusion F>
    BPG_ALWAYS_INLINE void add(const bn_plan &p, const reader<T, F> &rd, int64_t a, int nb, lanes16 &g) {
        lanes16 x;
        load_block(rd, a * p.dd.a + 16 * nb, a * p.src.a + 16 * nb, a * p.relu_in.a + 16 * nb, g, x);
        kernels::bn_accumulate(v1[nb], v2[nb], g, x, mv[nb]);
    }
    template <typename T, bn_fusion F>
    __attribute__((target("avx512f"), always_inline)) void add_avx512(const bn_plan &p, const data &d, int64_t a, int nb,
            lanes16 &g) {
        lanes16 x;
        load_lanes<T, F>(d, a * p.dd.a + 16 * nb, a * p.src.a + 16 * nb, a * p.relu_in.a + 16 * nb, g, x);
        kernels::bn_accumulate(v1[nb], v2[nb], g, x, mv[nb]);
    }
    // use_global_stats: also diff_src = a * diff_dst of those lanes (ak: a of
    // the NB channel blocks).
    template <typename T, bn_fusion F>
    __attribute__((target("avx512f"), always_inline)) void add_global_avx512(const bn_plan &p, const data &d, int64_t a,
            int nb, const lanes16 *ak, lanes16 &r) {
        lanes16 g;
        add_avx512<T, F>(p, d, a, nb, g);
        kernels::bn_global_diff_src(r, ak[nb], g);
    }
    BPG_ALWAYS_INLINE void store(const bn_plan &p, int64_t c, double *partial) const {
        float s1[NB * lanes], s2[NB * lanes];
        __builtin_memcpy(s1, v1, sizeof s1);
        __builtin_memcpy(s2, v2, sizeof s2);
        for (int64_t k = 0; k < p.K; ++k) {
            partial[2 * (c * p.K + k)] = s1[k];
            partial[2 * (c * p.K + k) + 1] = s2[k];
        }
    }
};

template <typename T, bn_fusion F, int NB>
BPG_ALWAYS_INLINE void sums_vector_blocked(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t c) {
    const reader<T, F> rd(d);
    sums_block<NB> sb(mean);
    const int64_t a1 = std::min(p.A, (c + 1) * vector_chunk);
    for (int64_t a = c * vector_chunk; a < a1; ++a)
#pragma GCC unroll 4 // NB at once, so sb's accumulators stay in registers (not unrolled, GCC kept them in memory)
        for (int nb = 0; nb < NB; ++nb) {
            rd.prefetch(a * p.dd.a + 16 * nb, a * p.src.a + 16 * nb, a * p.relu_in.a + 16 * nb, rows_prefetch_bytes);
            lanes16 g;
            sb.add(p, rd, a, nb, g);
        }
    sb.store(p, c, partial);
}

// The same for 16-bit data with the AVX-512 loads (see lanes_f32), chunks
// [c0, c1): the same sums (same bits).
template <typename T, bn_fusion F, int NB>
__attribute__((target("avx512f"))) void sums_vector_blocked_avx512(const bn_plan &p, const data &d, const float *mean,
        double *partial, int64_t c0, int64_t c1) {
    const reader<T, F> rd(d);
    for (int64_t c = c0; c < c1; ++c) {
        sums_block<NB> sb(mean);
        const int64_t a1 = std::min(p.A, (c + 1) * vector_chunk);
        for (int64_t a = c * vector_chunk; a < a1; ++a)
#pragma GCC unroll 4 // as in sums_vector_blocked
            for (int nb = 0; nb < NB; ++nb) {
                rd.prefetch(a * p.dd.a + 16 * nb, a * p.src.a + 16 * nb, a * p.relu_in.a + 16 * nb, rows_prefetch_bytes);
                lanes16 g;
                sb.template add_avx512<T, F>(p, d, a, nb, g);
            }
        sb.store(p, c, partial);
    }
}

// use_global_stats, K = 16 * NB channels, diff_src rows one after another
// from a 64-byte-aligned start (AVX-512): chunk c's sums as
// sums_vector_blocked and diff_src = a * diff_dst (the generic loop's
// arithmetic) streamed straight from the registers by stream_rows (NXC f32
// use_global_stats 1.32 -> 0.85 x stream, 7 interleaved runs).
template <typename T, bn_fusion F, int NB>
__attribute__((target("avx512f"))) void global_sums_streamed_nb(const bn_plan &p, const data &d, const float *mean,
        const coeffs &cf, double *partial, int64_t c) {
    struct sums_and_diff_src {
        const bn_plan &p;
        const data &d;
        sums_block<NB> sb;
        lanes16 ak[NB];
        __attribute__((target("avx512f"), always_inline)) void operator()(int64_t a, int nb, lanes16 &r) {
            sb.template add_global_avx512<T, F>(p, d, a, nb, ak, r);
        }
    } lanes {p, d, sums_block<NB>(mean), {}};
    __builtin_memcpy(lanes.ak, cf.a.data(), sizeof lanes.ak);
    stream_rows<T, NB>(p, d, c * vector_chunk, std::min(p.A, (c + 1) * vector_chunk), lanes);
    lanes.sb.store(p, c, partial);
}

template <typename T, bn_fusion F>
void global_sums_streamed(const bn_plan &p, const data &d, const float *mean, const coeffs &cf, double *partial,
        int64_t c) {
    with_blocks(p.K, [&](auto nb) BPG_LAMBDA_INLINE {
        global_sums_streamed_nb<T, F, nb.value>(p, d, mean, cf, partial, c);
    });
}

// Channels-last rows of K channels that do not fit the register blocks, with
// AVX-512 (K >= 16): each row's K / 16 whole vectors with the AVX-512 loads
// and the last K % 16 channels one by one, each channel in row order with
// the arithmetic of the generic loops of sums_vector and update (same bits).
// Through the generic loops instead (per lane), channels-last f16 with
// K = 128 took 25x the time of the streaming kernel, bf16 1.7x, f32 1.4x.
//
// Pass 1 on rows [a0, a1) of a chunk (sums_vector): the sums added into s1,
// s2 (K floats each, in L1) between rows. With use_global_stats (`global`),
// also diff_src = a * diff_dst of row a into out + (a - a0) * out_stride
// (`stream`: see vector_out).
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void sums_vector_any_avx512(const bn_plan &p, const data &d, const float *mean,
        int64_t a0, int64_t a1, float *s1, float *s2, const coeffs *global, T *out, int64_t out_stride, bool stream) {
    const reader<T, F> rd(d);
    vector_out<T> vo {stream};
    const int64_t W = p.K / lanes;
    for (int64_t a = a0; a < a1; ++a) {
        const int64_t s0 = a * p.src.a, d0 = a * p.dd.a, x0 = a * p.relu_in.a;
        T *row_out = global ? out + (a - a0) * out_stride : nullptr;
        for (int64_t v = 0; v < W; ++v) {
            const int64_t k = lanes * v;
            rd.prefetch(d0 + k, s0 + k, x0 + k, rows_prefetch_bytes);
            lanes16 g, x, v1 = lanes16(_mm512_loadu_ps(s1 + k)), v2 = lanes16(_mm512_loadu_ps(s2 + k));
            load_lanes<T, F>(d, d0 + k, s0 + k, x0 + k, g, x);
            kernels::bn_accumulate(v1, v2, g, x, lanes16(_mm512_loadu_ps(mean + k)));
            _mm512_storeu_ps(s1 + k, __m512(v1));
            _mm512_storeu_ps(s2 + k, __m512(v2));
            if (global) {
                lanes16 r;
                kernels::bn_global_diff_src(r, lanes16(_mm512_loadu_ps(global->a.data() + k)), g);
                vo.put(row_out + k, r);
            }
        }
        for (int64_t k = lanes * W; k < p.K; ++k) {
            const float g = rd.dd(d0 + k, x0 + k);
            kernels::bn_accumulate(s1[k], s2[k], g, rd.src(s0 + k, x0 + k), mean[k]);
            if (global) {
                float ds;
                kernels::bn_global_diff_src(ds, global->a[size_t(k)], g);
                row_out[k] = from_f32<T>(ds);
            }
        }
    }
    vo.finish();
}

// Pass 2 of update_rows_any_avx512: diff_src of channels [k, k + 16) of row a.
// (A functor: a lambda cannot carry the target attribute.)
template <typename T, bn_fusion F> struct any_k_diff_src {
    const bn_plan &p;
    const data &d;
    const coeffs &cf;
    __attribute__((target("avx512f"), always_inline)) void operator()(int64_t a, int64_t k, lanes16 &r) const {
        diff_src_lanes<T, F>(d, p.global_stats, a * p.dd.a + k, a * p.src.a + k, a * p.relu_in.a + k,
                lanes16(_mm512_loadu_ps(cf.a.data() + k)), lanes16(_mm512_loadu_ps(cf.c2.data() + k)),
                lanes16(_mm512_loadu_ps(cf.mean.data() + k)), lanes16(_mm512_loadu_ps(cf.c0.data() + k)), r);
    }
};

// Pass 2 on rows [a0, a1): diff_src of row a into out + (a - a0) * out_stride
// (`stream`: see vector_out).
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void update_rows_any_avx512(const bn_plan &p, const data &d, const coeffs &cf,
        int64_t a0, int64_t a1, T *out, int64_t out_stride, bool stream) {
    const any_k_diff_src<T, F> block {p, d, cf};
    const int64_t W = p.K / lanes;
    const reader<T, F> rd(d);
    const float *ak = cf.a.data(), *c2 = cf.c2.data(), *c0 = cf.c0.data(), *m = cf.mean.data();
    vector_out<T> vo {stream};
    for (int64_t a = a0; a < a1; ++a) {
        T *row_out = out + (a - a0) * out_stride;
        for (int64_t v = 0; v < W; ++v) {
            lanes16 r;
            block(a, lanes * v, r);
            vo.put(row_out + lanes * v, r);
        }
        const int64_t s0 = a * p.src.a, d0 = a * p.dd.a, x0 = a * p.relu_in.a;
        for (int64_t k = lanes * W; k < p.K; ++k)
            row_out[k] = from_f32<T>(diff_src_one(rd, p.global_stats, d0 + k, s0 + k, x0 + k, ak[k], c2[k], m[k], c0[k]));
    }
    vo.finish();
}

// Channels-last rows of K < 16 channels whose tensors all have row stride K:
// rows [a0, a1) are one flat run of elements [a0 K, a1 K), element e of
// channel e % K, read (and, in pass 2, written) in whole vectors instead of
// one channel at a time. Through the generic loops (per element, a call per
// 16-bit conversion), NXC with K = 3 took 2.4-2.7x the time of the streaming
// kernel in f32 at 19 MB (up to 18x at 2.4 MB), 7x in bf16, 25-54x in f16.
bool narrow_rows(const bn_plan &p) {
    const auto flat = [&](const bn_view &v) { return v.a == p.K && (p.K == 1 || v.k == 1); };
    return !p.planar && p.K < lanes && flat(p.ds) && (p.fusion == bn_fusion::relu_into_src || flat(p.src))
            && (p.fusion == bn_fusion::relu_into_dd || flat(p.dd))
            && (p.fusion == bn_fusion::none || (flat(p.relu_in) && flat(p.relu_dd)));
}

// Lane l of a flat run's vector v is channel (e0 + 16 v + l) % K: the
// pattern repeats every K / gcd(K, 16) vectors (1 to 15).
int narrow_period(int64_t K) { return int(K / std::gcd(K, int64_t(lanes))); }

// Per-channel values v as the vectors of one period see them.
void narrow_lanes(const float *v, int64_t K, int64_t e0, lanes16 *out) {
    const int period = narrow_period(K);
    for (int j = 0; j < period; ++j)
        for (int l = 0; l < lanes; ++l) out[j][l] = v[(e0 + lanes * j + l) % K];
}

// Pass 2's constants for a run from element e0.
struct narrow_pattern {
    int period;
    lanes16 ak[lanes - 1], c2[lanes - 1], m[lanes - 1], c0[lanes - 1];
    narrow_pattern(const coeffs &cf, int64_t K, int64_t e0) : period(narrow_period(K)) {
        narrow_lanes(cf.a.data(), K, e0, ak);
        narrow_lanes(cf.c2.data(), K, e0, c2);
        narrow_lanes(cf.mean.data(), K, e0, m);
        narrow_lanes(cf.c0.data(), K, e0, c0);
    }
};

// Pass 1 on narrow rows defines a chunk's sums by slots: the chunk's element
// i (i from 0, at a row start) is added in f32 (bn_accumulate) into slot i %
// (16 P), P = narrow_period(K), and channel k's partials are the f64 sums of
// its slots k, k + K, ... in order. With AVX-512 a slot is lane i % 16 of
// the accumulators of vector (i / 16) % P, so whole vectors add at once:
// summed a row at a time, one channel per lane (the generic loops' order),
// NXC f32 K = 3 stayed at ~1.5x the streaming kernel, its ~3 cycles a row
// more than the bytes take to arrive.
void narrow_partials(const float *s1, const float *s2, int64_t K, double *partial) {
    const int64_t slots = lanes * narrow_period(K); // (a gcd: not once per slot, per chunk)
    for (int64_t k = 0; k < K; ++k) {
        double t1 = 0, t2 = 0;
        for (int64_t s = k; s < slots; s += K) t1 += s1[s], t2 += s2[s];
        partial[2 * k] = t1;
        partial[2 * k + 1] = t2;
    }
}

// Without AVX-512: the slots element by element. With use_global_stats
// (`global`), diff_src = a * diff_dst too.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void sums_narrow(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t c,
        const coeffs *global) {
    const reader<T, F> rd(d);
    const int64_t K = p.K, slots = lanes * narrow_period(K), e0 = c * vector_chunk * K;
    const int64_t n = (std::min(p.A, (c + 1) * vector_chunk) - c * vector_chunk) * K;
    float s1[lanes * (lanes - 1)] = {}, s2[lanes * (lanes - 1)] = {};
    for (int64_t i = 0; i < n; ++i) {
        const int64_t k = i % K;
        const float g = rd.dd(e0 + i, e0 + i);
        kernels::bn_accumulate(s1[i % slots], s2[i % slots], g, rd.src(e0 + i, e0 + i), mean[k]);
        if (!global) continue;
        float r;
        kernels::bn_global_diff_src(r, global->a[size_t(k)], g);
        static_cast<T *>(d.ds)[e0 + i] = from_f32<T>(r);
    }
    narrow_partials(s1, s2, K, partial + 2 * c * K);
}

// The same with AVX-512, P = narrow_period(K): m (and with use_global_stats
// ak) the period's lanes from element 0, every chunk's start; diff_src
// streamed when large (see vector_out).
template <typename T, bn_fusion F, int P>
__attribute__((target("avx512f"))) void sums_narrow_avx512(const bn_plan &p, const data &d, const lanes16 *m,
        const lanes16 *ak, double *partial, int64_t c) {
    const reader<T, F> rd(d);
    const int64_t K = p.K, e0 = c * vector_chunk * K;
    const int64_t n = (std::min(p.A, (c + 1) * vector_chunk) - c * vector_chunk) * K;
    T *ds = static_cast<T *>(d.ds) + e0;
    vector_out<T> vo {ak && d.nontemporal && streams_to(ds)};
    lanes16 s1[P] = {}, s2[P] = {};
    int64_t i = 0;
    for (; i + lanes * P <= n; i += lanes * P)
#pragma GCC unroll 15
        for (int j = 0; j < P; ++j) {
            const int64_t e = e0 + i + lanes * j;
            rd.prefetch(e, e, e, rows_prefetch_bytes);
            lanes16 g, x;
            load_lanes<T, F>(d, e, e, e, g, x);
            kernels::bn_accumulate(s1[j], s2[j], g, x, m[j]);
            if (!ak) continue;
            lanes16 r;
            kernels::bn_global_diff_src(r, ak[j], g);
            vo.put(ds + i + lanes * j, r);
        }
    // Fewer than P vectors left, the last one maybe partial: its lanes past
    // the end add nothing.
#pragma GCC unroll 15
    for (int j = 0; j < P && i < n; ++j, i += lanes) {
        const int64_t e = e0 + i, left = std::min<int64_t>(lanes, n - i);
        lanes16 g, x, t1 = s1[j], t2 = s2[j];
        if (left == lanes) {
            load_lanes<T, F>(d, e, e, e, g, x);
        } else {
            float gb[lanes] = {}, xb[lanes] = {};
            for (int64_t l = 0; l < left; ++l) gb[l] = rd.dd(e + l, e + l), xb[l] = rd.src(e + l, e + l);
            __builtin_memcpy(&g, gb, sizeof g);
            __builtin_memcpy(&x, xb, sizeof x);
        }
        kernels::bn_accumulate(t1, t2, g, x, m[j]);
        const __mmask16 live = __mmask16((1u << left) - 1);
        s1[j] = lanes16(_mm512_mask_mov_ps(__m512(s1[j]), live, __m512(t1)));
        s2[j] = lanes16(_mm512_mask_mov_ps(__m512(s2[j]), live, __m512(t2)));
        if (!ak) continue;
        lanes16 r;
        kernels::bn_global_diff_src(r, ak[j], g);
        if (left == lanes) vo.put(ds + i, r);
        else
            for (int64_t l = 0; l < left; ++l) ds[i + l] = from_f32<T>(r[l]);
    }
    vo.finish();
    float f1[lanes * P], f2[lanes * P];
    __builtin_memcpy(f1, s1, sizeof f1);
    __builtin_memcpy(f2, s2, sizeof f2);
    narrow_partials(f1, f2, K, partial + 2 * c * K);
}

// Pass 1 on chunks [c0, c1) of narrow rows.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void sums_narrow_chunks(const bn_plan &p, const data &d, const float *mean, double *partial,
        int64_t c0, int64_t c1, const coeffs *global) {
    if (!has_avx512f()) {
        for (int64_t c = c0; c < c1; ++c) sums_narrow<T, F>(p, d, mean, partial, c, global);
        return;
    }
    lanes16 m[lanes - 1], ak[lanes - 1];
    narrow_lanes(mean, p.K, 0, m);
    if (global) narrow_lanes(global->a.data(), p.K, 0, ak);
    const lanes16 *a = global ? ak : nullptr;
    for (int64_t c = c0; c < c1; ++c) switch (narrow_period(p.K)) {
            case 1: sums_narrow_avx512<T, F, 1>(p, d, m, a, partial, c); break;
            case 3: sums_narrow_avx512<T, F, 3>(p, d, m, a, partial, c); break;
            case 5: sums_narrow_avx512<T, F, 5>(p, d, m, a, partial, c); break;
            case 7: sums_narrow_avx512<T, F, 7>(p, d, m, a, partial, c); break;
            case 9: sums_narrow_avx512<T, F, 9>(p, d, m, a, partial, c); break;
            case 11: sums_narrow_avx512<T, F, 11>(p, d, m, a, partial, c); break;
            case 13: sums_narrow_avx512<T, F, 13>(p, d, m, a, partial, c); break;
            default: sums_narrow_avx512<T, F, 15>(p, d, m, a, partial, c); break;
        }
}

// diff_src of the whole vectors of a narrow run from element e (to e1), the
// pattern's from e; returns where they end. Stream and Global as constants,
// so that no branch of vector_out or diff_src_lanes is left in the loop (a
// 16-bit store had its constants set up again for every vector).
template <typename T, bn_fusion F, bool Stream, bool Global>
__attribute__((target("avx512f"), always_inline)) inline int64_t narrow_diff_src_vectors(const data &d,
        const narrow_pattern &pattern, T *ds, int64_t e, int64_t e1) {
    vector_out<T> vo {Stream};
    for (int j = 0; e + lanes <= e1; e += lanes) {
        lanes16 r;
        diff_src_lanes<T, F>(d, Global, e, e, e, pattern.ak[j], pattern.c2[j], pattern.m[j], pattern.c0[j], r);
        vo.put(ds + e, r);
        if (++j == pattern.period) j = 0;
    }
    vo.finish();
    return e;
}

// Pass 2 on narrow rows [a0, a1): diff_src of the flat run in whole vectors,
// each lane's channel constants from narrow_pattern (the arithmetic of the
// generic loop, so the same bits). Streamed (see vector_out) from the run's
// first line boundary on, the elements before it and the last ones one by
// one.
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void update_narrow_avx512(const bn_plan &p, const data &d, const coeffs &cf,
        int64_t a0, int64_t a1) {
    const reader<T, F> rd(d);
    const int64_t K = p.K, e1 = a1 * K;
    T *ds = static_cast<T *>(d.ds);
    const auto one = [&](int64_t e) {
        const size_t k = size_t(e % K);
        ds[e] = from_f32<T>(diff_src_one(rd, p.global_stats, e, e, e, cf.a[k], cf.c2[k], cf.mean[k], cf.c0[k]));
    };
    int64_t e = a0 * K;
    if (d.nontemporal)
        for (; e < e1 && !streams_to(ds + e); ++e) one(e);
    const narrow_pattern pattern(cf, K, e);
    if (d.nontemporal)
        e = p.global_stats ? narrow_diff_src_vectors<T, F, true, true>(d, pattern, ds, e, e1)
                           : narrow_diff_src_vectors<T, F, true, false>(d, pattern, ds, e, e1);
    else
        e = p.global_stats ? narrow_diff_src_vectors<T, F, false, true>(d, pattern, ds, e, e1)
                           : narrow_diff_src_vectors<T, F, false, false>(d, pattern, ds, e, e1);
    for (; e < e1; ++e) one(e);
}

// Pass 1, vector: chunk c of rows, each row K contiguous channels (global:
// as in sums_planar).
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void sums_vector(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t c0, int64_t c1,
        const coeffs *global = nullptr) {
    if constexpr (std::is_same_v<T, float> && F != bn_fusion::none)
        if (d.relu_mask) {
            std::vector<float> sums(size_t(2 * lanes * relu_mask_words(p.K)));
            float *s1 = sums.data(), *s2 = s1 + sums.size() / 2;
            for (int64_t c = c0; c < c1; ++c) {
                relu_mask_sums(d.mask_rows, mean, c * vector_chunk, std::min(p.A, (c + 1) * vector_chunk), d.relu_mask,
                        s1, s2);
                for (int64_t k = 0; k < p.K; ++k) {
                    partial[2 * (c * p.K + k)] = s1[k];
                    partial[2 * (c * p.K + k) + 1] = s2[k];
                }
            }
            return;
        }
    if (narrow_rows(p)) {
        sums_narrow_chunks<T, F>(p, d, mean, partial, c0, c1, global);
        return;
    }
    if (!global && fits_blocks(p.K)) {
        with_blocks(p.K, [&](auto nb) BPG_LAMBDA_INLINE {
            if constexpr (!std::is_same_v<T, float>)
                if (has_avx512f()) return sums_vector_blocked_avx512<T, F, nb.value>(p, d, mean, partial, c0, c1);
            for (int64_t c = c0; c < c1; ++c) sums_vector_blocked<T, F, nb.value>(p, d, mean, partial, c);
        });
        return;
    }
    const reader<T, F> rd(d);
    std::unique_ptr<float[]> acc(new float[size_t(2 * p.K)]);
    float *s1 = acc.get(), *s2 = acc.get() + p.K;
    const bool any_avx512 = !fits_blocks(p.K) && p.K >= lanes && has_avx512f();
    for (int64_t c = c0; c < c1; ++c) {
        if (global && d.nontemporal && p.ds.a == p.K && fits_blocks(p.K)
                && streams_to(static_cast<T *>(d.ds) + c * vector_chunk * p.K)) {
            global_sums_streamed<T, F>(p, d, mean, *global, partial, c);
            continue;
        }
        for (int64_t k = 0; k < 2 * p.K; ++k) acc[size_t(k)] = 0.f;
        const int64_t a0 = c * vector_chunk, a1 = std::min(p.A, (c + 1) * vector_chunk);
        // Global stats write diff_src rows here; staged as one run when they
        // follow each other in memory, or with the AVX-512 loads, rows of
        // whole vectors from a 64-byte-aligned start, streamed from the
        // registers.
        T *first = static_cast<T *>(d.ds) + a0 * p.ds.a;
        const bool run_rows = global && d.nontemporal && p.ds.a == p.K;
        const bool stream = any_avx512 && run_rows && p.K % lanes == 0 && streams_to(first);
        const out_run<T> rows(first, (a1 - a0) * p.K, run_rows && !stream);
        if (any_avx512)
            sums_vector_any_avx512<T, F>(p, d, mean, a0, a1, s1, s2, global, rows.out, run_rows ? p.K : p.ds.a, stream);
        else
            for (int64_t a = a0; a < a1; ++a) {
                const int64_t s0 = a * p.src.a, d0 = a * p.dd.a, x0 = a * p.relu_in.a;
                for (int64_t k = 0; k < p.K; ++k) {
                    const float g = rd.dd(d0 + k, x0 + k);
                    kernels::bn_accumulate(s1[k], s2[k], g, rd.src(s0 + k, x0 + k), mean[k]);
                }
                if (global) {
                    T *out = rows.out + (a - a0) * (run_rows ? p.K : p.ds.a);
                    const float *ak = global->a.data();
                    for (int64_t k = 0; k < p.K; ++k) {
                        float ds;
                        kernels::bn_global_diff_src(ds, ak[k], rd.dd(d0 + k, x0 + k));
                        out[k] = from_f32<T>(ds);
                    }
                }
            }
        rows.finish();
        for (int64_t k = 0; k < p.K; ++k) {
            partial[2 * (c * p.K + k)] = s1[k];
            partial[2 * (c * p.K + k) + 1] = s2[k];
        }
    }
}

// Pass 2 on planar row (a, k) with AVX-512, into `out` (see vector_out):
// with `stream` (diff_src of the row, 64-byte aligned), whole lines leave
// with non-temporal stores straight from the registers instead of through a
// staged run (NCX f32 training 0.85 -> 0.73 x stream, with a ReLU fused into
// diff_dst 1.07 -> 1.01, 7 interleaved runs), 16-bit a pair of vectors a
// line; else ordinary stores (GCC's per-lane code for 16-bit had left small
// NCX f16 problems at 20-26x the time of the streaming kernel). The last
// B % 16 elements one by one. With `passed` (f32: a fused ReLU's decisions
// for the row's whole vectors, kept by pass 1), the relu input is not read
// again.
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void update_row_avx512(const bn_plan &p, const data &d, const coeffs &cf,
        int64_t a, int64_t k, T *out, bool stream, const uint16_t *passed = nullptr) {
    const reader<T, F> rd(d);
    const int64_t s0 = at(p.src, a, k, 0), d0 = at(p.dd, a, k, 0), x0 = at(p.relu_in, a, k, 0);
    const float ak = cf.a[size_t(k)], c2 = cf.c2[size_t(k)], c0 = cf.c0[size_t(k)], m = cf.mean[size_t(k)];
    const bool global = p.global_stats;
    vector_out<T> vo {stream};
    int64_t b = 0;
    if constexpr (!std::is_same_v<T, float>)
        if (stream) // pairs in the loop itself (through vector_out's held vector: bf16 1.22 -> 1.30 x stream)
            for (; b + 2 * lanes <= p.B; b += 2 * lanes) {
                lanes16 r0, r1;
                diff_src_lanes<T, F>(d, global, d0 + b, s0 + b, x0 + b, ak, c2, m, c0, r0);
                diff_src_lanes<T, F>(d, global, d0 + b + lanes, s0 + b + lanes, x0 + b + lanes, ak, c2, m, c0, r1);
                stream_pair(out + b, r0, r1);
            }
    for (; b + lanes <= p.B; b += lanes) {
        lanes16 r;
        diff_src_lanes<T, F>(d, global, d0 + b, s0 + b, x0 + b, ak, c2, m, c0, r, passed ? passed + b / lanes : nullptr);
        vo.put(out + b, r);
    }
    vo.finish();
    for (; b < p.B; ++b) out[b] = from_f32<T>(diff_src_one(rd, global, d0 + b, s0 + b, x0 + b, ak, c2, m, c0));
}

// Pass 2 on planar row (a, k) into `out` with ordinary stores.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void update_row_into(const bn_plan &p, const data &d, const coeffs &cf, int64_t a, int64_t k, T *out) {
    if (has_avx512f()) return update_row_avx512<T, F>(p, d, cf, a, k, out, false);
    const reader<T, F> rd(d);
    const int64_t s0 = at(p.src, a, k, 0), d0 = at(p.dd, a, k, 0), x0 = at(p.relu_in, a, k, 0);
    const float ak = cf.a[size_t(k)], c2 = cf.c2[size_t(k)], c0 = cf.c0[size_t(k)], m = cf.mean[size_t(k)];
    for (int64_t b = 0; b < p.B; ++b)
        out[b] = from_f32<T>(diff_src_one(rd, p.global_stats, d0 + b, s0 + b, x0 + b, ak, c2, m, c0));
}

// Pass 2 on planar row (a, k).
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void update_row(const bn_plan &p, const data &d, const coeffs &cf, int64_t a, int64_t k) {
    T *dst = static_cast<T *>(d.ds) + at(p.ds, a, k, 0);
    if (d.nontemporal && streams_to(dst)) return update_row_avx512<T, F>(p, d, cf, a, k, dst, true);
    const out_run<T> o(dst, p.B, d.nontemporal);
    update_row_into<T, F>(p, d, cf, a, k, o.out);
    o.finish();
}

// Pass 2 on rows (a, k), k in [k0, k1) (16 at most), whose rows follow one
// another in every tensor (see channels_per_task), into `out` with ordinary
// stores: the run of (k1 - k0) * B elements as one array of whole vectors,
// each lane's channel constants picked by vpermps from the group's 16 (lane
// channel (e + 0.5) / B in f32, exact for these sizes), the same arithmetic
// per element as update_row_avx512 (same bits). Row by row, the calls and
// each row's one-element tail took ~40% of NCX 7x7's time.
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void short_rows_update_avx512(const bn_plan &p, const data &d, const coeffs &cf,
        int64_t a, int64_t k0, int64_t k1, T *out) {
    const reader<T, F> rd(d);
    const int64_t n = (k1 - k0) * p.B, s0 = at(p.src, a, k0, 0), d0 = at(p.dd, a, k0, 0), x0 = at(p.relu_in, a, k0, 0);
    alignas(64) float table[4][lanes] = {};
    for (int64_t k = k0; k < k1; ++k) {
        const size_t i = size_t(k - k0), c = size_t(k);
        table[0][i] = cf.a[c], table[1][i] = cf.c2[c], table[2][i] = cf.mean[c], table[3][i] = cf.c0[c];
    }
    const __m512 ak = _mm512_load_ps(table[0]), c2 = _mm512_load_ps(table[1]), m = _mm512_load_ps(table[2]),
                 c0 = _mm512_load_ps(table[3]);
    const __m512 inv_b = _mm512_set1_ps(1.f / float(p.B));
    __m512 e = _mm512_add_ps(_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_ps(0.5f));
    vector_out<T> vo {false};
    int64_t b = 0;
    for (; b + lanes <= n; b += lanes, e = _mm512_add_ps(e, _mm512_set1_ps(float(lanes)))) {
        const __m512i ch = _mm512_maskz_cvttps_epi32(0xffff, _mm512_mul_ps(e, inv_b));
        lanes16 r;
        diff_src_lanes<T, F>(d, p.global_stats, d0 + b, s0 + b, x0 + b, lanes16(_mm512_maskz_permutexvar_ps(0xffff, ch, ak)),
                lanes16(_mm512_maskz_permutexvar_ps(0xffff, ch, c2)), lanes16(_mm512_maskz_permutexvar_ps(0xffff, ch, m)),
                lanes16(_mm512_maskz_permutexvar_ps(0xffff, ch, c0)), r);
        vo.put(out + b, r);
    }
    vo.finish();
    for (; b < n; ++b) {
        const size_t i = size_t(b / p.B);
        out[b] = from_f32<T>(diff_src_one(rd, p.global_stats, d0 + b, s0 + b, x0 + b, table[0][i], table[1][i],
                table[2][i], table[3][i]));
    }
}

// Pass 2 on the planar rows (a, k) of channels [k0, k1), which follow one
// another in diff_src (ds.k == B): rows that stream (64-byte aligned, B a
// whole number of lines) one by one, else one staged output run for all of
// them instead of one each (7x7).
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void update_rows_of_channels(const bn_plan &p, const data &d, const coeffs &cf, int64_t a, int64_t k0,
        int64_t k1) {
    if (d.nontemporal && p.B * int64_t(sizeof(T)) % 64 == 0 && streams_to(static_cast<T *>(d.ds) + at(p.ds, a, k0, 0))) {
        for (int64_t k = k0; k < k1; ++k) update_row<T, F>(p, d, cf, a, k);
        return;
    }
    const out_run<T> o(static_cast<T *>(d.ds) + at(p.ds, a, k0, 0), (k1 - k0) * p.B, d.nontemporal);
    if (k1 - k0 <= lanes && has_avx512f()) short_rows_update_avx512<T, F>(p, d, cf, a, k0, k1, o.out);
    else
        for (int64_t k = k0; k < k1; ++k) update_row_into<T, F>(p, d, cf, a, k, o.out + (k - k0) * p.B);
    o.finish();
}

// Pass 2, vector, K = 16 * NB channels (NB <= 4): the coefficients in
// registers, and diff_src of row a's channels [16 nb, 16 nb + 16) with the
// arithmetic of the generic loop in update().
template <int NB> struct update_block {
    lanes16 ak[NB], c2[NB], c0[NB], m[NB];
    explicit update_block(const coeffs &cf) {
        __builtin_memcpy(ak, cf.a.data(), sizeof ak);
        __builtin_memcpy(c2, cf.c2.data(), sizeof c2);
        __builtin_memcpy(c0, cf.c0.data(), sizeof c0);
        __builtin_memcpy(m, cf.mean.data(), sizeof m);
    }
    // (r by reference: a 64-byte vector by value changes the ABI between the
    // instruction sets this file is compiled for.)
    template <typename T, bn_fusion F>
    BPG_ALWAYS_INLINE void lanes(const bn_plan &p, const reader<T, F> &rd, int64_t a, int nb, lanes16 &r) const {
        diff_src_block(rd, p.global_stats, a * p.dd.a + 16 * nb, a * p.src.a + 16 * nb, a * p.relu_in.a + 16 * nb,
                ak[nb], c2[nb], m[nb], c0[nb], r);
    }
    template <typename T, bn_fusion F>
    __attribute__((target("avx512f"), always_inline)) void lanes_avx512(const bn_plan &p, const data &d, int64_t a,
            int nb, lanes16 &r) const {
        diff_src_lanes<T, F>(d, p.global_stats, a * p.dd.a + 16 * nb, a * p.src.a + 16 * nb,
                a * p.relu_in.a + 16 * nb, ak[nb], c2[nb], m[nb], c0[nb], r);
    }
};

template <typename T, bn_fusion F, int NB, typename Out>
BPG_ALWAYS_INLINE void update_rows_blocked(const bn_plan &p, const reader<T, F> &rd, const coeffs &cf, int64_t a0, int64_t a1,
        Out &&out_row) {
    const update_block<NB> ub(cf);
    for (int64_t a = a0; a < a1; ++a) {
        T *out = out_row(a);
        for (int nb = 0; nb < NB; ++nb) {
            float rb[lanes];
            lanes16 r;
            ub.lanes(p, rd, a, nb, r);
            __builtin_memcpy(rb, &r, sizeof rb);
            for (int l = 0; l < lanes; ++l) out[16 * nb + l] = from_f32<T>(rb[l]);
        }
    }
}

// The same for rows of diff_src one after another from a 64-byte-aligned
// start (AVX-512): straight from the registers by stream_rows instead of
// through a staged run (see update()).
template <typename T, bn_fusion F, int NB>
__attribute__((target("avx512f"))) void update_rows_streamed(const bn_plan &p, const data &d, const coeffs &cf,
        int64_t a0, int64_t a1) {
    struct diff_src_of_block {
        const bn_plan &p;
        const data &d;
        const update_block<NB> ub;
        __attribute__((target("avx512f"), always_inline)) void operator()(int64_t a, int nb, lanes16 &r) const {
            ub.template lanes_avx512<T, F>(p, d, a, nb, r);
        }
    } lanes {p, d, update_block<NB>(cf)};
    stream_rows<T, NB>(p, d, a0, a1, lanes);
}

template <typename T, bn_fusion F>
void update_streamed(const bn_plan &p, const data &d, const coeffs &cf, int64_t a0, int64_t a1) {
    with_blocks(p.K, [&](auto nb) BPG_LAMBDA_INLINE { update_rows_streamed<T, F, nb.value>(p, d, cf, a0, a1); });
}

// Pass 2 on rows [r0, r1): planar rows (a, k) or vector rows a.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void update(const bn_plan &p, const data &d, const coeffs &cf, int64_t r0, int64_t r1) {
    const reader<T, F> rd(d);
    const bool global = p.global_stats;
    if (p.planar) {
        for (int64_t r = r0; r < r1; ++r) update_row<T, F>(p, d, cf, r / p.K, r % p.K);
        return;
    }
    if (narrow_rows(p) && has_avx512f()) return update_narrow_avx512<T, F>(p, d, cf, r0, r1);
    const float *ak = cf.a.data(), *c2 = cf.c2.data(), *c0 = cf.c0.data(), *m = cf.mean.data();
    // Rows that follow each other in memory are written as one staged run
    // (of at most ~64 KB) when non-temporal; rows of whole vectors from a
    // 64-byte-aligned start are streamed straight from the registers instead
    // (NXC f32 training 1.14 -> 0.98 x stream, with a ReLU fused into
    // diff_dst 1.25 -> 1.19, 7-9 interleaved runs; bf16 1.87 -> 1.23, f16 3.43
    // -> 1.99, 3 interleaved runs each).
    const bool blocked = fits_blocks(p.K);
    T *first = static_cast<T *>(d.ds) + r0 * p.K;
    const bool streams = d.nontemporal && p.ds.a == p.K && p.K % lanes == 0 && streams_to(first);
    if constexpr (std::is_same_v<T, float>)
        if (streams && d.relu_mask)
            return relu_mask_update(d.mask_rows, d.relu_mask, ak, c2, c0, m, r0, r1, first, r0, true);
    if (streams && blocked) return update_streamed<T, F>(p, d, cf, r0, r1);
    if (streams) return update_rows_any_avx512<T, F>(p, d, cf, r0, r1, first, p.K, true); // (K % 16 == 0, AVX-512)
    const bool run_rows = d.nontemporal && p.ds.a == p.K;
    const int64_t group = run_rows ? std::max<int64_t>(1, 16384 / std::max<int64_t>(p.K, 1)) : 1;
    for (int64_t g0 = r0; g0 < r1; g0 += group) {
        const int64_t g1 = std::min(r1, g0 + group);
        const out_run<T> rows(static_cast<T *>(d.ds) + g0 * p.ds.a, (g1 - g0) * p.K, run_rows);
        auto out_row = [&](int64_t a) { return run_rows ? rows.out + (a - g0) * p.K : static_cast<T *>(d.ds) + a * p.ds.a; };
        bool done = false;
        if constexpr (std::is_same_v<T, float> && F != bn_fusion::none)
            if (d.relu_mask) {
                relu_mask_update(d.mask_rows, d.relu_mask, ak, c2, c0, m, g0, g1, out_row(g0), g0);
                done = true;
            }
        if (done) {
        } else if (blocked && (std::is_same_v<T, float> || !has_avx512f())) {
            // Coefficients in registers for the whole group.
            with_blocks(p.K, [&](auto nb) BPG_LAMBDA_INLINE {
                update_rows_blocked<T, F, nb.value>(p, rd, cf, g0, g1, out_row);
            });
        } else if (p.K >= lanes && has_avx512f()) {
            // (16-bit register blocks too: update_rows_blocked converts lane by
            // lane, NXC bf16 16x56x56x64 2.6x oneDNN's time.)
            update_rows_any_avx512<T, F>(p, d, cf, g0, g1, out_row(g0), run_rows ? p.K : p.ds.a, false);
        } else {
            for (int64_t a = g0; a < g1; ++a) {
                const int64_t s0 = a * p.src.a, d0 = a * p.dd.a, x0 = a * p.relu_in.a;
                T *out = out_row(a);
                for (int64_t k = 0; k < p.K; ++k)
                    out[k] = from_f32<T>(diff_src_one(rd, global, d0 + k, s0 + k, x0 + k, ak[k], c2[k], m[k], c0[k]));
            }
        }
        rows.finish();
    }
}

// NCX f32 with a fused ReLU, both passes of channel k in one task (see
// run_bn_plan): pass 1 keeps the ReLU's decisions for the whole vectors of
// the channel's rows (row a's vector v at bit word a * (B / 16) + v), and
// pass 2 reads them instead of the relu input, so it reads two of the three
// tensors back from the cache instead of three (NCX f32 with a ReLU fused
// into diff_dst 0.96 -> 0.92 x stream, fused vs apart 1.33 -> 1.39x; medians
// of 7 interleaved runs).
template <bn_fusion F>
__attribute__((target("avx512f"))) void relu_passed_sums_channel(const bn_plan &p, const data &d, const float *mean,
        double *partial, int64_t k, uint16_t *passed) {
    struct keep_decisions {
        uint16_t *row;
        __attribute__((target("avx512f"), always_inline)) void operator()(int64_t b, const lanes16 &, __mmask16 m) {
            row[b / lanes] = m;
        }
    };
    for (int64_t a = 0; a < p.A; ++a) {
        keep_decisions each {passed + a * (p.B / lanes)};
        planar_row_sums_avx512<float, F>(p, d, mean, partial, k * p.A + a, each);
    }
}

template <typename T> struct kernels_of {
    BPG_ALWAYS_INLINE static void sums(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t i0, int64_t i1,
            const coeffs *g) {
        switch (p.fusion) {
            case bn_fusion::none: return p.planar ? sums_planar<T, bn_fusion::none>(p, d, mean, partial, i0, i1, g)
                                                  : sums_vector<T, bn_fusion::none>(p, d, mean, partial, i0, i1, g);
            case bn_fusion::relu_into_src: return p.planar ? sums_planar<T, bn_fusion::relu_into_src>(p, d, mean, partial, i0, i1, g)
                                                           : sums_vector<T, bn_fusion::relu_into_src>(p, d, mean, partial, i0, i1, g);
            case bn_fusion::relu_into_dd: return p.planar ? sums_planar<T, bn_fusion::relu_into_dd>(p, d, mean, partial, i0, i1, g)
                                                          : sums_vector<T, bn_fusion::relu_into_dd>(p, d, mean, partial, i0, i1, g);
        }
    }
    BPG_ALWAYS_INLINE static void upd_ch(const bn_plan &p, const data &d, const coeffs &cf, int64_t k) {
        // Last row first: pass 1 read the channel's rows in order, so the last
        // ones are the likeliest still in the cache (~4% on NCX, with a fused
        // ReLU too, 9 interleaved runs).
        for (int64_t a = p.A - 1; a >= 0; --a) switch (p.fusion) {
                case bn_fusion::none: update_row<T, bn_fusion::none>(p, d, cf, a, k); break;
                case bn_fusion::relu_into_src: update_row<T, bn_fusion::relu_into_src>(p, d, cf, a, k); break;
                case bn_fusion::relu_into_dd: update_row<T, bn_fusion::relu_into_dd>(p, d, cf, a, k); break;
            }
    }
    BPG_ALWAYS_INLINE static void sums_run(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t a,
            int64_t k0, int64_t k1) {
        if (p.B <= planar_chunk && has_avx512f()) switch (p.fusion) {
                case bn_fusion::none: return short_rows_sums_avx512<T, bn_fusion::none>(p, d, mean, partial, a, k0, k1);
                case bn_fusion::relu_into_src: return short_rows_sums_avx512<T, bn_fusion::relu_into_src>(p, d, mean, partial, a, k0, k1);
                case bn_fusion::relu_into_dd: return short_rows_sums_avx512<T, bn_fusion::relu_into_dd>(p, d, mean, partial, a, k0, k1);
            }
        for (int64_t k = k0; k < k1; ++k) sums(p, d, mean, partial, k * p.A + a, k * p.A + a + 1, nullptr);
    }
    BPG_ALWAYS_INLINE static void upd_run(const bn_plan &p, const data &d, const coeffs &cf, int64_t a, int64_t k0, int64_t k1) {
        switch (p.fusion) {
            case bn_fusion::none: return update_rows_of_channels<T, bn_fusion::none>(p, d, cf, a, k0, k1);
            case bn_fusion::relu_into_src: return update_rows_of_channels<T, bn_fusion::relu_into_src>(p, d, cf, a, k0, k1);
            case bn_fusion::relu_into_dd: return update_rows_of_channels<T, bn_fusion::relu_into_dd>(p, d, cf, a, k0, k1);
        }
    }
    BPG_ALWAYS_INLINE static void upd(const bn_plan &p, const data &d, const coeffs &cf, int64_t i0, int64_t i1) {
        switch (p.fusion) {
            case bn_fusion::none: return update<T, bn_fusion::none>(p, d, cf, i0, i1);
            case bn_fusion::relu_into_src: return update<T, bn_fusion::relu_into_src>(p, d, cf, i0, i1);
            case bn_fusion::relu_into_dd: return update<T, bn_fusion::relu_into_dd>(p, d, cf, i0, i1);
        }
    }
};

#define BPG_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
BPG_CLONES void sums_f32(const bn_plan &p, const data &d, const float *m, double *o, int64_t i0, int64_t i1, const coeffs *g) { kernels_of<float>::sums(p, d, m, o, i0, i1, g); }
BPG_CLONES void sums_bf16(const bn_plan &p, const data &d, const float *m, double *o, int64_t i0, int64_t i1, const coeffs *g) { kernels_of<bf16_t>::sums(p, d, m, o, i0, i1, g); }
BPG_CLONES void sums_f16(const bn_plan &p, const data &d, const float *m, double *o, int64_t i0, int64_t i1, const coeffs *g) { kernels_of<f16_t>::sums(p, d, m, o, i0, i1, g); }
BPG_CLONES void upd_f32(const bn_plan &p, const data &d, const coeffs &c, int64_t i0, int64_t i1) { kernels_of<float>::upd(p, d, c, i0, i1); }
BPG_CLONES void upd_bf16(const bn_plan &p, const data &d, const coeffs &c, int64_t i0, int64_t i1) { kernels_of<bf16_t>::upd(p, d, c, i0, i1); }
BPG_CLONES void upd_f16(const bn_plan &p, const data &d, const coeffs &c, int64_t i0, int64_t i1) { kernels_of<f16_t>::upd(p, d, c, i0, i1); }

BPG_CLONES void sums_run_f32(const bn_plan &p, const data &d, const float *m, double *o, int64_t a, int64_t k0, int64_t k1) { kernels_of<float>::sums_run(p, d, m, o, a, k0, k1); }
BPG_CLONES void sums_run_bf16(const bn_plan &p, const data &d, const float *m, double *o, int64_t a, int64_t k0, int64_t k1) { kernels_of<bf16_t>::sums_run(p, d, m, o, a, k0, k1); }
BPG_CLONES void sums_run_f16(const bn_plan &p, const data &d, const float *m, double *o, int64_t a, int64_t k0, int64_t k1) { kernels_of<f16_t>::sums_run(p, d, m, o, a, k0, k1); }
// Pass 1 on the planar rows (a, k), k in [k0, k1).
void sums_run(const bn_plan &p, const data &d, const float *m, double *o, int64_t a, int64_t k0, int64_t k1) {
    switch (p.dt) {
        case data_type::bf16: return sums_run_bf16(p, d, m, o, a, k0, k1);
        case data_type::f16: return sums_run_f16(p, d, m, o, a, k0, k1);
        default: return sums_run_f32(p, d, m, o, a, k0, k1);
    }
}
BPG_CLONES void upd_run_f32(const bn_plan &p, const data &d, const coeffs &c, int64_t a, int64_t k0, int64_t k1) { kernels_of<float>::upd_run(p, d, c, a, k0, k1); }
BPG_CLONES void upd_run_bf16(const bn_plan &p, const data &d, const coeffs &c, int64_t a, int64_t k0, int64_t k1) { kernels_of<bf16_t>::upd_run(p, d, c, a, k0, k1); }
BPG_CLONES void upd_run_f16(const bn_plan &p, const data &d, const coeffs &c, int64_t a, int64_t k0, int64_t k1) { kernels_of<f16_t>::upd_run(p, d, c, a, k0, k1); }
// Pass 2 on the planar rows (a, k), k in [k0, k1) (one run of diff_src).
void upd_run(const bn_plan &p, const data &d, const coeffs &c, int64_t a, int64_t k0, int64_t k1) {
    switch (p.dt) {
        case data_type::bf16: return upd_run_bf16(p, d, c, a, k0, k1);
        case data_type::f16: return upd_run_f16(p, d, c, a, k0, k1);
        default: return upd_run_f32(p, d, c, a, k0, k1);
    }
}

BPG_CLONES void upd_ch_f32(const bn_plan &p, const data &d, const coeffs &c, int64_t k) { kernels_of<float>::upd_ch(p, d, c, k); }
BPG_CLONES void upd_ch_bf16(const bn_plan &p, const data &d, const coeffs &c, int64_t k) { kernels_of<bf16_t>::upd_ch(p, d, c, k); }
BPG_CLONES void upd_ch_f16(const bn_plan &p, const data &d, const coeffs &c, int64_t k) { kernels_of<f16_t>::upd_ch(p, d, c, k); }

// Pass 2 on the planar rows of channel k.
void upd_channel(const bn_plan &p, const data &d, const coeffs &c, int64_t k) {
    switch (p.dt) {
        case data_type::bf16: return upd_ch_bf16(p, d, c, k);
        case data_type::f16: return upd_ch_f16(p, d, c, k);
        default: return upd_ch_f32(p, d, c, k);
    }
}

void sums(const bn_plan &p, const data &d, const float *m, double *o, int64_t i0, int64_t i1, const coeffs *global = nullptr) {
    switch (p.dt) {
        case data_type::bf16: return sums_bf16(p, d, m, o, i0, i1, global);
        case data_type::f16: return sums_f16(p, d, m, o, i0, i1, global);
        default: return sums_f32(p, d, m, o, i0, i1, global);
    }
}
void upd(const bn_plan &p, const data &d, const coeffs &c, int64_t i0, int64_t i1) {
    switch (p.dt) {
        case data_type::bf16: return upd_bf16(p, d, c, i0, i1);
        case data_type::f16: return upd_f16(p, d, c, i0, i1);
        default: return upd_f32(p, d, c, i0, i1);
    }
}

// Pass 2 of channel k with the decisions kept by relu_passed_sums_channel
// (last row first, as upd_ch); rows that cannot stream go the generic way.
template <bn_fusion F>
void relu_passed_update_channel(const bn_plan &p, const data &d, const coeffs &cf, int64_t k, const uint16_t *passed) {
    for (int64_t a = p.A - 1; a >= 0; --a) {
        if (d.nontemporal && streams_to(static_cast<float *>(d.ds) + at(p.ds, a, k, 0)))
            update_row_avx512<float, F>(p, d, cf, a, k, static_cast<float *>(d.ds) + at(p.ds, a, k, 0), true,
                    passed + a * (p.B / lanes));
        else
            upd(p, d, cf, a * p.K + k, a * p.K + k + 1);
    }
}

// Whether the per-channel schedule keeps a fused ReLU's decisions (f32,
// AVX-512, diff_src streamed: a tensor that stays in the caches gains nothing).
bool keeps_relu_decisions(const bn_plan &p, const data &d) {
    return p.fusion != bn_fusion::none && p.dt == data_type::f32 && !p.global_stats && d.nontemporal
            && has_avx512f();
}

void relu_passed_sums(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t k, uint16_t *passed) {
    if (p.fusion == bn_fusion::relu_into_dd) relu_passed_sums_channel<bn_fusion::relu_into_dd>(p, d, mean, partial, k, passed);
    else relu_passed_sums_channel<bn_fusion::relu_into_src>(p, d, mean, partial, k, passed);
}

void relu_passed_update(const bn_plan &p, const data &d, const coeffs &cf, int64_t k, const uint16_t *passed) {
    if (p.fusion == bn_fusion::relu_into_dd) relu_passed_update_channel<bn_fusion::relu_into_dd>(p, d, cf, k, passed);
    else relu_passed_update_channel<bn_fusion::relu_into_src>(p, d, cf, k, passed);
}

// Channels per task of NCX training (both passes of a task's channels in
// it). Rows under 1 KB go in groups whose rows (a, k0..k1) are one run in
// memory: one channel's rows alone (7x7: 196 bytes, 100 KB apart) left the
// hardware prefetchers behind, NCX f32 256x512x7x7 4.2 -> 2.0 x stream and
// 128x256x14x14 2.1 -> 1.6 (16 channels, or runs of ~4 KB; 4 channels 2.65,
// 8: 2.5, 32-128 no better than 16). 28x28 f32 (3 KB rows, whole lines that
// stream from the registers) gained nothing in groups of 2. At most 16, a
// group's rows of one tensor within ~1 MB, so pass 2 still finds them in the
// cache, and at least 16 groups to share out.
int64_t channels_per_task(const bn_plan &p) {
    const int64_t row_bytes = p.B * int64_t(size_of(p.dt)), channel_bytes = p.A * row_bytes;
    const bool runs = p.src.k == p.B && p.dd.k == p.B && p.ds.k == p.B
            && (p.fusion == bn_fusion::none || (p.relu_in.k == p.B && p.relu_dd.k == p.B));
    if (!runs || row_bytes >= 1024) return 1;
    int64_t group = std::min<int64_t>(16, (4096 + row_bytes - 1) / row_bytes);
    group = std::min(group, std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(channel_bytes, 1)));
    return std::max<int64_t>(1, std::min(group, p.K / 16));
}

// The literal formula for one channel, in double as the reference computes
// it: used where 1/sqrt(var + eps) or a coefficient is not finite, so that
// inf and NaN appear exactly where the reference puts them.
struct literal_channel {
    const bn_plan &p;
    const backends::buffer_map &b;
    double load(const bn_view &, size_t id, int64_t at_v) const { return core::load_as_double(b.at(id), p.dt, at_v); }
    double src(int64_t a, int64_t k, int64_t i) const {
        if (p.fusion == bn_fusion::relu_into_src) {
            const double x = load(p.relu_in, p.relu_in_id, at(p.relu_in, a, k, i));
            return x > 0 ? load(p.relu_dd, p.relu_dd_id, at(p.relu_dd, a, k, i)) : 0.0;
        }
        return load(p.src, p.src_id, at(p.src, a, k, i));
    }
    double dd(int64_t a, int64_t k, int64_t i) const {
        if (p.fusion == bn_fusion::relu_into_dd) {
            const double x = load(p.relu_in, p.relu_in_id, at(p.relu_in, a, k, i));
            return x > 0 ? load(p.relu_dd, p.relu_dd_id, at(p.relu_dd, a, k, i)) : 0.0;
        }
        return load(p.dd, p.dd_id, at(p.dd, a, k, i));
    }
    double diff_gamma(int64_t k, double mean, double inv) const {
        double s = 0;
        for (int64_t a = 0; a < p.A; ++a)
            for (int64_t i = 0; i < p.B; ++i) s += dd(a, k, i) * kernels::bn_xhat(src(a, k, i), mean, inv);
        return s;
    }
    void update(int64_t k, const kernels::bn_update_coeffs<double> &c, double mean, double inv) const {
        for (int64_t a = 0; a < p.A; ++a)
            for (int64_t i = 0; i < p.B; ++i)
                core::store_from_double(b.at(p.ds_id), p.dt, at(p.ds, a, k, i),
                        kernels::bn_diff_src(c, dd(a, k, i), kernels::bn_xhat(src(a, k, i), mean, inv)));
    }
};

} // namespace

void run_bn_plan(const bn_plan &p, const backends::buffer_map &b) {
    if (p.K == 0) return;
    auto stat = [&](size_t id, data_type dt, const std::vector<int64_t> &off, int64_t k) {
        return core::load_as_double(b.at(id), dt, off[size_t(k)]);
    };
    data d;
    if (p.fusion != bn_fusion::relu_into_src) d.src = b.at(p.src_id);
    if (p.fusion != bn_fusion::relu_into_dd) d.dd = b.at(p.dd_id);
    if (p.fusion != bn_fusion::none) {
        d.relu_in = b.at(p.relu_in_id);
        d.relu_dd = b.at(p.relu_dd_id);
    }
    d.ds = b.at(p.ds_id);
    d.nontemporal = p.A * p.K * p.B * int64_t(size_of(p.dt)) >= nontemporal_min_bytes;
    std::unique_ptr<uint16_t[]> relu_mask;
    const bool into_src = p.fusion == bn_fusion::relu_into_src;
    // Channels-last with a fused ReLU keeps its decisions as bits (see
    // bn_relu_mask.hpp) where rows are whole: pass 2 then reads two tensors
    // instead of three (fewer than 16 channels: the generic loops).
    if (p.dt == data_type::f32 && p.fusion != bn_fusion::none && !p.planar && !p.global_stats && p.K >= lanes
            && p.relu_in.a == p.K && p.relu_dd.a == p.K && (into_src ? p.dd.a : p.src.a) == p.K && p.ds.a == p.K
            && relu_mask_available()) {
        relu_mask.reset(new uint16_t[size_t(p.A * relu_mask_words(p.K))]);
        d.relu_mask = relu_mask.get();
        d.mask_rows = {static_cast<const float *>(d.relu_in), static_cast<const float *>(d.relu_dd),
                static_cast<const float *>(into_src ? d.dd : d.src), into_src, p.K};
    }

    const size_t K = size_t(p.K);
    std::vector<double> mean(K), inv(K), gamma(K, 1.0), db(K, 0.0), s2(K, 0.0), dg(K, 0.0);
    coeffs cf;
    cf.mean.resize(K), cf.a.resize(K), cf.c2.resize(K), cf.c0.resize(K);
    for (int64_t k = 0; k < p.K; ++k) {
        mean[size_t(k)] = stat(p.mean_id, p.mean_dt, p.mean_off, k);
        inv[size_t(k)] = kernels::bn_inv_std(stat(p.var_id, p.var_dt, p.var_off, k), double(p.epsilon));
        if (p.has_gamma) gamma[size_t(k)] = stat(p.gamma_id, p.gamma_dt, p.gamma_off, k);
        cf.mean[size_t(k)] = float(mean[size_t(k)]);
    }
    const literal_channel lit {p, b};
    const bool need_sums = !p.global_stats || p.has_diff_stats;
    std::vector<char> literal(K, 0);

    // The results and pass-2 coefficients of channel k from its sums, in
    // double: one function for every schedule below, so they agree bit for bit.
    // diff_gamma of channel k from its sums; where inv is not finite, the
    // literal sum (a pass over the channel) gives the reference's inf/NaN.
    auto diff_gamma_of = [&](size_t k) {
        return std::isfinite(inv[k]) ? inv[k] * s2[k] : (need_sums ? lit.diff_gamma(int64_t(k), mean[k], inv[k]) : 0.0);
    };
    auto finish_channel = [&](size_t k) {
        const bool finite_inv = std::isfinite(inv[k]);
        // With use_global_stats the coefficients do not read diff_gamma: it
        // is computed once the sums exist (see below).
        if (!p.global_stats) dg[k] = diff_gamma_of(k);
        const auto c = kernels::bn_coeffs(gamma[k], inv[k], db[k], dg[k], p.M, p.global_stats);
        // ds = scale*(dd - shift - xhat*slope) = scale*dd - scale*inv*slope*(src - mean) - scale*shift
        cf.a[k] = float(c.scale), cf.c2[k] = float(-c.scale * inv[k] * c.slope), cf.c0[k] = float(-c.scale * c.shift);
        const bool finite = std::isfinite(cf.a[k]) && std::isfinite(cf.c2[k]) && std::isfinite(cf.c0[k]);
        literal[k] = !p.global_stats && !(finite_inv && finite);
    };
    // Chunk partials -> channel sums, in a fixed order (the same for every schedule).
    const int64_t items = p.planar ? p.K * p.A : (p.A + vector_chunk - 1) / vector_chunk;
    const int64_t per_item = p.planar ? (p.B + planar_chunk - 1) / planar_chunk : p.K;
    std::vector<double> partial(need_sums ? size_t(2 * items * per_item) : 0);
    auto combine = [&](int64_t k) {
        double t1 = 0, t2 = 0;
        if (p.planar) {
            for (int64_t j = k * p.A * per_item; j < (k + 1) * p.A * per_item; ++j)
                t1 += partial[size_t(2 * j)], t2 += partial[size_t(2 * j + 1)];
        } else {
            for (int64_t c = 0; c < items; ++c)
                t1 += partial[size_t(2 * (c * p.K + k))], t2 += partial[size_t(2 * (c * p.K + k) + 1)];
        }
        db[size_t(k)] = t1;
        s2[size_t(k)] = t2;
    };
    const bool empty = p.A * p.B == 0;

    if (p.global_stats) {
        // diff_src = gamma * inv * diff_dst needs no sums: coefficients first,
        // then one sweep that writes diff_src (and sums when they are outputs).
        for (size_t k = 0; k < K; ++k) finish_channel(k);
        if (need_sums && !empty) {
            tbb::parallel_for(tbb::blocked_range<int64_t>(0, items), [&](const tbb::blocked_range<int64_t> &r) {
                sums(p, d, cf.mean.data(), partial.data(), r.begin(), r.end(), &cf);
            });
            tbb::parallel_for(tbb::blocked_range<int64_t>(0, p.K, 16), [&](const tbb::blocked_range<int64_t> &r) {
                for (int64_t k = r.begin(); k < r.end(); ++k) combine(k);
            });
            for (size_t k = 0; k < K; ++k) dg[k] = diff_gamma_of(k); // an output, not needed for diff_src
        } else {
            tbb::parallel_for(tbb::blocked_range<int64_t>(0, p.planar ? p.A * p.K : p.A),
                    [&](const tbb::blocked_range<int64_t> &r) { upd(p, d, cf, r.begin(), r.end()); });
        }
    } else if (p.planar && p.K >= 8 && !empty) {
        // NCX training with enough channels: both passes of a channel (short
        // rows: of a group of channels, see channels_per_task) in one task, so
        // its src and diff_dst are read again from the cache (L3) rather than
        // from memory. The chunk sums and their order are those of the
        // schedule below.
        const int64_t group = channels_per_task(p);
        if (group > 1) {
            // Short rows: channel groups, row a of the group one run in memory.
            const int64_t groups = (p.K + group - 1) / group;
            tbb::parallel_for(tbb::blocked_range<int64_t>(0, groups, 1), [&](const tbb::blocked_range<int64_t> &r) {
                for (int64_t g = r.begin(); g < r.end(); ++g) {
                    const int64_t k0 = g * group, k1 = std::min(p.K, k0 + group);
                    for (int64_t a = 0; a < p.A; ++a) sums_run(p, d, cf.mean.data(), partial.data(), a, k0, k1);
                    bool any_literal = false;
                    for (int64_t k = k0; k < k1; ++k) {
                        combine(k);
                        finish_channel(size_t(k));
                        any_literal |= literal[size_t(k)] != 0;
                    }
                    for (int64_t a = p.A - 1; a >= 0; --a) // last rows first, as upd_ch
                        if (!any_literal) upd_run(p, d, cf, a, k0, k1);
                        else
                            for (int64_t k = k0; k < k1; ++k)
                                if (!literal[size_t(k)]) upd(p, d, cf, a * p.K + k, a * p.K + k + 1);
                }
            });
        } else {
            const bool keep_decisions = keeps_relu_decisions(p, d);
            tbb::parallel_for(tbb::blocked_range<int64_t>(0, p.K, 1), [&](const tbb::blocked_range<int64_t> &r) {
                std::vector<uint16_t> passed(keep_decisions ? size_t(p.A * (p.B / lanes)) : 0);
                for (int64_t k = r.begin(); k < r.end(); ++k) {
                    if (keep_decisions) relu_passed_sums(p, d, cf.mean.data(), partial.data(), k, passed.data());
                    else sums(p, d, cf.mean.data(), partial.data(), k * p.A, (k + 1) * p.A);
                    combine(k);
                    finish_channel(size_t(k));
                    if (literal[size_t(k)]) continue;
                    if (keep_decisions) relu_passed_update(p, d, cf, k, passed.data());
                    else upd_channel(p, d, cf, k);
                }
            });
        }
    } else {
        if (!empty) {
            tbb::parallel_for(tbb::blocked_range<int64_t>(0, items), [&](const tbb::blocked_range<int64_t> &r) {
                sums(p, d, cf.mean.data(), partial.data(), r.begin(), r.end());
            });
            tbb::parallel_for(tbb::blocked_range<int64_t>(0, p.K, 16), [&](const tbb::blocked_range<int64_t> &r) {
                for (int64_t k = r.begin(); k < r.end(); ++k) combine(k);
            });
        }
        for (size_t k = 0; k < K; ++k) finish_channel(k);
        tbb::parallel_for(tbb::blocked_range<int64_t>(0, p.planar ? p.A * p.K : p.A),
                [&](const tbb::blocked_range<int64_t> &r) { upd(p, d, cf, r.begin(), r.end()); });
    }

    if (p.has_diff_stats)
        for (size_t k = 0; k < K; ++k) {
            core::store_from_double(b.at(p.dgamma_id), p.dgamma_dt, p.dgamma_off[k], dg[k]);
            core::store_from_double(b.at(p.dbeta_id), p.dbeta_dt, p.dbeta_off[k], db[k]);
        }
    // Channels whose coefficients are not finite: the formula as written.
    for (size_t k = 0; k < K; ++k)
        if (literal[k]) {
            const auto c = kernels::bn_coeffs(gamma[k], inv[k], db[k], dg[k], p.M, false);
            lit.update(int64_t(k), c, mean[k], inv[k]);
        }
}

} // namespace bpg::tbb_backend
