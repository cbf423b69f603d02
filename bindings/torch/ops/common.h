// Helpers shared by the ops: torch tensors described for the C ABI, and
// C ABI statuses turned into torch errors.
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "bpg_capi.h"

namespace bpg_torch {

// The C ABI dtype code of a torch dtype bpg runs (f32, bf16, f16), else 0.
int dtype_code(at::ScalarType t);
// NCX dims and element strides of a tensor of rank <= BPG_CAPI_MAX_RANK.
bpg_capi_tensor describe(const at::Tensor &t);
// Throws a torch error naming `what` when rc is not BPG_CAPI_OK.
void check_capi(int rc, const char *message, const char *what);
// "1x3x8x8" for logs and reasons.
std::string shape_text(at::IntArrayRef s);
// The dense layout a gradient should have: torch's suggestion for t.
at::MemoryFormat dense_format(const at::Tensor &t);

// Each dispatcher call costs about a microsecond on the tiny tensors where
// per-call overhead matters: the conversions below run only when needed.
// t with the same dense strides as `like` (a copy only when they differ).
at::Tensor with_strides_of(const at::Tensor &t, const at::Tensor &like);
// A contiguous f32 copy of per-channel values, or t itself.
at::Tensor stats_f32(const at::Tensor &t);
// t in the dense layout `format`.
at::Tensor dense(const at::Tensor &t, at::MemoryFormat format);
at::Tensor as_type(const at::Tensor &t, at::ScalarType type);

} // namespace bpg_torch
