// BN kernels on channels-last rows of fewer than 16 channels (a network's
// first BN on RGB-like data, or any thin layer).
#include <algorithm>
#include <numeric>

#include "backends/tbb/bn_kernels.hpp"
#include "backends/tbb/bn_vector_out.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/nontemporal.hpp"

namespace bpg::tbb_backend::bn {

// Channels-last rows of K < 16 channels whose tensors all have row stride K:
// rows [a0, a1) are one flat run of elements [a0 K, a1 K), element e of
// channel e % K, read (and, in pass 2, written) in whole vectors instead of
// one channel at a time: the generic loops, element by element with a call
// per 16-bit conversion, were far from the memory bound.
bool narrow_rows(const bn_plan &p) {
    const auto flat = [&](const bn_view &v) { return v.a == p.K && (p.K == 1 || v.k == 1); };
    return !p.planar && p.K < lanes && flat(p.ds) && (p.fusion == bn_fusion::relu_into_src || flat(p.src))
            && (p.fusion == bn_fusion::relu_into_dd || flat(p.dd))
            && (p.fusion == bn_fusion::none || (flat(p.relu_in) && flat(p.relu_dd)));
}

namespace {

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
// each row cost more cycles than its bytes take to arrive.
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
    const int64_t K = p.K, slots = lanes * narrow_period(K), e0 = c * channels_last_chunk * K;
    const int64_t n = (std::min(p.A, (c + 1) * channels_last_chunk) - c * channels_last_chunk) * K;
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
    const int64_t K = p.K, e0 = c * channels_last_chunk * K;
    const int64_t n = (std::min(p.A, (c + 1) * channels_last_chunk) - c * channels_last_chunk) * K;
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
    if (p.sums != bn_loops::narrow_avx512) {
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

template <typename T>
BPG_ALWAYS_INLINE void narrow_sums_of(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t c0,
        int64_t c1, const coeffs *global) {
    with_fusion(p.fusion,
            [&](auto f) BPG_LAMBDA_INLINE { sums_narrow_chunks<T, f.value>(p, d, mean, partial, c0, c1, global); });
}

} // namespace

BPG_BN_ENTRY(narrow_sums,
        (const bn_plan &p, const data &d, const float *mean, double *partial, int64_t c0, int64_t c1,
                const coeffs *global),
        (p, d, mean, partial, c0, c1, global), narrow_sums_of)

// (AVX-512 code alone: no instances for other instruction sets.)
void narrow_update(const bn_plan &p, const data &d, const coeffs &cf, int64_t a0, int64_t a1) {
    with_fusion(p.fusion, [&](auto f) {
        switch (p.dt) {
            case data_type::bf16: return update_narrow_avx512<bf16_t, f.value>(p, d, cf, a0, a1);
            case data_type::f16: return update_narrow_avx512<f16_t, f.value>(p, d, cf, a0, a1);
            default: return update_narrow_avx512<float, f.value>(p, d, cf, a0, a1);
        }
    });
}

} // namespace bpg::tbb_backend::bn
