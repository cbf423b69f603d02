// Whether bpg computes exactly torch's interpolate backward for one problem:
// torch 1.13's per-axis source index / weight maps (its own UpSample.h
// functions) against bpg's (the project's shared coordinate functions,
// through the C ABI), first with bpg's shape-derived coordinate mode, then
// with bpg scales plus pixel offsets. Decisions are cached per problem.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "bpg_capi.h"

namespace bpg_torch {

struct interp_decision {
    bool use_bpg = false;
    bpg_capi_interp_attrs attrs {}; // what bpg runs, when use_bpg
    std::string why;                // bpg: which maps agree; torch: the first differing index
};

// in/out: spatial sizes (nsp of them). scales: torch's per-axis scale
// arguments (empty when torch derives them from the sizes).
std::shared_ptr<const interp_decision> decide_interpolate(int nsp, const int64_t *in, const int64_t *out,
        bool nearest, bool align_corners, c10::optional<at::ArrayRef<double>> scales);

} // namespace bpg_torch
