#include "backends/tbb/row_gather.hpp"

#include <algorithm>

#include <immintrin.h>

namespace bpg::tbb_backend {

row_gather_table make_row_gather(const kernels::axis_gather &g) {
    row_gather_table t;
    const int64_t nblocks = (g.in + 15) / 16;
    for (int64_t b = 0; b < nblocks; ++b) {
        const int64_t i0 = 16 * b, i1 = std::min(g.in, i0 + 16);
        row_gather_table::block blk;
        blk.first_output = g.first_output(i0, i1);
        const int64_t window = g.end_output(i0, i1) - blk.first_output;
        int64_t taps = 0;
        for (int64_t i = i0; i < i1; ++i) taps = std::max(taps, g.begin[size_t(i) + 1] - g.begin[size_t(i)]);
        blk.taps = int32_t(taps);
        blk.window = window <= 64 ? int32_t(std::max<int64_t>(window, 0)) : -1;
        blk.at = int64_t(t.mask.size());
        if (blk.window >= 0) {
            for (int64_t slot = 0; slot < taps; ++slot) {
                uint16_t m = 0;
                for (int64_t lane = 0; lane < 16; ++lane) {
                    const int64_t i = i0 + lane;
                    const bool has = i < i1 && g.begin[size_t(i)] + slot < g.begin[size_t(i) + 1];
                    const int64_t tap = has ? g.begin[size_t(i)] + slot : 0;
                    t.idx.push_back(has ? int32_t(g.output[size_t(tap)] - blk.first_output) : 0);
                    t.weight.push_back(has ? g.weight[size_t(tap)] : 0.f);
                    m = uint16_t(m | (has ? 1u << lane : 0u));
                }
                t.mask.push_back(m);
            }
        }
        t.blocks.push_back(blk);
    }
    return t;
}

namespace {

void gather_scalar(const kernels::axis_gather &g, const float *src, float *out, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
        float acc = 0.f;
        for (int64_t t = g.begin[size_t(i)]; t < g.begin[size_t(i) + 1]; ++t) acc += g.weight[size_t(t)] * src[g.output[size_t(t)]];
        out[i - i0] = acc;
    }
}

__attribute__((target("avx512f"))) void gather_avx512(const row_gather_table &t, const kernels::axis_gather &g,
        const float *src, float *out, int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
        const row_gather_table::block &blk = t.blocks[size_t(b)];
        const int64_t i0 = 16 * b, n = std::min<int64_t>(16, g.in - i0);
        float *dst = out + (i0 - 16 * b0);
        if (blk.window < 0) {
            gather_scalar(g, src, dst, i0, i0 + n);
            continue;
        }
        // The window, in up to four registers; masked loads never read past
        // the end of the row.
        __m512 w[4];
        const float *base = src + blk.first_output;
        for (int r = 0; r < 4; ++r) {
            const int32_t left = blk.window - 16 * r;
            const __mmask16 m = left >= 16 ? __mmask16(0xffff) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1u);
            w[r] = _mm512_maskz_loadu_ps(m, base + 16 * r);
        }
        __m512 acc = _mm512_setzero_ps();
        for (int32_t s = 0; s < blk.taps; ++s) {
            const int64_t at = blk.at + s;
            const __m512i idx = _mm512_loadu_si512(t.idx.data() + 16 * at);
            const __m512 wt = _mm512_loadu_ps(t.weight.data() + 16 * at);
            // Indices < 32 come from w[0..1], others from w[2..3].
            __m512 v = _mm512_permutex2var_ps(w[0], idx, w[1]);
            if (blk.window > 32) {
                const __mmask16 high = _mm512_cmpge_epi32_mask(idx, _mm512_set1_epi32(32));
                v = _mm512_mask_mov_ps(v, high, _mm512_permutex2var_ps(w[2], idx, w[3]));
            }
            acc = _mm512_mask3_fmadd_ps(v, wt, acc, __mmask16(t.mask[size_t(at)]));
        }
        _mm512_mask_storeu_ps(dst, __mmask16(n == 16 ? 0xffff : (1u << n) - 1u), acc);
    }
}

bool has_avx512() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}

} // namespace

void gather_row(const row_gather_table &t, const kernels::axis_gather &g, const float *src, float *out,
        int64_t b0, int64_t b1) {
    if (has_avx512()) return gather_avx512(t, g, src, out, b0, b1);
    gather_scalar(g, src, out, 16 * b0, std::min(g.in, 16 * b1));
}

} // namespace bpg::tbb_backend
