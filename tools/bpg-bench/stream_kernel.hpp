// The streaming kernels: the yardstick every backend is measured against.
//
// Each one moves exactly the bytes that bytes_moved() counts for its case,
// in the case's element type, with trivial arithmetic, as a oneTBB
// parallel_for / parallel_reduce under the same thread limit as the backends.
// Its time is what this machine needs to move those bytes; a backend's
// "x stream" is how far it is from that.
//
// Element types: f32 is added and multiplied as float. bf16 and f16 are moved
// as raw 16-bit values with the same amount of integer work (sums of the bit
// patterns in uint32): the bytes are what matters, and converting would make
// the yardstick partly compute-bound (f16 conversion is branchy).
//
// Stores: with `nontemporal`, outputs leave through non-temporal stores,
// which skip the read for ownership of each destination line; without, through
// ordinary stores. Which is faster depends on whether the output fits in the
// cache, so the caller times both and keeps the faster as the yardstick.
// (Fractional downsampling, n_in < n_out with n_out % n_in != 0, always
// uses ordinary stores.)
//
// Each returns a checksum of what it computed; the caller keeps it, so the
// compiler cannot drop any of the work. Sources: stream_interp.cpp and
// stream_bn.cpp.
#pragma once

#include <cstdint>

#include "bpg/tensor.hpp"

namespace bpg::bench {

// InterpolateBackprop: reads in[0, n_in) once and writes out[0, n_out) once.
// Output j is the sum of the contiguous group in[floor(j*n_in/n_out),
// floor((j+1)*n_in/n_out)): every input is read exactly once whether the
// ratio n_in/n_out is an integer, a fraction or below 1 (downsampling, where
// some outputs get an empty group and are written 0).
double stream_reduce(data_type dt, const void *in, int64_t n_in, void *out, int64_t n_out, bool nontemporal);

// BatchNormTrainingBackprop, training: pass 1 reads src and diff_dst and
// reduces them (sum dd, sum dd*src); pass 2 reads both again and writes
// diff_src = a*dd + b*src with a, b taken from pass 1's sums.
//
// `third` (null for a lone BN) is the input of a ReLUBackprop fused in front,
// with diff_dst its diff_dst and src the BN input it does not feed: pass 1
// reads it too, pass 2 does not. That is what a two-pass kernel of the fused
// pair has to move at least: the ReLU's decisions fit in a bit per element,
// kept from pass 1 (not counted).
double stream_bn_two_pass(data_type dt, const void *src, const void *diff_dst, const void *third, void *diff_src,
        int64_t n, bool nontemporal);

// BatchNormTrainingBackprop, use_global_stats with diff_gamma: one pass that
// reads src and diff_dst (and `third`, as above), reduces sum dd*src and
// writes diff_src = k*dd. (Without diff_gamma, global stats reads only
// diff_dst, or a fused ReLU's input and diff_dst: stream_reduce with
// n_in == n_out, or this with the ReLU's input as src.)
double stream_bn_one_pass(data_type dt, const void *src, const void *diff_dst, const void *third, void *diff_src,
        int64_t n, bool nontemporal);

} // namespace bpg::bench
