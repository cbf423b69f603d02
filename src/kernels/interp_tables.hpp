// Per-axis tap tables of InterpolateBackprop, built once at compile from the
// coordinate functions of interp_coords.hpp (never a second copy of them).
//
// The backward is a gather: input index i of an axis collects the outputs o
// whose forward read i, with the forward weight. axis_gather stores that
// inverse map (CSR, outputs in increasing order, so every backend that walks
// it sums in the same order whatever the work split). A tap of weight 0 is not
// a read and is left out; two taps of one output on one input (the clamped
// edge) are merged.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/interp_coords.hpp"

namespace bpg::kernels {

struct axis_gather {
    int64_t in = 0, out = 0;
    std::vector<int64_t> begin;  // in + 1 entries: taps of i are [begin[i], begin[i+1])
    std::vector<int64_t> output; // the output index of each tap
    std::vector<float> weight;   // its weight (f32: what the fast kernels multiply by)
    int64_t max_taps = 0;        // largest number of taps of one input
    // Outputs read by inputs [i0, i1): [first_output(i0, i1), last_output(i0, i1)].
    int64_t first_output(int64_t i0, int64_t i1) const {
        for (int64_t i = i0; i < i1; ++i)
            if (begin[i] != begin[i + 1]) return output[begin[i]];
        return 0;
    }
    int64_t end_output(int64_t i0, int64_t i1) const { // one past the last output read
        for (int64_t i = i1; i > i0; --i)
            if (begin[i - 1] != begin[i]) return output[begin[i] - 1] + 1;
        return 0;
    }
};

inline axis_gather build_axis_gather(const axis_map &m, bool nearest, nearest_rounding r) {
    struct tap { int64_t o, i; double w; };
    std::vector<tap> taps;
    taps.reserve(size_t(m.out) * (nearest ? 1 : 2));
    for (int64_t o = 0; o < m.out; ++o) {
        const source_coord s = source_coordinate(m, o);
        if (nearest) {
            taps.push_back({o, nearest_index(s, r, m.in), 1.0});
            continue;
        }
        const linear_taps t = linear_taps_of(s, m.in);
        if (t.i0 == t.i1) {
            taps.push_back({o, t.i0, t.w0 + t.w1});
            continue;
        }
        if (t.w0 != 0.0) taps.push_back({o, t.i0, t.w0});
        if (t.w1 != 0.0) taps.push_back({o, t.i1, t.w1});
    }
    axis_gather g;
    g.in = m.in;
    g.out = m.out;
    g.begin.assign(size_t(m.in) + 1, 0);
    for (const tap &t : taps) ++g.begin[size_t(t.i) + 1];
    for (int64_t i = 0; i < m.in; ++i) {
        g.max_taps = std::max(g.max_taps, g.begin[size_t(i) + 1]);
        g.begin[size_t(i) + 1] += g.begin[size_t(i)];
    }
    g.output.resize(taps.size());
    g.weight.resize(taps.size());
    std::vector<int64_t> fill(g.begin.begin(), g.begin.end() - 1);
    for (const tap &t : taps) { // taps are in increasing o, so each bucket is too
        const int64_t at = fill[size_t(t.i)]++;
        g.output[size_t(at)] = t.o;
        g.weight[size_t(at)] = float(t.w);
    }
    return g;
}

} // namespace bpg::kernels
