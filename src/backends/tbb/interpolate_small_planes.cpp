#include "backends/tbb/interpolate_small_planes.hpp"

#include <algorithm>
#include <climits>

#include <immintrin.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/tap_sum.hpp"
#include "backends/tbb/task_pool.hpp"
#include "core/allocate.hpp"

namespace bpg::tbb_backend {

namespace {

constexpr int64_t lanes = 16; // planes per group: one per AVX-512 lane

int64_t plane_offset(int64_t t, int64_t c_count, int64_t n_stride, int64_t c_stride) {
    return t / c_count * n_stride + t % c_count * c_stride;
}

// One task's working memory. Vectors of 16 floats, lane l = plane l of the group.
struct group_scratch {
    int64_t row_floats = 0;              // out[1] vectors: a diff_dst row of the group
    core::array<float> ring;             // diff_dst rows, each gathered once
    core::checked_vector<int64_t> holds; // the row in each ring slot, -1 = none
    core::array<float> sum;              // one input's level-0 sum (out[1] vectors)
    core::array<float> dd16, ds16;       // 16-bit data: the group's planes as f32
    core::checked_vector<const float *> x;

    explicit group_scratch(const interp_plan &p) : row_floats(p.out[1] * lanes) {
        // Slots: every row one input reads, plus one.
        const size_t slots = size_t(p.level0_span + 1);
        ring = core::allocate_array<float>(slots * size_t(row_floats), "interpolate working memory");
        holds.assign(slots, -1);
        sum = core::allocate_array<float>(size_t(row_floats), "interpolate working memory");
        x.resize(size_t(std::max<int64_t>(1, p.axes[0].max_taps)));
        if (p.dt == data_type::f32) return;
        dd16 = core::allocate_array<float>(size_t(lanes * p.out[0] * p.out[1]), "interpolate working memory");
        ds16 = core::allocate_array<float>(size_t(lanes * p.in[0] * p.in[1]), "interpolate working memory");
    }
};

// Planes [t0, t0 + count), count <= 16. Lanes past count compute on zeros
// and are never stored.
template <typename T>
__attribute__((target("avx512f"))) void run_group(const interp_plan &p, group_scratch &s, const T *dd, T *ds,
        int64_t t0, int64_t count) {
    const int64_t W = p.out[1], w = p.in[1], dd_plane = p.out[0] * W, ds_plane = p.in[0] * w;
    const __mmask16 live = __mmask16(count >= lanes ? 0xffffu : (1u << count) - 1u);
    alignas(64) int32_t dd_lane[lanes] = {}, ds_lane[lanes] = {}; // element offset of each lane's plane
    const float *src; // the group's planes as f32, at src + dd_lane[l]
    float *dst;       // where lane l's results go, at dst + ds_lane[l]
    if constexpr (std::is_same_v<T, float>) {
        const int64_t dd0 = plane_offset(t0, p.c_count, p.dd_n, p.dd_c);
        const int64_t ds0 = plane_offset(t0, p.c_count, p.ds_n, p.ds_c);
        for (int64_t l = 0; l < count; ++l) {
            dd_lane[l] = int32_t(plane_offset(t0 + l, p.c_count, p.dd_n, p.dd_c) - dd0);
            ds_lane[l] = int32_t(plane_offset(t0 + l, p.c_count, p.ds_n, p.ds_c) - ds0);
        }
        src = dd + dd0;
        dst = ds + ds0;
    } else {
        for (int64_t l = 0; l < count; ++l) {
            row_io<T>::load(dd + plane_offset(t0 + l, p.c_count, p.dd_n, p.dd_c), s.dd16.get() + l * dd_plane,
                    dd_plane);
            dd_lane[l] = int32_t(l * dd_plane);
            ds_lane[l] = int32_t(l * ds_plane);
        }
        src = s.dd16.get();
        dst = s.ds16.get();
    }
    const __m512i dd_idx = _mm512_load_si512(dd_lane), ds_idx = _mm512_load_si512(ds_lane);
    const grouped_axis &a = p.grouped[0];
    const kernels::axis_gather &g = p.axes[1];
    const int64_t slots = int64_t(s.holds.size());
    std::fill(s.holds.begin(), s.holds.end(), -1);
    float *ring = s.ring.get(), *sum = s.sum.get();
    for (int64_t i = 0; i < p.in[0]; ++i) {
        // The rows input i reads, gathered into the ring unless there.
        for (int64_t t = a.begin[size_t(i)]; t < a.begin[size_t(i) + 1]; ++t) {
            const int64_t o = a.output[size_t(t)], slot = o % slots;
            if (s.holds[size_t(slot)] == o) continue;
            s.holds[size_t(slot)] = o;
            float *to = ring + slot * s.row_floats;
            const float *from = src + o * W;
            for (int64_t k = 0; k < W; ++k)
                _mm512_store_ps(to + k * lanes, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), live, dd_idx, from + k, 4));
        }
        sum_taps(sum, s.row_floats,
                taps_of(a, i, s.x.data(), [&](int64_t o) -> const float * { return ring + o % slots * s.row_floats; }));
        // Level 1: each output's FMA chain from zero, taps in table order.
        float *out = dst + i * w;
        for (int64_t j = 0; j < w; ++j) {
            __m512 acc = _mm512_setzero_ps();
            for (int64_t t = g.begin[size_t(j)]; t < g.begin[size_t(j) + 1]; ++t)
                acc = _mm512_fmadd_ps(_mm512_load_ps(sum + g.output[size_t(t)] * lanes), _mm512_set1_ps(g.weight[size_t(t)]),
                        acc);
            _mm512_mask_i32scatter_ps(out + j, live, ds_idx, acc, 4);
        }
    }
    if constexpr (!std::is_same_v<T, float>) {
        for (int64_t l = 0; l < count; ++l)
            row_io<T>::store(s.ds16.get() + l * ds_plane, ds + plane_offset(t0 + l, p.c_count, p.ds_n, p.ds_c), ds_plane);
    }
}

template <typename T>
void run_groups(const interp_plan &p, group_scratch &s, const void *dd, void *ds, int64_t g0, int64_t g1) {
    const int64_t planes = p.n_count * p.c_count;
    for (int64_t k = g0; k < g1; ++k)
        run_group(p, s, static_cast<const T *>(dd), static_cast<T *>(ds), k * lanes,
                std::min(lanes, planes - k * lanes));
}

} // namespace

bool small_planes_fit(const interp_plan &p) {
    if (p.channels_last || p.nsp != 2 || !has_avx512f()) return false;
    const int64_t dd_plane = p.out[0] * p.out[1], ds_plane = p.in[0] * p.in[1];
    if (dd_plane > small_plane_max_elements || ds_plane > small_plane_max_elements) return false;
    // Planes are contiguous blocks (rows one after the other).
    if ((p.out[0] > 1 && p.dd_sp[0] != p.out[1]) || (p.in[0] > 1 && p.ds_sp[0] != p.in[1])) return false;
    if (std::min({p.dd_n, p.dd_c, p.ds_n, p.ds_c}) < 0) return false;
    // Lanes address their planes with 32-bit offsets.
    auto span = [&](int64_t n_stride, int64_t c_stride, int64_t plane) {
        return (p.n_count - 1) * n_stride + (p.c_count - 1) * c_stride + plane;
    };
    if (span(p.dd_n, p.dd_c, dd_plane) > INT32_MAX || span(p.ds_n, p.ds_c, ds_plane) > INT32_MAX) return false;
    const int64_t groups = (p.n_count * p.c_count + lanes - 1) / lanes;
    return groups >= 4 * tasks_at_once();
}

void run_small_planes(const interp_plan &p, const void *diff_dst, void *diff_src) {
    const int64_t groups = (p.n_count * p.c_count + lanes - 1) / lanes;
    auto body = p.dt == data_type::f32 ? run_groups<float>
            : p.dt == data_type::bf16  ? run_groups<bf16_t>
                                       : run_groups<f16_t>;
    const task_pool<group_scratch> pool(groups, [&] { return group_scratch(p); });
    parallel_tasks(task_range(0, groups), [&](const task_range &r) {
        const auto s = pool.borrow();
        body(p, *s, diff_dst, diff_src, r.begin(), r.end());
    });
}

} // namespace bpg::tbb_backend
