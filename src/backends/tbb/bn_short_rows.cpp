// BN kernels on short planar rows (under 1 KB, e.g. 7x7 and 14x14) taken in
// groups of channels, so that row a of a group is one run in memory.
#include <algorithm>
#include <type_traits>

#include "backends/tbb/bn_kernels.hpp"
#include "backends/tbb/bn_planar_row.hpp"
#include "backends/tbb/bn_row_diagonal.hpp"
#include "backends/tbb/transpose16.hpp"

namespace bpg::tbb_backend::bn {

namespace {

#define BPG_AVX512 __attribute__((target("avx512f"), always_inline)) inline

// Pass 1 on a group's row a reads its row a + short_rows_ahead into L2: the
// runs (3-5 KB, each ~100 KB past the last) are too short for the hardware
// prefetchers to catch on (bench/NOTES.md; pass 2 reads from the caches and
// gains nothing).
constexpr int64_t short_rows_ahead = 2;

// Adds the last B % 16 elements of a row of B >= 16 into lanes 0, 1, ...
// of cs, as chunk_sums::lanes_with_tail does one by one (the same operations
// on each lane, so the same bits): the row's last 16 elements in one load,
// moved down to lanes 0.. by `down`, and only the lanes of `tail` updated.
template <typename T, bn_fusion F>
BPG_AVX512 void add_tail_lanes(const data &d, int64_t d_end, int64_t s_end, int64_t x_end, __m512i down,
        __mmask16 tail, chunk_sums &cs) {
    lanes16 g, x;
    load_lanes<T, F>(d, d_end - lanes, s_end - lanes, x_end - lanes, g, x);
    g = lanes16(_mm512_maskz_permutexvar_ps(0xffff, down, __m512(g)));
    x = lanes16(_mm512_maskz_permutexvar_ps(0xffff, down, __m512(x)));
    lanes16 v1 = cs.v1, v2 = cs.v2;
    kernels::bn_accumulate(v1, v2, g, x, cs.mv);
    cs.v1 = lanes16(_mm512_mask_mov_ps(__m512(cs.v1), tail, __m512(v1)));
    cs.v2 = lanes16(_mm512_mask_mov_ps(__m512(cs.v2), tail, __m512(v2)));
}
#undef BPG_AVX512

// Rows whose last B % 16 elements (at most this many) pass 1 adds as
// columns (in_order_sums_16): one masked load or widening a row and tensor
// instead of add_tail_lanes' two loads, two permutes and masked adds a row.
constexpr int column_tail_max = 4;

// f32 lanes 0-7 (half 0) or 8-15 (half 1) of v as f64.
template <int Half> __attribute__((target("avx512f"), always_inline)) inline __m512d f64_half(__m512 v) {
    return _mm512_maskz_cvtps_pd(0xff, _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, _mm512_castps_pd(v), Half)));
}

constexpr int half_column_at(int h, int l) { return 8 * h + 4 * (l / 8) + l % 4; }

// Rows r[0..16) into columns, 8 rows a half: lane l of rows 8h..8h+7 in half
// (l / 4) % 2 of r[half_column_at(h, l)]. transpose16's first two stages
// (transpose16_quads: pairs, then blocks of 4 rows), then one two-source
// permute a vector puts 8 rows of a lane side by side: a stage fewer than
// whole 16-row columns, whose upper halves the f64 sums would extract anyway.
// Pure moves: the values unchanged.
__attribute__((target("avx512f"), always_inline)) inline void rows_to_half_columns(__m512 r[16]) {
    float16v u[16];
    transpose16_quads(r, u);
    // Blocks 2p and 2p + 1 of rows 8h..8h+3 and of rows 8h+4..8h+7.
    const __m512i pick[2] = {_mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23),
            _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31)};
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
#pragma GCC unroll 2
        for (int p = 0; p < 2; ++p)
#pragma GCC unroll 4
            for (int m = 0; m < 4; ++m)
                r[8 * h + 4 * p + m] = _mm512_maskz_permutex2var_ps(0xffff, __m512(u[8 * h + m]), pick[p],
                        __m512(u[8 * h + 4 + m]));
}

// chunk_sums::pair_of for up to 16 chunks at once (chunk i's lanes s[i]),
// one chunk per f64 lane: the same additions in the same order, so the same
// bits. The rows transposed in registers: reading the columns with gathers
// took about a third of pass 1 on 7x7 rows. Columns: the chunks' last
// tail_n elements first added to their lanes 0.. as columns (tail[j]: each
// row's element j past its whole vectors), as chunk_sums::lanes_with_tail
// does lane by lane (the same operations, so the same bits); `second`: the
// sums are the second of the pair.
template <bool Columns, typename T, bn_fusion F>
__attribute__((target("avx512f"), always_inline)) inline void in_order_sums_16(const float (*s)[lanes], int n,
        const rows_element<T, F> *tail, int tail_n, const float *mean, bool second, double *t) {
    __m512 r[16];
    for (int i = 0; i < 16; ++i) r[i] = i < n ? _mm512_load_ps(s[i]) : _mm512_setzero_ps();
    rows_to_half_columns(r);
    if constexpr (Columns) {
        const lanes16 m = lanes16(_mm512_maskz_loadu_ps(__mmask16((1u << n) - 1), mean));
#pragma GCC unroll 4
        for (int j = 0; j < column_tail_max; ++j) {
            if (j == tail_n) break;
            __m512 &r0 = r[half_column_at(0, j)], &r1 = r[half_column_at(1, j)]; // (lower halves)
            lanes16 g, x, v1 = lanes16(_mm512_castpd_ps(_mm512_maskz_shuffle_f64x2(0xff, _mm512_castps_pd(r0),
                                           _mm512_castps_pd(r1), 0x44))),
                          v2 = v1;
            tail[j].values(g, x);
            kernels::bn_accumulate(v1, v2, g, x, m);
            const __m512d c = _mm512_castps_pd(__m512(second ? v2 : v1));
            r0 = _mm512_mask_mov_ps(r0, 0x00ff, _mm512_castpd_ps(c));
            r1 = _mm512_mask_mov_ps(r1, 0x00ff, _mm512_castpd_ps(_mm512_maskz_shuffle_f64x2(0xff, c, c, 0xee)));
        }
    }
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        __m512d sum = _mm512_setzero_pd();
#pragma GCC unroll 16
        for (int l = 0; l < lanes; ++l) {
            const __m512 v = r[half_column_at(h, l)];
            sum = _mm512_add_pd(sum, l / 4 % 2 ? f64_half<1>(v) : f64_half<0>(v));
        }
        _mm512_storeu_pd(t + 8 * h, sum);
    }
}

// Pass 1 on planar rows (a, k), k in [k0, k1), each row one chunk (B <=
// planar_chunk), every row a in turn (one call a task: a call a row a cost
// a few instructions a row): each row's lanes as chunk_sums leaves them,
// then their pairs 16 rows at a time (same bits as sums_planar). Vectors >
// 0: rows of that many whole vectors, the loop unrolled (a row's loop
// control and offsets cost about as much as its three vectors on 7x7).
// Columns: a tail of 1 to column_tail_max elements added as columns
// (in_order_sums_16), element j of row i from the 16 elements that put it
// in lane i, where those stay in the row or run into the group's next row
// (in every tensor read); else each row's last B % 16 elements by
// add_tail_lanes.
template <int Vectors, bool Columns, typename T, bn_fusion F>
__attribute__((target("avx512f"))) void short_rows_sums_avx512(const bn_plan &p, const data &d, const float *mean,
        double *partial, int64_t k0, int64_t k1) {
    const reader<T, F> rd(d);
    const int64_t channels = k1 - k0;
    const int64_t whole = p.B / lanes * lanes;
    const int tail = int(p.B - whole);
    const bool rows_follow = (F == bn_fusion::relu_into_dd || p.dd.k == p.B)
            && (F == bn_fusion::relu_into_src || p.src.k == p.B) && (F == bn_fusion::none || p.relu_in.k == p.B);
    const __mmask16 tail_lanes = __mmask16((1u << tail) - 1);
    const __m512i down = _mm512_and_si512(
            _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                    _mm512_set1_epi32(lanes - tail)),
            _mm512_set1_epi32(lanes - 1));
    alignas(64) float s1[16][lanes], s2[16][lanes];
    for (int64_t a = 0; a < p.A; ++a) {
        const int64_t ahead = a + short_rows_ahead;
        const int64_t dd_ahead = at(p.dd, ahead, k0, 0), src_ahead = at(p.src, ahead, k0, 0),
                      relu_ahead = at(p.relu_in, ahead, k0, 0);
        // (+1: a run off a line boundary spans one more.) Spread over the
        // channels, a few lines before each.
        const int64_t lines_ahead = ahead < p.A ? (channels * p.B * int64_t(sizeof(T)) + 63) / 64 + 1 : 0;
        const int64_t lines_per_channel = (lines_ahead + channels - 1) / channels;
        int64_t line = 0;
        for (int64_t j0 = k0; j0 < k1; j0 += 16) {
            const int n = int(std::min<int64_t>(16, k1 - j0));
            rows_element<T, F> tail_elements[Columns ? column_tail_max : 1];
            int64_t s0 = at(p.src, a, j0, 0), d0 = at(p.dd, a, j0, 0), x0 = at(p.relu_in, a, j0, 0);
            for (int i = 0; i < n; ++i, s0 += p.src.k, d0 += p.dd.k, x0 += p.relu_in.k) {
                const int64_t k = j0 + i;
                for (const int64_t end = std::min(lines_ahead, line + lines_per_channel); line < end; ++line)
                    rd.prefetch(dd_ahead, src_ahead, relu_ahead, 64 * line);
                chunk_sums cs(mean[k]);
#pragma GCC unroll 4
                for (int64_t b = 0; b < (Vectors > 0 ? Vectors * lanes : whole); b += lanes) {
                    lanes16 g, x;
                    load_lanes<T, F>(d, d0 + b, s0 + b, x0 + b, g, x);
                    cs.add(g, x);
                }
                if constexpr (Columns) {
#pragma GCC unroll 4
                    for (int j = 0; j < column_tail_max; ++j) {
                        if (j == tail) break;
                        const int64_t b = whole + j;
                        const bool read_16 = b - i + lanes <= p.B || (rows_follow && i + 1 < n);
                        tail_elements[j].put(d, i, d0 + b, s0 + b, x0 + b, read_16);
                    }
                    _mm512_store_ps(s1[i], __m512(cs.v1)), _mm512_store_ps(s2[i], __m512(cs.v2));
                } else if (tail == 0 || whole > 0) {
                    if (tail) add_tail_lanes<T, F>(d, d0 + p.B, s0 + p.B, x0 + p.B, down, tail_lanes, cs);
                    _mm512_store_ps(s1[i], __m512(cs.v1)), _mm512_store_ps(s2[i], __m512(cs.v2));
                } else {
                    cs.lanes_with_tail(rd, 0, p.B, d0, s0, x0, s1[i], s2[i]);
                }
            }
            double t1[16], t2[16];
            in_order_sums_16<Columns>(s1, n, tail_elements, tail, mean + j0, false, t1);
            in_order_sums_16<Columns>(s2, n, tail_elements, tail, mean + j0, true, t2);
            for (int i = 0; i < n; ++i) {
                double *pair = partial + 2 * ((j0 + i) * p.A + a); // row (a, k)'s only chunk
                pair[0] = t1[i], pair[1] = t2[i];
            }
        }
    }
}

// Pass 2's channel constants (a, c2, mean, c0) of a group, made once per
// group and read by every row a. 16-bit data: those of every element of a
// segment of the group's run, which a vector's lanes load as they are
// (picked lane by lane with vpermps, four permutes a vector crowded the
// shuffle port that the 16-bit loads and stores also take). f32: those of
// the group's channels (16 at most), picked by the permutes, which measured
// faster there than two more loads a vector. At most segment_elems
// elements, so the table stays on the stack: a group's run
// (channels_per_task) is under 5 KB, at most 2 segments of 16-bit elements.
constexpr int64_t segment_elems = 1280;
struct segment_constants {
    alignas(64) float c[4][segment_elems];
};

template <typename T> constexpr bool permuted_constants = std::is_same_v<T, float>;

// The constants of run elements [e0, e1) of channels k0.. (rows of B), or
// (Permuted) of channels [k0, k1).
template <bool Permuted>
void fill_constants(const bn_plan &p, const coeffs &cf, int64_t k0, int64_t k1, int64_t e0, int64_t e1,
        segment_constants &sc) {
    const auto put = [&](size_t k, int64_t i0, int64_t i1) {
        const float v[4] = {cf.a[k], cf.c2[k], cf.mean[k], cf.c0[k]};
        for (int c = 0; c < 4; ++c) std::fill(sc.c[c] + i0, sc.c[c] + i1, v[c]);
    };
    if constexpr (Permuted) {
        for (int64_t k = k0; k < k1; ++k) put(size_t(k), k - k0, k - k0 + 1);
        for (int64_t i = k1 - k0; i < lanes; ++i) put(size_t(k0), i, i + 1); // (lanes no element picks)
        return;
    }
    for (int64_t e = e0; e < e1;) {
        const int64_t end = std::min(e1, (e / p.B + 1) * p.B);
        put(size_t(k0 + e / p.B), e - e0, end - e0);
        e = end;
    }
}

// f32 pass 2's lane positions of segment elements e.. (+ 0.5, which the
// lane's channel is found from).
__attribute__((target("avx512f"), always_inline)) inline __m512 element_positions(int64_t e) {
    return _mm512_add_ps(_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            _mm512_set1_ps(float(e) + 0.5f));
}

// Pass 2's diff_src of run elements [b, b + 16) (as short_rows_update_avx512
// below), each lane with its element's constants: 16-bit those of the
// table's elements b..; f32 those of lane channel e / B in f32 (e: the
// lanes' element_positions; exact for these sizes), picked by vpermps from
// `t`, the group's 16 loaded once (the stores to f32 diff_src may alias the
// table, so the compiler reloads what is not held in a register).
// The plan's fields pass 2's vectors read (held in registers, see
// short_rows_update_avx512).
struct update_rows {
    int64_t B;
    bool global_stats;
};
template <typename T, bn_fusion F>
__attribute__((target("avx512f"), always_inline)) inline lanes16 update_vector(const update_rows &p, const data &d,
        const segment_constants &sc, const __m512 *t, __m512 e, int64_t b, int64_t d0, int64_t s0, int64_t x0) {
    lanes16 r;
    if constexpr (permuted_constants<T>) {
        const __m512i ch = _mm512_maskz_cvttps_epi32(0xffff, _mm512_mul_ps(e, _mm512_set1_ps(1.f / float(p.B))));
        lanes16 c[4];
        for (int i = 0; i < 4; ++i) c[i] = lanes16(_mm512_maskz_permutexvar_ps(0xffff, ch, t[i]));
        diff_src_lanes<T, F>(d, p.global_stats, d0 + b, s0 + b, x0 + b, c[0], c[1], c[2], c[3], r);
    } else {
        diff_src_lanes<T, F>(d, p.global_stats, d0 + b, s0 + b, x0 + b, lanes16(_mm512_loadu_ps(sc.c[0] + b)),
                lanes16(_mm512_loadu_ps(sc.c[1] + b)), lanes16(_mm512_loadu_ps(sc.c[2] + b)),
                lanes16(_mm512_loadu_ps(sc.c[3] + b)), r);
    }
    return r;
}

// Pass 2 on elements [e0, e1) of the run of rows (a, k), k in [k0, ..),
// whose rows follow one another in every tensor (see channels_per_task),
// into diff_src: as one array of whole vectors (update_vector), the same
// arithmetic per element as update_row_avx512 (same bits): row by row, the
// calls and each row's tail cost more than the rows. The last n % 16
// elements from the vector ending at the run's end, by a masked store. With
// `stream`, the lines inside the run leave with non-temporal stores and no
// fence (the caller fences once after all its runs: a fence per staged run
// held up the stores that followed it); the elements before the first line
// boundary from vectors by masked stores too (element by element, they cost
// more than streaming saved). HwBf16: cached bf16 vectors leave through
// store_one_bf16_hw.
// The tensors' pointers and the plan's B and global_stats are copied into
// locals whose addresses do not escape (`d`, `rows`): the 16-bit vector
// stores may alias anything, and the loop reloaded them every vector.
template <typename T, bn_fusion F, bool HwBf16 = false>
__attribute__((target("avx512f"))) void short_rows_update_avx512(const bn_plan &p, const data &tensors,
        const segment_constants &sc, int64_t a, int64_t k0, int64_t e0, int64_t e1, bool stream) {
    const data d = tensors;
    const update_rows rows {p.B, p.global_stats};
    const int64_t n = e1 - e0, s0 = at(p.src, a, k0, 0) + e0, d0 = at(p.dd, a, k0, 0) + e0,
                  x0 = at(p.relu_in, a, k0, 0) + e0;
    T *out = static_cast<T *>(d.ds) + at(p.ds, a, k0, 0) + e0;
    if (n < lanes) {
        const reader<T, F> rd(d);
        for (int64_t b = 0; b < n; ++b) {
            const size_t i = size_t(permuted_constants<T> ? (e0 + b) / p.B : b);
            out[b] = from_f32<T>(diff_src_one(rd, rows.global_stats, d0 + b, s0 + b, x0 + b, sc.c[0][i], sc.c[1][i],
                    sc.c[2][i], sc.c[3][i]));
        }
        return;
    }
    __m512 t[4];
    for (int i = 0; i < 4; ++i) t[i] = _mm512_load_ps(sc.c[i]); // (f32 only: unused loads go)
    // Elements before the first line boundary; streamed only with a whole
    // 16-bit line (32 elements) after them, so the head's vectors are in the run.
    const auto address = reinterpret_cast<uintptr_t>(out);
    const int64_t head = int64_t((64 - address % 64) % 64 / sizeof(T));
    stream = stream && address % sizeof(T) == 0 && n - head >= 2 * lanes;
    int64_t b = 0;
    if (stream)
        for (; b < head; b += lanes) {
            const __mmask16 before_line = __mmask16((1u << std::min<int64_t>(lanes, head - b)) - 1);
            store_lanes(out + b, before_line,
                    update_vector<T, F>(rows, d, sc, t, element_positions(e0 + b), b, d0, s0, x0));
        }
    b = stream ? head : 0;
    vector_out<T> vo {stream};
    __m512 e = element_positions(e0 + b);
    // Cached stores wait on each line's read for ownership (the runs are
    // too short and far apart for the hardware prefetchers): the next run's
    // lines (row a - 1, the caller's next) are asked for with prefetchw, a
    // line a vector over the first part of this run.
    const int64_t run_bytes = n * int64_t(sizeof(T)) + 64;
    const char *next = a > 0 && !stream ? reinterpret_cast<const char *>(out - p.ds.a) : nullptr;
    // (HwBf16 cached: two vectors at a time, one conversion and test.)
    if constexpr (HwBf16)
        if (!stream)
            for (; b + 2 * lanes <= n; b += 2 * lanes) {
                for (int64_t v = b; v < b + 2 * lanes; v += lanes)
                    if (next && 4 * v < run_bytes) _mm_prefetch(next + 4 * v, _MM_HINT_ET0);
                const lanes16 r0 = update_vector<T, F>(rows, d, sc, t, e, b, d0, s0, x0);
                e = _mm512_add_ps(e, _mm512_set1_ps(float(lanes)));
                const lanes16 r1 = update_vector<T, F>(rows, d, sc, t, e, b + lanes, d0, s0, x0);
                e = _mm512_add_ps(e, _mm512_set1_ps(float(lanes)));
                store_pair_bf16_hw(out + b, r0, r1);
            }
    for (; b + lanes <= n; b += lanes, e = _mm512_add_ps(e, _mm512_set1_ps(float(lanes)))) {
        if (next && 4 * b < run_bytes) _mm_prefetch(next + 4 * b, _MM_HINT_ET0);
        const lanes16 r = update_vector<T, F>(rows, d, sc, t, e, b, d0, s0, x0);
        if constexpr (HwBf16)
            if (!stream) {
                store_one_bf16_hw(out + b, r);
                continue;
            }
        vo.put(out + b, r);
    }
    vo.flush();
    if (b < n) {
        const __mmask16 last = __mmask16(0xffffu << (lanes - (n - b)));
        store_lanes(out + n - lanes, last,
                update_vector<T, F>(rows, d, sc, t, element_positions(e0 + n - lanes), n - lanes, d0, s0, x0));
    }
}

// Pass 2 of the generic loops on elements [e0, e1) of the run of rows (a,
// k), k in [k0, ..) (see short_rows_update_avx512): as one run with each
// element's channel constants (sc, per element), by diff_src_run: the same
// arithmetic per element as update_row_into (same bits), without a loop's
// start and end per row of 7x7; staged when nontemporal.
template <typename T, bn_fusion F, bool Global>
BPG_ALWAYS_INLINE void update_run_of_channels(const bn_plan &p, const data &d, const segment_constants &sc, int64_t a,
        int64_t k0, int64_t e0, int64_t e1) {
    const reader<T, F> rd(d);
    const out_run<T> o(static_cast<T *>(d.ds) + at(p.ds, a, k0, 0) + e0, e1 - e0, d.nontemporal);
    diff_src_run<Global>(rd, at(p.dd, a, k0, 0) + e0, at(p.src, a, k0, 0) + e0, at(p.relu_in, a, k0, 0) + e0, o.out,
            0, e1 - e0, sc.c[0], sc.c[1], sc.c[2], sc.c[3]);
    o.finish();
}

template <int V> using vectors_c = std::integral_constant<int, V>;

template <typename T>
BPG_ALWAYS_INLINE void short_rows_sums_of(const bn_plan &p, const data &d, const float *mean, double *partial,
        int64_t k0, int64_t k1) {
    if (p.sums == bn_loops::short_rows_avx512)
        return with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE {
            // Rows of 1 to 3 whole vectors (7x7: 3) and a tail of 1 to
            // column_tail_max elements: the row loop unrolled, the tail as columns.
            const auto rows = [&](auto vectors, auto columns) BPG_LAMBDA_INLINE {
                short_rows_sums_avx512<vectors.value, columns.value, T, f.value>(p, d, mean, partial, k0, k1);
            };
            const int64_t tail = p.B % lanes;
            if (tail == 0 || tail > column_tail_max) return rows(vectors_c<0> {}, std::false_type {});
            switch (p.B / lanes) {
                case 1: return rows(vectors_c<1> {}, std::true_type {});
                case 2: return rows(vectors_c<2> {}, std::true_type {});
                case 3: return rows(vectors_c<3> {}, std::true_type {});
                default: return rows(vectors_c<0> {}, std::false_type {});
            }
        });
    // The generic loops: row after row of the group as sums_planar sums them
    // (each row one chunk), with no call or chunk loop between rows, their
    // lanes summed in double 4 rows at a time (in_order_sums_4).
    with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE {
        const reader<T, f.value> rd(d);
        alignas(32) float s1[4][lanes] = {}, s2[4][lanes] = {};
        for (int64_t a = 0; a < p.A; ++a)
            for (int64_t j0 = k0; j0 < k1; j0 += 4) {
                const int n = int(std::min<int64_t>(4, k1 - j0));
                for (int i = 0; i < n; ++i) {
                    const int64_t k = j0 + i;
                    const int64_t s0 = at(p.src, a, k, 0), d0 = at(p.dd, a, k, 0), x0 = at(p.relu_in, a, k, 0);
                    chunk_lanes(rd, d0, s0, x0, 0, p.B, mean[k], p.avx512, s1[i], s2[i]);
                }
                double t1[4], t2[4];
                in_order_sums_4(s1, t1);
                in_order_sums_4(s2, t2);
                for (int i = 0; i < n; ++i) {
                    double *pair = partial + 2 * ((j0 + i) * p.A + a); // (row (a, k)'s only chunk)
                    pair[0] = t1[i], pair[1] = t2[i];
                }
            }
    });
}

// Last rows first: pass 1 read them last, so they are the likeliest still in
// the cache (as planar_update_channel).
template <typename T>
BPG_ALWAYS_INLINE void short_rows_update_of(const bn_plan &p, const data &d, const coeffs &cf, int64_t k0, int64_t k1) {
    with_fusion(p.fusion, [&](auto f) BPG_LAMBDA_INLINE {
        segment_constants sc;
        const int64_t n = (k1 - k0) * p.B;
        if (p.update == bn_loops::short_rows) {
            with_global(p.global_stats, [&](auto global) BPG_LAMBDA_INLINE {
                for (int64_t e0 = 0; e0 < n; e0 += segment_elems) {
                    const int64_t e1 = std::min(n, e0 + segment_elems);
                    fill_constants<false>(p, cf, k0, k1, e0, e1, sc);
                    for (int64_t a = p.A - 1; a >= 0; --a)
                        update_run_of_channels<T, f.value, global.value>(p, d, sc, a, k0, e0, e1);
                }
            });
            return;
        }
        for (int64_t e0 = 0; e0 < n; e0 += segment_elems) {
            const int64_t e1 = std::min(n, e0 + segment_elems);
            fill_constants<permuted_constants<T>>(p, cf, k0, k1, e0, e1, sc);
            for (int64_t a = p.A - 1; a >= 0; --a) {
                if constexpr (std::is_base_of_v<bf16_t, T>)
                    if (p.update == bn_loops::short_rows_bf16_avx512) {
                        short_rows_update_avx512<T, f.value, true>(p, d, sc, a, k0, e0, e1, d.nontemporal);
                        continue;
                    }
                short_rows_update_avx512<T, f.value>(p, d, sc, a, k0, e0, e1, d.nontemporal);
            }
        }
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
