#include "backends/tbb/relu_run.hpp"

#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/kernel_attributes.hpp"

namespace bpg::tbb_backend {

namespace {

// Rows along the innermost axis; row r's offsets come from its outer index.
template <typename T>
inline void rows(const core::relu_bwd_problem &p, const T *x, const T *g, T *y, int64_t r0, int64_t r1) {
    const int rank = p.diff_src.ndims();
    const int64_t inner = rank ? p.diff_src.shape[size_t(rank - 1)] : 1;
    auto stride = [&](const core::tensor_desc &d) { return rank ? d.strides[size_t(rank - 1)] : 0; };
    const int64_t sx = stride(p.input), sg = stride(p.diff_dst), sy = stride(p.diff_src);
    for (int64_t r = r0; r < r1; ++r) {
        int64_t ox = 0, og = 0, oy = 0, rest = r;
        for (int a = rank - 2; a >= 0; --a) {
            const int64_t i = rest % p.diff_src.shape[size_t(a)];
            rest /= p.diff_src.shape[size_t(a)];
            ox += i * p.input.strides[size_t(a)];
            og += i * p.diff_dst.strides[size_t(a)];
            oy += i * p.diff_src.strides[size_t(a)];
        }
        if (sx == 1 && sg == 1 && sy == 1) {
            for (int64_t j = 0; j < inner; ++j) y[oy + j] = to_f32(x[ox + j]) > 0.f ? g[og + j] : from_f32<T>(0.f);
        } else {
            for (int64_t j = 0; j < inner; ++j)
                y[oy + j * sy] = to_f32(x[ox + j * sx]) > 0.f ? g[og + j * sg] : from_f32<T>(0.f);
        }
    }
}

BPG_CLONES void rows_f32(const core::relu_bwd_problem &p, const void *x, const void *g, void *y, int64_t r0, int64_t r1) {
    rows(p, static_cast<const float *>(x), static_cast<const float *>(g), static_cast<float *>(y), r0, r1);
}
BPG_CLONES void rows_16(const core::relu_bwd_problem &p, const void *x, const void *g, void *y, int64_t r0, int64_t r1) {
    // bf16 and f16 share the sign bit and order of magnitudes: the test
    // "> 0" and the copy of diff_dst need no conversion beyond to_f32.
    if (p.diff_src.dt == data_type::bf16)
        rows(p, static_cast<const bf16_t *>(x), static_cast<const bf16_t *>(g), static_cast<bf16_t *>(y), r0, r1);
    else
        rows(p, static_cast<const f16_t *>(x), static_cast<const f16_t *>(g), static_cast<f16_t *>(y), r0, r1);
}

} // namespace

void run_relu_bwd(const core::relu_bwd_problem &p, const void *input, const void *diff_dst, void *diff_src) {
    const int rank = p.diff_src.ndims();
    int64_t nrows = 1;
    for (int a = 0; a + 1 < rank; ++a) nrows *= p.diff_src.shape[size_t(a)];
    if (p.diff_src.element_count() == 0) return;
    const int64_t inner = rank ? p.diff_src.shape[size_t(rank - 1)] : 1;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1));
    tbb::parallel_for(tbb::blocked_range<int64_t>(0, nrows, grain), [&](const tbb::blocked_range<int64_t> &r) {
        if (p.diff_src.dt == data_type::f32) rows_f32(p, input, diff_dst, diff_src, r.begin(), r.end());
        else rows_16(p, input, diff_dst, diff_src, r.begin(), r.end());
    });
}

} // namespace bpg::tbb_backend
