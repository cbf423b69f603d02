// Execution of a bn_plan (see bn_plan.hpp): the schedule of the two passes
// over the kernels of bn_kernels.hpp, the per-channel math in double from
// kernels/bn_math.hpp, and the literal formula where it is not finite.
#include <cmath>
#include <cstring>
#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include <tbb/blocked_range.h>

#include "backends/tbb/bn_kernels.hpp"
#include "backends/tbb/bn_plan.hpp"
#include "backends/tbb/bn_relu_mask.hpp"
#include "backends/tbb/kernel_attributes.hpp"
#include "backends/tbb/nontemporal.hpp"
#include "backends/tbb/parallel.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "core/tensor_desc.hpp"
#include "kernels/bn_math.hpp"

namespace bpg::tbb_backend {

namespace {

using bn::at;
using bn::coeffs;
using bn::data;

// The literal formula for one channel, in double as the reference computes
// it: used where 1/sqrt(var + eps) or a coefficient is not finite, so that
// inf and NaN appear exactly where the reference puts them.
struct literal_channel {
    const bn_plan &p;
    const backends::buffer_map &b;
    double load(const bn_view &, size_t id, int64_t at_v) const { return core::load_as_double(b.at(id), p.dt, at_v); }
    double src(int64_t a, int64_t k, int64_t i) const {
        if (p.fusion == bn_fusion::relu_into_src) {
            const double x = load(p.relu_in, p.relu_in_id, at(p.relu_in, a, k, i));
            return x > 0 ? load(p.relu_dd, p.relu_dd_id, at(p.relu_dd, a, k, i)) : 0.0;
        }
        return load(p.src, p.src_id, at(p.src, a, k, i));
    }
    double dd(int64_t a, int64_t k, int64_t i) const {
        if (p.fusion == bn_fusion::relu_into_dd) {
            const double x = load(p.relu_in, p.relu_in_id, at(p.relu_in, a, k, i));
            return x > 0 ? load(p.relu_dd, p.relu_dd_id, at(p.relu_dd, a, k, i)) : 0.0;
        }
        return load(p.dd, p.dd_id, at(p.dd, a, k, i));
    }
    double diff_gamma(int64_t k, double mean, double inv) const {
        double s = 0;
        for (int64_t a = 0; a < p.A; ++a)
            for (int64_t i = 0; i < p.B; ++i) s += dd(a, k, i) * kernels::bn_xhat(src(a, k, i), mean, inv);
        return s;
    }
    void update(int64_t k, const kernels::bn_update_coeffs<double> &c, double mean, double inv) const {
        for (int64_t a = 0; a < p.A; ++a)
            for (int64_t i = 0; i < p.B; ++i)
                core::store_from_double(b.at(p.ds_id), p.dt, at(p.ds, a, k, i),
                        kernels::bn_diff_src(c, dd(a, k, i), kernels::bn_xhat(src(a, k, i), mean, inv)));
    }
};

// Per-channel values [k0, k1) at their offsets, as T into out[k]; the type
// picked once per block, not per value; f32 values in order (offset k for
// channel k) as a plain loop, so that it vectorizes. Inlined into each clone.
template <typename T>
inline __attribute__((always_inline)) void load_values_as(const void *base, data_type dt,
        const std::vector<int64_t> &off, bool in_order, int64_t k0, int64_t k1, T *__restrict out) {
    if (dt == data_type::f32 && in_order) {
        const float *__restrict f = static_cast<const float *>(base);
        for (int64_t k = k0; k < k1; ++k) out[k] = f[k];
    } else if (dt == data_type::f32) {
        const float *f = static_cast<const float *>(base);
        for (int64_t k = k0; k < k1; ++k) out[k] = f[off[size_t(k)]];
    } else {
        for (int64_t k = k0; k < k1; ++k) out[k] = T(core::load_as_double(base, dt, off[size_t(k)]));
    }
}

BPG_CLONES void load_doubles(const void *base, data_type dt, const std::vector<int64_t> &off, bool in_order,
        int64_t k0, int64_t k1, double *__restrict out) {
    load_values_as(base, dt, off, in_order, k0, k1, out);
}

// As float (exact: the statistics are f32, bf16 or f16), for the per-channel
// means pass 1 and 2 read.
BPG_CLONES void load_floats(const void *base, data_type dt, const std::vector<int64_t> &off, bool in_order,
        int64_t k0, int64_t k1, float *__restrict out) {
    load_values_as(base, dt, off, in_order, k0, k1, out);
}

// out at offsets [k0, k1) = v[k] rounded to dt.
BPG_CLONES void store_doubles(void *base, data_type dt, const std::vector<int64_t> &off, bool in_order, int64_t k0,
        int64_t k1, const double *__restrict v) {
    if (dt == data_type::f32 && in_order) {
        float *__restrict f = static_cast<float *>(base);
        for (int64_t k = k0; k < k1; ++k) f[k] = float(v[k]);
    } else if (dt == data_type::f32) {
        float *f = static_cast<float *>(base);
        for (int64_t k = k0; k < k1; ++k) f[off[size_t(k)]] = float(v[k]);
    } else {
        for (int64_t k = k0; k < k1; ++k) core::store_from_double(base, dt, off[size_t(k)], v[k]);
    }
}

// 1/sqrt(var + eps) of channels [k0, k1), var read from inv in place.
BPG_CLONES void inv_stds(double *__restrict inv, double eps, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) inv[k] = kernels::bn_inv_std(inv[k], eps);
}

// Channels-last chunk partials (rows of K (s1, s2) pairs) -> the sums of
// channels [k0, k1) in t1, t2: chunk by chunk, so that the reads follow
// memory and the adds are whole vectors, each channel still adding its chunks
// from zero in chunk order (walking one channel across the chunks was bound
// by its scalar adds).
BPG_CLONES void combine_chunk_rows(const double *__restrict partial, int64_t chunks, int64_t K, int64_t k0, int64_t k1,
        double *__restrict t1, double *__restrict t2) {
    constexpr int64_t block = 64; // channels at a time: their running pairs stay in L1
    for (int64_t b0 = k0; b0 < k1; b0 += block) {
        const int64_t n = 2 * (std::min(k1, b0 + block) - b0);
        double pairs[2 * block] = {};
        for (int64_t c = 0; c < chunks; ++c) {
            const double *__restrict row = partial + 2 * (c * K + b0);
            for (int64_t j = 0; j < n; ++j) pairs[j] += row[j];
        }
        for (int64_t j = 0; j < n / 2; ++j) t1[b0 + j] = pairs[2 * j], t2[b0 + j] = pairs[2 * j + 1];
    }
}

// The folded pass-2 coefficients of channels [k0, k1) (kernels/bn_math.hpp),
// rounded to float; restrict parameters and the formula chosen outside the
// loop, so that it vectorizes (the divisions in double were one by one).
template <bool GlobalStats>
BPG_ALWAYS_INLINE void fold_loop(const double *__restrict gamma, const double *__restrict inv,
        const double *__restrict db, const double *__restrict dg, float *__restrict a, float *__restrict c2,
        float *__restrict c0, double m, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
        const auto folded = kernels::bn_fold(kernels::bn_coeffs(gamma[k], inv[k], db[k], dg[k], m, GlobalStats), inv[k]);
        a[k] = float(folded.a), c2[k] = float(folded.c2), c0[k] = float(folded.c0);
    }
}
BPG_CLONES void fold_coefficients(const double *__restrict gamma, const double *__restrict inv,
        const double *__restrict db, const double *__restrict dg, float *__restrict a, float *__restrict c2,
        float *__restrict c0, double m, bool global_stats, int64_t k0, int64_t k1) {
    if (global_stats) fold_loop<true>(gamma, inv, db, dg, a, c2, c0, m, k0, k1);
    else fold_loop<false>(gamma, inv, db, dg, a, c2, c0, m, k0, k1);
}

// Whether any of x[k0, k1) is inf or NaN; a plain loop without branches,
// so that it vectorizes ([N, C] problems have C in the 10^4s).
BPG_CLONES bool any_not_finite(const double *__restrict x, int64_t k0, int64_t k1) {
    bool any = false;
    for (int64_t k = k0; k < k1; ++k) any |= !(std::fabs(x[k]) <= std::numeric_limits<double>::max());
    return any;
}

// literal[k] = whether channel k's coefficients are not all finite.
BPG_CLONES void mark_literal(const double *__restrict inv, const float *__restrict a, const float *__restrict c2,
        const float *__restrict c0, char *__restrict literal, int64_t k0, int64_t k1) {
    constexpr float fmax = std::numeric_limits<float>::max();
    for (int64_t k = k0; k < k1; ++k) {
        const bool finite = (std::fabs(inv[k]) <= std::numeric_limits<double>::max()) & (std::fabs(a[k]) <= fmax)
                & (std::fabs(c2[k]) <= fmax) & (std::fabs(c0[k]) <= fmax);
        literal[k] = !finite;
    }
}

// Pass-1 work items; the partials' rows (planar rows, channels-last chunks)
// and pairs per row (see bn_kernels.hpp).
int64_t items_of(const bn_plan &p) { return p.planar ? p.K * p.A : bn::chunks_of(p) * bn::slices_of(p); }

// The per-task arrays of bn::task_memory: how many task_pool makes (0: none)
// and the bytes of each, 64-byte multiples.
struct task_arrays {
    int64_t tasks = 0;
    size_t sums_bytes = 0, passed_bytes = 0;
    explicit task_arrays(const bn_plan &p) {
        const bool decisions = p.sums == bn_loops::relu_decisions_avx512;
        if (p.planar && !decisions) return;
        tasks = task_pool_size(std::max(items_of(p), p.K));
        const int64_t floats = p.planar ? 0 : 2 * std::max(p.K, bn::lanes * relu_mask_words(p.K));
        sums_bytes = round64(size_t(floats) * sizeof(float));
        passed_bytes = round64(decisions ? size_t(p.A * (p.B / bn::lanes)) * sizeof(uint16_t) : 0);
    }
    size_t bytes() const { return size_t(tasks) * (sums_bytes + passed_bytes); }
};
int64_t partial_rows_of(const bn_plan &p) { return p.planar ? p.K * p.A : bn::chunks_of(p); }
int64_t pairs_per_row(const bn_plan &p) { return p.planar ? (p.B + bn::planar_chunk - 1) / bn::planar_chunk : p.K; }
bool needs_sums(const bn_plan &p) {
    return p.part != core::bn_bwd_part::from_sums && (!p.global_stats || p.has_diff_stats);
}

// The run's per-channel working arrays, carved in this order from one block
// of bn_scratch_bytes (each array 64-byte aligned).
struct working_memory {
    double *inv = nullptr, *gamma = nullptr, *db = nullptr, *s2 = nullptr, *dg = nullptr,
           *partial = nullptr;
    char *literal = nullptr;
    coeffs cf;
};

// Lays the arrays out from `base` (nullptr: sizes only); returns the bytes.
int64_t lay_out(const bn_plan &p, char *base, working_memory &w) {
    int64_t at = 0;
    auto take = [&](int64_t bytes) {
        char *r = base ? base + at : nullptr;
        at += (bytes + 63) / 64 * 64;
        return r;
    };
    const int64_t K = p.K;
    for (double **a : {&w.inv, &w.gamma, &w.db, &w.s2, &w.dg})
        *a = reinterpret_cast<double *>(take(K * int64_t(sizeof(double))));
    for (bn::float_run *a : {&w.cf.mean, &w.cf.a, &w.cf.c2, &w.cf.c0})
        a->p = reinterpret_cast<float *>(take(K * int64_t(sizeof(float))));
    w.partial = reinterpret_cast<double *>(
            take(needs_sums(p) ? 2 * partial_rows_of(p) * pairs_per_row(p) * int64_t(sizeof(double)) : 0));
    w.literal = take(K);
    return at;
}

} // namespace

int64_t bn_scratch_bytes(const bn_plan &p) {
    working_memory sizes_only;
    return lay_out(p, nullptr, sizes_only);
}

namespace {

// One execute of a plan: its buffers, the per-channel arrays, and the steps
// the schedules are made of. Every schedule computes a channel's sums in the
// same fixed order and its results through finish_channel, so all agree bit
// for bit.
struct bn_execution {
    const bn_plan &p;
    const backends::buffer_map &b;
    data d;
    working_memory w;
    literal_channel lit;
    std::optional<task_pool<bn::task_memory>> work;
    int64_t items = 0, partial_rows = 0, per_row = 0;
    bool diff_stats_stored = false;

    bn_execution(const bn_plan &plan, const backends::buffer_map &buffers, char *base)
        : p(plan), b(buffers), lit {plan, buffers}, items(items_of(plan)), partial_rows(partial_rows_of(plan)),
          per_row(pairs_per_row(plan)) {
        if (p.fusion != bn_fusion::relu_into_src) d.src = b.at(p.src_id);
        if (p.fusion != bn_fusion::relu_into_dd) d.dd = b.at(p.dd_id);
        if (p.fusion != bn_fusion::none) {
            d.relu_in = b.at(p.relu_in_id);
            d.relu_dd = b.at(p.relu_dd_id);
        }
        if (!core::ends_with_sums(p.part)) d.ds = b.at(p.ds_id);
        d.nontemporal = p.store == bn_store::nontemporal;
        lay_out(p, base, w);
    }

    // Loads mean, inv and gamma of every channel; zeroes the sums. In blocks
    // of channels, each step a plain loop: [N, C] problems have C in the
    // 10^4s, and 1/sqrt in double is a long chain when done channel by channel.
    void load_statistics() {
        const bool sums_given = p.part == core::bn_bwd_part::from_sums, variance = !core::ends_with_sums(p.part);
        // The training schedules combine every channel's sums and finish its
        // coefficients (db, s2, dg, literal) before anything reads them: no
        // zeroes first ([N, C]: C in the 10^4s, arrays past the L2).
        const bool training_writes_first = p.schedule == bn_schedule::two_sweeps
                || p.schedule == bn_schedule::channel_tasks || p.schedule == bn_schedule::channel_groups
                || p.schedule == bn_schedule::channel_slabs;
        per_channel_block([&](int64_t k0, int64_t k1) {
            load_floats(b.at(p.mean_id), p.mean_dt, p.mean_off, p.stats_in_order, k0, k1, w.cf.mean.data());
            if (variance) {
                load_doubles(b.at(p.var_id), p.var_dt, p.var_off, p.stats_in_order, k0, k1, w.inv);
                inv_stds(w.inv, double(p.epsilon), k0, k1);
            }
            if (p.has_gamma) load_doubles(b.at(p.gamma_id), p.gamma_dt, p.gamma_off, p.stats_in_order, k0, k1, w.gamma);
            else std::fill(w.gamma + k0, w.gamma + k1, 1.0);
            if (sums_given) {
                load_doubles(b.at(p.sum_dd_id), data_type::f32, p.sum_dd_off, p.stats_in_order, k0, k1, w.db);
                load_doubles(b.at(p.sum_centered_id), data_type::f32, p.sum_centered_off, p.stats_in_order, k0, k1,
                        w.s2);
            } else if (!training_writes_first) {
                std::fill(w.db + k0, w.db + k1, 0.0);
                std::fill(w.s2 + k0, w.s2 + k1, 0.0);
            }
            if (!training_writes_first) {
                std::fill(w.dg + k0, w.dg + k1, 0.0);
                std::fill(w.literal + k0, w.literal + k1, char(0));
            }
            if (needs_sums(p)) zero_partials(k0, k1);
        });
    }

    // The pass-1 partials of channels [k0, k1) (their layout: combine);
    // channels-last pass 1 writes every chunk's partials, planar adds to them.
    void zero_partials(int64_t k0, int64_t k1) const {
        if (p.planar) std::fill(w.partial + 2 * k0 * p.A * per_row, w.partial + 2 * k1 * p.A * per_row, 0.0);
    }

    // Per-task memory of the loops that take some (channels-last pass 1 and
    // the kept ReLU decisions), from `at`: task_memory_bytes(p) bytes.
    void take_task_memory(char *at) {
        const task_arrays t(p);
        if (!t.tasks) return;
        work.emplace(t.tasks, [&] {
            const bn::task_memory m {reinterpret_cast<float *>(at), reinterpret_cast<uint16_t *>(at + t.sums_bytes)};
            at += t.sums_bytes + t.passed_bytes;
            return m;
        });
        d.work = &*work;
    }

    template <typename Body> void loop(const task_range &range, const Body &body) const {
        if (p.one_task) inline_task(range, body);
        else parallel_tasks(range, body);
    }

    // f(k0, k1) for blocks of channels, in parallel where there are many.
    template <typename F> void per_channel_block(const F &f) const {
        loop(task_range(0, p.K, 1024), [&](const tbb::blocked_range<int64_t> &r) { f(r.begin(), r.end()); });
    }

    // Pass 1 on items [i0, i1): planar rows, or channels-last chunks of rows.
    void sums(int64_t i0, int64_t i1, const coeffs *global = nullptr) {
        if (p.sums == bn_loops::shifted_squares) bn::shifted_squares(p, d, w.cf.mean.data(), w.partial, i0, i1);
        else if (p.planar) bn::planar_sums(p, d, w.cf.mean.data(), w.partial, i0, i1, global);
        else bn::channels_last_sums(p, d, w.cf.mean.data(), w.partial, i0, i1, global);
    }

    // Pass 2 on rows [i0, i1): planar rows (a, k), or channels-last rows a.
    void update(int64_t i0, int64_t i1) {
        if (p.planar) bn::planar_update(p, d, w.cf, i0, i1);
        else bn::channels_last_update(p, d, w.cf, i0, i1);
    }

    // Pass-1 partials -> the sums of channels [k0, k1), each in a fixed
    // order; channels-last a chunk at a time across the channels (each
    // channel's additions in chunk order still), so that it vectorizes.
    void combine(int64_t k0, int64_t k1) {
        if (!p.planar) return combine_chunk_rows(w.partial, partial_rows, p.K, k0, k1, w.db, w.s2);
        for (int64_t k = k0; k < k1; ++k) {
            double t1 = 0, t2 = 0;
            for (int64_t j = k * p.A * per_row; j < (k + 1) * p.A * per_row; ++j)
                t1 += w.partial[size_t(2 * j)], t2 += w.partial[size_t(2 * j + 1)];
            w.db[size_t(k)] = t1;
            w.s2[size_t(k)] = t2;
        }
    }

    void combine_all() {
        loop(task_range(0, p.K, 16), [&](const tbb::blocked_range<int64_t> &r) {
            combine(r.begin(), r.end());
        });
    }

    // The pass-2 coefficients of channels [k0, k1) from their sums, in
    // double; a channel whose coefficients are not finite is marked for the
    // literal formula. Plain loops over the channels, so they vectorize.
    void finish_channels(int64_t k0, int64_t k1) {
        // With use_global_stats the coefficients do not read diff_gamma.
        if (!p.global_stats) diff_gammas(k0, k1);
        fold_coefficients(w.gamma, w.inv, w.db, w.dg, w.cf.a.data(), w.cf.c2.data(), w.cf.c0.data(), double(p.M),
                p.global_stats, k0, k1);
        if (p.global_stats) return;
        mark_literal(w.inv, w.cf.a.data(), w.cf.c2.data(), w.cf.c0.data(), w.literal, k0, k1);
    }

    // Channel k's mean in double, for the literal formula (rare: not kept).
    double mean_of(size_t k) const { return core::load_as_double(b.at(p.mean_id), p.mean_dt, p.mean_off[k]); }

    // diff_gamma of channels [k0, k1): inv * the centered sum, and where inv
    // is not finite, the literal sum (a pass over the channel) for the
    // reference's inf/NaN (from_sums: always its definition from the sums).
    void diff_gammas(int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) w.dg[k] = w.inv[k] * w.s2[k];
        if (p.part == core::bn_bwd_part::from_sums || !any_not_finite(w.inv, k0, k1)) return;
        for (int64_t k = k0; k < k1; ++k)
            if (!std::isfinite(w.inv[k])) w.dg[k] = needs_sums(p) ? lit.diff_gamma(k, mean_of(size_t(k)), w.inv[k]) : 0.0;
    }

    void finish_all() {
        per_channel_block([&](int64_t k0, int64_t k1) { finish_channels(k0, k1); });
    }

    // Pass 1 over everything (global: with use_global_stats' diff_src).
    void sums_all(const coeffs *global = nullptr) {
        loop(task_range(0, items), [&](const tbb::blocked_range<int64_t> &r) { sums(r.begin(), r.end(), global); });
    }

    // Pass 2 over everything.
    void update_all() {
        loop(task_range(0, p.planar ? p.A * p.K : p.A),
                [&](const tbb::blocked_range<int64_t> &r) { update(r.begin(), r.end()); });
    }

    // two_sweeps: each channel's sums and coefficients in one loop between
    // the passes (channels-last partials read row by row: one channel
    // across the chunks strides through memory).
    void two_sweeps() {
        sums_all();
        per_channel_block([&](int64_t k0, int64_t k1) {
            combine(k0, k1);
            finish_channels(k0, k1);
            store_diff_stats(k0, k1);
        });
        diff_stats_stored = true;
        update_all();
    }

    // The coefficients from the sums at hand, then pass 2: global_update
    // (diff_src = gamma * inv * diff_dst needs no sums) and from_sums (the
    // given sums).
    void coefficients_then_update() {
        finish_all();
        update_all();
    }

    // global_sums: coefficients first, then one sweep writing diff_src and
    // the sums, which only diff_gamma and diff_beta read.
    void global_sums() {
        finish_all();
        sums_all(&w.cf);
        per_channel_block([&](int64_t k0, int64_t k1) {
            combine(k0, k1);
            diff_gammas(k0, k1);
            store_diff_stats(k0, k1);
        });
        diff_stats_stored = true;
    }

    // channel_tasks: both passes of a channel in one task, so its src and
    // diff_dst are read again from the cache (L3) rather than from memory.
    void channel_tasks() {
        const bool decisions = p.sums == bn_loops::relu_decisions_avx512;
        auto channels = [&](const task_range &r, uint16_t *passed) {
            for (int64_t k = r.begin(); k < r.end(); ++k) {
                if (decisions) bn::relu_passed_sums(p, d, w.cf.mean.data(), w.partial, k, passed);
                else sums(k * p.A, (k + 1) * p.A);
                combine(k, k + 1);
                finish_channels(k, k + 1);
                if (w.literal[size_t(k)]) continue;
                if (decisions) bn::relu_passed_update(p, d, w.cf, k, passed);
                else bn::planar_update_channel(p, d, w.cf, k);
            }
        };
        loop(task_range(0, p.K, 1), [&](const tbb::blocked_range<int64_t> &r) {
            if (!decisions) return channels(r, nullptr);
            const auto task = work->borrow();
            channels(r, task->passed);
        });
    }

    // channel_groups: channel_tasks for short rows, a group's row a one run
    // in memory.
    void channel_groups() {
        const int64_t group = p.channels_per_task, groups = (p.K + group - 1) / group;
        loop(task_range(0, groups, 1), [&](const tbb::blocked_range<int64_t> &r) {
            for (int64_t g = r.begin(); g < r.end(); ++g) {
                const int64_t k0 = g * group, k1 = std::min(p.K, k0 + group);
                bn::short_rows_sums(p, d, w.cf.mean.data(), w.partial, k0, k1);
                bool any_literal = false;
                combine(k0, k1);
                finish_channels(k0, k1);
                for (int64_t k = k0; k < k1; ++k) any_literal |= w.literal[size_t(k)] != 0;
                if (!any_literal) bn::short_rows_update(p, d, w.cf, k0, k1);
                else
                    for (int64_t k = k0; k < k1; ++k)
                        if (!w.literal[size_t(k)]) bn::planar_update_channel(p, d, w.cf, k);
            }
        });
    }

    // channel_slabs: both passes of a slab of channels (pass-1 item c *
    // slabs + s of each chunk c) in one task, so that pass 2 reads the
    // slab's rows from L2. Channels marked literal are rewritten at the end
    // (finish_outputs), as after two_sweeps.
    void channel_slabs() {
        const int64_t slabs = bn::slices_of(p);
        loop(task_range(0, slabs, 1), [&](const tbb::blocked_range<int64_t> &r) {
            for (int64_t s = r.begin(); s < r.end(); ++s) {
                const int64_t k0 = s * p.slice, k1 = std::min(p.K, k0 + p.slice);
                for (int64_t c = 0; c < partial_rows; ++c) sums(c * slabs + s, c * slabs + s + 1);
                combine(k0, k1);
                finish_channels(k0, k1);
                store_diff_stats(k0, k1);
                bn::channels_last_update_slab(p, d, w.cf, k0, k1);
            }
        });
        diff_stats_stored = true;
    }

    // diff_gamma and diff_beta of channels [k0, k1), final once their sums
    // are (the schedules that store them early say so in diff_stats_stored).
    void store_diff_stats(int64_t k0, int64_t k1) const {
        if (!p.has_diff_stats) return;
        store_doubles(b.at(p.dgamma_id), p.dgamma_dt, p.dgamma_off, p.stats_in_order, k0, k1, w.dg);
        store_doubles(b.at(p.dbeta_id), p.dbeta_dt, p.dbeta_off, p.stats_in_order, k0, k1, w.db);
    }

    // diff_gamma and diff_beta unless stored; then channels whose coefficients are not
    // finite get the formula as written.
    void finish_outputs() const {
        if (core::ends_with_sums(p.part)) {
            void *sum_dd = b.at(p.sum_dd_id), *sum_centered = b.at(p.sum_centered_id);
            per_channel_block([&](int64_t k0, int64_t k1) {
                store_doubles(sum_dd, data_type::f32, p.sum_dd_off, p.stats_in_order, k0, k1, w.db);
                store_doubles(sum_centered, data_type::f32, p.sum_centered_off, p.stats_in_order, k0, k1, w.s2);
            });
            return;
        }
        if (!diff_stats_stored) per_channel_block([&](int64_t k0, int64_t k1) { store_diff_stats(k0, k1); });
        // (memchr: the marks of [N, C]'s 10^4s of channels are mostly all 0.)
        const char *const end = w.literal + p.K;
        for (const char *q = w.literal; (q = static_cast<const char *>(std::memchr(q, 1, size_t(end - q)))); ++q) {
            const size_t k = size_t(q - w.literal);
            const auto c = kernels::bn_coeffs(w.gamma[k], w.inv[k], w.db[k], w.dg[k], p.M, false);
            lit.update(int64_t(k), c, mean_of(size_t(k)), w.inv[k]);
        }
    }
};

} // namespace

void run_bn_plan(const bn_plan &p, const backends::buffer_map &b, const kept_memory &kept) {
    if (p.schedule == bn_schedule::zero_sized) {
        for (const core::tensor_desc &t : p.zeroed) core::store_zeros(t, b.at(t.id));
        return;
    }
    // All memory of the run is taken here, before any output is written.
    // One block: the per-channel arrays, (relu_mask_avx512) the ReLU mask,
    // whose pass 2 reads the ReLU's decisions as bits (bn_relu_mask.hpp), and
    // the tasks' arrays.
    const bool mask = p.sums == bn_loops::relu_mask_avx512;
    const size_t arrays = p.scratch_on_stack ? 0 : round64(size_t(p.scratch_bytes));
    const size_t mask_bytes = mask ? round64(size_t(p.A * relu_mask_words(p.K)) * sizeof(uint16_t)) : 0;
    const task_arrays tasks(p);
    alignas(64) char local[bn_stack_scratch_bytes];
    const kept_memory::lease heap = kept.take(arrays + mask_bytes + tasks.bytes(), "BN working memory");
    bn_execution run(p, b, p.scratch_on_stack ? local : heap.get());
    if (mask) {
        const bool into_src = p.fusion == bn_fusion::relu_into_src;
        run.d.relu_mask = reinterpret_cast<uint16_t *>(heap.get() + arrays);
        run.d.mask_rows = {static_cast<const float *>(run.d.relu_in), static_cast<const float *>(run.d.relu_dd),
                static_cast<const float *>(into_src ? run.d.dd : run.d.src), into_src, p.K};
    }
    run.take_task_memory(heap.get() + arrays + mask_bytes);
    run.load_statistics();
    switch (p.schedule) {
        case bn_schedule::global_update: run.coefficients_then_update(); break;
        case bn_schedule::global_sums: run.global_sums(); break;
        case bn_schedule::channel_tasks: run.channel_tasks(); break;
        case bn_schedule::channel_groups: run.channel_groups(); break;
        case bn_schedule::two_sweeps: run.two_sweeps(); break;
        case bn_schedule::channel_slabs: run.channel_slabs(); break;
        case bn_schedule::local_sums: run.sums_all(), run.combine_all(); break; // the sums are the outputs
        case bn_schedule::from_sums: run.coefficients_then_update(); break;
        case bn_schedule::zero_sized: break;
    }
    run.finish_outputs();
}

} // namespace bpg::tbb_backend
