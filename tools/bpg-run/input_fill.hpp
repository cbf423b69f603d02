// Deterministic input data for graph inputs that have no .npy file.
#pragma once

#include <vector>

#include "bpg/graph.hpp"
#include "host_buffer.hpp"

namespace bpg::tools {

// What an input feeds decides its values: variances are positive, a runtime
// `sizes` tensor holds diff_dst's spatial sizes, everything else is a
// pseudo-random pattern of multiples of 1/64 in [-2, 2] (exact in bf16 and
// f16, so every dtype sees the same values).
void fill_input(const std::vector<op> &ops, host_buffer &b);

} // namespace bpg::tools
