#include "ops/common.h"

#include <c10/util/Exception.h>

namespace bpg_torch {

int dtype_code(at::ScalarType t) {
    switch (t) {
        case at::kFloat: return BPG_CAPI_F32;
        case at::kBFloat16: return BPG_CAPI_BF16;
        case at::kHalf: return BPG_CAPI_F16;
        default: return 0;
    }
}

bpg_capi_tensor describe(const at::Tensor &t) {
    TORCH_CHECK(t.dim() <= BPG_CAPI_MAX_RANK, "bpg_torch: rank ", t.dim(), " is above ", BPG_CAPI_MAX_RANK);
    bpg_capi_tensor d;
    d.rank = int(t.dim());
    for (int i = 0; i < d.rank; ++i) {
        d.dims[i] = t.size(i);
        d.strides[i] = t.stride(i);
    }
    return d;
}

void check_capi(int rc, const char *message, const char *what) {
    TORCH_CHECK(rc == BPG_CAPI_OK, "bpg_torch.", what, ": ", message);
}

std::string shape_text(at::IntArrayRef s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (i) out += "x";
        out += std::to_string(s[i]);
    }
    return out;
}

at::MemoryFormat dense_format(const at::Tensor &t) {
    if (t.dim() == 4 || t.dim() == 5) return t.suggest_memory_format();
    return at::MemoryFormat::Contiguous;
}

at::Tensor with_strides_of(const at::Tensor &t, const at::Tensor &like) {
    if (t.strides() == like.strides()) return t;
    return at::empty_strided(like.sizes(), like.strides(), t.options()).copy_(t);
}

at::Tensor stats_f32(const at::Tensor &t) {
    if (t.scalar_type() == at::kFloat && t.is_contiguous()) return t;
    return t.to(at::kFloat).contiguous();
}

at::Tensor dense(const at::Tensor &t, at::MemoryFormat format) {
    return t.is_contiguous(format) ? t : t.contiguous(format);
}

at::Tensor as_type(const at::Tensor &t, at::ScalarType type) { return t.scalar_type() == type ? t : t.to(type); }

} // namespace bpg_torch
