// The `onednn_graph` row of bpg-bench: the same case built as a oneDNN Graph
// (dnnl::graph, oneDNN 3.x) graph of oneDNN's own ops (InterpolateBackward,
// BatchNormTrainingBackward, ReLUBackward), compiled and run by oneDNN on the
// case's buffers. It is the anchor a oneDNN Graph user compares bpg with; it
// exists when bpg-bench was built against oneDNN 3.x with its graph API.
#pragma once

#include <cstddef>
#include <functional>

#include "measure.hpp"

namespace bpg::bench {

// A backend compiled for a case: its result so far and, when it runs the
// case, one execute of every partition (empty: n/a, with r.reason).
struct prepared_backend {
    backend_result r;
    std::function<void()> run;
};

// Whether this bpg-bench can time oneDNN Graph (built against oneDNN 3.x).
bool onednn_graph_available();

// data_of(id): the buffer of the case's tensor `id` (build_graph's ids).
// A case oneDNN Graph does not offer (an attribute value it lacks, no
// partition it supports) is n/a with oneDNN's reason.
prepared_backend prepare_onednn_graph(const bench_case &c, const case_graph &cg,
        const std::function<void *(size_t id)> &data_of);

} // namespace bpg::bench
