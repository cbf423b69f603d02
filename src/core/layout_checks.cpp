#include "core/layout_checks.hpp"

#include <algorithm>
#include <numeric>

namespace bpg::core {

bool is_non_overlapping(const dims &shape, const dims &strides) {
    std::vector<size_t> axes;
    for (size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] == 0) return true; // no elements, nothing can overlap
        if (shape[a] > 1) axes.push_back(a);
    }
    std::sort(axes.begin(), axes.end(), [&](size_t x, size_t y) { return strides[x] < strides[y]; });
    // Sufficient and, for the layouts people use, necessary: each axis steps
    // over the whole extent of the axes with smaller strides.
    __int128 extent = 1;
    for (size_t a : axes) {
        if (__int128(strides[a]) < extent) return false;
        extent = __int128(strides[a]) * shape[a];
    }
    return true;
}

} // namespace bpg::core
