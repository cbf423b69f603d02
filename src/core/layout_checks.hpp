#pragma once
#include "bpg/tensor.hpp"

namespace bpg::core {

// True when no two elements of the strided layout share an address (axes of
// size 1 are ignored). Used to refuse overlapping output layouts.
bool is_non_overlapping(const dims &shape, const dims &strides);

} // namespace bpg::core
