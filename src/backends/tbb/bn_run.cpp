// Execution of a bn_plan (see bn_plan.hpp): the schedule of the two passes
// over the kernels of bn_kernels.hpp, the per-channel math in double from
// kernels/bn_math.hpp, and the literal formula where it is not finite.
#include <cmath>
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include <tbb/blocked_range.h>

#include "backends/tbb/bn_kernels.hpp"
#include "backends/tbb/bn_plan.hpp"
#include "backends/tbb/bn_relu_mask.hpp"
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

// Pass 1 on items [i0, i1): planar rows, or channels-last chunks of rows.
void sums(const bn_plan &p, const data &d, const float *m, double *o, int64_t i0, int64_t i1,
        const coeffs *global = nullptr) {
    if (p.planar) bn::planar_sums(p, d, m, o, i0, i1, global);
    else bn::channels_last_sums(p, d, m, o, i0, i1, global);
}

// Pass 2 on rows [i0, i1): planar rows (a, k), or channels-last rows a.
void upd(const bn_plan &p, const data &d, const coeffs &c, int64_t i0, int64_t i1) {
    if (p.planar) bn::planar_update(p, d, c, i0, i1);
    else bn::channels_last_update(p, d, c, i0, i1);
}

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

// Pass-1 work items and chunk-partial pairs per item (see bn_kernels.hpp).
int64_t items_of(const bn_plan &p) { return p.planar ? p.K * p.A : (p.A + bn::vector_chunk - 1) / bn::vector_chunk; }
int64_t pairs_per_item(const bn_plan &p) { return p.planar ? (p.B + bn::planar_chunk - 1) / bn::planar_chunk : p.K; }
bool needs_sums(const bn_plan &p) { return !p.global_stats || p.has_diff_stats; }

// The run's per-channel working arrays, carved in this order from one block
// of bn_scratch_bytes (each array 64-byte aligned).
struct working_memory {
    double *mean = nullptr, *inv = nullptr, *gamma = nullptr, *db = nullptr, *s2 = nullptr, *dg = nullptr,
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
    for (double **a : {&w.mean, &w.inv, &w.gamma, &w.db, &w.s2, &w.dg})
        *a = reinterpret_cast<double *>(take(K * int64_t(sizeof(double))));
    for (bn::float_run *a : {&w.cf.mean, &w.cf.a, &w.cf.c2, &w.cf.c0})
        a->p = reinterpret_cast<float *>(take(K * int64_t(sizeof(float))));
    w.partial = reinterpret_cast<double *>(
            take(needs_sums(p) ? 2 * items_of(p) * pairs_per_item(p) * int64_t(sizeof(double)) : 0));
    w.literal = take(K);
    return at;
}

} // namespace

int64_t bn_scratch_bytes(const bn_plan &p) {
    working_memory sizes_only;
    return lay_out(p, nullptr, sizes_only);
}

void run_bn_plan(const bn_plan &p, const backends::buffer_map &b) {
    if (p.empty) {
        for (const core::tensor_desc &t : p.zeroed) core::store_zeros(t, b.at(t.id));
        return;
    }
    auto stat = [&](size_t id, data_type dt, const std::vector<int64_t> &off, int64_t k) {
        return core::load_as_double(b.at(id), dt, off[size_t(k)]);
    };
    data d;
    if (p.fusion != bn_fusion::relu_into_src) d.src = b.at(p.src_id);
    if (p.fusion != bn_fusion::relu_into_dd) d.dd = b.at(p.dd_id);
    if (p.fusion != bn_fusion::none) {
        d.relu_in = b.at(p.relu_in_id);
        d.relu_dd = b.at(p.relu_dd_id);
    }
    d.ds = b.at(p.ds_id);
    d.nontemporal = p.A * p.K * p.B * int64_t(size_of(p.dt)) >= size_threshold(nontemporal_min_bytes);
    core::array<uint16_t> relu_mask;
    const bool into_src = p.fusion == bn_fusion::relu_into_src;
    // Channels-last with a fused ReLU keeps its decisions as bits (see
    // bn_relu_mask.hpp) where rows are whole: pass 2 then reads two tensors
    // instead of three (fewer than 16 channels: the generic loops).
    if (p.dt == data_type::f32 && p.fusion != bn_fusion::none && !p.planar && !p.global_stats && p.K >= bn::lanes
            && p.relu_in.a == p.K && p.relu_dd.a == p.K && (into_src ? p.dd.a : p.src.a) == p.K && p.ds.a == p.K
            && relu_mask_available()) {
        relu_mask = core::allocate_array<uint16_t>(size_t(p.A * relu_mask_words(p.K)), "the ReLU mask");
        d.relu_mask = relu_mask.get();
        d.mask_rows = {static_cast<const float *>(d.relu_in), static_cast<const float *>(d.relu_dd),
                static_cast<const float *>(into_src ? d.dd : d.src), into_src, p.K};
    }

    const size_t K = size_t(p.K);
    // All memory of the run is taken here, before any output is written.
    alignas(64) char local[bn_stack_scratch_bytes];
    core::aligned_buffer heap;
    char *base = local;
    if (!p.scratch_on_stack) {
        heap = core::allocate(size_t(p.scratch_bytes), "BN working memory");
        base = static_cast<char *>(heap.get());
    }
    working_memory w;
    lay_out(p, base, w);
    double *const mean = w.mean, *const inv = w.inv, *const gamma = w.gamma, *const db = w.db, *const s2 = w.s2,
                 *const dg = w.dg, *const partial = w.partial;
    char *const literal = w.literal;
    coeffs &cf = w.cf;
    std::fill(gamma, gamma + K, 1.0);
    std::fill(db, db + K, 0.0);
    std::fill(s2, s2 + K, 0.0);
    std::fill(dg, dg + K, 0.0);
    std::fill(literal, literal + K, char(0));
    for (int64_t k = 0; k < p.K; ++k) {
        mean[size_t(k)] = stat(p.mean_id, p.mean_dt, p.mean_off, k);
        inv[size_t(k)] = kernels::bn_inv_std(stat(p.var_id, p.var_dt, p.var_off, k), double(p.epsilon));
        if (p.has_gamma) gamma[size_t(k)] = stat(p.gamma_id, p.gamma_dt, p.gamma_off, k);
        cf.mean[size_t(k)] = float(mean[size_t(k)]);
    }
    const literal_channel lit {p, b};
    const bool need_sums = needs_sums(p);

    // The results and pass-2 coefficients of channel k from its sums, in
    // double: one function for every schedule below, so they agree bit for bit.
    // diff_gamma of channel k from its sums; where inv is not finite, the
    // literal sum (a pass over the channel) gives the reference's inf/NaN.
    auto diff_gamma_of = [&](size_t k) {
        return std::isfinite(inv[k]) ? inv[k] * s2[k] : (need_sums ? lit.diff_gamma(int64_t(k), mean[k], inv[k]) : 0.0);
    };
    auto finish_channel = [&](size_t k) {
        const bool finite_inv = std::isfinite(inv[k]);
        // With use_global_stats the coefficients do not read diff_gamma: it
        // is computed once the sums exist (see below).
        if (!p.global_stats) dg[k] = diff_gamma_of(k);
        const auto c = kernels::bn_coeffs(gamma[k], inv[k], db[k], dg[k], p.M, p.global_stats);
        // ds = scale*(dd - shift - xhat*slope) = scale*dd - scale*inv*slope*(src - mean) - scale*shift
        cf.a[k] = float(c.scale), cf.c2[k] = float(-c.scale * inv[k] * c.slope), cf.c0[k] = float(-c.scale * c.shift);
        const bool finite = std::isfinite(cf.a[k]) && std::isfinite(cf.c2[k]) && std::isfinite(cf.c0[k]);
        literal[k] = !p.global_stats && !(finite_inv && finite);
    };
    // Chunk partials -> channel sums, in a fixed order (the same for every schedule).
    const int64_t items = items_of(p);
    const int64_t per_item = pairs_per_item(p);
    if (need_sums) std::fill(partial, partial + 2 * items * per_item, 0.0);
    const bool keep_decisions = p.planar && bn::keeps_relu_decisions(p, d);
    // Per-task memory only where a kernel takes some: channels-last pass 1,
    // and the kept ReLU decisions.
    std::optional<task_pool<bn::task_memory>> work;
    if (!p.planar || keep_decisions)
        work.emplace(std::max(items, p.K), [&] {
            return bn::task_memory {
                    core::allocate_array<float>(p.planar ? 0 : size_t(2 * std::max(p.K, bn::lanes * relu_mask_words(p.K))),
                            "BN working memory"),
                    core::allocate_array<uint16_t>(keep_decisions ? size_t(p.A * (p.B / bn::lanes)) : 0, "the ReLU decisions")};
        });
    d.work = work ? &*work : nullptr;
    // The plan's schedule: one task on this thread, or the parallel loop.
    auto loop = [&](const task_range &range, const auto &body) {
        if (p.one_task) inline_task(range, body);
        else parallel_tasks(range, body);
    };
    auto combine = [&](int64_t k) {
        double t1 = 0, t2 = 0;
        if (p.planar) {
            for (int64_t j = k * p.A * per_item; j < (k + 1) * p.A * per_item; ++j)
                t1 += partial[size_t(2 * j)], t2 += partial[size_t(2 * j + 1)];
        } else {
            for (int64_t c = 0; c < items; ++c)
                t1 += partial[size_t(2 * (c * p.K + k))], t2 += partial[size_t(2 * (c * p.K + k) + 1)];
        }
        db[size_t(k)] = t1;
        s2[size_t(k)] = t2;
    };
    if (p.global_stats) {
        // diff_src = gamma * inv * diff_dst needs no sums: coefficients first,
        // then one sweep that writes diff_src (and sums when they are outputs).
        for (size_t k = 0; k < K; ++k) finish_channel(k);
        if (need_sums) {
            loop(task_range(0, items), [&](const tbb::blocked_range<int64_t> &r) {
                sums(p, d, cf.mean.data(), partial, r.begin(), r.end(), &cf);
            });
            loop(task_range(0, p.K, 16), [&](const tbb::blocked_range<int64_t> &r) {
                for (int64_t k = r.begin(); k < r.end(); ++k) combine(k);
            });
            for (size_t k = 0; k < K; ++k) dg[k] = diff_gamma_of(k); // an output, not needed for diff_src
        } else {
            loop(task_range(0, p.planar ? p.A * p.K : p.A),
                    [&](const tbb::blocked_range<int64_t> &r) { upd(p, d, cf, r.begin(), r.end()); });
        }
    } else if (p.planar && p.K >= 8) {
        // NCX training with enough channels: both passes of a channel (short
        // rows: of a group of channels, see channels_per_task) in one task, so
        // its src and diff_dst are read again from the cache (L3) rather than
        // from memory. The chunk sums and their order are those of the
        // schedule below.
        const int64_t group = bn::channels_per_task(p);
        if (group > 1) {
            // Short rows: channel groups, row a of the group one run in memory.
            const int64_t groups = (p.K + group - 1) / group;
            loop(task_range(0, groups, 1), [&](const tbb::blocked_range<int64_t> &r) {
                for (int64_t g = r.begin(); g < r.end(); ++g) {
                    const int64_t k0 = g * group, k1 = std::min(p.K, k0 + group);
                    bn::short_rows_sums(p, d, cf.mean.data(), partial, k0, k1);
                    bool any_literal = false;
                    for (int64_t k = k0; k < k1; ++k) {
                        combine(k);
                        finish_channel(size_t(k));
                        any_literal |= literal[size_t(k)] != 0;
                    }
                    if (!any_literal) bn::short_rows_update(p, d, cf, k0, k1);
                    else
                        for (int64_t k = k0; k < k1; ++k)
                            if (!literal[size_t(k)]) bn::planar_update_channel(p, d, cf, k);
                }
            });
        } else {
            // Both passes of channels r (with the ReLU decisions of pass 1 kept in `passed`).
            auto channels = [&](const task_range &r, uint16_t *passed) {
                for (int64_t k = r.begin(); k < r.end(); ++k) {
                    if (keep_decisions) bn::relu_passed_sums(p, d, cf.mean.data(), partial, k, passed);
                    else sums(p, d, cf.mean.data(), partial, k * p.A, (k + 1) * p.A);
                    combine(k);
                    finish_channel(size_t(k));
                    if (literal[size_t(k)]) continue;
                    if (keep_decisions) bn::relu_passed_update(p, d, cf, k, passed);
                    else bn::planar_update_channel(p, d, cf, k);
                }
            };
            loop(task_range(0, p.K, 1), [&](const tbb::blocked_range<int64_t> &r) {
                if (keep_decisions) {
                    const auto task = work->borrow();
                    channels(r, task->passed.get());
                } else {
                    channels(r, nullptr);
                }
            });
        }
    } else {
        loop(task_range(0, items), [&](const tbb::blocked_range<int64_t> &r) {
            sums(p, d, cf.mean.data(), partial, r.begin(), r.end());
        });
        loop(task_range(0, p.K, 16), [&](const tbb::blocked_range<int64_t> &r) {
            for (int64_t k = r.begin(); k < r.end(); ++k) combine(k);
        });
        for (size_t k = 0; k < K; ++k) finish_channel(k);
        loop(task_range(0, p.planar ? p.A * p.K : p.A),
                [&](const tbb::blocked_range<int64_t> &r) { upd(p, d, cf, r.begin(), r.end()); });
    }

    if (p.has_diff_stats)
        for (size_t k = 0; k < K; ++k) {
            core::store_from_double(b.at(p.dgamma_id), p.dgamma_dt, p.dgamma_off[k], dg[k]);
            core::store_from_double(b.at(p.dbeta_id), p.dbeta_dt, p.dbeta_off[k], db[k]);
        }
    // Channels whose coefficients are not finite: the formula as written.
    for (size_t k = 0; k < K; ++k)
        if (literal[k]) {
            const auto c = kernels::bn_coeffs(gamma[k], inv[k], db[k], dg[k], p.M, false);
            lit.update(int64_t(k), c, mean[k], inv[k]);
        }
}

} // namespace bpg::tbb_backend
