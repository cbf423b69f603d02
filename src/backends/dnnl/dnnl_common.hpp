// What the oneDNN lowerings share: the one CPU engine, dtype mapping, strided
// memory descriptors in oneDNN's logical axis order, and execution with a
// per-call stream and a per-call (user-mode) scratchpad.
//
// Thread safety: a compiled primitive is executed from any number of threads
// at once. oneDNN's default "library" scratchpad is shared by the primitives
// of a thread (or private to a primitive, depending on the build), which
// forbids running one primitive from two threads at the same time; so every
// primitive here is created with scratchpad_mode::user and each execute call
// brings its own scratchpad, memory objects and stream.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/tensor_desc.hpp"

namespace bpg::backends::dnnl_impl {

// The process-wide CPU engine (created on first use, thread-safe).
const dnnl::engine &cpu_engine();

// f32 and bf16 only: oneDNN 2.6 on CPU has neither f16 resampling nor f16
// batch normalization (primitive creation fails); f16 stays unmapped on 3.x,
// whose f16 kernels need AVX-512 FP16 and are not checked against the model.
std::optional<dnnl::memory::data_type> to_dnnl(data_type dt);

// A memory descriptor of t whose logical axis k is tensor axis order[k]
// (order is a permutation of t's axes). Strides are t's own, permuted the
// same way: that is how NXC data, or NCX data with channels-last strides,
// is shown to oneDNN as its N, C, spatial... dims. Throws dnnl::error when
// oneDNN refuses the strides.
dnnl::memory::desc permuted_desc(const core::tensor_desc &t, const std::vector<int> &order,
        dnnl::memory::data_type dt);

// "2x3x4" and "[12,4,1]": for cache keys and messages.
std::string dims_text(const dims &d);
std::string strides_text(const dims &s);
// Dims and strides of t taken in `order` (as permuted_desc sees them), as
// text for primitive-cache keys.
std::string permuted_text(const core::tensor_desc &t, const std::vector<int> &order);

// True when a and b have the same strides on every axis of size > 1 (the
// stride of a size-1 axis never addresses anything).
bool same_strides(const core::tensor_desc &a, const core::tensor_desc &b);

// The primitive attribute every lowering uses: user-managed scratchpad.
dnnl::primitive_attr user_scratchpad_attr();

// Runs p once: binds a scratchpad of scratchpad_md's size (thread-local,
// reused across calls of one thread), creates a stream, executes, waits, on
// an OpenMP team of the current run's max_threads (openmp_team.hpp).
void execute_on_cpu(const dnnl::primitive &p, std::unordered_map<int, dnnl::memory> &args,
        const dnnl::memory::desc &scratchpad_md);

} // namespace bpg::backends::dnnl_impl
