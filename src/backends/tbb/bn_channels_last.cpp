// BN kernels on channels-last rows (NXC, and NCX data with channels-last
// strides): each row a is K contiguous channels, summed in chunks of
// channels_last_chunk rows (see bn_kernels.hpp).
#include <algorithm>
#include <memory>

#include "backends/tbb/bn_kernels.hpp"
#include "backends/tbb/bn_register_blocks.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/nontemporal.hpp"

namespace bpg::tbb_backend::bn {

namespace {

// Channels-last rows of K channels that do not fit the register blocks, with
// AVX-512 (K >= 16): each row's whole vectors with the AVX-512 loads and the
// last K % 16 channels one by one, each channel in row order with the
// arithmetic of the generic loops of sums_channels_last and update (same
// bits), which go lane by lane and are far from the memory bound there.
// wide_blocks_avx512 takes the vectors a block of p.channel_block channels
// across all the rows at a time, so that the per-channel arrays the loops
// read beside the data stay in L1; a block's row segments then follow one
// another in no run (vector_out flushed after each).

// Channels [k0, k1) as the wide loops take them: the whole vectors up to kv
// in blocks of `block` channels (one block unless blocked), then the tail.
struct wide_blocks {
    bool blocked;
    int64_t kv, block;
    wide_blocks(bn_loops loops, int64_t block_channels, int64_t k0, int64_t k1)
        : blocked(loops == bn_loops::wide_blocks_avx512 || loops == bn_loops::wide_blocks_bf16_avx512), kv(k0 + (k1 - k0) / lanes * lanes),
          block(blocked ? block_channels : std::max<int64_t>(kv - k0, 1)) {}
};

// Rows whose sums pass 1 adds in registers before storing them.
constexpr int64_t rows_at_once = 4;


// Pass 1's rows [a, a + rows_at_once) on the vectors of channels [b0, b1):
// their sums in registers, added in row order (the bits of one row at a
// time), with the sums and mean loaded once. Prefetch: each row's vectors
// rows_prefetch_bytes ahead (bn_plan::row_prefetch).
// (d and the strides: the caller's local copies, see row_strides.)
template <bool Prefetch, typename T, bn_fusion F>
__attribute__((target("avx512f"), always_inline)) inline void sum_rows_at_once(const row_strides &st, const data &d,
        const reader<T, F> &rd, const float *mean, int64_t a, int64_t b0, int64_t b1, float *s1, float *s2) {
    for (int64_t k = b0; k < b1; k += lanes) {
        const lanes16 m = lanes16(_mm512_loadu_ps(mean + k));
        lanes16 v1 = lanes16(_mm512_loadu_ps(s1 + k)), v2 = lanes16(_mm512_loadu_ps(s2 + k));
        for (int64_t r = a; r < a + rows_at_once; ++r) {
            const int64_t s0 = r * st.src + k, d0 = r * st.dd + k, x0 = r * st.relu + k;
            if constexpr (Prefetch) rd.prefetch(d0, s0, x0, rows_prefetch_bytes);
            lanes16 g, x;
            load_lanes<T, F>(d, d0, s0, x0, g, x);
            kernels::bn_accumulate(v1, v2, g, x, m);
        }
        _mm512_storeu_ps(s1 + k, __m512(v1));
        _mm512_storeu_ps(s2 + k, __m512(v2));
    }
}

// Pass 1 on channels [k0, k1) of rows [a0, a1) of a chunk (sums_channels_last):
// the sums added into s1, s2 (indexed by channel) between rows. With
// use_global_stats (`global`), also diff_src = a * diff_dst of row a into out
// + (a - a0) * out_stride (`stream`: see vector_out).
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void sums_channels_last_wide_avx512(const bn_plan &p, const data &d, const float *mean,
        int64_t a0, int64_t a1, int64_t k0, int64_t k1, float *s1, float *s2, const coeffs *global, T *out,
        int64_t out_stride, bool stream) {
    const reader<T, F> rd(d);
    const data dc = d;
    const row_strides st(p);
    const float *global_a = global ? global->a.data() : nullptr;
    vector_out<T> vo {stream};
    const wide_blocks wb(p.sums, p.sums_block, k0, k1);
    // Rows of segments far apart (a slice, a block): prefetch the rows
    // ahead, not the channels past the segment (another task's or block's).
    const bool in_row = !wb.blocked && k1 - k0 == p.K;
    const int64_t ahead = 2;
    for (int64_t b0 = k0; b0 < wb.kv; b0 += wb.block) {
        const int64_t b1 = std::min(wb.kv, b0 + wb.block);
        int64_t a = a0;
        // Without diff_src to write, rows_at_once rows a vector of sums at a time.
        for (; !global && a + rows_at_once <= a1; a += rows_at_once) {
            if (p.row_prefetch && in_row) sum_rows_at_once<true>(st, dc, rd, mean, a, b0, b1, s1, s2);
            else sum_rows_at_once<false>(st, dc, rd, mean, a, b0, b1, s1, s2);
        }
        for (; a < a1; ++a) {
            const int64_t s0 = a * st.src, d0 = a * st.dd, x0 = a * st.relu;
            T *row_out = global ? out + (a - a0) * out_stride : nullptr;
            for (int64_t k = b0; k < b1; k += lanes) {
                if (in_row) rd.prefetch(d0 + k, s0 + k, x0 + k, rows_prefetch_bytes);
                else rd.prefetch(d0 + k + ahead * st.dd, s0 + k + ahead * st.src, x0 + k + ahead * st.relu, 0);
                lanes16 g, x, v1 = lanes16(_mm512_loadu_ps(s1 + k)), v2 = lanes16(_mm512_loadu_ps(s2 + k));
                load_lanes<T, F>(dc, d0 + k, s0 + k, x0 + k, g, x);
                kernels::bn_accumulate(v1, v2, g, x, lanes16(_mm512_loadu_ps(mean + k)));
                _mm512_storeu_ps(s1 + k, __m512(v1));
                _mm512_storeu_ps(s2 + k, __m512(v2));
                if (global) {
                    lanes16 r;
                    kernels::bn_global_diff_src(r, lanes16(_mm512_loadu_ps(global_a + k)), g);
                    vo.put(row_out + k, r);
                }
            }
            if (!in_row) vo.flush();
        }
    }
    for (int64_t a = a0; a < a1 && wb.kv < k1; ++a) {
        const int64_t s0 = a * p.src.a, d0 = a * p.dd.a, x0 = a * p.relu_in.a;
        for (int64_t k = wb.kv; k < k1; ++k) {
            const float g = rd.dd(d0 + k, x0 + k);
            kernels::bn_accumulate(s1[k], s2[k], g, rd.src(s0 + k, x0 + k), mean[k]);
            if (global) {
                float ds;
                kernels::bn_global_diff_src(ds, global->a[size_t(k)], g);
                out[(a - a0) * out_stride + k] = from_f32<T>(ds);
            }
        }
    }
    vo.finish();
}

// Pass 2 of update_rows_wide_avx512: diff_src of channels [k, k + 16) of row
// a. Everything it reads is copied into the functor: the streamed stores go
// through vector types that may alias anything, so fields read through
// references would be loaded again for every vector. (A functor: a lambda
// cannot carry the target attribute.)
template <typename T, bn_fusion F, bool Global> struct any_k_diff_src {
    data d;
    row_strides st;
    const float *ak, *c2, *m, *c0;
    any_k_diff_src(const bn_plan &p, const data &d, const coeffs &cf)
        : d(d), st(p), ak(cf.a.data()), c2(cf.c2.data()), m(cf.mean.data()), c0(cf.c0.data()) {}
    __attribute__((target("avx512f"), always_inline)) void operator()(int64_t a, int64_t k, lanes16 &r) const {
        diff_src_lanes<T, F>(d, Global, a * st.dd + k, a * st.src + k, a * st.relu + k, lanes16(_mm512_loadu_ps(ak + k)),
                lanes16(_mm512_loadu_ps(c2 + k)), lanes16(_mm512_loadu_ps(m + k)), lanes16(_mm512_loadu_ps(c0 + k)), r);
    }
};

// Rows ahead that pass 2's blocks prefetch.
constexpr int64_t update_ahead = 2;

// Pass 2 on channels [k0, k1) of rows [a0, a1): diff_src of row a into out +
// (a - a0) * out_stride (`stream`, HwBf16: see vector_out); a slab of the
// channels (k1 - k0 < K) row segment by row segment.
template <typename T, bn_fusion F, bool HwBf16, bool Global>
__attribute__((target("avx512f"))) void update_rows_wide_avx512(const bn_plan &p, const data &d, const coeffs &cf,
        int64_t a0, int64_t a1, int64_t k0, int64_t k1, T *out, int64_t out_stride, bool stream) {
    const any_k_diff_src<T, F, Global> block {p, d, cf};
    const wide_blocks wb(p.update, p.channel_block, k0, k1);
    const bool segments = wb.blocked || k1 - k0 < p.K;
    const reader<T, F> rd(d);
    vector_out<T, HwBf16> vo {stream};
    // (Rows the same distance apart in every tensor read.)
    const row_strides &st = block.st;
    const bool same_rows = st.src == st.dd && (F == bn_fusion::none || st.relu == st.dd);
    const int64_t ahead_bytes = !Global && segments && same_rows ? update_ahead * st.dd * int64_t(sizeof(T)) : 0;
    for (int64_t b0 = k0; b0 < wb.kv; b0 += wb.block) {
        const int64_t b1 = std::min(wb.kv, b0 + wb.block);
        for (int64_t a = a0; a < a1; ++a) {
            T *row_out = out + (a - a0) * out_stride;
            for (int64_t k = b0; k < b1; k += lanes) {
                // A block's row segments (a few KB, a row apart) are too short
                // for the hardware prefetchers: each line of row a + ahead.
                if (ahead_bytes && (sizeof(T) == 4 || k % (2 * lanes) == 0))
                    rd.prefetch(a * st.dd + k, a * st.src + k, a * st.relu + k, ahead_bytes);
                lanes16 r;
                block(a, k, r);
                vo.put(row_out + k, r);
            }
            if (segments) vo.flush();
        }
    }
    for (int64_t a = a0; a < a1 && wb.kv < k1; ++a) {
        const int64_t s0 = a * st.src, d0 = a * st.dd, x0 = a * st.relu;
        T *row_out = out + (a - a0) * out_stride;
        for (int64_t k = wb.kv; k < k1; ++k)
            row_out[k] = from_f32<T>(
                    diff_src_one(rd, Global, d0 + k, s0 + k, x0 + k, block.ak[k], block.c2[k], block.m[k], block.c0[k]));
    }
    vo.finish();
}

// update_rows_wide_avx512 with use_global_stats' formula or not (a choice
// made once, outside the loops).
template <typename T, bn_fusion F, bool HwBf16>
BPG_ALWAYS_INLINE void update_rows_wide(const bn_plan &p, const data &d, const coeffs &cf, int64_t a0, int64_t a1,
        int64_t k0, int64_t k1, T *out, int64_t out_stride, bool stream) {
    if (p.global_stats) update_rows_wide_avx512<T, F, HwBf16, true>(p, d, cf, a0, a1, k0, k1, out, out_stride, stream);
    else update_rows_wide_avx512<T, F, HwBf16, false>(p, d, cf, a0, a1, k0, k1, out, out_stride, stream);
}

// Pass 1, vector: items [c0, c1), each a chunk of rows of K contiguous
// channels, or a slice of their channels (wide and generic loops only; the
// plan slices no other). global: as in sums_planar.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void sums_channels_last(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t c0, int64_t c1,
        const coeffs *global = nullptr) {
    if constexpr (std::is_same_v<T, float> && F != bn_fusion::none)
        if (p.sums == bn_loops::relu_mask_avx512) {
            const auto work = d.work->borrow();
            float *s1 = work->sums, *s2 = s1 + lanes * relu_mask_words(p.K);
            for (int64_t c = c0; c < c1; ++c) {
                relu_mask_sums(d.mask_rows, mean, c * channels_last_chunk, std::min(p.A, (c + 1) * channels_last_chunk), d.relu_mask,
                        s1, s2);
                for (int64_t k = 0; k < p.K; ++k) {
                    partial[2 * (c * p.K + k)] = s1[k];
                    partial[2 * (c * p.K + k) + 1] = s2[k];
                }
            }
            return;
        }
    if (p.sums == bn_loops::narrow || p.sums == bn_loops::narrow_avx512) {
        narrow_sums(p, d, mean, partial, c0, c1, global);
        return;
    }
    if (!global && (p.sums == bn_loops::register_blocks || p.sums == bn_loops::register_blocks_avx512)) {
        with_blocks(p.K, [&](auto nb) BPG_LAMBDA_INLINE {
            if constexpr (!std::is_same_v<T, float>)
                if (p.sums == bn_loops::register_blocks_avx512)
                    return sums_channels_last_blocked_avx512<T, F, nb.value>(p, d, mean, partial, c0, c1);
            for (int64_t c = c0; c < c1; ++c) sums_channels_last_blocked<T, F, nb.value>(p, d, mean, partial, c);
        });
        return;
    }
    const reader<T, F> rd(d);
    const auto work = d.work->borrow();
    float *s1 = work->sums, *s2 = s1 + p.K;
    const bool wide = p.sums == bn_loops::wide_avx512 || p.sums == bn_loops::wide_blocks_avx512;
    for (int64_t i = c0; i < c1; ++i) {
        const auto [c, k0, k1] = slice_of(p, i);
        // (Chunks of diff_src not 64-byte aligned take the loops below.)
        if (global && p.sums == bn_loops::register_blocks_avx512
                && streams_to(static_cast<T *>(d.ds) + c * channels_last_chunk * p.K)) {
            global_sums_streamed<T, F>(p, d, mean, *global, partial, c);
            continue;
        }
        std::fill(s1 + k0, s1 + k1, 0.f);
        std::fill(s2 + k0, s2 + k1, 0.f);
        const int64_t a0 = c * channels_last_chunk, a1 = std::min(p.A, (c + 1) * channels_last_chunk);
        // Global stats write diff_src rows here: whole rows staged as one run
        // when they follow each other in memory, or with the AVX-512 loads,
        // rows of whole vectors from a 64-byte-aligned start streamed from
        // the registers; a slice's row segments streamed, each from its own
        // 64-byte-aligned start.
        T *first = static_cast<T *>(d.ds) + a0 * p.ds.a;
        const bool whole = k1 - k0 == p.K;
        const bool run_rows = global && d.nontemporal && p.ds.a == p.K && whole;
        const bool stream = wide && global && d.nontemporal
                && (whole ? run_rows && p.K % lanes == 0 : p.ds.a * int64_t(sizeof(T)) % 64 == 0)
                && streams_to(first + k0);
        const out_run<T> rows(first, (a1 - a0) * p.K, run_rows && !stream);
        if (wide)
            sums_channels_last_wide_avx512<T, F>(
                    p, d, mean, a0, a1, k0, k1, s1, s2, global, rows.out, run_rows ? p.K : p.ds.a, stream);
        else
            for (int64_t a = a0; a < a1; ++a) {
                const int64_t s0 = a * p.src.a, d0 = a * p.dd.a, x0 = a * p.relu_in.a;
                accumulate_channels(rd, d0, s0, x0, k0, k1, s1, s2, mean);
                if (global)
                    global_diff_src_run(rd, d0, x0, rows.out + (a - a0) * (run_rows ? p.K : p.ds.a), k0, k1,
                            global->a.data());
            }
        rows.finish();
        for (int64_t k = k0; k < k1; ++k) {
            partial[2 * (c * p.K + k)] = s1[k];
            partial[2 * (c * p.K + k) + 1] = s2[k];
        }
    }
}

// Pass 2 on rows [r0, r1).
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void update(const bn_plan &p, const data &d, const coeffs &cf, int64_t r0, int64_t r1) {
    const reader<T, F> rd(d);
    const bool global = p.global_stats;
    if (p.update == bn_loops::narrow_avx512) return narrow_update(p, d, cf, r0, r1);
    const float *ak = cf.a.data(), *c2 = cf.c2.data(), *c0 = cf.c0.data(), *m = cf.mean.data();
    // Rows that follow each other in memory are written as one staged run
    // (of at most ~64 KB) when non-temporal; rows of whole vectors from a
    // 64-byte-aligned start are streamed straight from the registers instead
    // (bench/NOTES.md).
    T *first = static_cast<T *>(d.ds) + r0 * p.K;
    const bool streams = d.nontemporal && p.ds.a == p.K && p.K % lanes == 0 && streams_to(first);
    const bool relu_mask = p.update == bn_loops::relu_mask_avx512;
    if constexpr (std::is_same_v<T, float>)
        if (streams && relu_mask)
            return relu_mask_update(d.mask_rows, d.relu_mask, ak, c2, c0, m, r0, r1, first, r0, true);
    const bool hw_bf16 = rounds_bf16_by_hardware(p.update);
    if (streams && (p.update == bn_loops::register_blocks_avx512 || p.update == bn_loops::register_blocks_bf16_avx512))
        return update_streamed<T, F>(p, d, cf, r0, r1);
    if (streams
            && (p.update == bn_loops::wide_avx512 || p.update == bn_loops::wide_blocks_avx512
                    || p.update == bn_loops::wide_bf16_avx512 || p.update == bn_loops::wide_blocks_bf16_avx512))
        return with_bf16_rounding<T>(p, [&](auto hw) BPG_LAMBDA_INLINE {
            update_rows_wide<T, F, hw.value>(p, d, cf, r0, r1, 0, p.K, first, p.K, true);
        });
    // Not streamed (diff_src not 64-byte aligned): the register blocks'
    // 16-bit rows take the wide loops, as cached ones do.
    const bool blocked = p.update == bn_loops::register_blocks
            || (p.update == bn_loops::register_blocks_avx512 && std::is_same_v<T, float>);
    const bool wide = p.update == bn_loops::wide_avx512 || p.update == bn_loops::wide_blocks_avx512
            || (p.update == bn_loops::register_blocks_avx512 && !blocked) || hw_bf16;
    const bool run_rows = d.nontemporal && p.ds.a == p.K;
    const int64_t group = run_rows ? std::max<int64_t>(1, 16384 / std::max<int64_t>(p.K, 1)) : 1;
    for (int64_t g0 = r0; g0 < r1; g0 += group) {
        const int64_t g1 = std::min(r1, g0 + group);
        const out_run<T> rows(static_cast<T *>(d.ds) + g0 * p.ds.a, (g1 - g0) * p.K, run_rows);
        auto out_row = [&](int64_t a) { return run_rows ? rows.out + (a - g0) * p.K : static_cast<T *>(d.ds) + a * p.ds.a; };
        bool done = false;
        if constexpr (std::is_same_v<T, float> && F != bn_fusion::none)
            if (relu_mask) {
                relu_mask_update(d.mask_rows, d.relu_mask, ak, c2, c0, m, g0, g1, out_row(g0), g0);
                done = true;
            }
        if (done) {
        } else if (blocked) {
            // Coefficients in registers for the whole group.
            with_blocks(p.K, [&](auto nb) BPG_LAMBDA_INLINE {
                update_rows_blocked<T, F, nb.value>(p, rd, cf, g0, g1, out_row);
            });
        } else if (wide) {
            // (16-bit register blocks too: update_rows_blocked converts lane by lane.)
            with_bf16_rounding<T>(p, [&](auto hw) BPG_LAMBDA_INLINE {
                update_rows_wide<T, F, hw.value>(p, d, cf, g0, g1, 0, p.K, out_row(g0), run_rows ? p.K : p.ds.a, false);
            });
        } else {
            with_global(global, [&](auto global_stats) BPG_LAMBDA_INLINE {
                for (int64_t a = g0; a < g1; ++a)
                    diff_src_run<global_stats.value>(
                            rd, a * p.dd.a, a * p.src.a, a * p.relu_in.a, out_row(a), 0, p.K, ak, c2, m, c0);
            });
        }
        rows.finish();
    }
}

template <typename T>
BPG_ALWAYS_INLINE void channels_last_sums_of(const bn_plan &p, const data &d, const float *mean, double *partial,
        int64_t c0, int64_t c1, const coeffs *global) {
    with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE { sums_channels_last<T, f.value>(p, d, mean, partial, c0, c1, global); });
}

template <typename T>
BPG_ALWAYS_INLINE void channels_last_update_of(const bn_plan &p, const data &d, const coeffs &cf, int64_t a0,
        int64_t a1) {
    with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE { update<T, f.value>(p, d, cf, a0, a1); });
}

// Pass 2 on a slab of the wide loops' channels, every row: its row segments
// streamed from the registers where each starts on a 64-byte line; on the
// generic loops', from each segment's first 16-byte boundary (stream8).
template <typename T>
BPG_ALWAYS_INLINE void channels_last_update_slab_of(const bn_plan &p, const data &d, const coeffs &cf, int64_t k0,
        int64_t k1) {
    T *out = static_cast<T *>(d.ds);
    if (p.update == bn_loops::channels_last) {
        with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE {
            const reader<T, f.value> rd(d);
            with_stream(d.nontemporal, [&](auto stream) BPG_LAMBDA_INLINE {
                for (int64_t a = 0; a < p.A; ++a)
                    diff_src_run<false, stream.value>(rd, a * p.dd.a, a * p.src.a, a * p.relu_in.a, out + a * p.ds.a,
                            k0, k1, cf.a.data(), cf.c2.data(), cf.mean.data(), cf.c0.data());
            });
            end_of_streamed_rows(d);
        });
        return;
    }
    const bool stream = d.nontemporal && p.ds.a * int64_t(sizeof(T)) % 64 == 0 && streams_to(out + k0);
    with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE {
        with_bf16_rounding<T>(p, [&](auto hw) BPG_LAMBDA_INLINE {
            update_rows_wide<T, f.value, hw.value>(p, d, cf, 0, p.A, k0, k1, out, p.ds.a, stream);
        });
    });
}

} // namespace

BPG_BN_ENTRY(channels_last_sums,
        (const bn_plan &p, const data &d, const float *mean, double *partial, int64_t c0, int64_t c1,
                const coeffs *global),
        (p, d, mean, partial, c0, c1, global), channels_last_sums_of)
BPG_BN_ENTRY(channels_last_update, (const bn_plan &p, const data &d, const coeffs &cf, int64_t a0, int64_t a1),
        (p, d, cf, a0, a1), channels_last_update_of)
BPG_BN_ENTRY(channels_last_update_slab, (const bn_plan &p, const data &d, const coeffs &cf, int64_t k0, int64_t k1),
        (p, d, cf, k0, k1), channels_last_update_slab_of)

} // namespace bpg::tbb_backend::bn
