// BN kernels on short planar rows (under 1 KB, e.g. 7x7 and 14x14) taken in
// groups of channels, so that row a of a group is one run in memory.
#include <algorithm>

#include "backends/tbb/bn_kernels.hpp"
#include "backends/tbb/bn_planar_row.hpp"

namespace bpg::tbb_backend::bn {

namespace {

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

// Pass 1 on a group's row a reads its row a + short_rows_ahead into L2: the
// runs (3-5 KB, each ~100 KB past the last) are too short for the hardware
// prefetchers to catch on (bench/NOTES.md; pass 2 reads from the caches and
// gains nothing).
constexpr int64_t short_rows_ahead = 2;

// Pass 1 on planar rows (a, k), k in [k0, k1), each row one chunk (B <=
// planar_chunk): each row's lanes as chunk_sums leaves them, then their
// pairs 8 rows at a time (same bits as sums_planar).
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void short_rows_sums_avx512(const bn_plan &p, const data &d, const float *mean,
        double *partial, int64_t a, int64_t k0, int64_t k1) {
    const reader<T, F> rd(d);
    const int64_t ahead = a + short_rows_ahead, channels = k1 - k0;
    const int64_t dd_ahead = at(p.dd, ahead, k0, 0), src_ahead = at(p.src, ahead, k0, 0),
                  relu_ahead = at(p.relu_in, ahead, k0, 0);
    // (+1: a run off a line boundary spans one more.)
    const int64_t lines_ahead = ahead < p.A ? (channels * p.B * int64_t(sizeof(T)) + 63) / 64 + 1 : 0;
    alignas(64) float s1[16][lanes], s2[16][lanes];
    for (int64_t j0 = k0; j0 < k1; j0 += 16) {
        const int n = int(std::min<int64_t>(16, k1 - j0));
        if (n % 8) { // rows n.. of the last 8 are added too (and dropped): defined values
            __builtin_memset(s1[n], 0, sizeof(float) * lanes * size_t(8 - n % 8));
            __builtin_memset(s2[n], 0, sizeof(float) * lanes * size_t(8 - n % 8));
        }
        for (int i = 0; i < n; ++i) {
            const int64_t k = j0 + i;
            // Channel k's share of the lines ahead.
            for (int64_t l = lines_ahead * (k - k0) / channels; l < lines_ahead * (k - k0 + 1) / channels; ++l)
                rd.prefetch(dd_ahead, src_ahead, relu_ahead, 64 * l);
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

// Pass 2 on rows (a, k), k in [k0, k1) (16 at most), whose rows follow one
// another in every tensor (see channels_per_task), into diff_src: the run of
// (k1 - k0) * B elements as one array of whole vectors, each lane's channel
// constants picked by vpermps from the group's 16 (lane channel (e + 0.5) / B
// in f32, exact for these sizes), the same arithmetic per element as
// update_row_avx512 (same bits): row by row, the calls and each row's tail
// cost more than the rows. With `stream`, the vectors from the run's first
// line boundary on leave with non-temporal stores and no fence: the caller
// fences once after all its runs (a fence per staged run held up the stores
// that followed it).
template <typename T, bn_fusion F>
__attribute__((target("avx512f"))) void short_rows_update_avx512(const bn_plan &p, const data &d, const coeffs &cf,
        int64_t a, int64_t k0, int64_t k1, bool stream) {
    const reader<T, F> rd(d);
    const int64_t n = (k1 - k0) * p.B, s0 = at(p.src, a, k0, 0), d0 = at(p.dd, a, k0, 0), x0 = at(p.relu_in, a, k0, 0);
    T *out = static_cast<T *>(d.ds) + at(p.ds, a, k0, 0);
    alignas(64) float table[4][lanes] = {};
    for (int64_t k = k0; k < k1; ++k) {
        const size_t i = size_t(k - k0), c = size_t(k);
        table[0][i] = cf.a[c], table[1][i] = cf.c2[c], table[2][i] = cf.mean[c], table[3][i] = cf.c0[c];
    }
    const auto one = [&](int64_t b) {
        const size_t i = size_t(b / p.B);
        out[b] = from_f32<T>(diff_src_one(rd, p.global_stats, d0 + b, s0 + b, x0 + b, table[0][i], table[1][i],
                table[2][i], table[3][i]));
    };
    int64_t b = 0;
    if (stream)
        for (; b < n && !streams_to(out + b); ++b) one(b);
    const __m512 ak = _mm512_load_ps(table[0]), c2 = _mm512_load_ps(table[1]), m = _mm512_load_ps(table[2]),
                 c0 = _mm512_load_ps(table[3]);
    const __m512 inv_b = _mm512_set1_ps(1.f / float(p.B));
    __m512 e = _mm512_add_ps(_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            _mm512_set1_ps(float(b) + 0.5f));
    vector_out<T> vo {stream};
    for (; b + lanes <= n; b += lanes, e = _mm512_add_ps(e, _mm512_set1_ps(float(lanes)))) {
        const __m512i ch = _mm512_maskz_cvttps_epi32(0xffff, _mm512_mul_ps(e, inv_b));
        lanes16 r;
        diff_src_lanes<T, F>(d, p.global_stats, d0 + b, s0 + b, x0 + b, lanes16(_mm512_maskz_permutexvar_ps(0xffff, ch, ak)),
                lanes16(_mm512_maskz_permutexvar_ps(0xffff, ch, c2)), lanes16(_mm512_maskz_permutexvar_ps(0xffff, ch, m)),
                lanes16(_mm512_maskz_permutexvar_ps(0xffff, ch, c0)), r);
        vo.put(out + b, r);
    }
    vo.flush();
    for (; b < n; ++b) one(b);
}

// Pass 2 on the planar rows (a, k) of channels [k0, k1), which follow one
// another in diff_src (ds.k == B); with AVX-512 as one run (above), else row
// by row into one staged output run.
template <typename T, bn_fusion F>
BPG_ALWAYS_INLINE void update_rows_of_channels(const bn_plan &p, const data &d, const coeffs &cf, int64_t a, int64_t k0,
        int64_t k1) {
    if (p.update == bn_loops::short_rows_avx512) return short_rows_update_avx512<T, F>(p, d, cf, a, k0, k1, d.nontemporal);
    const out_run<T> o(static_cast<T *>(d.ds) + at(p.ds, a, k0, 0), (k1 - k0) * p.B, d.nontemporal);
    for (int64_t k = k0; k < k1; ++k) update_row_into<T, F>(p, d, cf, a, k, o.out + (k - k0) * p.B);
    o.finish();
}

template <typename T>
BPG_ALWAYS_INLINE void short_rows_sums_of(const bn_plan &p, const data &d, const float *mean, double *partial,
        int64_t k0, int64_t k1) {
    if (p.sums == bn_loops::short_rows_avx512)
        return with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE {
            for (int64_t a = 0; a < p.A; ++a) short_rows_sums_avx512<T, f.value>(p, d, mean, partial, a, k0, k1);
        });
    for (int64_t a = 0; a < p.A; ++a)
        for (int64_t k = k0; k < k1; ++k) planar_sums(p, d, mean, partial, k * p.A + a, k * p.A + a + 1);
}

// Last rows first: pass 1 read them last, so they are the likeliest still in
// the cache (as planar_update_channel).
template <typename T>
BPG_ALWAYS_INLINE void short_rows_update_of(const bn_plan &p, const data &d, const coeffs &cf, int64_t k0, int64_t k1) {
    with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE {
        for (int64_t a = p.A - 1; a >= 0; --a) update_rows_of_channels<T, f.value>(p, d, cf, a, k0, k1);
    });
    end_of_streamed_rows(d);
}

} // namespace

BPG_BN_ENTRY(short_rows_sums,
        (const bn_plan &p, const data &d, const float *mean, double *partial, int64_t k0, int64_t k1),
        (p, d, mean, partial, k0, k1), short_rows_sums_of)
BPG_BN_ENTRY(short_rows_update, (const bn_plan &p, const data &d, const coeffs &cf, int64_t k0, int64_t k1),
        (p, d, cf, k0, k1), short_rows_update_of)

// Channels per task of NCX training (both passes of a task's channels in
// it). Rows under 1 KB go in groups whose rows (a, k0..k1) are one run in
// memory: one channel's rows alone (7x7: 196 bytes, 100 KB apart) left the
// hardware prefetchers behind (16 channels, runs of ~4 KB, was best:
// bench/NOTES.md). 28x28 f32 (3 KB rows, whole lines that
// stream from the registers) gained nothing in groups of 2. At most 16, a
// group's rows of one tensor within ~1 MB, so pass 2 still finds them in the
// cache, and at least 16 groups to share out.
int64_t channels_per_task(const bn_plan &p) {
    const int64_t row_bytes = p.B * int64_t(size_of(p.dt)), channel_bytes = p.A * row_bytes;
    // (Of the tensors read: a fused ReLU stands for the BN input it feeds.)
    const bool runs = (p.fusion == bn_fusion::relu_into_src || p.src.k == p.B)
            && (p.fusion == bn_fusion::relu_into_dd || p.dd.k == p.B) && p.ds.k == p.B
            && (p.fusion == bn_fusion::none || (p.relu_in.k == p.B && p.relu_dd.k == p.B));
    if (!runs || row_bytes >= 1024) return 1;
    int64_t group = std::min<int64_t>(16, (4096 + row_bytes - 1) / row_bytes);
    group = std::min(group, std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(channel_bytes, 1)));
    return std::max<int64_t>(1, std::min(group, p.K / 16));
}

} // namespace bpg::tbb_backend::bn
