// A parallel copy between two strided layouts of one shape, element size 2 or
// 4 (the dtype does not change). The tbb backend plans one only when a tensor
// has strides its kernel cannot walk directly.
#pragma once

#include <cstddef>

#include "bpg/tensor.hpp"

namespace bpg::tbb_backend {

void strided_copy(const dims &shape, const void *src, const dims &src_strides, void *dst,
        const dims &dst_strides, size_t elem_size);

} // namespace bpg::tbb_backend
