// The C ABI of bindings/torch/bpg_capi.h over bpg's public graph API. Each
// call builds (once per cache key) a one-op or fused graph, compiles it with
// the caller's thread count and runtime, and executes it; the compiled
// partition is kept in a bounded LRU cache so steady-state calls compile
// nothing. No exception leaves this file.
#include "bpg_capi.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "bpg/bpg.hpp"
#include "capi_cache.hpp"
#include "kernels/interp_coords.hpp"

namespace {

using namespace bpg;
using bpg_capi::cache_key;
using bpg_capi::cached_partition;

void write_message(char *buffer, size_t size, const char *text) {
    if (!buffer || size == 0) return;
    std::snprintf(buffer, size, "%s", text);
}

int status_of(status s) {
    switch (s) {
        case status::invalid_argument:
        case status::invalid_graph:
        case status::invalid_shape:
        case status::invalid_data_type: return BPG_CAPI_INVALID_ARGUMENT;
        case status::unimplemented: return BPG_CAPI_UNIMPLEMENTED;
        default: return BPG_CAPI_FAILED;
    }
}

// Runs f, turning every exception into a status and a message.
template <typename F>
int guarded(char *message, size_t message_size, F &&f) {
    try {
        f();
        return BPG_CAPI_OK;
    } catch (const bpg::error &e) {
        write_message(message, message_size, e.what());
        return status_of(e.code());
    } catch (const std::bad_alloc &) {
        write_message(message, message_size, "out of memory");
        return BPG_CAPI_FAILED;
    } catch (const std::exception &e) {
        write_message(message, message_size, e.what());
        return BPG_CAPI_FAILED;
    } catch (...) {
        write_message(message, message_size, "unknown exception");
        return BPG_CAPI_FAILED;
    }
}

data_type dtype_of(int dtype) {
    switch (dtype) {
        case BPG_CAPI_F32: return data_type::f32;
        case BPG_CAPI_BF16: return data_type::bf16;
        case BPG_CAPI_F16: return data_type::f16;
        default: throw error(status::invalid_argument, "bpg_capi: unknown dtype code " + std::to_string(dtype));
    }
}

compile_options options_of(const bpg_capi_call &call) {
    if (call.max_threads < 1)
        throw error(status::invalid_argument,
                "bpg_capi: max_threads must be >= 1, got " + std::to_string(call.max_threads));
    compile_options o;
    o.max_threads = call.max_threads;
    switch (call.runtime) {
        case BPG_CAPI_RUNTIME_OPENMP: o.runtime = threading_runtime::openmp; break;
        case BPG_CAPI_RUNTIME_TBB_ARENA: o.runtime = threading_runtime::tbb_arena; break;
        default:
            throw error(status::invalid_argument, "bpg_capi: unknown runtime code " + std::to_string(call.runtime));
    }
    return o;
}

void check_tensor(const bpg_capi_tensor &t, const char *name) {
    if (t.rank < 2 || t.rank > BPG_CAPI_MAX_RANK)
        throw error(status::invalid_argument,
                std::string("bpg_capi: ") + name + " has rank " + std::to_string(t.rank) + "; 2 to 8 are supported");
}

dims dims_of(const bpg_capi_tensor &t) { return dims(t.dims, t.dims + t.rank); }
dims strides_of(const bpg_capi_tensor &t) { return dims(t.strides, t.strides + t.rank); }

kernels::coord_mode coord_mode_of(int m) {
    switch (m) {
        case BPG_CAPI_HALF_PIXEL: return kernels::coord_mode::half_pixel;
        case BPG_CAPI_ALIGN_CORNERS: return kernels::coord_mode::align_corners;
        case BPG_CAPI_ASYMMETRIC: return kernels::coord_mode::asymmetric;
        case BPG_CAPI_PIXEL_OFFSETS: return kernels::coord_mode::pixel_offsets;
        default: throw error(status::invalid_argument, "bpg_capi: unknown coordinate mode code " + std::to_string(m));
    }
}
kernels::nearest_rounding rounding_of(int m) {
    switch (m) {
        case BPG_CAPI_ROUND_PREFER_CEIL: return kernels::nearest_rounding::round_prefer_ceil;
        case BPG_CAPI_ROUND_PREFER_FLOOR: return kernels::nearest_rounding::round_prefer_floor;
        case BPG_CAPI_FLOOR: return kernels::nearest_rounding::floor;
        case BPG_CAPI_CEIL: return kernels::nearest_rounding::ceil;
        default: throw error(status::invalid_argument, "bpg_capi: unknown nearest mode code " + std::to_string(m));
    }
}

void check_interp_attrs(const bpg_capi_interp_attrs &a) {
    if (a.spatial_rank < 1 || a.spatial_rank > BPG_CAPI_MAX_SPATIAL)
        throw error(status::invalid_argument,
                "bpg_capi: spatial_rank must be 1 to 3, got " + std::to_string(a.spatial_rank));
    (void)coord_mode_of(a.coord_mode);
    (void)rounding_of(a.nearest_mode);
}

// The cache key of an interpolate call: everything compile depends on.
void interp_key(cache_key &k, int dtype, const bpg_capi_interp_attrs &a, const bpg_capi_tensor &dd,
        const bpg_capi_tensor &ds, const bpg_capi_call &call) {
    k.push(1);
    k.push(dtype);
    k.push(call.max_threads);
    k.push(call.runtime);
    k.push(a.nearest);
    k.push(a.coord_mode);
    k.push(a.nearest_mode);
    k.push(dd.rank);
    for (int i = 0; i < dd.rank; ++i) {
        k.push(dd.dims[i]);
        k.push(dd.strides[i]);
        k.push(ds.dims[i]);
        k.push(ds.strides[i]);
    }
    if (a.coord_mode == BPG_CAPI_PIXEL_OFFSETS)
        for (int i = 0; i < a.spatial_rank; ++i) {
            k.push_float(a.scales[i]);
            k.push_float(a.input_offsets[i]);
            k.push_float(a.output_offsets[i]);
        }
}

// Port ids of the graphs below.
enum : size_t { src_id = 0, diff_dst_id = 1, diff_src_id = 2, mean_id = 3, variance_id = 4, gamma_id = 5,
    diff_gamma_id = 6, diff_beta_id = 7, relu_dst_id = 8, relu_diff_id = 9 };

compiled_partition compile_single(graph &g, const std::vector<logical_tensor> &in,
        const std::vector<logical_tensor> &out, const compile_options &o) {
    g.finalize();
    const std::vector<partition> parts = g.get_partitions();
    if (parts.size() != 1)
        throw error(status::unimplemented,
                "bpg_capi: the graph became " + std::to_string(parts.size()) + " partitions, expected 1");
    return parts[0].compile(in, out, engine(), o);
}

std::shared_ptr<cached_partition> compile_interp(data_type dt, const bpg_capi_interp_attrs &a,
        const bpg_capi_tensor &dd, const bpg_capi_tensor &ds, const compile_options &o) {
    const int r = dd.rank, nsp = a.spatial_rank;
    if (ds.rank != r || r != nsp + 2)
        throw error(status::invalid_argument,
                "bpg_capi: diff_dst and diff_src must both have rank spatial_rank + 2");
    const logical_tensor src(src_id, dt, dims_of(ds), strides_of(ds));
    const logical_tensor diff_dst(diff_dst_id, dt, dims_of(dd), strides_of(dd));
    const logical_tensor diff_src(diff_src_id, dt, dims_of(ds), strides_of(ds));
    op up(0, op::kind::InterpolateBackprop, {src, diff_dst}, {diff_src}, "bpg_torch_interpolate_bwd");
    up.set_attr(op::attr::mode, a.nearest ? "nearest" : "linear").set_attr(op::attr::data_format, "NCX");
    if (a.nearest) up.set_attr(op::attr::nearest_mode, kernels::to_string(rounding_of(a.nearest_mode)));
    if (a.coord_mode == BPG_CAPI_PIXEL_OFFSETS) {
        up.set_attr(op::attr::scales, std::vector<float>(a.scales, a.scales + nsp));
        up.set_attr(op::attr::input_pixel_offsets, std::vector<float>(a.input_offsets, a.input_offsets + nsp));
        up.set_attr(op::attr::output_pixel_offsets, std::vector<float>(a.output_offsets, a.output_offsets + nsp));
    } else {
        up.set_attr(op::attr::coordinate_transformation_mode, kernels::to_string(coord_mode_of(a.coord_mode)));
        up.set_attr(op::attr::sizes, std::vector<int64_t>(dd.dims + 2, dd.dims + r));
    }
    graph g;
    g.add_op(up);
    auto entry = std::make_shared<cached_partition>();
    entry->cp = compile_single(g, {src, diff_dst}, {diff_src}, o);
    entry->inputs = {tensor(src, engine(), nullptr), tensor(diff_dst, engine(), nullptr)};
    entry->outputs = {tensor(diff_src, engine(), nullptr)};
    entry->bound_inputs = entry->inputs;
    entry->bound_outputs = entry->outputs;
    entry->backend = to_string(entry->cp.get_backend());
    entry->src_bytes = src.get_mem_size();
    entry->diff_dst_bytes = diff_dst.get_mem_size();
    return entry;
}

// The interpolate graph's src is read for its shape only, but execute wants a
// non-null buffer that overlaps no output: diff_dst when it spans as many
// bytes, else a never-touched block of address space kept per thread.
const void *shape_only_buffer(const cached_partition &e, const void *diff_dst) {
    if (e.src_bytes <= e.diff_dst_bytes) return diff_dst;
    thread_local std::unique_ptr<char[]> block;
    thread_local size_t block_bytes = 0;
    if (block_bytes < e.src_bytes) {
        block.reset(new char[e.src_bytes]);
        block_bytes = e.src_bytes;
    }
    return block.get();
}

void bn_key(cache_key &k, int dtype, const bpg_capi_tensor &t, bool fused, bool use_global_stats,
        bool has_gamma, double epsilon, const bpg_capi_call &call) {
    k.push(2);
    k.push(dtype);
    k.push(call.max_threads);
    k.push(call.runtime);
    k.push(fused);
    k.push(use_global_stats);
    k.push(has_gamma);
    k.push_float(float(epsilon));
    k.push(t.rank);
    for (int i = 0; i < t.rank; ++i) {
        k.push(t.dims[i]);
        k.push(t.strides[i]);
    }
}

std::shared_ptr<cached_partition> compile_bn(data_type dt, const bpg_capi_tensor &t, bool fused,
        bool use_global_stats, bool has_gamma, double epsilon, const compile_options &o) {
    const dims shape = dims_of(t), strides = strides_of(t);
    const dims stat_shape {t.dims[1]};
    const logical_tensor src(src_id, dt, shape, strides), diff_dst(diff_dst_id, dt, shape, strides),
            diff_src(diff_src_id, dt, shape, strides), mean(mean_id, data_type::f32, stat_shape),
            variance(variance_id, data_type::f32, stat_shape), gamma(gamma_id, data_type::f32, stat_shape),
            diff_gamma(diff_gamma_id, data_type::f32, stat_shape), diff_beta(diff_beta_id, data_type::f32, stat_shape),
            relu_dst(relu_dst_id, dt, shape, strides), relu_diff(relu_diff_id, dt, shape, strides);
    std::vector<logical_tensor> bn_in {src, fused ? relu_diff : diff_dst, mean, variance};
    if (has_gamma) bn_in.push_back(gamma);
    op bn(1, op::kind::BatchNormTrainingBackprop, bn_in, {diff_src, diff_gamma, diff_beta}, "bpg_torch_bn_bwd");
    bn.set_attr(op::attr::epsilon, float(epsilon))
            .set_attr(op::attr::data_format, "NCX")
            .set_attr(op::attr::use_global_stats, use_global_stats);
    graph g;
    std::vector<logical_tensor> in;
    if (fused) {
        op relu(0, op::kind::ReLUBackprop, {relu_dst, diff_dst}, {relu_diff}, "bpg_torch_relu_bwd");
        relu.set_attr(op::attr::use_dst, true);
        g.add_op(relu);
        in = {relu_dst, diff_dst, src, mean, variance};
    } else {
        in = {src, diff_dst, mean, variance};
    }
    if (has_gamma) in.push_back(gamma);
    g.add_op(bn);
    auto entry = std::make_shared<cached_partition>();
    entry->cp = compile_single(g, in, {diff_src, diff_gamma, diff_beta}, o);
    for (const logical_tensor &lt : in) entry->inputs.emplace_back(lt, engine(), nullptr);
    for (const logical_tensor &lt : {diff_src, diff_gamma, diff_beta}) entry->outputs.emplace_back(lt, engine(), nullptr);
    entry->bound_inputs = entry->inputs;
    entry->bound_outputs = entry->outputs;
    entry->backend = to_string(entry->cp.get_backend());
    return entry;
}

// One part of SyncBatchNorm (bpg_capi_batchnorm_part), ports in its order.
std::shared_ptr<cached_partition> compile_bn_part(int part, data_type dt, const bpg_capi_tensor &t, bool has_gamma,
        int64_t global_count, double epsilon, const compile_options &o) {
    const dims shape = dims_of(t), strides = strides_of(t), c {t.dims[1]};
    auto data = [&](size_t id) { return logical_tensor(id, dt, shape, strides); };
    auto stat = [&](size_t id) { return logical_tensor(id, data_type::f32, c); };
    std::vector<logical_tensor> in, out;
    op o_part(0, op::kind::BatchNormForwardSums, "bpg_torch_bn_part");
    switch (part) {
        case BPG_CAPI_BN_FORWARD_SUMS:
            in = {data(src_id), stat(mean_id)};
            out = {stat(diff_gamma_id), stat(diff_beta_id)};
            break;
        case BPG_CAPI_BN_BACKWARD_SUMS:
            o_part = op(0, op::kind::BatchNormTrainingBackpropSums, "bpg_torch_bn_bwd_sums");
            in = {data(src_id), data(diff_dst_id), stat(mean_id)};
            out = {stat(diff_gamma_id), stat(diff_beta_id)};
            break;
        case BPG_CAPI_BN_FROM_SUMS:
            o_part = op(0, op::kind::BatchNormTrainingBackpropFromSums, "bpg_torch_bn_bwd_from_sums");
            in = {data(src_id), data(diff_dst_id), stat(mean_id), stat(variance_id), stat(diff_gamma_id),
                    stat(diff_beta_id)};
            if (has_gamma) in.push_back(stat(gamma_id));
            out = {data(diff_src_id)};
            o_part.set_attr(op::attr::epsilon, float(epsilon)).set_attr(op::attr::global_count, global_count);
            break;
        default: throw error(status::invalid_argument, "bpg_capi: unknown BatchNorm part " + std::to_string(part));
    }
    o_part.add_inputs(in).add_outputs(out).set_attr(op::attr::data_format, "NCX");
    graph g;
    g.add_op(o_part);
    auto entry = std::make_shared<cached_partition>();
    entry->cp = compile_single(g, in, out, o);
    for (const logical_tensor &lt : in) entry->inputs.emplace_back(lt, engine(), nullptr);
    for (const logical_tensor &lt : out) entry->outputs.emplace_back(lt, engine(), nullptr);
    entry->bound_inputs = entry->inputs;
    entry->bound_outputs = entry->outputs;
    entry->backend = to_string(entry->cp.get_backend());
    return entry;
}

// Binds the handles (in port order) and executes. The entry's bound vectors
// are reused when no other thread holds them; else a copy is bound.
void run(cached_partition &e, const void *const *in, void *const *out) {
    const bool own = !e.busy.test_and_set(std::memory_order_acquire);
    struct release {
        cached_partition &e;
        bool own;
        ~release() { if (own) e.busy.clear(std::memory_order_release); }
    } guard {e, own};
    std::vector<tensor> in_copy, out_copy;
    if (!own) {
        in_copy = e.inputs;
        out_copy = e.outputs;
    }
    std::vector<tensor> &ins = own ? e.bound_inputs : in_copy;
    std::vector<tensor> &outs = own ? e.bound_outputs : out_copy;
    for (size_t i = 0; i < ins.size(); ++i) ins[i].set_data_handle(const_cast<void *>(in[i]));
    for (size_t i = 0; i < outs.size(); ++i) outs[i].set_data_handle(out[i]);
    e.cp.execute(stream(engine()), ins, outs);
}

} // namespace

extern "C" {

int bpg_capi_interp_axis_map(const bpg_capi_interp_attrs *attrs, int axis, int64_t in, int64_t out,
        int64_t *index0, double *weight0, int64_t *index1, double *weight1, char *message,
        size_t message_size) {
    return guarded(message, message_size, [&] {
        if (!attrs || !index0 || !weight0 || !index1 || !weight1)
            throw error(status::invalid_argument, "bpg_capi_interp_axis_map: null pointer");
        check_interp_attrs(*attrs);
        if (axis < 0 || axis >= attrs->spatial_rank)
            throw error(status::invalid_argument, "bpg_capi_interp_axis_map: axis out of range");
        if (in < 1 || out < 1)
            throw error(status::invalid_argument, "bpg_capi_interp_axis_map: sizes must be >= 1");
        kernels::axis_map m;
        m.in = in;
        m.out = out;
        m.mode = coord_mode_of(attrs->coord_mode);
        m.scale = attrs->scales[axis];
        m.input_offset = attrs->input_offsets[axis];
        m.output_offset = attrs->output_offsets[axis];
        const kernels::nearest_rounding r = rounding_of(attrs->nearest_mode);
        for (int64_t o = 0; o < out; ++o) {
            const kernels::source_coord s = kernels::source_coordinate(m, o);
            if (attrs->nearest) {
                index0[o] = index1[o] = kernels::nearest_index(s, r, in);
                weight0[o] = 1.0;
                weight1[o] = 0.0;
            } else {
                const kernels::linear_taps t = kernels::linear_taps_of(s, in);
                index0[o] = t.i0;
                index1[o] = t.i1;
                weight0[o] = t.w0;
                weight1[o] = t.w1;
            }
        }
    });
}

int64_t bpg_capi_output_size_from_scale(int64_t in, float scale) {
    return kernels::output_size_from_scale(in, scale);
}

int bpg_capi_interpolate_backward(int dtype, const bpg_capi_interp_attrs *attrs,
        const bpg_capi_tensor *diff_dst, const bpg_capi_tensor *diff_src, const void *diff_dst_data,
        void *diff_src_data, const bpg_capi_call *call, bpg_capi_outcome *outcome, char *message,
        size_t message_size) {
    return guarded(message, message_size, [&] {
        if (!attrs || !diff_dst || !diff_src || !call || !outcome)
            throw error(status::invalid_argument, "bpg_capi_interpolate_backward: null pointer");
        check_interp_attrs(*attrs);
        check_tensor(*diff_dst, "diff_dst");
        check_tensor(*diff_src, "diff_src");
        cache_key key;
        interp_key(key, dtype, *attrs, *diff_dst, *diff_src, *call);
        bool hit = true;
        std::shared_ptr<cached_partition> e = bpg_capi::cache().find(key);
        if (!e) {
            hit = false;
            e = compile_interp(dtype_of(dtype), *attrs, *diff_dst, *diff_src, options_of(*call));
            bpg_capi::cache().insert(key, e);
        }
        if (diff_dst_data || diff_src_data) {
            const void *in[2] = {shape_only_buffer(*e, diff_dst_data), diff_dst_data};
            void *out[1] = {diff_src_data};
            run(*e, in, out);
        }
        outcome->backend = e->backend;
        outcome->cache_hit = hit;
    });
}

int bpg_capi_batchnorm_backward(int dtype, const bpg_capi_tensor *data, int fuse_relu, int has_gamma_arg,
        const void *src,
        const void *diff_dst, const void *relu_dst, const float *mean, const float *variance,
        const float *gamma, double epsilon, int use_global_stats, void *diff_src, float *diff_gamma,
        float *diff_beta, const bpg_capi_call *call, bpg_capi_outcome *outcome, char *message,
        size_t message_size) {
    return guarded(message, message_size, [&] {
        if (!data || !call || !outcome)
            throw error(status::invalid_argument, "bpg_capi_batchnorm_backward: null pointer");
        const bool fused = fuse_relu != 0, has_gamma = has_gamma_arg != 0;
        check_tensor(*data, "data");
        cache_key key;
        bn_key(key, dtype, *data, fused, use_global_stats != 0, has_gamma, epsilon, *call);
        bool hit = true;
        std::shared_ptr<cached_partition> e = bpg_capi::cache().find(key);
        if (!e) {
            hit = false;
            e = compile_bn(dtype_of(dtype), *data, fused, use_global_stats != 0, has_gamma, epsilon,
                    options_of(*call));
            bpg_capi::cache().insert(key, e);
        }
        const void *in[6];
        size_t n = 0;
        if (fused) in[n++] = relu_dst;
        in[n++] = fused ? diff_dst : src;
        in[n++] = fused ? src : diff_dst;
        in[n++] = mean;
        in[n++] = variance;
        if (has_gamma) in[n++] = gamma;
        void *out[3] = {diff_src, diff_gamma, diff_beta};
        if (src || diff_dst || diff_src) run(*e, in, out);
        outcome->backend = e->backend;
        outcome->cache_hit = hit;
    });
}

int bpg_capi_batchnorm_part(int part, int dtype, const bpg_capi_tensor *data, int has_gamma_arg,
        int64_t global_count, double epsilon, const void *const *in, void *const *out, const bpg_capi_call *call,
        bpg_capi_outcome *outcome, char *message, size_t message_size) {
    return guarded(message, message_size, [&] {
        if (!data || !call || !outcome || (in && !out))
            throw error(status::invalid_argument, "bpg_capi_batchnorm_part: null pointer");
        check_tensor(*data, "data");
        const bool has_gamma = part == BPG_CAPI_BN_FROM_SUMS && has_gamma_arg != 0;
        if (part != BPG_CAPI_BN_FROM_SUMS) global_count = 0, epsilon = 0;
        cache_key key;
        key.push(3);
        key.push(part);
        key.push(dtype);
        key.push(call->max_threads);
        key.push(call->runtime);
        key.push(has_gamma);
        key.push(global_count);
        key.push_float(float(epsilon));
        key.push(data->rank);
        for (int i = 0; i < data->rank; ++i) {
            key.push(data->dims[i]);
            key.push(data->strides[i]);
        }
        bool hit = true;
        std::shared_ptr<cached_partition> e = bpg_capi::cache().find(key);
        if (!e) {
            hit = false;
            e = compile_bn_part(part, dtype_of(dtype), *data, has_gamma, global_count, epsilon, options_of(*call));
            bpg_capi::cache().insert(key, e);
        }
        if (in) run(*e, in, out);
        outcome->backend = e->backend;
        outcome->cache_hit = hit;
    });
}

void bpg_capi_cache_info(int64_t info[4]) { bpg_capi::cache().info(info); }

int bpg_capi_cache_set_capacity(int64_t capacity) {
    if (capacity < 1) return BPG_CAPI_INVALID_ARGUMENT;
    bpg_capi::cache().set_capacity(size_t(capacity));
    return BPG_CAPI_OK;
}

void bpg_capi_cache_clear(void) { bpg_capi::cache().clear(); }

} // extern "C"
