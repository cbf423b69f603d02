// One spatial axis of an InterpolateBackprop, over every coordinate mode and
// nearest rounding: the cases the per-axis kernel tests (row gathers, fused
// row sums) run through.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "kernels/interp_tables.hpp"

namespace bpg::test {

struct axis_case {
    int64_t in, out;
    kernels::coord_mode mode;
    bool nearest;
    kernels::nearest_rounding rounding;
    kernels::axis_gather gather() const {
        kernels::axis_map m;
        m.in = in;
        m.out = out;
        m.mode = mode;
        return kernels::build_axis_gather(m, nearest, rounding);
    }
};

// For each input size: outputs 2 in, 2 in + 1 and in, in every coordinate
// mode, linear and nearest with each rounding.
inline std::vector<axis_case> axis_cases(std::initializer_list<int64_t> sizes) {
    using kernels::coord_mode;
    using kernels::nearest_rounding;
    const coord_mode modes[] = {coord_mode::half_pixel, coord_mode::align_corners, coord_mode::asymmetric,
            coord_mode::pytorch_half_pixel, coord_mode::tf_half_pixel_for_nn};
    const nearest_rounding roundings[] = {nearest_rounding::round_prefer_ceil, nearest_rounding::round_prefer_floor,
            nearest_rounding::floor, nearest_rounding::ceil};
    std::vector<axis_case> all;
    for (int64_t in : sizes)
        for (int64_t out : {2 * in, 2 * in + 1, in})
            for (coord_mode m : modes) {
                all.push_back({in, out, m, false, nearest_rounding::round_prefer_ceil});
                for (nearest_rounding r : roundings) all.push_back({in, out, m, true, r});
            }
    return all;
}

} // namespace bpg::test
