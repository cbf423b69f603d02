// BatchNormTrainingBackprop math (docs/semantics.md), as small pure functions of one
// element or one channel, templated on the accumulation type: the reference
// uses double, the fast kernels float.
//
//   inv        = 1 / sqrt(variance + epsilon)
//   xhat       = (src - mean) * inv
//   diff_beta  = sum_R diff_dst
//   diff_gamma = sum_R diff_dst * xhat
//   diff_src   = gamma * inv * (diff_dst - diff_beta/M - xhat * diff_gamma/M)   training
//   diff_src   = gamma * inv * diff_dst                                         use_global_stats
#pragma once

#include <cmath>
#include <cstdint>

namespace bpg::kernels {

template <typename T> inline T bn_inv_std(T variance, T epsilon) {
    return T(1) / std::sqrt(variance + epsilon);
}

template <typename T> inline T bn_xhat(T src, T mean, T inv) { return (src - mean) * inv; }

// Per-channel constants of the update, so the elementwise pass is
//   diff_src = scale * (diff_dst - shift - xhat * slope).
// With use_global_stats xhat is not read at all: eps = 0 with zero variance
// then gives gamma * inf * diff_dst, not the NaN that xhat * 0 would.
template <typename T> struct bn_update_coeffs {
    T scale; // gamma * inv
    T shift; // diff_beta / M
    T slope; // diff_gamma / M
    bool global_stats;
};

template <typename T>
inline bn_update_coeffs<T> bn_coeffs(T gamma, T inv, T diff_beta, T diff_gamma,
        int64_t reduce_count, bool use_global_stats) {
    if (use_global_stats) return {gamma * inv, T(0), T(0), true};
    const T m = T(reduce_count);
    return {gamma * inv, diff_beta / m, diff_gamma / m, false};
}

template <typename T>
inline T bn_diff_src(const bn_update_coeffs<T> &k, T diff_dst, T xhat) {
    if (k.global_stats) return k.scale * diff_dst;
    return k.scale * (diff_dst - k.shift - xhat * k.slope);
}

// The update folded for the fast kernels, xhat's inv taken into c2:
//   diff_src = a * diff_dst + c2 * (src - mean) + c0   (bn_folded_diff_src)
// = scale*dd - scale*inv*slope*(src - mean) - scale*shift.
template <typename T> struct bn_folded_coeffs {
    T a, c2, c0;
};

template <typename T> inline bn_folded_coeffs<T> bn_fold(const bn_update_coeffs<T> &k, T inv) {
    return {k.scale, -k.scale * inv * k.slope, -k.scale * k.shift};
}

// The fast kernels' two passes in f32 on one element (V = float) or on a
// vector of lanes (a GCC vector type, with C its broadcast coefficient or a
// vector of them): every loop of the oneTBB kernel computes through these,
// so its schedules agree bit for bit. By reference: a 64-byte vector by value
// changes the ABI between the instruction sets the kernels are compiled for.
//
// Pass 1: diff_beta's sum and diff_gamma's sum before its factor inv.
template <typename V, typename C>
inline __attribute__((always_inline)) void bn_accumulate(V &sum_dd, V &sum_dd_centered, const V &diff_dst,
        const V &src, const C &mean) {
    sum_dd += diff_dst;
    sum_dd_centered += diff_dst * (src - mean);
}

// Pass 2 with use_global_stats: diff_src = a*dd (a = scale), which needs no
// sums (the kernels write it during the sums pass when diff_gamma is asked for).
template <typename V, typename C>
inline __attribute__((always_inline)) void bn_global_diff_src(V &r, const C &a, const V &diff_dst) {
    r = a * diff_dst;
}

// Pass 2 with a channel's constants folded (a = scale, c2 = -scale*inv*slope,
// c0 = -scale*shift): diff_src = a*dd + c2*(src - mean) + c0; with
// use_global_stats a*dd.
template <typename V, typename C>
inline __attribute__((always_inline)) void bn_folded_diff_src(V &r, bool global_stats, const C &a, const V &diff_dst,
        const C &c2, const V &src, const C &mean, const C &c0) {
    if (global_stats) bn_global_diff_src(r, a, diff_dst);
    else r = a * diff_dst + c2 * (src - mean) + c0;
}

} // namespace bpg::kernels
