// BN kernels on planar (NCX) rows: each row (a, k) is B contiguous elements,
// summed in chunks of planar_chunk (see bn_kernels.hpp).
#include <algorithm>

#include "backends/tbb/bn_kernels.hpp"
#include "backends/tbb/bn_planar_row.hpp"

namespace bpg::tbb_backend::bn {

namespace {

// use_global_stats with its sums, planar row r = (k, a) with AVX-512: the sums
// of sums_planar, chunk by chunk in the same order, and diff_src = a *
// diff_dst into `out` (see vector_out): with `stream` (diff_src of the row,
// 64-byte aligned) straight from the registers instead of through a staged
// run (faster on NCX, see bench/NOTES.md), else with ordinary stores (GCC's
// 16-bit per-lane code is far slower on small NCX f16 problems).
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
    each.vo.flush(); // (sums_planar fences after its last row)
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
        if (global && p.sums == bn_loops::planar_avx512) {
            T *dst = static_cast<T *>(d.ds) + at(p.ds, a, k, 0);
            const bool stream = d.nontemporal && streams_to(dst);
            const out_run<T> o(dst, p.B, d.nontemporal && !stream);
            global_sums_row_avx512<T, F>(p, d, mean, *global, partial, r, o.out, stream);
            o.finish();
            if (r + 1 == r1) end_of_streamed_rows(d);
            continue;
        }
        if constexpr (!std::is_same_v<T, float>)
            if (!global && p.sums == bn_loops::planar_avx512) {
                row_sums_avx512<T, F>(p, d, mean, partial, r);
                continue;
            }
        const int64_t s0 = at(p.src, a, k, 0), d0 = at(p.dd, a, k, 0), x0 = at(p.relu_in, a, k, 0);
        for (int64_t c = 0; c < nch; ++c) {
            const int64_t b0 = c * planar_chunk, b1 = std::min(p.B, b0 + planar_chunk);
            float s1[lanes], s2[lanes];
            chunk_lanes(rd, d0, s0, x0, b0, b1, mean[k], p.avx512, s1, s2);
            chunk_sums::pair_of(s1, s2, partial + 2 * (r * nch + c));
            if (global) {
                const out_run<T> o(static_cast<T *>(d.ds) + at(p.ds, a, k, b0), b1 - b0, d.nontemporal);
                global_diff_src_run(rd, d0 + b0, x0 + b0, o.out, 0, b1 - b0, global->a[size_t(k)]);
                o.finish();
            }
        }
    }
}

// NCX f32 with a fused ReLU, both passes of channel k in one task (see
// run_bn_plan): pass 1 keeps the ReLU's decisions for the whole vectors of
// the channel's rows (row a's vector v at bit word a * (B / 16) + v), and
// pass 2 reads them instead of the relu input, so it reads two of the three
// tensors back from the cache instead of three (bench/NOTES.md).
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

template <typename T>
BPG_ALWAYS_INLINE void planar_sums_of(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t r0,
        int64_t r1, const coeffs *global) {
    with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE { sums_planar<T, f.value>(p, d, mean, partial, r0, r1, global); });
}

template <typename T>
BPG_ALWAYS_INLINE void planar_update_of(const bn_plan &p, const data &d, const coeffs &cf, int64_t r0, int64_t r1) {
    with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE {
        for (int64_t r = r0; r < r1; ++r) update_row<T, f.value>(p, d, cf, r / p.K, r % p.K);
    });
    end_of_streamed_rows(d);
}

template <typename T>
BPG_ALWAYS_INLINE void planar_update_channel_of(const bn_plan &p, const data &d, const coeffs &cf, int64_t k) {
    // Last row first: pass 1 read the channel's rows in order, so the last
    // ones are the likeliest still in the cache.
    with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE {
        for (int64_t a = p.A - 1; a >= 0; --a) update_row<T, f.value>(p, d, cf, a, k);
    });
    end_of_streamed_rows(d);
}

} // namespace

BPG_BN_ENTRY(planar_sums,
        (const bn_plan &p, const data &d, const float *mean, double *partial, int64_t r0, int64_t r1,
                const coeffs *global),
        (p, d, mean, partial, r0, r1, global), planar_sums_of)
BPG_BN_ENTRY(planar_update, (const bn_plan &p, const data &d, const coeffs &cf, int64_t r0, int64_t r1),
        (p, d, cf, r0, r1), planar_update_of)
BPG_BN_ENTRY(planar_update_channel, (const bn_plan &p, const data &d, const coeffs &cf, int64_t k), (p, d, cf, k),
        planar_update_channel_of)

namespace {

// Pass 2 of channel k with the decisions kept by relu_passed_sums_channel
// (last row first, as planar_update_channel); rows that cannot stream go the
// generic way.
template <bn_fusion F>
void relu_passed_update_channel(const bn_plan &p, const data &d, const coeffs &cf, int64_t k, const uint16_t *passed) {
    for (int64_t a = p.A - 1; a >= 0; --a) {
        if (d.nontemporal && streams_to(static_cast<float *>(d.ds) + at(p.ds, a, k, 0)))
            update_row_avx512<float, F>(p, d, cf, a, k, static_cast<float *>(d.ds) + at(p.ds, a, k, 0), true,
                    passed + a * (p.B / lanes));
        else
            planar_update(p, d, cf, a * p.K + k, a * p.K + k + 1);
    }
    end_of_streamed_rows(d);
}

} // namespace

void relu_passed_sums(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t k, uint16_t *passed) {
    if (p.fusion == bn_fusion::relu_into_dd) relu_passed_sums_channel<bn_fusion::relu_into_dd>(p, d, mean, partial, k, passed);
    else relu_passed_sums_channel<bn_fusion::relu_into_src>(p, d, mean, partial, k, passed);
}

void relu_passed_update(const bn_plan &p, const data &d, const coeffs &cf, int64_t k, const uint16_t *passed) {
    if (p.fusion == bn_fusion::relu_into_dd) relu_passed_update_channel<bn_fusion::relu_into_dd>(p, d, cf, k, passed);
    else relu_passed_update_channel<bn_fusion::relu_into_src>(p, d, cf, k, passed);
}

} // namespace bpg::tbb_backend::bn
