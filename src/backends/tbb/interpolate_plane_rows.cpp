#include "backends/tbb/interpolate_plane_rows.hpp"

#include <algorithm>
#include <type_traits>

#include <immintrin.h>

#include "backends/tbb/convert_lanes.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/interpolate_small_planes.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/simd_store.hpp"

namespace bpg::tbb_backend {

namespace {

constexpr int64_t lanes = 16;
constexpr int64_t group_planes = 16; // planes per task unit, as the small-planes path
constexpr int side_by_side = 4;      // planes run together (one read of each table entry)

// Level 1 of one diff_src vector: `rows` rows of w elements, lane r * w + j
// element j of row r. Tap k of that lane reads lane idx[k] of the row sums
// (16 + : those of the vector's second row) with weight w[k], where mask[k]
// has its bit: the element has more than k taps.
struct inner_taps {
    int64_t rows = 1, taps = 0;
    alignas(64) int32_t idx[plane_rows_max_inner_taps][lanes] = {};
    alignas(64) float w[plane_rows_max_inner_taps][lanes] = {};
    uint16_t mask[plane_rows_max_inner_taps] = {};
};

inner_taps inner_taps_of(const interp_plan &p) {
    inner_taps t;
    const kernels::axis_gather &g = p.axes[1];
    const int64_t w = p.in[1];
    t.rows = 2 * w <= lanes ? 2 : 1;
    t.taps = g.max_taps;
    for (int64_t r = 0; r < t.rows; ++r)
        for (int64_t j = 0; j < w; ++j) {
            const int64_t lane = r * w + j;
            for (int64_t k = 0; k < g.begin[size_t(j) + 1] - g.begin[size_t(j)]; ++k) {
                const size_t tap = size_t(g.begin[size_t(j)] + k);
                t.idx[k][lane] = int32_t(g.output[tap] + r * lanes);
                t.w[k][lane] = g.weight[tap];
                t.mask[k] = uint16_t(t.mask[k] | (1u << lane));
            }
        }
    return t;
}

int64_t plane_offset(int64_t t, int64_t c_count, int64_t n_stride, int64_t c_stride) {
    return t / c_count * n_stride + t % c_count * c_stride;
}

#define BPG_PLANE_ROWS_INLINE __attribute__((target("avx512f"), always_inline)) inline

// Level 0 for input i of axis 0 in the planes side by side: sum_taps' fold
// (tap_sum.hpp) on whole rows. Each group of taps is summed in output order,
// multiplied by its weight unless every weight of the input is 1, and added
// to the groups before it; no taps: zero. Row o of plane q is at
// rows[q] + o * stride, 16 floats readable.
BPG_PLANE_ROWS_INLINE void fold_rows(const grouped_axis &a, int64_t i, const float *const *rows, int64_t stride,
        __m512 *out) {
    const int64_t t0 = a.begin[size_t(i)], t1 = a.begin[size_t(i) + 1];
    const bool ones = a.ones[size_t(i)] != 0;
    for (int q = 0; q < side_by_side; ++q) out[q] = _mm512_setzero_ps();
    for (int64_t t = t0; t < t1;) {
        __m512 s[side_by_side];
        int64_t at = a.output[size_t(t)] * stride;
        for (int q = 0; q < side_by_side; ++q) s[q] = _mm512_loadu_ps(rows[q] + at);
        int64_t e = t + 1;
        for (; e < t1 && !a.start[size_t(e)]; ++e) {
            at = a.output[size_t(e)] * stride;
            for (int q = 0; q < side_by_side; ++q) s[q] = _mm512_add_ps(s[q], _mm512_loadu_ps(rows[q] + at));
        }
        if (!ones) {
            const __m512 w = _mm512_set1_ps(a.weight[size_t(t)]);
            for (int q = 0; q < side_by_side; ++q) s[q] = _mm512_mul_ps(w, s[q]);
        }
        for (int q = 0; q < side_by_side; ++q) out[q] = t == t0 ? s[q] : _mm512_add_ps(out[q], s[q]);
        t = e;
    }
}

// Level 1: each lane's FMA chain from zero over its taps, in table order
// (the row gather's order), lanes without a k-th tap left as they are.
BPG_PLANE_ROWS_INLINE void gather_rows(const inner_taps &t, const __m512 *first, const __m512 *second, __m512 *out) {
    for (int q = 0; q < side_by_side; ++q) out[q] = _mm512_setzero_ps();
    for (int64_t k = 0; k < t.taps; ++k) {
        const __m512i idx = _mm512_load_si512(t.idx[k]);
        const __m512 w = _mm512_load_ps(t.w[k]);
        const __mmask16 m = t.mask[k];
        for (int q = 0; q < side_by_side; ++q)
            out[q] = _mm512_mask3_fmadd_ps(_mm512_permutex2var_ps(first[q], idx, second[q]), w, out[q], m);
    }
}

// n values of one diff_src plane from v: a full vector where the 16 lie in
// the plane (the lanes past n are overwritten by the next vector of the
// plane, stored later by this task), else exactly n.
BPG_PLANE_ROWS_INLINE void store_vector(float *at, __m512 v, int64_t n, bool full) {
    if (full) return _mm512_storeu_ps(at, v);
    store_first(at, v, n);
}
template <typename T> BPG_PLANE_ROWS_INLINE void store_vector(T *at, __m512 v, int64_t n, bool full) {
    if (full) return convert16::store16(at, v);
    convert16::store_first(at, v, n);
}

// A plane of n values as f32 at `to` (16 readable past n): whole vectors
// where they lie inside diff_dst (before `end`), the last one exactly.
BPG_PLANE_ROWS_INLINE __m512 load_vector(const float *at, int64_t n, const float *end) {
    if (n >= lanes || end - at >= lanes) return _mm512_loadu_ps(at);
    return _mm512_maskz_loadu_ps(__mmask16((1u << n) - 1u), at);
}
template <typename T> BPG_PLANE_ROWS_INLINE __m512 load_vector(const T *at, int64_t n, const T *end) {
    if (n >= lanes || end - at >= lanes) return convert16::load16(at);
    return convert16::load_first(at, n);
}
template <typename T> BPG_PLANE_ROWS_INLINE void stage_plane(const T *plane, int64_t n, const T *end, float *to) {
    for (int64_t e = 0; e < n; e += lanes) _mm512_store_ps(to + e, load_vector(plane + e, n - e, end));
}

// Planes [t0, t1). Lanes of the side-by-side block past t1 run a copy of
// the last plane and store nothing.
template <typename T>
__attribute__((target("avx512f"))) void run_planes(const interp_plan &p, const inner_taps &tab, const T *dd, T *ds,
        int64_t t0, int64_t t1) {
    const int64_t W = p.out[1], w = p.in[1], h = p.in[0], dd_plane = p.out[0] * W, ds_plane = h * w;
    const T *dd_end = dd + (p.n_count - 1) * p.dd_n + (p.c_count - 1) * p.dd_c + dd_plane;
    const grouped_axis &a = p.grouped[0];
    const int64_t R = tab.rows, vectors = (h + R - 1) / R;
    // 16-bit planes, and f32 ones whose last row ends within 16 values of
    // diff_dst's end, are read from f32 copies (rows readable 16 wide).
    alignas(64) float stage[side_by_side][small_plane_max_dd + 2 * lanes];
    // Rows read up to 16 - W past the plane: one vector past the staged ones,
    // zero (those lanes are never used, but stay defined).
    const int64_t staged = (dd_plane + lanes - 1) / lanes * lanes;
    for (int q = 0; q < side_by_side; ++q) _mm512_store_ps(stage[q] + staged, _mm512_setzero_ps());
    for (int64_t t = t0; t < t1; t += side_by_side) {
        const float *rows[side_by_side];
        T *out[side_by_side];
        const T *last_plane = dd + plane_offset(std::min(t + side_by_side, t1) - 1, p.c_count, p.dd_n, p.dd_c);
        const bool in_place = std::is_same_v<T, float> && dd_end - (last_plane + dd_plane - W) >= lanes;
        for (int q = 0; q < side_by_side; ++q) {
            const int64_t u = std::min(t + q, t1 - 1);
            const T *plane = dd + plane_offset(u, p.c_count, p.dd_n, p.dd_c);
            out[q] = ds + plane_offset(u, p.c_count, p.ds_n, p.ds_c);
            if (in_place) {
                rows[q] = reinterpret_cast<const float *>(plane);
            } else {
                stage_plane(plane, dd_plane, dd_end, stage[q]);
                rows[q] = stage[q];
            }
        }
        const int stored = int(std::min<int64_t>(side_by_side, t1 - t));
        __m512 s0[side_by_side] = {}, s1[side_by_side] = {}, v[side_by_side] = {};
        for (int64_t vec = 0; vec < vectors; ++vec) {
            const int64_t i = vec * R;
            // An input whose taps repeat the previous input's (2x
            // downsampling) has its sums; with a row per vector, its
            // diff_src row too (v still holds it).
            const bool repeat = i > 0 && a.repeats[size_t(i)];
            if (R == 1) {
                if (!repeat) {
                    fold_rows(a, i, rows, W, s0);
                    gather_rows(tab, s0, s0, v);
                }
            } else {
                if (repeat)
                    for (int q = 0; q < side_by_side; ++q) s0[q] = s1[q];
                else
                    fold_rows(a, i, rows, W, s0);
                if (i + 1 < h && !a.repeats[size_t(i + 1)])
                    fold_rows(a, i + 1, rows, W, s1);
                else
                    for (int q = 0; q < side_by_side; ++q) s1[q] = s0[q];
                gather_rows(tab, s0, s1, v);
            }
            const int64_t at = i * w, n = std::min(R * w, ds_plane - at);
            const bool full = at + lanes <= ds_plane;
            for (int q = 0; q < stored; ++q) store_vector(out[q] + at, v[q], n, full);
        }
    }
}

template <typename T>
void run_groups(const interp_plan &p, const inner_taps &tab, const void *dd, void *ds, int64_t g0, int64_t g1) {
    const int64_t planes = p.n_count * p.c_count;
    run_planes(p, tab, static_cast<const T *>(dd), static_cast<T *>(ds), g0 * group_planes,
            std::min(planes, g1 * group_planes));
}

} // namespace

bool plane_rows_fit(const interp_plan &p) {
    return small_planes_fit(p) && p.in[0] * p.in[1] < p.out[0] * p.out[1] && p.out[1] <= lanes && p.in[1] <= lanes
            && p.axes[1].max_taps <= plane_rows_max_inner_taps;
}

void run_plane_rows(const interp_plan &p, const void *diff_dst, void *diff_src) {
    const int64_t groups = (p.n_count * p.c_count + group_planes - 1) / group_planes;
    auto body = p.dt == data_type::f32 ? run_groups<float>
            : p.bf16_vcvtne            ? run_groups<convert16::bf16_vcvtne_t>
            : p.dt == data_type::bf16  ? run_groups<bf16_t>
                                       : run_groups<f16_t>;
    const inner_taps tab = inner_taps_of(p);
    parallel_tasks(task_range(0, groups),
            [&](const task_range &r) { body(p, tab, diff_dst, diff_src, r.begin(), r.end()); });
}

} // namespace bpg::tbb_backend
