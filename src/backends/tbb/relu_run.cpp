#include "backends/tbb/relu_run.hpp"

#include <algorithm>
#include <vector>

#include <tbb/blocked_range.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/kernel_attributes.hpp"
#include "backends/tbb/nontemporal.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "core/allocate.hpp"

namespace bpg::tbb_backend {

namespace {

// The problem's axes, extent-1 axes dropped and each axis merged into the
// next where it follows it in memory in all three tensors (stride = next
// stride x next extent): a dense tensor, in any layout the three share, is
// one axis. Innermost last; strides in elements of input, diff_dst, diff_src.
struct merged_axes {
    core::checked_vector<int64_t> extent, sx, sg, sy;
    int64_t rows = 1; // product of all extents but the innermost
    int64_t inner() const { return extent.back(); }
};

merged_axes merge_axes(const core::relu_bwd_problem &p) {
    merged_axes m;
    for (int a = 0; a < p.diff_src.ndims(); ++a) {
        const size_t i = size_t(a);
        const int64_t n = p.diff_src.shape[i];
        if (n == 1) continue;
        const int64_t x = p.input.strides[i], g = p.diff_dst.strides[i], y = p.diff_src.strides[i];
        if (!m.extent.empty() && m.sx.back() == x * n && m.sg.back() == g * n && m.sy.back() == y * n) {
            m.extent.back() *= n; // the previous axis steps over exactly this one: one axis
            m.sx.back() = x, m.sg.back() = g, m.sy.back() = y;
            continue;
        }
        m.extent.push_back(n), m.sx.push_back(x), m.sg.push_back(g), m.sy.push_back(y);
    }
    if (m.extent.empty()) m.extent = {1}, m.sx = {1}, m.sg = {1}, m.sy = {1}; // one element
    for (size_t a = 0; a + 1 < m.extent.size(); ++a) m.rows *= m.extent[a];
    return m;
}

// Elements of the innermost axis per task item: a long axis (a dense tensor
// is one) is cut so that every thread gets work, and a staged output run
// stays in L1/L2.
constexpr int64_t piece = 16384;

// Items [i0, i1): item i is piece i % pieces of row i / pieces (pieces per
// row: ceil(inner / piece)). A row's offsets come from its outer indices.
// Large contiguous outputs leave through a staged run with non-temporal
// stores (no read of the lines written).
template <typename T>
inline void relu_items(const merged_axes &m, bool nontemporal, const T *x, const T *g, T *y, int64_t i0, int64_t i1) {
    const int64_t inner = m.inner(), pieces = (inner + piece - 1) / piece;
    const int last = int(m.extent.size()) - 1;
    const int64_t sx = m.sx[size_t(last)], sg = m.sg[size_t(last)], sy = m.sy[size_t(last)];
    for (int64_t item = i0; item < i1; ++item) {
        int64_t ox = 0, og = 0, oy = 0, rest = item / pieces;
        for (int a = last - 1; a >= 0; --a) {
            const int64_t i = rest % m.extent[size_t(a)];
            rest /= m.extent[size_t(a)];
            ox += i * m.sx[size_t(a)], og += i * m.sg[size_t(a)], oy += i * m.sy[size_t(a)];
        }
        const int64_t j0 = item % pieces * piece, n = std::min(piece, inner - j0);
        ox += j0 * sx, og += j0 * sg, oy += j0 * sy;
        if (sx == 1 && sg == 1 && sy == 1) {
            const out_run<T> out(y + oy, n, nontemporal);
            for (int64_t j = 0; j < n; ++j) out.out[j] = to_f32(x[ox + j]) > 0.f ? g[og + j] : from_f32<T>(0.f);
            out.finish();
        } else {
            for (int64_t j = 0; j < n; ++j)
                y[oy + j * sy] = to_f32(x[ox + j * sx]) > 0.f ? g[og + j * sg] : from_f32<T>(0.f);
        }
    }
}

BPG_CLONES void items_f32(const merged_axes &m, bool nt, const void *x, const void *g, void *y, int64_t i0, int64_t i1) {
    relu_items(m, nt, static_cast<const float *>(x), static_cast<const float *>(g), static_cast<float *>(y), i0, i1);
}
BPG_CLONES void items_16(const merged_axes &m, bool bf16, bool nt, const void *x, const void *g, void *y, int64_t i0,
        int64_t i1) {
    // bf16 and f16 share the sign bit and order of magnitudes: the test
    // "> 0" and the copy of diff_dst need no conversion beyond to_f32.
    if (bf16)
        relu_items(m, nt, static_cast<const bf16_t *>(x), static_cast<const bf16_t *>(g), static_cast<bf16_t *>(y), i0, i1);
    else
        relu_items(m, nt, static_cast<const f16_t *>(x), static_cast<const f16_t *>(g), static_cast<f16_t *>(y), i0, i1);
}

} // namespace

bool relu_nontemporal(const core::relu_bwd_problem &p) {
    return p.diff_src.element_count() * int64_t(size_of(p.diff_src.dt)) >= size_threshold(nontemporal_min_bytes);
}

void run_relu_bwd(const core::relu_bwd_problem &p, bool nontemporal, const void *input, const void *diff_dst,
        void *diff_src) {
    if (p.diff_src.element_count() == 0) return;
    const merged_axes m = merge_axes(p);
    const int64_t items = m.rows * ((m.inner() + piece - 1) / piece);
    const int64_t grain = std::max<int64_t>(1, piece / m.inner()); // short rows: ~piece elements a task at least
    const bool f32 = p.diff_src.dt == data_type::f32, bf16 = p.diff_src.dt == data_type::bf16;
    parallel_tasks(tbb::blocked_range<int64_t>(0, items, grain), [&](const tbb::blocked_range<int64_t> &r) {
        if (f32) items_f32(m, nontemporal, input, diff_dst, diff_src, r.begin(), r.end());
        else items_16(m, bf16, nontemporal, input, diff_dst, diff_src, r.begin(), r.end());
    });
}

} // namespace bpg::tbb_backend
