// interp_levels::planar_small_planes8_2d: the small-planes path
// (interpolate_small_planes.hpp) for CPUs without AVX-512, in generic loops
// built per instruction set (BPG_CLONES): 8 planes at once, one per lane of a
// 32-byte vector, transposed 8x8 at a time into a tile and back out. Each
// lane does the operations the row-wise path of such CPUs does on its
// element (planar_rows_then_gather_2d: level 0 by sum_taps, level 1 a chain
// of products added from zero in the axis table's order, as
// row_gather_avx2.hpp's), so the bits are that path's, for any grouping of
// planes and any number of threads
// (tests/backends/test_tbb_interpolate_small_planes8.cpp).
#include <algorithm>
#include <cstring>

#include <immintrin.h>

#include "backends/tbb/cpu.hpp"
#include "backends/tbb/interpolate_small_planes.hpp"
#include "backends/tbb/kernel_attributes.hpp"
#include "backends/tbb/lanes8.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/tap_sum.hpp"
#include "backends/tbb/task_pool.hpp"
#include "core/allocate.hpp"

namespace bpg::tbb_backend {

namespace {

constexpr int64_t lanes = 8; // planes per group: one per lane of a 32-byte vector

int64_t round_up(int64_t n) { return (n + lanes - 1) / lanes * lanes; }

// One task's working memory: tiles of vectors of 8 floats, lane l = plane l.
struct group_scratch8 {
    core::array<float> dd_tile; // diff_dst: out[0] * out[1] vectors, whole blocks of 8
    core::array<float> ds_tile; // diff_src: in[0] * in[1] vectors, whole blocks of 8
    core::array<float> sum;     // one input's level-0 sum: out[1] vectors
    core::checked_vector<const float *> x;

    explicit group_scratch8(const interp_plan &p) {
        const char *what = "interpolate working memory";
        const size_t dd_floats = size_t(round_up(p.out[0] * p.out[1]) * lanes),
                     ds_floats = size_t(round_up(p.in[0] * p.in[1]) * lanes);
        dd_tile = core::allocate_array<float>(dd_floats, what);
        ds_tile = core::allocate_array<float>(ds_floats, what);
        std::fill(dd_tile.get(), dd_tile.get() + dd_floats, 0.f);
        std::fill(ds_tile.get(), ds_tile.get() + ds_floats, 0.f);
        sum = core::allocate_array<float>(size_t(p.out[1] * lanes), what);
        x.resize(size_t(std::max<int64_t>(1, p.axes[0].max_taps)));
    }
};

// r[j] lane i <- r[i] lane j: unpacks of row pairs, shuffles of their pairs,
// then the 128-bit halves (pure moves: the values unchanged).
BPG_ALWAYS_INLINE void transpose8(f32x8 r[8]) {
    f32x8 t[8], u[8];
#pragma GCC unroll 4
    for (int k = 0; k < 8; k += 2) {
        t[k] = __builtin_shufflevector(r[k], r[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[k + 1] = __builtin_shufflevector(r[k], r[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    // u[4q + 2h + s]: columns of rows 4q..4q+3 (h: pair, s: which of it)
#pragma GCC unroll 2
    for (int q = 0; q < 2; ++q)
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const f32x8 &a = t[4 * q + h], &b = t[4 * q + 2 + h];
            u[4 * q + 2 * h] = __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13);
            u[4 * q + 2 * h + 1] = __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
        }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        r[j] = __builtin_shufflevector(u[j], u[4 + j], 0, 1, 2, 3, 8, 9, 10, 11);
        r[j + 4] = __builtin_shufflevector(u[j], u[4 + j], 4, 5, 6, 7, 12, 13, 14, 15);
    }
}

// The lines of element e0 of the next group's diff_dst planes (`next`; null:
// none, interp_plan::next_group_prefetch) into L2, one line a plane every
// line's worth of elements: the hardware prefetchers do not keep 8 streams
// ahead.
template <typename T> BPG_ALWAYS_INLINE void prefetch_next(const T *const *next, int64_t e0) {
    if (!next || e0 % (64 / int64_t(sizeof(T))) != 0) return;
#pragma GCC unroll 8
    for (int l = 0; l < lanes; ++l) _mm_prefetch(reinterpret_cast<const char *>(next[l] + e0), _MM_HINT_T1);
}

// The tile of 8 planes of n elements (plane l at planes[l]): tile[e * 8 + l]
// = planes[l][e] as f32, for e in [e_begin, e_end) rounded up to 8 (e_begin
// a multiple of 8; past n, zeros); each block prefetches the next group's.
template <typename T>
BPG_ALWAYS_INLINE void to_tile(const T *const *planes, int64_t n, float *tile, int64_t e_begin, int64_t e_end,
        const T *const *next) {
    for (int64_t e0 = e_begin; e0 < e_end; e0 += lanes) {
        prefetch_next(next, e0);
        f32x8 r[lanes];
        if (e0 + lanes <= n) {
#pragma GCC unroll 8
            for (int l = 0; l < lanes; ++l) widen8(planes[l] + e0, r[l]);
        } else {
            for (int l = 0; l < lanes; ++l) {
                float b[lanes] = {};
                for (int64_t k = 0; k < n - e0; ++k) b[k] = to_f32(planes[l][e0 + k]);
                __builtin_memcpy(&r[l], b, sizeof b);
            }
        }
        transpose8(r);
#pragma GCC unroll 8
        for (int k = 0; k < lanes; ++k) __builtin_memcpy(tile + (e0 + k) * lanes, &r[k], sizeof r[k]);
    }
}

// The inverse, into the first `count` planes (elements below n).
template <typename T>
BPG_ALWAYS_INLINE void from_tile(const float *tile, int64_t count, int64_t n, T *const *planes, int64_t e_begin,
        int64_t e_end) {
    for (int64_t e0 = e_begin; e0 < e_end; e0 += lanes) {
        f32x8 r[lanes];
#pragma GCC unroll 8
        for (int k = 0; k < lanes; ++k) __builtin_memcpy(&r[k], tile + (e0 + k) * lanes, sizeof r[k]);
        transpose8(r);
        const int64_t n1 = std::min(lanes, n - e0);
        for (int64_t l = 0; l < count; ++l) {
            if (n1 == lanes) {
                narrow8(planes[l] + e0, r[l]);
                continue;
            }
            float b[lanes];
            __builtin_memcpy(b, &r[l], sizeof b);
            for (int64_t k = 0; k < n1; ++k) planes[l][e0 + k] = from_f32<T>(b[k]);
        }
    }
}

// Level 1 (axis g, grouped as a) for every input j: out vector j = the
// products of its taps (vectors of sum) added to zero one after another in
// table order, as the row gather sums a lane; an input repeating the taps
// of the one before (2x downsampling) takes its result. One and two taps
// without a loop (the loop's control was a third of the path's time).
BPG_ALWAYS_INLINE void gather_lanes(const kernels::axis_gather &g, const grouped_axis &a, const float *sum, float *out) {
    const int64_t *begin = g.begin.data(), *o = g.output.data();
    const float *wt = g.weight.data();
    const auto tap = [&](int64_t u, f32x8 &acc) BPG_LAMBDA_INLINE {
        f32x8 v;
        __builtin_memcpy(&v, sum + o[u] * lanes, sizeof v);
        acc = acc + wt[u] * v;
    };
    f32x8 acc = {};
    for (int64_t j = 0; j < g.in; ++j) {
        if (j == 0 || !a.repeats[size_t(j)]) {
            const int64_t t = begin[j], k = begin[j + 1] - t;
            acc = f32x8 {};
            if (k >= 1) tap(t, acc);
            if (k >= 2) tap(t + 1, acc);
            for (int64_t u = t + 2; u < t + k; ++u) tap(u, acc);
        }
        __builtin_memcpy(out + j * lanes, &acc, sizeof acc);
    }
}

// Planes [t0, t0 + count), count <= 8: transposed into a tile input by input
// (what is transposed is used while in L1), the two levels on whole vectors,
// transposed back. Lanes past count compute on a copy of the last plane and
// are never stored.
template <typename T>
BPG_ALWAYS_INLINE void run_group(const interp_plan &p, group_scratch8 &s, const T *dd, T *ds, int64_t t0, int64_t count) {
    const int64_t W = p.out[1], w = p.in[1], dd_plane = p.out[0] * W, ds_plane = p.in[0] * w;
    const T *dd_planes[lanes];
    T *ds_planes[lanes];
    for (int64_t l = 0; l < count; ++l) {
        dd_planes[l] = dd + plane_offset(t0 + l, p.c_count, p.dd_n, p.dd_c);
        ds_planes[l] = ds + plane_offset(t0 + l, p.c_count, p.ds_n, p.ds_c);
    }
    for (int64_t l = count; l < lanes; ++l) dd_planes[l] = dd_planes[count - 1];
    // The next group's planes, to prefetch (past the last plane: the last).
    const T *next_planes[lanes];
    const int64_t last = p.n_count * p.c_count - 1;
    for (int64_t l = 0; l < lanes; ++l)
        next_planes[l] = dd + plane_offset(std::min(t0 + lanes + l, last), p.c_count, p.dd_n, p.dd_c);
    const T *const *next = p.next_group_prefetch ? next_planes : nullptr;
    float *dd_tile = s.dd_tile.get(), *ds_tile = s.ds_tile.get(), *sum = s.sum.get();
    const grouped_axis &a = p.grouped[0];
    const kernels::axis_gather &g0 = p.axes[0], &g = p.axes[1];
    int64_t tiled = 0, stored = 0; // elements of diff_dst in the tile, of diff_src out of it
    for (int64_t i = 0; i < p.in[0]; ++i) {
        const int64_t need = g0.end_output(i, i + 1) * W; // the rows of input i
        if (need > tiled) {
            to_tile(dd_planes, dd_plane, dd_tile, tiled, need, next);
            tiled = round_up(need);
        }
        float *out = ds_tile + i * w * lanes;
        if (i > 0 && a.repeats[size_t(i)]) { // the same sums as input i - 1
            std::memcpy(out, out - w * lanes, size_t(w * lanes) * sizeof(float));
        } else {
            sum_taps(sum, W * lanes,
                    taps_of(a, i, s.x.data(), [&](int64_t o) -> const float * { return dd_tile + o * W * lanes; }));
            gather_lanes(g, p.grouped[1], sum, out);
        }
        const int64_t done = i + 1 == p.in[0] ? ds_plane : (i + 1) * w / lanes * lanes; // whole blocks done
        if (done > stored) {
            from_tile(ds_tile, count, ds_plane, ds_planes, stored, done);
            stored = round_up(done);
        }
    }
}

// Groups [g0, g1) of 8 planes, per dtype and instruction set.
template <typename T>
BPG_ALWAYS_INLINE void run_groups(const interp_plan &p, group_scratch8 &s, const void *dd, void *ds, int64_t g0,
        int64_t g1) {
    const int64_t planes = p.n_count * p.c_count;
    for (int64_t k = g0; k < g1; ++k)
        run_group(p, s, static_cast<const T *>(dd), static_cast<T *>(ds), k * lanes, std::min(lanes, planes - k * lanes));
}
BPG_CLONES void run_groups_f32(const interp_plan &p, group_scratch8 &s, const void *dd, void *ds, int64_t g0, int64_t g1) {
    run_groups<float>(p, s, dd, ds, g0, g1);
}
BPG_CLONES void run_groups_bf16(const interp_plan &p, group_scratch8 &s, const void *dd, void *ds, int64_t g0, int64_t g1) {
    run_groups<bf16_t>(p, s, dd, ds, g0, g1);
}
BPG_CLONES void run_groups_f16(const interp_plan &p, group_scratch8 &s, const void *dd, void *ds, int64_t g0, int64_t g1) {
    run_groups<f16_t>(p, s, dd, ds, g0, g1);
}
// The 16-bit instances for CPUs with AVX2 and F16C (interp_plan::avx2_16bit).
__attribute__((target("avx2,f16c"))) void run_groups_bf16_avx2(const interp_plan &p, group_scratch8 &s, const void *dd,
        void *ds, int64_t g0, int64_t g1) {
    run_groups<bf16_avx2_t>(p, s, dd, ds, g0, g1);
}
__attribute__((target("avx2,f16c"))) void run_groups_f16c(const interp_plan &p, group_scratch8 &s, const void *dd,
        void *ds, int64_t g0, int64_t g1) {
    run_groups<f16c_t>(p, s, dd, ds, g0, g1);
}

} // namespace

bool small_planes8_fit(const interp_plan &p) { return !has_avx512f() && small_planes_shape_fit(p, lanes); }

void run_small_planes8(const interp_plan &p, const void *diff_dst, void *diff_src) {
    const int64_t groups = (p.n_count * p.c_count + lanes - 1) / lanes;
    auto body = p.dt == data_type::f32 ? run_groups_f32
            : p.dt == data_type::bf16      ? (p.avx2_16bit ? run_groups_bf16_avx2 : run_groups_bf16)
                                           : (p.avx2_16bit ? run_groups_f16c : run_groups_f16);
    const task_pool<group_scratch8> pool(groups, [&] { return group_scratch8(p); });
    parallel_tasks(task_range(0, groups), [&](const task_range &r) {
        const auto s = pool.borrow();
        body(p, *s, diff_dst, diff_src, r.begin(), r.end());
    });
}

} // namespace bpg::tbb_backend
