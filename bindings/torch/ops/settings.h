// Per-call settings of bpg_torch: thread count, threading runtime, verbose
// log. Nothing here changes a process-wide setting of torch, OpenMP or TBB.
#pragma once

#include <string>

#include "bpg_capi.h"

namespace bpg_torch {

// bpg_torch's own thread default: 0 follows at::get_num_threads() per call.
void set_num_threads(int64_t n);
// Threads the next call uses.
int64_t get_num_threads();
// What a call on tensors of `elements` elements (the largest of its
// tensors) passes to bpg: get_num_threads(), but at most one thread per
// elements_per_thread, and the runtime.
constexpr int64_t elements_per_thread = 16384;
bpg_capi_call call_settings(int64_t elements);
const char *runtime_name(int runtime);
// BPG_TORCH_VERBOSE=1: one line per call on stderr.
bool verbose();
void verbose_line(const std::string &line);

} // namespace bpg_torch
