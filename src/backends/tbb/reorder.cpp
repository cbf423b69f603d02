#include "backends/tbb/reorder.hpp"

#include <cstdint>
#include <cstring>

#include <tbb/blocked_range.h>

#include "backends/tbb/parallel.hpp"

namespace bpg::tbb_backend {

namespace {

template <typename E>
void copy_rows(const dims &shape, const E *src, const dims &ss, E *dst, const dims &ds, int64_t r0, int64_t r1) {
    const int rank = int(shape.size());
    const int64_t inner = rank ? shape[size_t(rank - 1)] : 1;
    const int64_t s_in = rank ? ss[size_t(rank - 1)] : 0, d_in = rank ? ds[size_t(rank - 1)] : 0;
    for (int64_t row = r0; row < r1; ++row) {
        // Offsets of this row from its index over the outer axes.
        int64_t so = 0, dof = 0, rest = row;
        for (int a = rank - 2; a >= 0; --a) {
            const int64_t i = rest % shape[size_t(a)];
            rest /= shape[size_t(a)];
            so += i * ss[size_t(a)];
            dof += i * ds[size_t(a)];
        }
        for (int64_t j = 0; j < inner; ++j) dst[dof + j * d_in] = src[so + j * s_in];
    }
}

} // namespace

void strided_copy(const dims &shape, const void *src, const dims &src_strides, void *dst,
        const dims &dst_strides, size_t elem_size) {
    int64_t rows = 1;
    for (size_t a = 0; a + 1 < shape.size(); ++a) rows *= shape[a];
    for (dim d : shape)
        if (d == 0) return;
    parallel_tasks(tbb::blocked_range<int64_t>(0, rows, 16), [&](const tbb::blocked_range<int64_t> &r) {
        if (elem_size == 4)
            copy_rows(shape, static_cast<const uint32_t *>(src), src_strides, static_cast<uint32_t *>(dst),
                    dst_strides, r.begin(), r.end());
        else
            copy_rows(shape, static_cast<const uint16_t *>(src), src_strides, static_cast<uint16_t *>(dst),
                    dst_strides, r.begin(), r.end());
    });
}

} // namespace bpg::tbb_backend
