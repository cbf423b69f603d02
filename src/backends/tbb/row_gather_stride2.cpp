// The stride-2 form of the planar row gather (see row_gather.hpp): 2x
// upsampling, the common case of decoders and feature pyramids.
#include "backends/tbb/row_gather_stride2.hpp"

#include <algorithm>
#include <type_traits>

#include "backends/tbb/stride2_simd.hpp"

namespace bpg::tbb_backend {

using namespace stride2;

namespace {

// The tap of input i on output 2i + d, or 0 with has = false.
float tap_at(const kernels::axis_gather &g, int64_t i, int64_t d, bool &has) {
    has = false;
    if (i >= g.in) return 0.f;
    for (int64_t t = g.begin[size_t(i)]; t < g.begin[size_t(i) + 1]; ++t)
        if (g.output[size_t(t)] == 2 * i + d) {
            has = true;
            return g.weight[size_t(t)];
        }
    return 0.f;
}

} // namespace

void add_stride2_form(row_gather_table &t, const kernels::axis_gather &g) {
    int64_t lo = max_d + 1, hi = min_d - 1;
    for (int64_t i = 0; i < g.in; ++i)
        for (int64_t k = g.begin[size_t(i)]; k < g.begin[size_t(i) + 1]; ++k) {
            lo = std::min(lo, g.output[size_t(k)] - 2 * i);
            hi = std::max(hi, g.output[size_t(k)] - 2 * i);
        }
    if (lo < min_d || lo > max_dlo || hi > max_d || hi - lo >= 4) return; // not the form (or no taps at all)
    t.s2_dlo = int32_t(lo);
    t.s2_k = int32_t(hi - lo + 1);
    const int64_t nblocks = (g.in + 15) / 16;
    for (int64_t b = 0; b < nblocks; ++b) {
        bool full = true;
        for (int64_t d = lo; d <= hi; ++d) {
            uint16_t mask = 0;
            for (int64_t lane = 0; lane < 16; ++lane) {
                bool has = false;
                t.s2_weight.push_back(tap_at(g, 16 * b + lane, d, has));
                mask = uint16_t(mask | (has ? 1u << lane : 0u));
            }
            t.s2_mask.push_back(mask);
            const float *w = t.s2_weight.data() + t.s2_weight.size() - 16;
            full = full && mask == 0xffff && std::all_of(w, w + 16, [&](float x) { return x == w[0]; });
        }
        t.s2_common.push_back(full);
    }
    // The common weights: those of the first full block; a full block with
    // other weights is not common.
    const auto first = std::find(t.s2_common.begin(), t.s2_common.end(), uint8_t(1));
    if (first != t.s2_common.end()) {
        const size_t b0 = size_t(first - t.s2_common.begin());
        for (int32_t k = 0; k < t.s2_k; ++k) t.s2_common_weight.push_back(t.s2_weight[16 * (b0 * size_t(t.s2_k) + size_t(k))]);
        for (size_t b = 0; b < t.s2_common.size(); ++b)
            for (int32_t k = 0; k < t.s2_k && t.s2_common[b]; ++k)
                t.s2_common[b] = t.s2_weight[16 * (b * size_t(t.s2_k) + size_t(k))] == t.s2_common_weight[size_t(k)];
    }
    t.stride2 = true;
}

namespace {

template <typename S> struct rows_in_memory {
    const row_gather_table &t;
    const kernels::axis_gather &g;
    const S *src;
    int64_t src_stride;
    float *out;
    int64_t out_stride, nrows, b0, b1;
    template <int DLO, int K> __attribute__((target("avx512f"))) void operator()() const {
        const common_weights<K> cw(t);
        for (int64_t r = 0; r < nrows; ++r) {
            if constexpr (std::is_same_v<S, float>)
                row_stride2<DLO, K>(t, g, memory_row {src + r * src_stride}, out + r * out_stride, cw.w, b0, b1);
            else
                row_stride2<DLO, K>(t, g, memory_row16<S> {src + r * src_stride}, out + r * out_stride, cw.w, b0, b1);
        }
    }
};

} // namespace

void gather_rows_stride2(const row_gather_table &t, const kernels::axis_gather &g, const float *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1) {
    with_form(t, rows_in_memory<float> {t, g, src, src_stride, out, out_stride, nrows, b0, b1});
}
void gather_rows_stride2(const row_gather_table &t, const kernels::axis_gather &g, const bf16_t *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1) {
    with_form(t, rows_in_memory<bf16_t> {t, g, src, src_stride, out, out_stride, nrows, b0, b1});
}
void gather_rows_stride2(const row_gather_table &t, const kernels::axis_gather &g, const f16_t *src,
        int64_t src_stride, float *out, int64_t out_stride, int64_t nrows, int64_t b0, int64_t b1) {
    with_form(t, rows_in_memory<f16_t> {t, g, src, src_stride, out, out_stride, nrows, b0, b1});
}

} // namespace bpg::tbb_backend
