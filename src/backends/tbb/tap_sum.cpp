#include "backends/tbb/tap_sum.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <immintrin.h>

#include "backends/tbb/kernel_attributes.hpp"

namespace bpg::tbb_backend {

BPG_CLONES void sum_taps(float *out, int64_t n, const tap_run &r) {
    sum_taps_inline(out, n, r);
}

BPG_CLONES void sum_rows(const grouped_axis &a, int64_t ia,
        int64_t count, const float **x, const row_source &src,
        int64_t n, float *out, int64_t out_stride, int64_t prefetch_bytes) {
    static const bool columns = sym4_columns_available();
    for (int64_t i = ia; i < ia + count;) {
        int64_t e = i;
        while (columns && e < ia + count && a.sym4[size_t(e)]) ++e;
        if (e - i >= 2) { // a run: rows shared between neighbours are loaded once
            sum_sym4_columns(a, src, n, out + (i - ia) * out_stride, out_stride, i, e, prefetch_bytes);
            i = e;
            continue;
        }
        float *o = out + (i - ia) * out_stride;
        if (i > ia && a.repeats[size_t(i)]) // input i - 1's taps: its row, the same bits
            std::memcpy(o, o - out_stride, size_t(n) * sizeof(float));
        else
            sum_taps_inline(o, n, taps_of(a, i, x, [&](int64_t o) { return src.row(o); }));
        ++i;
    }
}

namespace {

// The rows inputs [i0, i1) read first (see prefetch_rows_ahead): [first,
// hi]; false when they read none.
bool new_rows(const grouped_axis &a, int64_t i0, int64_t i1, int64_t &first, int64_t &hi) {
    hi = a.reach[size_t(i1 - 1)];
    const int64_t before = i0 > 0 ? a.reach[size_t(i0 - 1)] : -1;
    if (hi < 0 || hi == before) return false; // (equal: no input in the range has taps, or none reads past)
    first = std::min(hi, before + 1);
    return true;
}

// Addresses only: a prefetch never faults, past the tensor's end included.
void prefetch_lines(uintptr_t from, uintptr_t to) {
    for (uintptr_t line = from & ~uintptr_t(63); line < to; line += 64)
        _mm_prefetch(reinterpret_cast<const char *>(line), _MM_HINT_T1);
}

} // namespace

void prefetch_rows_ahead(const grouped_axis &a, const row_source &src, int64_t row_floats, int64_t i0, int64_t i1,
        int64_t bytes) {
    int64_t first = 0, hi = 0;
    if (!new_rows(a, i0, i1, first, hi)) return;
    prefetch_lines(reinterpret_cast<uintptr_t>(src.row(first)) + uintptr_t(bytes),
            reinterpret_cast<uintptr_t>(src.row(hi) + row_floats) + uintptr_t(bytes));
}

void prefetch_rows_ahead(const grouped_axis &a, const char *row0, int64_t row_step, int64_t row_bytes, int64_t i0,
        int64_t i1, int64_t bytes) {
    int64_t first = 0, hi = 0;
    if (!new_rows(a, i0, i1, first, hi)) return;
    const uintptr_t base = reinterpret_cast<uintptr_t>(row0);
    prefetch_lines(base + uintptr_t(first * row_step + bytes), base + uintptr_t(hi * row_step + row_bytes + bytes));
}

grouped_axis group_axis(const kernels::axis_gather &g) {
    grouped_axis a;
    a.begin = g.begin;
    a.output.reserve(g.output.size());
    a.weight.reserve(g.output.size());
    a.start.reserve(g.output.size());
    for (int64_t i = 0; i < g.in; ++i) {
        const int64_t t0 = g.begin[size_t(i)], t1 = g.begin[size_t(i) + 1];
        // Groups keyed by the weight's bits, in the order of their first tap.
        std::unordered_map<uint32_t, size_t> group_of;
        std::vector<std::vector<int64_t>> groups;
        std::vector<float> weights;
        for (int64_t t = t0; t < t1; ++t) {
            uint32_t bits;
            std::memcpy(&bits, &g.weight[size_t(t)], 4);
            auto [it, fresh] = group_of.try_emplace(bits, groups.size());
            if (fresh) {
                groups.emplace_back();
                weights.push_back(g.weight[size_t(t)]);
            }
            groups[it->second].push_back(g.output[size_t(t)]);
        }
        uint32_t starts = 0;
        bool ones = true;
        int64_t t = 0;
        for (size_t k = 0; k < groups.size(); ++k) {
            ones = ones && weights[k] == 1.f;
            for (size_t m = 0; m < groups[k].size(); ++m, ++t) {
                if (m == 0 && t < 32) starts |= 1u << t;
                a.output.push_back(groups[k][m]);
                a.weight.push_back(weights[k]);
                a.start.push_back(m == 0);
            }
        }
        a.starts.push_back(starts);
        a.ones.push_back(ones);
        // The 2x linear interior form, with the first such input's weights.
        const int64_t *o = a.output.data() + t0;
        const float *w = a.weight.data() + t0;
        bool sym4 = t1 - t0 == 4 && starts == 0b0101u && o[0] == 2 * i - 1 && o[1] == 2 * i + 2 && o[2] == 2 * i
                && o[3] == 2 * i + 1;
        if (sym4 && a.sym4_wa == 0.f) {
            a.sym4_wa = w[0];
            a.sym4_wb = w[2];
        }
        sym4 = sym4 && w[0] == a.sym4_wa && w[2] == a.sym4_wb;
        a.sym4.push_back(sym4);
        // The same taps, groups and weights in the same order as input i - 1.
        bool repeats = i > 0 && t1 - t0 == t0 - g.begin[size_t(i) - 1];
        for (int64_t k = 0; repeats && k < t1 - t0; ++k) {
            const size_t prev = size_t(g.begin[size_t(i) - 1] + k), cur = size_t(t0 + k);
            repeats = a.output[prev] == a.output[cur] && a.start[prev] == a.start[cur]
                    && std::memcmp(&a.weight[prev], &a.weight[cur], sizeof(float)) == 0;
        }
        a.repeats.push_back(repeats);
        int64_t reach = i > 0 ? a.reach.back() : -1;
        if (t1 > t0) reach = *std::max_element(a.output.begin() + t0, a.output.begin() + t1);
        a.reach.push_back(reach);
    }
    return a;
}

} // namespace bpg::tbb_backend
