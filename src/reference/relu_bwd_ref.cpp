// Reference ReLUBackprop. The input is src or dst (use_dst): for both the
// derivative is 1 exactly where the value is > 0, so the same test serves.
#include "reference/reference.hpp"

namespace bpg::reference {

void relu_bwd(const core::relu_bwd_problem &p, const void *input, const void *diff_dst,
        void *diff_src) {
    core::for_each_index(p.diff_src.shape, p.diff_src.strides, [&](const dims &idx, int64_t off) {
        int64_t in_off = 0, dd_off = 0;
        for (size_t a = 0; a < idx.size(); ++a) {
            in_off += idx[a] * p.input.strides[a];
            dd_off += idx[a] * p.diff_dst.strides[a];
        }
        const double x = core::load_as_double(input, p.input.dt, in_off);
        // `x > 0` is false for NaN, so a NaN input gives 0.
        const double g = x > 0.0 ? core::load_as_double(diff_dst, p.diff_dst.dt, dd_off) : 0.0;
        core::store_from_double(diff_src, p.diff_src.dt, off, g);
    });
}

} // namespace bpg::reference
