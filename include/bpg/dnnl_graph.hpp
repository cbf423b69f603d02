// oneDNN v3 dnnl::graph source compatibility (docs/dnnl-graph-compat.md).
//
// A program written against oneDNN's dnnl::graph C++ API for the ops bpg
// runs compiles unchanged against bpg when it includes this header instead of
// "oneapi/dnnl/dnnl_graph.hpp": dnnl::graph names bpg, whose types carry
// oneDNN's names (op::kind::InterpolateBackward, logical_tensor::data_type,
// partition::policy, set_attr<T>...). Ops bpg does not implement come back as
// unsupported partitions, as oneDNN returns them.
//
// The aliases below declare namespace dnnl. A translation unit that also
// includes oneDNN's own headers defines BPG_DNNL_GRAPH_NO_ALIASES and names
// bpg:: directly (or its own alias, e.g. namespace dg = bpg;).
#pragma once

#include "bpg/graph.hpp"
#include "bpg/status.hpp"
#include "bpg/tensor.hpp"

#ifndef BPG_DNNL_GRAPH_NO_ALIASES
namespace dnnl {
namespace graph = ::bpg;
// oneDNN's dnnl_graph.hpp takes these from dnnl.hpp.
using engine = ::bpg::engine;
using stream = ::bpg::stream;
using fpmath_mode = ::bpg::fpmath_mode;
// bpg::error: what() is the message, code() the bpg::status.
using error = ::bpg::error;
} // namespace dnnl

namespace oneapi {
namespace dnnl = ::dnnl;
} // namespace oneapi
#endif
