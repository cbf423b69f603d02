// The BN kernel path: which schedule and which loops run a plan, decided
// here from the plan, the CPU and the sizes; bn_run.cpp and the kernels only
// dispatch on it. Measurements behind each rule: bench/NOTES.md.
#include "backends/tbb/bn_kernels.hpp"
#include "backends/tbb/bn_plan.hpp"
#include "backends/tbb/channel_blocks.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/nontemporal.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/size_thresholds.hpp"

namespace bpg::tbb_backend {

namespace {

using bn::lanes;

bool sixteen_bit(const bn_plan &p) { return p.dt != data_type::f32; }

// Channels-last f32 training with a fused ReLU and whole rows in every
// tensor: its decisions kept as bits (bn_relu_mask.hpp).
bool relu_mask_fits(const bn_plan &p) {
    const bool into_src = p.fusion == bn_fusion::relu_into_src;
    return p.avx512 && p.dt == data_type::f32 && p.fusion != bn_fusion::none && !p.planar && !p.global_stats
            && p.K >= lanes && p.relu_in.a == p.K && p.relu_dd.a == p.K && (into_src ? p.dd.a : p.src.a) == p.K
            && p.ds.a == p.K;
}

bn_schedule schedule_of(const bn_plan &p) {
    if (core::ends_with_sums(p.part)) return bn_schedule::local_sums;
    if (p.part == core::bn_bwd_part::from_sums) return bn_schedule::from_sums;
    if (p.global_stats) return p.has_diff_stats ? bn_schedule::global_sums : bn_schedule::global_update;
    if (p.planar && p.K >= 8) return p.channels_per_task > 1 ? bn_schedule::channel_groups : bn_schedule::channel_tasks;
    return bn_schedule::two_sweeps;
}

bn_loops planar_sums(const bn_plan &p) {
    switch (p.schedule) {
        case bn_schedule::channel_groups:
            return p.avx512 && p.B <= bn::planar_chunk ? bn_loops::short_rows_avx512 : bn_loops::planar;
        case bn_schedule::channel_tasks:
            // Kept decisions pay where pass 2 would read the relu input from
            // memory again: f32, diff_src nontemporal.
            if (p.avx512 && p.fusion != bn_fusion::none && p.dt == data_type::f32 && p.store == bn_store::nontemporal)
                return bn_loops::relu_decisions_avx512;
            break;
        default: break;
    }
    return p.avx512 && (sixteen_bit(p) || p.global_stats) ? bn_loops::planar_avx512 : bn_loops::planar;
}

bn_loops planar_update(const bn_plan &p) {
    if (p.schedule == bn_schedule::channel_groups) {
        if (!p.avx512) return bn_loops::short_rows;
        // bf16 rounded by vcvtneps2bf16 where the CPU has it: the integer
        // rounding held up the loop once the stores stopped waiting.
        return p.dt == data_type::bf16 && has_avx512_bf16() ? bn_loops::short_rows_bf16_avx512
                                                             : bn_loops::short_rows_avx512;
    }
    if (p.sums == bn_loops::relu_decisions_avx512) return bn_loops::relu_decisions_avx512;
    return p.avx512 ? bn_loops::planar_avx512 : bn_loops::planar;
}

// Channels-last rows of so many channels that the per-channel arrays the
// wide loops read beside each vector of data (sums and mean, or the four
// coefficients: 12-16 bytes a channel) leave L1: blocks of channels, each
// across the rows. Rows of a multiple of 32 channels keep every row's
// segments on 64-byte lines in every dtype (streamed stores).
constexpr int64_t wide_block_channels = 1024;
// Training's pass 1 loads its sums once for rows_at_once rows, so its
// per-channel arrays may leave L1 for L2: blocks 4x as wide, row segments
// 4x as long (use_global_stats' pass 1 writes diff_src a row at a time).
constexpr int64_t wide_sums_block_channels = 4096;

bn_loops wide_loops(const bn_plan &p) {
    if (p.K >= 2 * wide_block_channels && p.K % 32 == 0) return bn_loops::wide_blocks_avx512;
    return bn_loops::wide_avx512;
}

bn_loops channels_last_sums(const bn_plan &p) {
    if (relu_mask_fits(p)) return bn_loops::relu_mask_avx512;
    if (bn::narrow_rows(p)) return p.avx512 ? bn_loops::narrow_avx512 : bn_loops::narrow;
    if (fits_blocks(p.K)) {
        if (!p.global_stats) return p.avx512 && sixteen_bit(p) ? bn_loops::register_blocks_avx512 : bn_loops::register_blocks;
        // use_global_stats writes diff_src in the same sweep: from the
        // register blocks when nontemporal, else channel by channel.
        if (p.avx512 && p.store == bn_store::nontemporal && p.ds.a == p.K) return bn_loops::register_blocks_avx512;
        return bn_loops::channels_last;
    }
    return p.avx512 && p.K >= lanes ? wide_loops(p) : bn_loops::channels_last;
}

// Channels-last bf16 pass 2 rounded by vcvtne2ps2bf16 where the CPU has it:
// the integer rounding held pass 2 back from the speed of its reads and writes.
bn_loops with_bf16_hw(const bn_plan &p, bn_loops l) {
    if (p.dt != data_type::bf16 || !has_avx512_bf16()) return l;
    if (l == bn_loops::register_blocks_avx512) return bn_loops::register_blocks_bf16_avx512;
    if (l == bn_loops::wide_avx512) return bn_loops::wide_bf16_avx512;
    if (l == bn_loops::wide_blocks_avx512) return bn_loops::wide_blocks_bf16_avx512;
    return l;
}

bn_loops channels_last_update_loops(const bn_plan &p) {
    if (relu_mask_fits(p)) return bn_loops::relu_mask_avx512;
    if (bn::narrow_rows(p) && p.avx512) return bn_loops::narrow_avx512;
    if (fits_blocks(p.K)) {
        // Nontemporal rows from the register blocks; cached 16-bit rows convert
        // faster in the wide loops than lane by lane on the blocks.
        if (p.avx512 && p.store == bn_store::nontemporal && p.ds.a == p.K) return bn_loops::register_blocks_avx512;
        if (!p.avx512 || !sixteen_bit(p)) return bn_loops::register_blocks;
    }
    return p.avx512 && p.K >= lanes ? wide_loops(p) : bn_loops::channels_last;
}

bn_loops channels_last_update(const bn_plan &p) { return with_bf16_hw(p, channels_last_update_loops(p)); }

// Channels-last rows in too few chunks to share out (a chunk is
// channels_last_chunk rows): pass 1's items are slices of a chunk's channels
// too, each channel summed in the same order (same bits). Only the wide and
// generic loops take slices; a sliced global_sums streams diff_src from the
// wide loops' registers, a row segment at a time, where rows are whole lines
// apart, else writes it cached.
constexpr int64_t slice_unit = 64; // channels: slices start on 64-byte lines in every dtype
constexpr int64_t min_slice = 256;  // (narrower ones cost more than they share out)

bool sliceable(bn_loops l) {
    return l == bn_loops::wide_avx512 || l == bn_loops::wide_blocks_avx512 || l == bn_loops::channels_last;
}

void slice_channels(bn_plan &p) {
    p.slice = p.K;
    const int64_t chunks = bn::chunks_of(p), tasks = tasks_at_once();
    if (p.planar || p.one_task || !sliceable(p.sums) || chunks >= 2 * tasks) return;
    const int64_t wanted = (4 * tasks + chunks - 1) / chunks; // slices per chunk
    const int64_t slice = std::max(min_slice, ((p.K + wanted - 1) / wanted + slice_unit - 1) / slice_unit * slice_unit);
    if (slice >= p.K) return;
    p.slice = slice;
    const bool segments_stream = p.sums != bn_loops::channels_last && p.ds.a * int64_t(size_of(p.dt)) % 64 == 0;
    if (p.schedule == bn_schedule::global_sums && !segments_stream) p.store = bn_store::cached;
}

// Channels-last training of few rows and many channels ([N, C], N in the
// 100s): both passes of a slab of channels in one task, so that pass 2 reads
// the slab's src and diff_dst again from L2 instead of memory. The slab's rows
// of the tensors pass 1 reads take at most slab_bytes; narrower slabs than
// min_slab would leave too little of a row to stream.
constexpr int64_t slab_bytes = int64_t(512) << 10;
constexpr int64_t min_slab = 256; // channels

void choose_slabs(bn_plan &p) {
    if (p.schedule != bn_schedule::two_sweeps || p.planar
            || (p.sums != bn_loops::wide_avx512 && p.sums != bn_loops::wide_blocks_avx512
                    && p.sums != bn_loops::channels_last))
        return;
    const int64_t tensors = p.fusion == bn_fusion::none ? 2 : 3;
    const int64_t fits = slab_bytes / (p.A * tensors * int64_t(size_of(p.dt))) / slice_unit * slice_unit;
    // (At least 4 slabs a thread, where the channels allow it.)
    const int64_t shared = (p.K / (4 * tasks_at_once()) + slice_unit - 1) / slice_unit * slice_unit;
    const int64_t slab = std::min(fits, std::max(min_slab, shared));
    if (slab < min_slab || p.K < 2 * slab) return;
    p.schedule = bn_schedule::channel_slabs;
    p.slice = slab;
}

} // namespace

void choose_bn_path(bn_plan &p) {
    if (p.empty) {
        p.schedule = bn_schedule::zero_sized;
        return;
    }
    p.avx512 = has_avx512f();
    p.avx2_16bit = sixteen_bit(p) && !p.avx512 && has_avx2() && f16c_available() && !clone_16bit_only();
    // (local_sums writes no diff_src.)
    const int64_t bytes = core::ends_with_sums(p.part) ? 0 : p.A * p.K * p.B * int64_t(size_of(p.dt));
    p.channels_per_task = p.planar ? bn::channels_per_task(p) : 1;
    p.schedule = schedule_of(p);
    const bool channels_last_sweeps = !p.planar && p.schedule == bn_schedule::two_sweeps;
    const int64_t nontemporal_min =
            channels_last_sweeps ? bn_channels_last_nontemporal_min_bytes : bn_nontemporal_min_bytes;
    p.store = bytes >= size_threshold(nontemporal_min) ? bn_store::nontemporal : bn_store::cached;
    const bool sums = p.schedule != bn_schedule::global_update && p.schedule != bn_schedule::from_sums;
    const bool update = p.schedule != bn_schedule::global_sums && p.schedule != bn_schedule::local_sums;
    p.sums = !sums                                             ? bn_loops::none
            : p.part == core::bn_bwd_part::forward_sums ? bn_loops::shifted_squares
            : p.planar                                  ? planar_sums(p)
                                                        : channels_last_sums(p);
    p.update = !update ? bn_loops::none : p.planar ? planar_update(p) : channels_last_update(p);
    p.channel_block = wide_block_channels;
    p.sums_block = p.global_stats ? wide_block_channels : wide_sums_block_channels;
    slice_channels(p);
    choose_slabs(p);
    // (Rows of 64 channels of f32 measured the same with it or without.)
    const int64_t read = 2 * p.A * p.K * p.B * int64_t(size_of(p.dt));
    p.row_prefetch = p.sums == bn_loops::wide_avx512 && !p.global_stats && p.slice == p.K
            && p.K * int64_t(size_of(p.dt)) >= wide_row_prefetch_min_bytes
            && read >= size_threshold(wide_row_prefetch_min_read_bytes);
}

std::string to_string(bn_schedule s) {
    switch (s) {
        case bn_schedule::zero_sized: return "zero_sized";
        case bn_schedule::global_update: return "global_update";
        case bn_schedule::global_sums: return "global_sums";
        case bn_schedule::channel_tasks: return "channel_tasks";
        case bn_schedule::channel_groups: return "channel_groups";
        case bn_schedule::channel_slabs: return "channel_slabs";
        case bn_schedule::two_sweeps: return "two_sweeps";
        case bn_schedule::local_sums: return "local_sums";
        case bn_schedule::from_sums: return "from_sums";
    }
    return "?";
}

std::string to_string(bn_loops l) {
    switch (l) {
        case bn_loops::none: return "none";
        case bn_loops::planar: return "planar";
        case bn_loops::planar_avx512: return "planar_avx512";
        case bn_loops::short_rows: return "short_rows";
        case bn_loops::short_rows_avx512: return "short_rows_avx512";
        case bn_loops::short_rows_bf16_avx512: return "short_rows_bf16_avx512";
        case bn_loops::relu_decisions_avx512: return "relu_decisions_avx512";
        case bn_loops::channels_last: return "channels_last";
        case bn_loops::register_blocks: return "register_blocks";
        case bn_loops::register_blocks_avx512: return "register_blocks_avx512";
        case bn_loops::wide_avx512: return "wide_avx512";
        case bn_loops::wide_blocks_avx512: return "wide_blocks_avx512";
        case bn_loops::register_blocks_bf16_avx512: return "register_blocks_bf16_avx512";
        case bn_loops::wide_bf16_avx512: return "wide_bf16_avx512";
        case bn_loops::wide_blocks_bf16_avx512: return "wide_blocks_bf16_avx512";
        case bn_loops::narrow: return "narrow";
        case bn_loops::narrow_avx512: return "narrow_avx512";
        case bn_loops::relu_mask_avx512: return "relu_mask_avx512";
        case bn_loops::shifted_squares: return "shifted_squares";
    }
    return "?";
}

std::string bn_path_name(const bn_plan &p) {
    if (p.schedule == bn_schedule::zero_sized) return "bn:zero_sized";
    return "bn:" + to_string(p.schedule) + ":sums=" + to_string(p.sums) + ":update=" + to_string(p.update) + ":"
            + (p.store == bn_store::nontemporal ? "nontemporal" : "cached")
            + (p.slice < p.K && p.schedule != bn_schedule::channel_slabs ? ":sliced" : "")
            + (p.row_prefetch ? ":row_prefetch" : "") + (p.avx2_16bit ? ":avx2" : "");
}

} // namespace bpg::tbb_backend
