// BatchNormForwardSums' pass (bn_loops::shifted_squares): per channel, the
// sums of d = src - shift and d^2, d formed before the squares are summed so
// that a mean far from 0 loses nothing to cancellation. The pairs of partials
// have the layout of the BN pass 1 (bn_kernels.hpp), so run_bn_plan combines
// them in the same fixed order: the same bits on any thread count.
#include <algorithm>

#include "backends/tbb/bn_kernels.hpp"

namespace bpg::tbb_backend::bn {

namespace {

template <typename T>
BPG_ALWAYS_INLINE void shifted_squares_of(const bn_plan &p, const data &d, const float *shift, double *partial,
        int64_t i0, int64_t i1) {
    const reader<T, bn_fusion::none> rd(d);
    if (p.planar) {
        const int64_t nch = (p.B + planar_chunk - 1) / planar_chunk;
        for (int64_t r = i0; r < i1; ++r) {
            const int64_t k = r / p.A, a = r % p.A, s0 = at(p.src, a, k, 0);
            const float s = shift[k];
            for (int64_t c = 0; c < nch; ++c) {
                const int64_t b0 = c * planar_chunk, b1 = std::min(p.B, b0 + planar_chunk);
                float l1[lanes] = {}, l2[lanes] = {};
                int64_t b = b0;
                for (; b + lanes <= b1; b += lanes) {
                    float x[lanes];
                    lanes16 loaded;
                    load_vector<true>(rd, s0 + b, 0, loaded);
                    __builtin_memcpy(x, &loaded, sizeof x);
                    for (int l = 0; l < lanes; ++l) {
                        const float v = x[l] - s;
                        l1[l] += v, l2[l] += v * v;
                    }
                }
                double t1 = 0, t2 = 0;
                for (int l = 0; l < lanes; ++l) t1 += double(l1[l]), t2 += double(l2[l]);
                for (; b < b1; ++b) {
                    const double v = double(rd.src(s0 + b, 0) - s);
                    t1 += v, t2 += v * v;
                }
                partial[2 * (r * nch + c)] = t1, partial[2 * (r * nch + c) + 1] = t2;
            }
        }
        return;
    }
    const auto work = d.work->borrow();
    float *s1 = work->sums, *s2 = s1 + p.K;
    for (int64_t c = i0; c < i1; ++c) {
        std::fill(s1, s1 + 2 * p.K, 0.f);
        for (int64_t a = c * channels_last_chunk; a < std::min(p.A, (c + 1) * channels_last_chunk); ++a) {
            const int64_t s0 = a * p.src.a;
            for (int64_t k = 0; k < p.K; ++k) {
                const float v = rd.src(s0 + k * p.src.k, 0) - shift[k];
                s1[k] += v, s2[k] += v * v;
            }
        }
        for (int64_t k = 0; k < p.K; ++k) partial[2 * (c * p.K + k)] = s1[k], partial[2 * (c * p.K + k) + 1] = s2[k];
    }
}

} // namespace

BPG_BN_ENTRY(shifted_squares,
        (const bn_plan &p, const data &d, const float *shift, double *partial, int64_t i0, int64_t i1),
        (p, d, shift, partial, i0, i1), shifted_squares_of)

} // namespace bpg::tbb_backend::bn
