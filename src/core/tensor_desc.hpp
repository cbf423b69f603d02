// A concrete strided tensor as the kernels see it, and element access by
// dtype for code that is not hot (reference backend, tools, tests).
#pragma once

#include <cstdint>
#include <vector>

#include "bpg/tensor.hpp"
#include "kernels/dtype_convert.hpp"

namespace bpg::core {

struct tensor_desc {
    size_t id = 0;
    data_type dt = data_type::undef;
    dims shape;
    dims strides; // in elements, same rank as shape

    int ndims() const { return int(shape.size()); }
    int64_t element_count() const {
        int64_t n = 1;
        for (dim d : shape) n *= d;
        return n;
    }
};

tensor_desc desc_of(const logical_tensor &lt); // lt must be concrete and strided

inline double load_as_double(const void *base, data_type dt, int64_t offset) {
    switch (dt) {
        case data_type::f32: return static_cast<const float *>(base)[offset];
        case data_type::bf16: return kernels::bf16_to_f32(static_cast<const uint16_t *>(base)[offset]);
        case data_type::f16: return kernels::f16_to_f32(static_cast<const uint16_t *>(base)[offset]);
        case data_type::s32: return static_cast<const int32_t *>(base)[offset];
        default: return 0.0;
    }
}

// Rounds to the destination type (f64 -> f32 -> 16-bit, each to nearest even).
inline void store_from_double(void *base, data_type dt, int64_t offset, double v) {
    switch (dt) {
        case data_type::f32: static_cast<float *>(base)[offset] = float(v); break;
        case data_type::bf16: static_cast<uint16_t *>(base)[offset] = kernels::f32_to_bf16(float(v)); break;
        case data_type::f16: static_cast<uint16_t *>(base)[offset] = kernels::f32_to_f16(float(v)); break;
        case data_type::s32: { // saturating; NaN -> 0 (a plain cast would be UB)
            const double c = v != v ? 0.0 : (v < -2147483648.0 ? -2147483648.0 : (v > 2147483647.0 ? 2147483647.0 : v));
            static_cast<int32_t *>(base)[offset] = int32_t(c);
            break;
        }
        default: break;
    }
}

// Calls f(index, offset) for every element in row-major logical order, where
// index is the multi-index and offset = sum index[a] * strides[a].
template <typename F> void for_each_index(const dims &shape, const dims &strides, F &&f) {
    const int r = int(shape.size());
    for (dim d : shape)
        if (d == 0) return;
    dims idx(r, 0);
    int64_t off = 0;
    while (true) {
        f(static_cast<const dims &>(idx), off);
        int a = r - 1;
        for (; a >= 0; --a) {
            if (++idx[a] < shape[a]) { off += strides[a]; break; }
            off -= strides[a] * (shape[a] - 1);
            idx[a] = 0;
        }
        if (a < 0) return;
    }
}

// Writes +0 to every element of t (nothing when it has none).
inline void store_zeros(const tensor_desc &t, void *base) {
    for_each_index(t.shape, t.strides, [&](const dims &, int64_t off) { store_from_double(base, t.dt, off, 0.0); });
}

} // namespace bpg::core
