// What the fuzz targets may allocate and run per input: big enough for every
// conformance graph's structure, small enough that one input takes
// milliseconds (a 2^40-element shape is a valid graph, but executing it tests
// the machine, not the reader).
#pragma once

#include <cstdint>

namespace bpg::fuzz {

constexpr int64_t max_elements_to_run = int64_t(1) << 14;

} // namespace bpg::fuzz
