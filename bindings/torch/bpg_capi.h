/* The C boundary between bpg (C++17) and the PyTorch op library (built with
 * torch's own C++14 and ABI flags). Only ints, doubles, pointers and char
 * buffers cross it, so neither side sees the other's standard library types;
 * no exception crosses it either: every call returns a status (0 = success)
 * and writes a one-line message into the caller's buffer on failure.
 *
 * Compiled partitions are cached behind this boundary (LRU, bounded, one
 * mutex): a call whose op kind, shapes, strides, dtype, attributes, thread
 * count and runtime were seen before compiles nothing. */
#ifndef BPG_CAPI_H
#define BPG_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BPG_CAPI_MAX_RANK 8
#define BPG_CAPI_MAX_SPATIAL 3

enum bpg_capi_status_code {
  BPG_CAPI_OK = 0,
  BPG_CAPI_INVALID_ARGUMENT = 1, /* a bad value from the caller */
  BPG_CAPI_UNIMPLEMENTED = 2,    /* legal, but bpg cannot run it */
  BPG_CAPI_FAILED = 3            /* anything else (out of memory, runtime) */
};

enum bpg_capi_dtype { BPG_CAPI_F32 = 1, BPG_CAPI_BF16 = 2, BPG_CAPI_F16 = 3 };

enum bpg_capi_runtime { BPG_CAPI_RUNTIME_OPENMP = 0, BPG_CAPI_RUNTIME_TBB_ARENA = 1 };

/* InterpolateBackprop's coordinate_transformation_mode, or pixel offsets. */
enum bpg_capi_coord_mode {
  BPG_CAPI_HALF_PIXEL = 0,
  BPG_CAPI_ALIGN_CORNERS = 1,
  BPG_CAPI_ASYMMETRIC = 2,
  BPG_CAPI_PIXEL_OFFSETS = 3
};

enum bpg_capi_nearest_mode {
  BPG_CAPI_ROUND_PREFER_CEIL = 0,
  BPG_CAPI_ROUND_PREFER_FLOOR = 1,
  BPG_CAPI_FLOOR = 2,
  BPG_CAPI_CEIL = 3
};

typedef struct bpg_capi_interp_attrs {
  int nearest;         /* 1: nearest, 0: linear */
  int coord_mode;      /* enum bpg_capi_coord_mode */
  int nearest_mode;    /* enum bpg_capi_nearest_mode (nearest only) */
  int spatial_rank;    /* 1 to BPG_CAPI_MAX_SPATIAL */
  /* BPG_CAPI_PIXEL_OFFSETS only: s = (o - output_offset) / scale - input_offset */
  float scales[BPG_CAPI_MAX_SPATIAL];
  float input_offsets[BPG_CAPI_MAX_SPATIAL];
  float output_offsets[BPG_CAPI_MAX_SPATIAL];
} bpg_capi_interp_attrs;

/* How to run one call. */
typedef struct bpg_capi_call {
  int max_threads; /* > 0 */
  int runtime;     /* enum bpg_capi_runtime */
} bpg_capi_call;

/* What a call did (filled on success). */
typedef struct bpg_capi_outcome {
  const char *backend; /* static string: "tbb", "dnnl", "ref" */
  int cache_hit;       /* 1 when no compile happened */
} bpg_capi_outcome;

/* A dense-or-strided tensor in NCX order (dims[1] is the channel axis). */
typedef struct bpg_capi_tensor {
  int rank;
  int64_t dims[BPG_CAPI_MAX_RANK];
  int64_t strides[BPG_CAPI_MAX_RANK]; /* in elements */
} bpg_capi_tensor;

/* bpg's map of one spatial axis, from the project's coordinate functions:
 * output o reads index0[o] with weight0[o] and index1[o] with weight1[o]
 * (nearest: index1 = index0, weight0 = 1, weight1 = 0). Arrays hold `out`
 * entries. axis is the spatial axis (its scale and offsets in attrs). */
int bpg_capi_interp_axis_map(const bpg_capi_interp_attrs *attrs, int axis,
                             int64_t in, int64_t out, int64_t *index0,
                             double *weight0, int64_t *index1, double *weight1,
                             char *message, size_t message_size);

/* floor(in * scale) as bpg computes it from a `scales` value; -1 when it
 * does not fit. */
int64_t bpg_capi_output_size_from_scale(int64_t in, float scale);

/* diff_src = InterpolateBackprop(diff_dst); tensors are NCX with explicit
 * strides (channels-last data is NCX with channels-last strides). With both
 * data pointers NULL the partition is only compiled (or found) and outcome
 * says which backend would run. */
int bpg_capi_interpolate_backward(int dtype, const bpg_capi_interp_attrs *attrs,
                                  const bpg_capi_tensor *diff_dst,
                                  const bpg_capi_tensor *diff_src,
                                  const void *diff_dst_data, void *diff_src_data,
                                  const bpg_capi_call *call,
                                  bpg_capi_outcome *outcome, char *message,
                                  size_t message_size);

/* BatchNormTrainingBackprop over NCX data (channel axis 1), statistics f32
 * of C values. fuse_relu: the fused ReLUBackprop(use_dst) ->
 * BatchNormTrainingBackprop partition, relu_dst being relu(bn(src)) with
 * data's layout. has_gamma: gamma is given (else 1). Data pointers all
 * NULL: compile (or find) only, and outcome says which backend would run. diff_gamma and diff_beta are f32
 * [C] and always written. Every data tensor has `data`'s shape and strides. */
int bpg_capi_batchnorm_backward(int dtype, const bpg_capi_tensor *data,
                                int fuse_relu, int has_gamma,
                                const void *src, const void *diff_dst,
                                const void *relu_dst, const float *mean,
                                const float *variance, const float *gamma,
                                double epsilon, int use_global_stats,
                                void *diff_src, float *diff_gamma,
                                float *diff_beta, const bpg_capi_call *call,
                                bpg_capi_outcome *outcome, char *message,
                                size_t message_size);

/* SyncBatchNorm's parts over NCX data (channel axis 1), per-channel tensors
 * f32 of C values; `in` and `out` hold the data pointers in this order:
 *   BPG_CAPI_BN_FORWARD_SUMS   in {src, shift}; out {sum_src, sum_squares}
 *   BPG_CAPI_BN_BACKWARD_SUMS  in {src, diff_dst, mean};
 *                              out {sum_diff_dst, sum_diff_dst_centered}
 *   BPG_CAPI_BN_FROM_SUMS      in {src, diff_dst, mean, variance, sum_diff_dst,
 *                              sum_diff_dst_centered[, gamma]}; out {diff_src}
 * (docs/ops/batchnorm_training_backprop_split.md). global_count, epsilon and
 * has_gamma are read by BPG_CAPI_BN_FROM_SUMS only. in NULL: compile (or
 * find) only. */
enum bpg_capi_bn_part {
  BPG_CAPI_BN_FORWARD_SUMS = 1,
  BPG_CAPI_BN_BACKWARD_SUMS = 2,
  BPG_CAPI_BN_FROM_SUMS = 3
};
int bpg_capi_batchnorm_part(int part, int dtype, const bpg_capi_tensor *data,
                            int has_gamma, int64_t global_count, double epsilon,
                            const void *const *in, void *const *out,
                            const bpg_capi_call *call, bpg_capi_outcome *outcome,
                            char *message, size_t message_size);

/* [hits, misses, size, capacity] of the compiled-partition cache. */
void bpg_capi_cache_info(int64_t info[4]);
/* Capacity >= 1; entries beyond it are dropped, least recently used first. */
int bpg_capi_cache_set_capacity(int64_t capacity);
void bpg_capi_cache_clear(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BPG_CAPI_H */
