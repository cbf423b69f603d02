// How the oneTBB BatchNormTrainingBackprop kernel walks a problem (decided at
// compile), with an optional ReLUBackprop fused in front.
//
// Every data tensor is seen as [A, K, B]: A = the reduced axes outside the
// kept (channel) axes in memory order, K = the kept axes, B = the reduced
// axes inside them. NCX is planar (B > 1 contiguous: each (a, k) is a run of B
// elements); NXC, and NCX data with channels-last strides, are channels-last
// (B = 1, K contiguous: each a is a run of K channels). The rank-matched
// (DirectML) statistics fit whenever their kept axes are adjacent in memory.
//
// Pass 1 (sums per channel) is a deterministic blocked reduction: fixed
// chunks, f32 lanes inside a chunk, f64 partials combined in a fixed order, so
// results do not depend on the number of threads and a channel of 10^8
// elements keeps ~1e-7 relative accuracy. Pass 2 applies per-channel
// coefficients. Channels whose 1/sqrt(var + eps) is not finite use the
// literal formula of docs/semantics.md, so inf/NaN appear where the reference has them.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/tbb/kept_memory.hpp"

namespace bpg::tbb_backend {

enum class bn_fusion { none, relu_into_src, relu_into_dd };

struct bn_view { int64_t a = 0, k = 0, b = 0; }; // element strides of A, K, B

// How run_bn_plan (bn_run.cpp, one function each) orders the two passes.
enum class bn_schedule {
    zero_sized,     // no element: diff_gamma and diff_beta are zeroed, nothing else runs
    global_update,  // use_global_stats without its sums: one sweep writes diff_src
    global_sums,    // use_global_stats with its sums: one sweep writes diff_src and the sums
    channel_tasks,  // planar training, >= 8 channels: both passes of a channel in one task
    channel_groups, // planar training, short rows: both passes of a group of channels in one task
    channel_slabs,  // channels-last training, few rows: both passes of a slab of channels in one task
    two_sweeps,     // pass 1 over everything, then pass 2 over everything
    local_sums,     // BatchNormTrainingBackpropSums: pass 1 only, the sums are the outputs
    from_sums,      // BatchNormTrainingBackpropFromSums: pass 2 only, from the given sums
};

// The loops of one pass (bn_kernels.hpp). *_avx512 ones run only where the
// CPU has AVX-512; the others are compiled per instruction set.
enum class bn_loops {
    none,                  // the pass does not run
    planar,                // planar rows, chunk by chunk
    planar_avx512,         // planar rows with AVX-512 loads (16-bit data, use_global_stats)
    short_rows,            // planar rows of a channel group, one staged run per group row
    short_rows_avx512,     // the same, a group row as one run of vectors
    short_rows_bf16_avx512, // the same, bf16 pass 2 rounded by AVX512_BF16 (pass 2 only)
    relu_decisions_avx512, // planar f32 with a fused ReLU: pass 1 keeps its decisions for pass 2
    channels_last,         // channels-last rows, channel by channel
    register_blocks,       // channels-last rows of 16-64 channels, coefficients in registers
    register_blocks_avx512, // the same with AVX-512 loads (16-bit pass 1)
    wide_avx512,           // channels-last rows of >= 16 channels off the register blocks
    wide_blocks_avx512,    // the same, many channels: a block of them across the rows at a time
    register_blocks_bf16_avx512, // register_blocks_avx512, bf16 rounded by AVX512_BF16 (pass 2 only)
    wide_bf16_avx512,      // wide_avx512, bf16 rounded by AVX512_BF16 (pass 2 only)
    wide_blocks_bf16_avx512, // wide_blocks_avx512, bf16 rounded by AVX512_BF16 (pass 2 only)
    narrow,                // channels-last rows of < 16 channels as one flat run of vectors
    narrow_avx512,         // the same with AVX-512 loads and stores
    relu_mask_avx512,      // channels-last f32 with a fused ReLU: its decisions as bits
    shifted_squares,       // BatchNormForwardSums: sums of src - shift and its square, either layout
};

// The channels-last pass-2 loops that round bf16 by AVX512_BF16.
constexpr bool rounds_bf16_by_hardware(bn_loops l) {
    return l == bn_loops::register_blocks_bf16_avx512 || l == bn_loops::wide_bf16_avx512
            || l == bn_loops::wide_blocks_bf16_avx512;
}

// How diff_src is written: cached, or past the caches (from the registers
// where the run is 64-byte aligned, else through a per-thread stage).
enum class bn_store { cached, nontemporal };

struct bn_plan {
    // A 0 axis in the data: no pass runs, diff_src is empty, and diff_gamma
    // and diff_beta (sums over no element) are set to 0, the tensors in
    // `zeroed` (docs/ops/batchnorm_training_backprop.md). Nothing below is filled.
    bool empty = false;
    std::vector<core::tensor_desc> zeroed;
    core::bn_bwd_part part = core::bn_bwd_part::whole;
    data_type dt = data_type::f32;
    bool planar = true;
    int64_t A = 1, K = 1, B = 1;
    bn_view src, dd, ds, relu_in, relu_dd; // relu_* only when fused
    bn_fusion fusion = bn_fusion::none;
    float epsilon = 0.f;
    bool global_stats = false, has_gamma = false, has_diff_stats = false;
    int64_t M = 1; // elements per reduction (A * B)
    // Statistics of kept index k: element offsets in each statistics tensor.
    std::vector<int64_t> mean_off, var_off, gamma_off, dgamma_off, dbeta_off;
    // Every statistics tensor's offsets are 0, 1, ..., K - 1 (the usual
    // dense [C]): the per-channel steps read and write them as plain arrays.
    bool stats_in_order = false;
    data_type mean_dt = data_type::f32, var_dt = data_type::f32, gamma_dt = data_type::f32,
              dgamma_dt = data_type::f32, dbeta_dt = data_type::f32;
    // The split's sums (local_sums: written; from_sums: read), f32.
    std::vector<int64_t> sum_dd_off, sum_centered_off;
    // Schedule: one_task runs both passes on the calling thread with no
    // parallel loop (one-thread runs, and problems below bn_one_task_max_bytes,
    // where a loop costs more than the work); the results are the same bits.
    // scratch_bytes of per-channel working memory come from the stack when at
    // most bn_stack_scratch_bytes, else from one core::allocate.
    bool one_task = false;
    int64_t scratch_bytes = 0;
    bool scratch_on_stack = false;
    // The kernel path (choose_bn_path): execute dispatches on these and
    // decides nothing else but buffer alignment.
    bn_schedule schedule = bn_schedule::two_sweeps;
    bn_loops sums = bn_loops::none, update = bn_loops::none;
    bn_store store = bn_store::cached;
    bool avx512 = false;           // the *_avx512 loops may run (the CPU has AVX-512)
    // bf16 or f16 on a CPU with AVX2 and F16C but not AVX-512 (path
    // ":avx2"): the generic loops' AVX2 instances, converting 8 lanes with
    // those instructions (bn_kernels.hpp).
    bool avx2_16bit = false;
    int64_t channels_per_task = 1; // channel_groups: channels of one group
    // Channels-last: the channels of one pass-1 item (K: whole rows; else a
    // multiple of 64); channel_slabs: of one slab.
    int64_t slice = 1;
    int64_t channel_block = 1; // wide_blocks_avx512: channels of one block
    int64_t sums_block = 1;    // the same for pass 1 (wide_blocks_avx512 sums)
    // wide_avx512 pass 1 on whole rows of wide_row_prefetch_min_bytes and up,
    // src and diff_dst of wide_row_prefetch_min_read_bytes (path
    // ":row_prefetch"): the loop taking rows_at_once rows a vector
    // prefetches each row's vectors rows_prefetch_bytes ahead, which the
    // hardware prefetchers left waiting on memory (bench/NOTES.md).
    bool row_prefetch = false;
    // Tensor ids (to find buffers at execute).
    size_t src_id = 0, dd_id = 0, ds_id = 0, mean_id = 0, var_id = 0, gamma_id = 0, dgamma_id = 0, dbeta_id = 0,
           relu_in_id = 0, relu_dd_id = 0, sum_dd_id = 0, sum_centered_id = 0;
};

// diff_src bytes from which it is written past the caches (lower than
// ReLU's: BN's two passes read twice what they write, so that cached
// stores' extra reads cost more; bench/NOTES.md), and below which a run is
// one task (tests lower both, see size_thresholds.hpp); the largest working
// memory taken on the stack.
constexpr int64_t bn_nontemporal_min_bytes = int64_t(8) << 20;
// The same for channels-last two_sweeps: pass 2 comes after a sweep over all
// of src and diff_dst, so a diff_src past the L2s gains nothing from cached
// stores but their reads for ownership.
constexpr int64_t bn_channels_last_nontemporal_min_bytes = int64_t(4) << 20;
constexpr int64_t bn_one_task_max_bytes = int64_t(32) << 10;
constexpr int64_t wide_row_prefetch_min_bytes = 512;
// (Below, much of them stays in the L3 between runs: the prefetches cost.)
constexpr int64_t wide_row_prefetch_min_read_bytes = int64_t(32) << 20;
constexpr int64_t bn_stack_scratch_bytes = int64_t(4) << 10;

// Bytes of the per-channel working memory run_bn_plan lays out for `plan`.
int64_t bn_scratch_bytes(const bn_plan &plan);

// A partition of one BatchNormTrainingBackprop, or ReLUBackprop feeding it.
// Empty string and a filled plan when the kernel runs it; else why not.
std::string make_bn_plan(const backends::partition_problem &p, bn_plan &plan);

// Fills the kernel path of a plan whose views and options are set.
void choose_bn_path(bn_plan &plan);

// "bn:<schedule>:sums=<loops>:update=<loops>:<store>", or "bn:zero_sized".
std::string bn_path_name(const bn_plan &plan);

// Runs the plan; its working memory from `kept` (the compiled kernel's).
void run_bn_plan(const bn_plan &plan, const backends::buffer_map &buffers, const kept_memory &kept);

} // namespace bpg::tbb_backend
