// The BN loops over one planar row (a, k) of B contiguous elements: pass 1's
// chunk sums (one definition, chunk_sums, for every planar pass-1 loop) and
// pass 2's diff_src. Shared by bn_planar.cpp and bn_short_rows.cpp.
#pragma once

#include "backends/tbb/bn_lanes.hpp"
#include "backends/tbb/bn_vector_out.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/nontemporal.hpp"

namespace bpg::tbb_backend::bn {

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
        add_tail(rd, b, b1, d0, s0, x0, m, s1, s2);
    }
    // The tail's elements [b, b1) into lanes 0, 1, ... of s1, s2.
    template <typename T, bn_fusion F>
    static BPG_ALWAYS_INLINE void add_tail(const reader<T, F> &rd, int64_t b, int64_t b1, int64_t d0, int64_t s0,
            int64_t x0, float m, float *s1, float *s2) {
        for (int l = 0; b < b1; ++b, ++l)
            kernels::bn_accumulate(s1[l], s2[l], rd.dd(d0 + b, x0 + b), rd.src(s0 + b, x0 + b), m);
    }
    // ... then summed in order, in double (in_order_sums_4 and
    // in_order_sums_16 do the same additions for 4 and 16 chunks at once).
    static BPG_ALWAYS_INLINE void pair_of(const float *s1, const float *s2, double *pair) {
        double t1 = 0, t2 = 0;
        for (int l = 0; l < lanes; ++l) t1 += s1[l], t2 += s2[l];
        pair[0] = t1;
        pair[1] = t2;
    }
};

// pair_of's sums of 4 chunks' lanes at once (chunk i's lanes s[i]), one
// chunk per f64 lane, for the generic loops: the same additions in the same
// order, so the same bits, with the lanes transposed 4 by 4 in registers and
// converted 4 at a time (one chunk at a time, a dependent chain of 16
// additions and a load, insert and convert per lane took two thirds of the
// generic short-rows pass 1).
BPG_ALWAYS_INLINE void in_order_sums_4(const float (*s)[lanes], double *t) {
    typedef float f32x4 __attribute__((vector_size(16)));
    typedef double f64x4 __attribute__((vector_size(32)));
    f64x4 sum = {};
#pragma GCC unroll 4
    for (int q = 0; q < lanes; q += 4) {
        f32x4 r[4];
        for (int i = 0; i < 4; ++i) __builtin_memcpy(&r[i], s[i] + q, sizeof r[i]);
        const f32x4 a = __builtin_shufflevector(r[0], r[1], 0, 4, 1, 5), b = __builtin_shufflevector(r[0], r[1], 2, 6, 3, 7),
                    c = __builtin_shufflevector(r[2], r[3], 0, 4, 1, 5), d = __builtin_shufflevector(r[2], r[3], 2, 6, 3, 7);
        sum += __builtin_convertvector(__builtin_shufflevector(a, c, 0, 1, 4, 5), f64x4); // lane q of the 4 chunks
        sum += __builtin_convertvector(__builtin_shufflevector(a, c, 2, 3, 6, 7), f64x4);
        sum += __builtin_convertvector(__builtin_shufflevector(b, d, 0, 1, 4, 5), f64x4);
        sum += __builtin_convertvector(__builtin_shufflevector(b, d, 2, 3, 6, 7), f64x4);
    }
    __builtin_memcpy(t, &sum, sizeof sum);
}

// chunk_sums::lanes_with_tail of chunk [b0, b1) of a planar row (element b
// at offsets d0 + b, s0 + b, x0 + b, mean m) into s1, s2, as the generic
// loops compute them: the lanes as two vectors of 8 in variables of their
// own (same bits). Without 512-bit registers GCC kept a 64-byte vector in
// memory (AVX2: NCX f32 pass 1 took 1.6x as long), and sums it copied into
// a chunk_sums, or held in arrays indexed in a loop, too; f32 with `zmm`
// (an AVX-512 CPU, p.avx512) in lanes16.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void chunk_lanes(const reader<T, F> &rd, int64_t d0, int64_t s0, int64_t x0, int64_t b0, int64_t b1,
        float m, bool zmm, float *s1, float *s2) {
    int64_t b = b0;
    if (std::is_same_v<T, float> && zmm) {
        chunk_sums cs(m);
        for (; b + lanes <= b1; b += lanes) {
            lanes16 g, x;
            load_block(rd, d0 + b, s0 + b, x0 + b, g, x);
            cs.add(g, x);
        }
        return cs.lanes_with_tail(rd, b, b1, d0, s0, x0, s1, s2);
    }
    f32x8 lo1 = {}, lo2 = {}, hi1 = {}, hi2 = {};
    const f32x8 mv = f32x8 {} + m;
    for (; b + lanes <= b1; b += lanes) {
        f32x8 g, x;
        load_block(rd, d0 + b, s0 + b, x0 + b, g, x);
        kernels::bn_accumulate(lo1, lo2, g, x, mv);
        load_block(rd, d0 + b + 8, s0 + b + 8, x0 + b + 8, g, x);
        kernels::bn_accumulate(hi1, hi2, g, x, mv);
    }
    __builtin_memcpy(s1, &lo1, sizeof lo1), __builtin_memcpy(s1 + 8, &hi1, sizeof hi1);
    __builtin_memcpy(s2, &lo2, sizeof lo2), __builtin_memcpy(s2 + 8, &hi2, sizeof hi2);
    chunk_sums::add_tail(rd, b, b1, d0, s0, x0, m, s1, s2);
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

// Pass 2 on planar row (a, k) with AVX-512, into `out` (see vector_out):
// with `stream` (diff_src of the row, 64-byte aligned), whole lines leave
// with non-temporal stores straight from the registers instead of through a
// staged run (bench/NOTES.md), 16-bit a pair of vectors a line; else
// ordinary stores (GCC's per-lane 16-bit code is far slower on small NCX f16). The last
// B % 16 elements one by one. With `passed` (f32: a fused ReLU's decisions
// for the row's whole vectors, kept by pass 1), the relu input is not read
// again. No store fence: the callers fence once after all their rows (a
// fence per row waits for the row's streamed lines to reach memory, every
// 3 KB on 28x28).
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
        if (stream) // pairs in the loop itself: faster than through vector_out's held vector
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
    vo.flush();
    for (; b < p.B; ++b) out[b] = from_f32<T>(diff_src_one(rd, global, d0 + b, s0 + b, x0 + b, ak, c2, m, c0));
}

// Pass 2 on planar row (a, k) into `out` with ordinary stores.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void update_row_into(const bn_plan &p, const data &d, const coeffs &cf, int64_t a, int64_t k, T *out) {
    if (p.avx512) return update_row_avx512<T, F>(p, d, cf, a, k, out, false);
    const reader<T, F> rd(d);
    const int64_t s0 = at(p.src, a, k, 0), d0 = at(p.dd, a, k, 0), x0 = at(p.relu_in, a, k, 0);
    const float ak = cf.a[size_t(k)], c2 = cf.c2[size_t(k)], c0 = cf.c0[size_t(k)], m = cf.mean[size_t(k)];
    with_global(p.global_stats, [&](auto global) BPG_LAMBDA_INLINE {
        diff_src_run<global.value>(rd, d0, s0, x0, out, 0, p.B, ak, c2, m, c0);
    });
}

// Pass 2 on planar row (a, k). Streamed rows are not fenced: the caller
// fences (end_of_streamed_rows) after its last row.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void update_row(const bn_plan &p, const data &d, const coeffs &cf, int64_t a, int64_t k) {
    T *dst = static_cast<T *>(d.ds) + at(p.ds, a, k, 0);
    if (d.nontemporal && streams_to(dst)) return update_row_avx512<T, F>(p, d, cf, a, k, dst, true);
    const out_run<T> o(dst, p.B, d.nontemporal);
    update_row_into<T, F>(p, d, cf, a, k, o.out);
    o.finish();
}

} // namespace bpg::tbb_backend::bn
