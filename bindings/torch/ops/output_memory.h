// Memory for the gradients the ops return. glibc maps every block of 32 MB
// or more anew (its largest mmap threshold), so such a gradient lands in
// fresh 4 KB pages on every call: one page fault per 4 KB, which cost more
// than bpg's kernel itself on a 51 MB BatchNorm gradient (bench/NOTES.md).
// Those outputs are mapped 2 MB-aligned with MADV_HUGEPAGE instead
// (transparent huge pages in "madvise" mode, as torch 2.x's THP allocation
// does): one fault per 2 MB. Smaller blocks stay with torch's allocator,
// where glibc reuses its heap and nothing faults.
#pragma once

#include <ATen/ATen.h>

namespace bpg_torch {

// Outputs of at least this many bytes get huge-page-backed memory (glibc's
// DEFAULT_MMAP_THRESHOLD_MAX on 64-bit), unless the process sets glibc's mmap
// threshold itself (MALLOC_MMAP_THRESHOLD_, MALLOC_MMAP_MAX_ or a
// glibc.malloc.mmap_* tunable): then its choice stands.
constexpr size_t huge_output_min_bytes = size_t(32) << 20;

// An uninitialised tensor like at::empty_strided / at::empty(memory_format),
// CPU only, its storage from the huge-page allocator above when large (the
// storage stays resizable; smaller ones come from torch's CPU allocator).
at::Tensor empty_output(at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions &options);
at::Tensor empty_output(at::IntArrayRef sizes, at::MemoryFormat format, const at::TensorOptions &options);

} // namespace bpg_torch
