// Channels-last BN loops for K = 16 * NB channels (NB = 1 to 4), whose
// per-channel sums and coefficients stay in registers for a whole chunk of
// rows (see channel_blocks.hpp). Used by bn_channels_last.cpp.
#pragma once

#include "backends/tbb/bn_lanes.hpp"
#include "backends/tbb/bn_vector_out.hpp"
#include "backends/tbb/channel_blocks.hpp"

namespace bpg::tbb_backend::bn {

// Channels-last rows [a0, a1) of diff_src, K = 16 * NB channels, one after
// another from a 64-byte-aligned start: lanes(a, nb, r) gives row a's
// channels [16 nb, 16 nb + 16), in row order, and they go out in pairs with
// non-temporal stores of whole lines. With NB odd two rows make a unit of
// whole pairs, and a last row of an odd count ends in an ordinary store.
// HwBf16: bf16 rounded by the hardware (stream_pair_as).
template <typename T, int NB, bool HwBf16 = false, typename Lanes>
__attribute__((target("avx512f"), always_inline)) inline void stream_rows(const data &d, int64_t a0, int64_t a1,
        Lanes &lanes) {
    constexpr int64_t K = 16 * NB;
    constexpr int rows = NB % 2 == 0 ? 1 : 2;
    int64_t a = a0;
    for (; a + rows <= a1; a += rows) {
        T *out = static_cast<T *>(d.ds) + a * K;
#pragma GCC unroll 4 // NB at once, so a caller's per-block sums stay in registers
        for (int j = 0; j < rows * NB; j += 2) {
            lanes16 r0, r1;
            lanes(a + j / NB, j % NB, r0);
            lanes(a + (j + 1) / NB, (j + 1) % NB, r1);
            stream_pair_as<HwBf16>(out + 16 * j, r0, r1);
        }
    }
    for (; a < a1; ++a)
        for (int nb = 0; nb < NB; nb += 2) {
            T *out = static_cast<T *>(d.ds) + a * K + 16 * nb;
            lanes16 r0, r1;
            lanes(a, nb, r0);
            if (nb + 1 == NB) {
                store_one_as<HwBf16>(out, r0);
                break;
            }
            lanes(a, nb + 1, r1);
            stream_pair_as<HwBf16>(out, r0, r1);
        }
    _mm_sfence(); // the streamed lines are visible before the task ends
}

// Pass 1, vector, K = 16 * NB channels (NB <= 4): the sums of chunk c's
// rows in registers, each channel summed in row order as in the generic loop
// of sums_channels_last (same bits); add() also gives the row's diff_dst lanes.
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
    __attribute__((target("avx512f"), always_inline)) void add_avx512(const row_strides &st, const data &d, int64_t a,
            int nb, lanes16 &g) {
        lanes16 x;
        load_lanes<T, F>(d, a * st.dd + 16 * nb, a * st.src + 16 * nb, a * st.relu + 16 * nb, g, x);
        kernels::bn_accumulate(v1[nb], v2[nb], g, x, mv[nb]);
    }
    // use_global_stats: also diff_src = a * diff_dst of those lanes (ak: a of
    // the NB channel blocks).
    template <typename T, bn_fusion F>
    __attribute__((target("avx512f"), always_inline)) void add_global_avx512(const row_strides &st, const data &d,
            int64_t a, int nb, const lanes16 *ak, lanes16 &r) {
        lanes16 g;
        add_avx512<T, F>(st, d, a, nb, g);
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
BPG_ALWAYS_INLINE void sums_channels_last_blocked(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t c) {
    const reader<T, F> rd(d);
    sums_block<NB> sb(mean);
    const int64_t a1 = std::min(p.A, (c + 1) * channels_last_chunk);
    // f32 rows are left to the hardware prefetchers, as oneDNN leaves them:
    // the software prefetch made pass 1 slower there (bench/NOTES.md).
    constexpr bool prefetch = !std::is_same_v<T, float>;
    if (std::is_same_v<T, float> && p.avx512) {
        for (int64_t a = c * channels_last_chunk; a < a1; ++a)
#pragma GCC unroll 4 // NB at once, so sb's accumulators stay in registers (not unrolled, GCC kept them in memory)
            for (int nb = 0; nb < NB; ++nb) {
                lanes16 g;
                sb.add(p, rd, a, nb, g);
            }
    } else {
        // 16-bit, and f32 without AVX-512: sb's lanes as vectors of 8 (same
        // bits), as add_chunk_vectors.
        f32x8 v1[2 * NB] = {}, v2[2 * NB] = {}, mv[2 * NB];
        __builtin_memcpy(mv, sb.mv, sizeof mv);
        for (int64_t a = c * channels_last_chunk; a < a1; ++a)
#pragma GCC unroll 8
            for (int h = 0; h < 2 * NB; ++h) {
                if (prefetch && h % 2 == 0)
                    rd.prefetch(a * p.dd.a + 8 * h, a * p.src.a + 8 * h, a * p.relu_in.a + 8 * h, rows_prefetch_bytes);
                f32x8 g, x;
                load_block(rd, a * p.dd.a + 8 * h, a * p.src.a + 8 * h, a * p.relu_in.a + 8 * h, g, x);
                kernels::bn_accumulate(v1[h], v2[h], g, x, mv[h]);
            }
        __builtin_memcpy(sb.v1, v1, sizeof v1);
        __builtin_memcpy(sb.v2, v2, sizeof v2);
    }
    sb.store(p, c, partial);
}

// The same for 16-bit data with the AVX-512 loads (see lanes_f32), chunks
// [c0, c1): the same sums (same bits).
template <typename T, bn_fusion F, int NB>
__attribute__((target("avx512f"))) void sums_channels_last_blocked_avx512(const bn_plan &p, const data &d, const float *mean,
        double *partial, int64_t c0, int64_t c1) {
    const reader<T, F> rd(d);
    const data dc = d;
    const row_strides st(p);
    for (int64_t c = c0; c < c1; ++c) {
        sums_block<NB> sb(mean);
        const int64_t a1 = std::min(p.A, (c + 1) * channels_last_chunk);
        for (int64_t a = c * channels_last_chunk; a < a1; ++a)
#pragma GCC unroll 4 // as in sums_channels_last_blocked
            for (int nb = 0; nb < NB; ++nb) {
                rd.prefetch(a * st.dd + 16 * nb, a * st.src + 16 * nb, a * st.relu + 16 * nb, rows_prefetch_bytes);
                lanes16 g;
                sb.template add_avx512<T, F>(st, dc, a, nb, g);
            }
        sb.store(p, c, partial);
    }
}

// use_global_stats, K = 16 * NB channels, diff_src rows one after another
// from a 64-byte-aligned start (AVX-512): chunk c's sums as
// sums_channels_last_blocked and diff_src = a * diff_dst (the generic loop's
// arithmetic) streamed straight from the registers by stream_rows (bench/NOTES.md).
template <typename T, bn_fusion F, int NB>
__attribute__((target("avx512f"))) void global_sums_streamed_nb(const bn_plan &p, const data &d, const float *mean,
        const coeffs &cf, double *partial, int64_t c) {
    struct sums_and_diff_src {
        const row_strides st;
        const data d;
        sums_block<NB> sb;
        lanes16 ak[NB];
        __attribute__((target("avx512f"), always_inline)) void operator()(int64_t a, int nb, lanes16 &r) {
            sb.template add_global_avx512<T, F>(st, d, a, nb, ak, r);
        }
    } lanes {row_strides(p), d, sums_block<NB>(mean), {}};
    __builtin_memcpy(lanes.ak, cf.a.data(), sizeof lanes.ak);
    stream_rows<T, NB>(lanes.d, c * channels_last_chunk, std::min(p.A, (c + 1) * channels_last_chunk), lanes);
    lanes.sb.store(p, c, partial);
}

template <typename T, bn_fusion F>
void global_sums_streamed(const bn_plan &p, const data &d, const float *mean, const coeffs &cf, double *partial,
        int64_t c) {
    with_blocks(p.K, [&](auto nb) BPG_LAMBDA_INLINE {
        global_sums_streamed_nb<T, F, nb.value>(p, d, mean, cf, partial, c);
    });
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
};

template <typename T, bn_fusion F, int NB, typename Out>
BPG_ALWAYS_INLINE void update_rows_blocked(const bn_plan &p, const reader<T, F> &rd, const coeffs &cf, int64_t a0, int64_t a1,
        Out &&out_row) {
    if (std::is_same_v<T, float> && p.avx512) {
        const update_block<NB> ub(cf);
        for (int64_t a = a0; a < a1; ++a) {
            T *out = out_row(a);
            for (int nb = 0; nb < NB; ++nb) {
                lanes16 r;
                ub.lanes(p, rd, a, nb, r);
                __builtin_memcpy(out + 16 * nb, &r, sizeof r);
            }
        }
    } else {
        // 16-bit, and f32 without AVX-512: ub's lanes as vectors of 8 (same
        // bits), as the sums of sums_channels_last_blocked; converted and
        // stored 16 at a time.
        f32x8 ak[2 * NB], c2[2 * NB], c0[2 * NB], m[2 * NB];
        __builtin_memcpy(ak, cf.a.data(), sizeof ak);
        __builtin_memcpy(c2, cf.c2.data(), sizeof c2);
        __builtin_memcpy(c0, cf.c0.data(), sizeof c0);
        __builtin_memcpy(m, cf.mean.data(), sizeof m);
        for (int64_t a = a0; a < a1; ++a) {
            T *out = out_row(a);
            for (int h = 0; h < 2 * NB; h += 2) {
                f32x8 r[2];
                for (int j = 0; j < 2; ++j)
                    diff_src_block(rd, p.global_stats, a * p.dd.a + 8 * (h + j), a * p.src.a + 8 * (h + j),
                            a * p.relu_in.a + 8 * (h + j), ak[h + j], c2[h + j], m[h + j], c0[h + j], r[j]);
                store_halves(out + 8 * h, r[0], r[1]);
            }
        }
    }
}

// The same for rows of diff_src one after another from a 64-byte-aligned
// start (AVX-512): straight from the registers by stream_rows instead of
// through a staged run (see update()). The functor holds copies of the
// pointers and strides (see row_strides); use_global_stats is a template flag.
template <typename T, bn_fusion F, int NB, bool HwBf16, bool Global>
__attribute__((target("avx512f"))) void update_rows_streamed(const bn_plan &p, const data &d, const coeffs &cf,
        int64_t a0, int64_t a1) {
    struct diff_src_of_block {
        const data d;
        const row_strides st;
        const update_block<NB> ub;
        __attribute__((target("avx512f"), always_inline)) void operator()(int64_t a, int nb, lanes16 &r) const {
            diff_src_lanes<T, F>(d, Global, a * st.dd + 16 * nb, a * st.src + 16 * nb, a * st.relu + 16 * nb, ub.ak[nb],
                    ub.c2[nb], ub.m[nb], ub.c0[nb], r);
        }
    } lanes {d, row_strides(p), update_block<NB>(cf)};
    stream_rows<T, NB, HwBf16>(lanes.d, a0, a1, lanes);
}

// f(std::bool_constant<HwBf16>): HwBf16 where the plan names pass-2 loops
// rounding bf16 by the hardware (T is then bf16_t).
template <typename T, typename Body> BPG_ALWAYS_INLINE void with_bf16_rounding(const bn_plan &p, const Body &f) {
    if constexpr (std::is_base_of_v<bf16_t, T>)
        if (rounds_bf16_by_hardware(p.update))
            return f(std::true_type {});
    f(std::false_type {});
}

template <typename T, bn_fusion F>
void update_streamed(const bn_plan &p, const data &d, const coeffs &cf, int64_t a0, int64_t a1) {
    with_bf16_rounding<T>(p, [&](auto hw) BPG_LAMBDA_INLINE {
        with_blocks(p.K, [&](auto nb) BPG_LAMBDA_INLINE {
            if (p.global_stats) update_rows_streamed<T, F, nb.value, hw.value, true>(p, d, cf, a0, a1);
            else update_rows_streamed<T, F, nb.value, hw.value, false>(p, d, cf, a0, a1);
        });
    });
}

} // namespace bpg::tbb_backend::bn
