// Builds, compiles and runs one InterpolateBackprop op through the public API
// on a chosen backend, for kernel-vs-reference tests.
#pragma once

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bpg/graph.hpp"
#include "core/tensor_desc.hpp"

namespace bpg::test {

struct interp_case {
    std::string mode = "linear";          // nearest | linear
    std::string coord = "half_pixel";     // or "" with pixel offsets
    std::string nearest_mode = "round_prefer_ceil";
    bool nxc = false;                     // data_format
    bool channels_last_strides = false;   // NCX data laid out channels-last
    data_type dt = data_type::f32;
    dims src, dst;                        // full logical shapes
    std::vector<float> scales, in_offsets, out_offsets; // pixel-offset mode when set
    dims src_strides, dst_strides;        // explicit layouts (override the flags above)

    std::string name() const;
};

// An NCX case of n x c planes, spatial src -> dst (2-D), in dtype dt.
interp_case ncx_case(data_type dt, int64_t n, int64_t c, const dims &src, const dims &dst, const char *mode,
        const char *coord = "half_pixel");

// Strides of a logical shape; with channels_last, axis 1 (C of NCX) innermost.
dims layout_strides(const dims &shape, bool channels_last);

// diff_dst values: k/64, exact in every dtype; seeded by the case.
std::vector<float> diff_dst_values(const interp_case &c, uint32_t seed);
// n values with full mantissas (uniform in [-1, 1), seeded): a changed order
// of additions shows in the bits.
std::vector<float> full_mantissas(size_t n, uint32_t seed);
// The bits of the first `count` values, or of all.
std::vector<uint32_t> bits_of(const std::vector<float> &v, size_t count);
std::vector<uint32_t> bits_of(const std::vector<float> &v);

// The case's one-op partition compiled for backend b: src 0, diff_dst 1,
// diff_src 2 (in src's layout).
compiled_partition compile_interp_case(const interp_case &c, backend_kind b);
// The same with every compile option given (threads, runtime).
compiled_partition compile_interp_case(const interp_case &c, const compile_options &opts);

// Runs the case on backend b; returns diff_src as f32 in C order.
std::vector<float> run_interp(const interp_case &c, backend_kind b, const std::vector<float> &dd_values);

// Fails the test where |got - want| (a kernel against the reference) is past
// the tolerance: f32 sums in another order; 16-bit results may round to a
// neighbouring value.
void expect_interp_close(const std::vector<float> &got, const std::vector<float> &want, data_type dt,
        const std::string &what);

} // namespace bpg::test
