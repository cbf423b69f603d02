// The oneTBB BatchNormTrainingBackprop kernels by layout, as run_bn_plan
// (bn_run.cpp) calls them. Each entry point picks the instance of the plan's
// dtype and fusion, compiled per instruction set (BPG_BN_ENTRY).
//
// Pass 1 ("sums") writes a pair of f64 partials (sum of diff_dst, sum of
// diff_dst * (src - mean)) per chunk: planar row r = (k, a) = (r / A, r % A)
// has ceil(B / planar_chunk) chunks at pairs [r * chunks, (r + 1) * chunks);
// channels-last chunk c (rows [c, c + 1) * channels_last_chunk) has channel k's at
// pair c * K + k, whichever item of the chunk (slice_of) sums it. run_bn_plan
// adds them up in one fixed order. With use_global_stats (`global` set), the
// same sweep writes diff_src = a * diff_dst. Pass 2 ("update") writes
// diff_src from the coefficients.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backends/tbb/bn_lanes.hpp"

namespace bpg::tbb_backend::bn {

// Planar (NCX) rows, bn_planar.cpp. Pass 1 on rows [r0, r1); pass 2 on rows
// r = (a, k) = (r / K, r % K) in [r0, r1), or on all rows of channel k.
void planar_sums(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t r0, int64_t r1,
        const coeffs *global = nullptr);
void planar_update(const bn_plan &p, const data &d, const coeffs &cf, int64_t r0, int64_t r1);
void planar_update_channel(const bn_plan &p, const data &d, const coeffs &cf, int64_t k);
// NCX f32 with a fused ReLU, per channel: pass 1 keeps the ReLU's decisions
// in `passed` (A * (B / 16) words), pass 2 reads them instead of the relu
// input (the plan's loops relu_decisions_avx512).
void relu_passed_sums(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t k, uint16_t *passed);
void relu_passed_update(const bn_plan &p, const data &d, const coeffs &cf, int64_t k, const uint16_t *passed);

// Short planar rows in groups of channels, bn_short_rows.cpp: how many
// channels a task takes (1: no groups), and both passes on the rows (a, k)
// of channels k in [k0, k1), every a (row a of the group one run in memory).
int64_t channels_per_task(const bn_plan &p);
void short_rows_sums(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t k0, int64_t k1);
void short_rows_update(const bn_plan &p, const data &d, const coeffs &cf, int64_t k0, int64_t k1);

// Channels-last pass-1 items: chunk i / slices of the rows, channels [k0, k1)
// of slice i % slices (p.slice channels each; one slice of all K unless the
// plan slices the rows).
struct rows_slice { int64_t chunk, k0, k1; };
inline int64_t chunks_of(const bn_plan &p) { return (p.A + channels_last_chunk - 1) / channels_last_chunk; }
inline int64_t slices_of(const bn_plan &p) { return (p.K + p.slice - 1) / p.slice; }
inline rows_slice slice_of(const bn_plan &p, int64_t item) {
    const int64_t slices = slices_of(p), k0 = item % slices * p.slice;
    return {item / slices, k0, std::min(p.K, k0 + p.slice)};
}

// Channels-last rows, bn_channels_last.cpp: pass 1 on items [i0, i1), pass 2
// on rows [a0, a1).
void channels_last_sums(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t i0, int64_t i1,
        const coeffs *global = nullptr);
void channels_last_update(const bn_plan &p, const data &d, const coeffs &cf, int64_t a0, int64_t a1);
// Pass 2 on channels [k0, k1) of every row (channel_slabs: the wide loops).
void channels_last_update_slab(const bn_plan &p, const data &d, const coeffs &cf, int64_t k0, int64_t k1);

// Channels-last rows of fewer than 16 channels, as one flat run of vectors,
// bn_narrow.cpp (called by the channels-last entry points): where it
// applies, pass 1 on chunks [c0, c1), pass 2 (AVX-512 only) on rows [a0, a1).
bool narrow_rows(const bn_plan &p);
void narrow_sums(const bn_plan &p, const data &d, const float *mean, double *partial, int64_t c0, int64_t c1,
        const coeffs *global);
void narrow_update(const bn_plan &p, const data &d, const coeffs &cf, int64_t a0, int64_t a1);

// BatchNormForwardSums, bn_shifted_squares.cpp: per channel the sums of
// src - shift and its square on planar rows [i0, i1) or channels-last
// chunks [i0, i1), partials laid out as pass 1's.
void shifted_squares(const bn_plan &p, const data &d, const float *shift, double *partial, int64_t i0, int64_t i1);

} // namespace bpg::tbb_backend::bn

// Defines entry point NAME PARAMS (PARAMS starting with `const bn_plan &p`):
// per dtype, a BPG_CLONES function calling BODY<T> ARGS, and NAME picking the
// one of p.dt. The 16-bit dtypes also have an instance built for AVX2 and
// F16C, BODY<f16c_t> and BODY<bf16_avx2_t>, whose loops convert 8 lanes with
// those instructions (lanes8.hpp: inline asm, which target_clones cannot
// pick per clone), for the plans that name them (bn_plan::avx2_16bit: CPUs
// with those and without AVX-512).
#define BPG_BN_ENTRY(NAME, PARAMS, ARGS, BODY)                                                                         \
    namespace {                                                                                                        \
    BPG_CLONES void NAME##_f32 PARAMS { BODY<float> ARGS; }                                                            \
    BPG_CLONES void NAME##_bf16 PARAMS { BODY<bf16_t> ARGS; }                                                          \
    BPG_CLONES void NAME##_f16 PARAMS { BODY<f16_t> ARGS; }                                                            \
    __attribute__((target("avx2,f16c"))) void NAME##_f16c PARAMS { BODY<f16c_t> ARGS; }                                \
    __attribute__((target("avx2,f16c"))) void NAME##_bf16_avx2 PARAMS { BODY<bf16_avx2_t> ARGS; }                      \
    }                                                                                                                  \
    void NAME PARAMS {                                                                                                 \
        switch (p.dt) {                                                                                                \
            case data_type::bf16: return p.avx2_16bit ? NAME##_bf16_avx2 ARGS : NAME##_bf16 ARGS;                      \
            case data_type::f16: return p.avx2_16bit ? NAME##_f16c ARGS : NAME##_f16 ARGS;                             \
            default: return NAME##_f32 ARGS;                                                                           \
        }                                                                                                              \
    }
