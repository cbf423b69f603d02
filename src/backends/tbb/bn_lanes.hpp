// What every oneTBB BatchNormTrainingBackprop loop is built of (bn_planar.cpp,
// bn_short_rows.cpp, bn_channels_last.cpp, bn_narrow.cpp): the data of one
// execute, the values BN sees with a fused ReLUBackprop computed on the fly,
// 16 elements at a time as f32 lanes (generic, and with AVX-512 loads) and
// pass 2's diff_src of them. The arithmetic is kernels/bn_math.hpp's, so every
// loop built of these gives the generic loop's bits.
#pragma once

#include <cstdint>
#include <immintrin.h>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/tbb/bn_plan.hpp"
#include "backends/tbb/bn_relu_mask.hpp"
#include "backends/tbb/convert_lanes.hpp"
#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/lanes8.hpp"
#include "backends/tbb/kernel_attributes.hpp"
#include "backends/tbb/prefetch.hpp"
#include "backends/tbb/task_pool.hpp"
#include "core/allocate.hpp"
#include "kernels/bn_math.hpp"

namespace bpg::tbb_backend::bn {

constexpr int64_t planar_chunk = 4096; // elements of a run summed in f32 lanes
constexpr int64_t channels_last_chunk = 256;  // rows summed in f32 per channel
constexpr int lanes = 16;
typedef float lanes16 __attribute__((vector_size(64)));
typedef uint32_t u32x16 __attribute__((vector_size(64)));
typedef uint16_t u16x16 __attribute__((vector_size(32)));
typedef uint16_t u16x32 __attribute__((vector_size(64)));

// Data pointers of one execute (typed by the kernels that read them).
// What a task of pass 1 works in, made before the run (task_pool.hpp).
// One task's arrays, carved from the run's working memory (run_bn_plan).
struct task_memory {
    float *sums;      // channels-last: 2 * max(K, lanes * relu_mask_words(K)) floats
    uint16_t *passed; // planar, ReLU decisions kept: A * (B / lanes)
};

// A row's distance, in elements, in each tensor read. Loops copy these (and
// `data`) into locals: read through a reference, they were loaded again
// after every vector store, which may alias anything.
struct row_strides {
    int64_t src, dd, relu;
    explicit row_strides(const bn_plan &p) : src(p.src.a), dd(p.dd.a), relu(p.relu_in.a) {}
};

struct data {
    const void *src = nullptr, *dd = nullptr, *relu_in = nullptr, *relu_dd = nullptr;
    void *ds = nullptr;
    bool nontemporal = false; // diff_src is large: write it past the caches
    uint16_t *relu_mask = nullptr; // see bn_relu_mask.hpp: set when that path runs
    relu_mask_rows mask_rows {};    // its tensors
    const task_pool<task_memory> *work = nullptr;
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
// prefetchers alone stay further from a plain read of the same bytes
// (bench/NOTES.md; pass 2 gains nothing from it).
constexpr int64_t rows_prefetch_bytes = 4096;

// Element offset of (a, k, b) in a view.
BPG_ALWAYS_INLINE int64_t at(const bn_view &v, int64_t a, int64_t k, int64_t b) { return a * v.a + k * v.k + b * v.b; }

// Per-channel coefficients of pass 2: ds = a*dd + c2*(src - mean) + c0.
// K floats of a run's working memory (bn_run.cpp lays them out).
struct float_run {
    float *p = nullptr;
    float *data() const { return p; }
    float &operator[](size_t i) const { return p[i]; }
};
struct coeffs {
    float_run mean, a, c2, c0;
};

// 16 consecutive elements (channels, or of a planar row) of diff_dst (g) and
// src (x) as f32 vectors, from their element offsets (d for diff_dst, s for
// src, r for the relu tensors), 8 lanes at a time by widen8 (lanes8.hpp).
// (V: lanes16, or f32x8 for 8 elements.)
typedef int32_t i32x8 __attribute__((vector_size(32)));

// reader::relu on 8 lanes: g where x > 0 (ordered: NaN gives +0), else +0,
// as the scalar form.
template <typename T, bn_fusion F> BPG_ALWAYS_INLINE void relu8(const reader<T, F> &rd, int64_t r, f32x8 &v) {
    f32x8 x, g;
    widen8(rd.x_p + r, x);
    widen8(rd.g_p + r, g);
    v = f32x8(i32x8(g) & (x > 0.f));
}
// Whether a fused ReLU makes the values of src (Src) or diff_dst BN sees.
template <bool Src, bn_fusion F>
constexpr bool relu_feeds = F == (Src ? bn_fusion::relu_into_src : bn_fusion::relu_into_dd);
// 8 consecutive values of diff_dst (Src false) or src as BN sees them.
template <bool Src, typename T, bn_fusion F>
BPG_ALWAYS_INLINE void load8(const reader<T, F> &rd, int64_t at, int64_t r, f32x8 &e) {
    if constexpr (relu_feeds<Src, F>) relu8(rd, r, e);
    else widen8((Src ? rd.src_p : rd.dd_p) + at, e);
}
// The same for V (f32x8, or lanes16 from two halves joined in registers: a
// 64-byte load from two 32-byte stores stalls on store forwarding).
template <bool Src, typename T, bn_fusion F, typename V>
BPG_ALWAYS_INLINE void load_vector(const reader<T, F> &rd, int64_t at, int64_t r, V &v) {
    if constexpr (sizeof(V) == sizeof(f32x8)) {
        load8<Src>(rd, at, r, v);
    } else if constexpr (std::is_same_v<T, float> && !relu_feeds<Src, F>) { // (one load, not two and a shuffle)
        __builtin_memcpy(&v, (Src ? rd.src_p : rd.dd_p) + at, sizeof v);
    } else {
        static_assert(sizeof(V) == 2 * sizeof(f32x8));
        f32x8 lo, hi;
        load8<Src>(rd, at, r, lo);
        load8<Src>(rd, at + 8, r + 8, hi);
        v = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    }
}

template <typename T, bn_fusion F, typename V>
BPG_ALWAYS_INLINE void load_dd_block(const reader<T, F> &rd, int64_t d, int64_t r, V &g) {
    load_vector<false>(rd, d, r, g);
}
template <typename T, bn_fusion F, typename V>
BPG_ALWAYS_INLINE void load_block(const reader<T, F> &rd, int64_t d, int64_t s, int64_t r, V &g, V &x) {
    load_dd_block(rd, d, r, g);
    load_vector<true>(rd, s, r, x);
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
// The same for 16 (V lanes16) or 8 (f32x8) consecutive elements (C: one
// channel's float constant, or a vector of the channels').
template <typename T, bn_fusion F, typename C, typename V>
BPG_ALWAYS_INLINE void diff_src_block(const reader<T, F> &rd, bool global, int64_t d, int64_t s, int64_t r, const C &ak,
        const C &c2, const C &m, const C &c0, V &out) {
    V g, x;
    if (global) {
        load_dd_block(rd, d, r, g);
        return kernels::bn_global_diff_src(out, ak, g);
    }
    load_block(rd, d, s, r, g, x);
    kernels::bn_folded_diff_src(out, false, ak, g, c2, x, m, c0);
}

// Pass 1 on the consecutive channels [k0, k1) of a channels-last row
// (channel k at offsets d0 + k, s0 + k, x0 + k), each added into its sums
// s1[k], s2[k] around mean[k]: 8 at a time in the AVX2 instances, else one
// by one; the same operations on each channel, so the same bits.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void accumulate_channels(const reader<T, F> &rd, int64_t d0, int64_t s0, int64_t x0, int64_t k0,
        int64_t k1, float *s1, float *s2, const float *mean) {
    int64_t k = k0;
    if constexpr (avx2_instance<T>)
        for (; k + 8 <= k1; k += 8) {
            f32x8 g, x, v1, v2, m;
            load_block(rd, d0 + k, s0 + k, x0 + k, g, x);
            __builtin_memcpy(&v1, s1 + k, sizeof v1);
            __builtin_memcpy(&v2, s2 + k, sizeof v2);
            __builtin_memcpy(&m, mean + k, sizeof m);
            kernels::bn_accumulate(v1, v2, g, x, m);
            __builtin_memcpy(s1 + k, &v1, sizeof v1);
            __builtin_memcpy(s2 + k, &v2, sizeof v2);
        }
    for (; k < k1; ++k) {
        const float g = rd.dd(d0 + k, x0 + k);
        kernels::bn_accumulate(s1[k], s2[k], g, rd.src(s0 + k, x0 + k), mean[k]);
    }
}

// 16 consecutive elements of T as f32 lanes with AVX-512: bf16 widened and
// shifted (bf16_to_f32_inline's bits), f16 by vcvtph2ps (the values of
// f16_to_f32_inline; a signalling NaN comes out quiet, which no result
// computed from it can show, see convert_rows.hpp). Per lane (load_block),
// GCC converted f16 in 8-lane halves through the stack: NCX f16 pass 1 took
// twice the time of the reads it does.
__attribute__((target("avx512f"), always_inline)) inline __m512 lanes_f32(const float *p) { return _mm512_loadu_ps(p); }
template <typename T> __attribute__((target("avx512f"), always_inline)) inline __m512 lanes_f32(const T *p) {
    return convert16::load16(p);
}
template <typename T> BPG_ALWAYS_INLINE const T *tensor(const void *base, int64_t at) {
    return static_cast<const T *>(base) + at;
}

// 16 consecutive elements of diff_dst (g) and src (x) as BN sees them, with
// AVX-512: a fused ReLU as reader::relu computes it (relu_dd where the relu
// input is > 0, compared ordered, so NaN gives 0; else +0), by a mask
// (cheaper than load_block's per-lane select). The ReLU's
// decisions (the lanes whose relu input is > 0) go to `passed`.
__attribute__((target("avx512f"), always_inline)) inline __m512 relu_of_lanes(__m512 in, __m512 relu_dd,
        __mmask16 &passed) {
    passed = _mm512_cmp_ps_mask(in, _mm512_setzero_ps(), _CMP_GT_OQ);
    return _mm512_maskz_mov_ps(passed, relu_dd);
}
template <typename T>
__attribute__((target("avx512f"), always_inline)) inline __m512 relu_lanes(const data &d, int64_t relu_at,
        __mmask16 &passed) {
    return relu_of_lanes(lanes_f32(tensor<T>(d.relu_in, relu_at)), lanes_f32(tensor<T>(d.relu_dd, relu_at)), passed);
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

// Calls f(std::bool_constant<G> {}) with G = global (use_global_stats): the
// generic loops pick their formula outside the loop, so that GCC vectorizes
// them (with the choice inside, f16 pass 2 ran at 15x the stream with AVX2).
template <typename Fn> BPG_ALWAYS_INLINE void with_global(bool global, Fn &&f) {
    if (global) f(std::true_type {});
    else f(std::false_type {});
}

// Calls f(std::integral_constant<bn_fusion, F> {}) with F = fusion, inlined
// into the caller with f (declared BPG_LAMBDA_INLINE), as with_blocks does.
template <typename Fn> BPG_ALWAYS_INLINE decltype(auto) with_fusion(bn_fusion fusion, Fn &&f) {
    switch (fusion) {
        case bn_fusion::relu_into_src: return f(std::integral_constant<bn_fusion, bn_fusion::relu_into_src> {});
        case bn_fusion::relu_into_dd: return f(std::integral_constant<bn_fusion, bn_fusion::relu_into_dd> {});
        default: return f(std::integral_constant<bn_fusion, bn_fusion::none> {});
    }
}

} // namespace bpg::tbb_backend::bn
