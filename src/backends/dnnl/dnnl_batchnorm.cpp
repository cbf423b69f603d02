// The rules and the choice of flags are listed in dnnl_batchnorm.hpp.
#include "backends/dnnl/dnnl_batchnorm.hpp"

#include <cstring>

#include "backends/dnnl/dnnl_common.hpp"
#include "backends/dnnl/dnnl_compat.hpp"
#include "backends/dnnl/primitive_cache.hpp"
#include "core/allocate.hpp"

namespace bpg::backends::dnnl_impl {
namespace {

std::string who(const core::bn_bwd_problem &p) {
    return "BatchNormTrainingBackprop op " + std::to_string(p.op_id) + ": ";
}

// Which of the three lowerings (see the header).
enum class bn_lowering { full, scale_only, plain };

struct plan {
    std::string refusal;
    bool empty = false; // src has no element
    int kept_axis = -1; // the axis that plays C
    int64_t channels = 0;
    bn_lowering lowering = bn_lowering::plain;
    dnnl::prop_kind prop = dnnl::prop_kind::backward;
    dnnl::normalization_flags flags = dnnl::normalization_flags::none;
    // diff_md serves diff_dst and diff_src: every version's CPU implementations
    // want one layout for both (static_refusal checks the strides agree).
    dnnl::memory::desc src_md, diff_md;
    std::string key;
};

struct stat_view {
    const char *name;
    const core::tensor_desc *desc; // null when absent
    const dims *strides;           // in src's rank
};

std::string static_refusal(const core::bn_bwd_problem &p, plan &pl) {
    if (p.part != core::bn_bwd_part::whole)
        return "oneDNN has no batch normalization split at its sums (BatchNormTrainingBackpropSums, "
               "BatchNormTrainingBackpropFromSums, BatchNormForwardSums)";
    const data_type dt = p.src.dt;
    if (p.diff_dst.dt != dt || p.diff_src.dt != dt)
        return std::string("src, diff_dst and diff_src are ") + to_string(dt) + ", "
                + to_string(p.diff_dst.dt) + ", " + to_string(p.diff_src.dt)
                + ": oneDNN's batch normalization wants one data type";
    if (!to_dnnl(dt))
        return std::string("data type ") + to_string(dt)
                + ": the dnnl backend lowers f32 and bf16 batch normalization only (docs/onednn-versions.md)";
    const stat_view stats[] = {
            {"mean", &p.mean, &p.mean_strides},
            {"variance", &p.variance, &p.variance_strides},
            {"gamma", p.gamma ? &*p.gamma : nullptr, &p.gamma_strides},
            {"diff_gamma", p.diff_gamma ? &*p.diff_gamma : nullptr, &p.diff_gamma_strides},
            {"diff_beta", p.diff_beta ? &*p.diff_beta : nullptr, &p.diff_beta_strides},
    };
    for (const stat_view &s : stats)
        if (s.desc && s.desc->dt != data_type::f32)
            return std::string(s.name) + " is " + to_string(s.desc->dt)
                    + ": " + onednn_name() + " takes statistics, scale and shift as f32 only";
    const int rank = p.src.ndims();
    if (rank < 2 || rank > 5)
        return "rank " + std::to_string(rank) + ": " + onednn_name() + " batch normalization has 2 to 5 dims";
    int kept = 0;
    for (int a = 0; a < rank; ++a)
        if (!p.reduced[size_t(a)]) {
            ++kept;
            pl.kept_axis = a;
        }
    if (kept != 1)
        return "the statistics keep " + std::to_string(kept)
                + " axes: oneDNN normalizes over every axis but one (its channel axis)";
    pl.channels = p.src.shape[size_t(pl.kept_axis)];
    for (const stat_view &s : stats)
        if (s.desc && pl.channels > 1 && (*s.strides)[size_t(pl.kept_axis)] != 1)
            return std::string(s.name) + " has stride " + std::to_string((*s.strides)[size_t(pl.kept_axis)])
                    + " along its " + std::to_string(pl.channels)
                    + " values: oneDNN takes dense [C] statistics only";
    if (!same_strides(p.diff_dst, p.diff_src))
        return "diff_dst strides " + strides_text(p.diff_dst.strides) + " differ from diff_src strides "
                + strides_text(p.diff_src.strides) + ": " + onednn_name()
                + (onednn_v3 ? "'s CPU batch normalizations take diff_src and diff_dst in one layout only"
                             : "'s backward describes both with one memory descriptor");
    if (p.epsilon == 0.f && !p.use_global_stats)
        return "epsilon = 0 with the training formula: for a zero variance oneDNN's inf/NaN pattern "
               "differs from docs/semantics.md's";
    if (p.epsilon == 0.f && p.diff_gamma)
        return "epsilon = 0 with diff_gamma: for a zero variance oneDNN computes sum(dd (src - mean)) * inf "
               "(inf where docs/semantics.md's sum(dd (src - mean) inf) is NaN)";
    return {};
}

plan plan_of(const core::bn_bwd_problem &p) {
    plan pl;
    pl.refusal = static_refusal(p, pl);
    if (!pl.refusal.empty()) return pl;
    pl.empty = p.src.element_count() == 0;
    if (pl.empty) return pl;

    using nf = dnnl::normalization_flags;
    if (p.diff_gamma) {
        pl.lowering = bn_lowering::full;
        pl.flags = nf::use_scale | nf::use_shift;
    } else if (p.gamma) {
        pl.lowering = bn_lowering::scale_only;
        pl.flags = nf::use_scale;
    } else {
        pl.lowering = bn_lowering::plain;
        pl.prop = dnnl::prop_kind::backward_data;
    }
    if (p.use_global_stats) pl.flags = pl.flags | nf::use_global_stats;

    // oneDNN's order: one reduced axis, the kept axis (C), the other reduced axes.
    const int rank = p.src.ndims();
    std::vector<int> order;
    for (int a = 0; a < rank; ++a)
        if (a != pl.kept_axis) order.push_back(a);
    order.insert(order.begin() + 1, pl.kept_axis);
    const dnnl::memory::data_type dt = *to_dnnl(p.src.dt);
    try {
        pl.src_md = permuted_desc(p.src, order, dt);
        pl.diff_md = permuted_desc(p.diff_src, order, dt);
    } catch (const dnnl::error &e) {
        pl.refusal = std::string("oneDNN does not accept these strides: ") + e.what();
        return pl;
    }
    auto text = [&](const core::tensor_desc &t) { return permuted_text(t, order); };
    uint32_t eps_bits = 0;
    std::memcpy(&eps_bits, &p.epsilon, sizeof eps_bits);
    pl.key = "bnorm_bwd prop=" + std::to_string(int(pl.prop)) + " flags=" + std::to_string(unsigned(pl.flags))
            + " eps=" + std::to_string(eps_bits) + " " + to_string(p.src.dt) + " src " + text(p.src)
            + " diff " + text(p.diff_src);
    return pl;
}

cached_primitive create(const plan &pl, float epsilon) {
    cached_primitive c;
    const dnnl::engine &eng = cpu_engine();
    try {
        const dnnl::batch_normalization_backward::primitive_desc bwd = make_bnorm_bwd_pd(
                eng, pl.prop, pl.diff_md, pl.diff_md, pl.src_md, epsilon, pl.flags, user_scratchpad_attr());
        c.impl = bwd.impl_info_str();
        c.primitive = dnnl::batch_normalization_backward(bwd);
        c.scratchpad = bwd.scratchpad_desc();
    } catch (const dnnl::error &e) {
        c.refusal = onednn_name() + " has no batch_normalization_backward for these tensors: "
                + e.what();
    }
    return c;
}

// Dense f32 [C] statistics: a memory of C floats over the user's pointer.
dnnl::memory stat_memory(int64_t channels, void *ptr) {
    const dnnl::memory::desc md({channels}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x);
    return dnnl::memory(md, cpu_engine(), ptr);
}

class batchnorm_kernel : public kernel {
public:
    batchnorm_kernel(const core::bn_bwd_problem &p, const plan &pl, primitive_cache::entry e)
        : p_(p), pl_(pl), entry_(std::move(e)) {
        if (pl.lowering == bn_lowering::full) {
            // Read-only inputs of the primitive, shared by concurrent executions.
            if (!p.gamma) ones_.assign(size_t(pl.channels), 1.f);
            zeros_.assign(size_t(pl.channels), 0.f);
        }
    }

    void execute(const buffer_map &b) const override {
        if (pl_.empty) return write_empty_sums(b);
        const dnnl::engine &eng = cpu_engine();
        std::unordered_map<int, dnnl::memory> args {
                {DNNL_ARG_SRC, dnnl::memory(pl_.src_md, eng, b.at(p_.src.id))},
                {DNNL_ARG_DIFF_DST, dnnl::memory(pl_.diff_md, eng, b.at(p_.diff_dst.id))},
                {DNNL_ARG_DIFF_SRC, dnnl::memory(pl_.diff_md, eng, b.at(p_.diff_src.id))},
                {DNNL_ARG_MEAN, stat_memory(pl_.channels, b.at(p_.mean.id))},
                {DNNL_ARG_VARIANCE, stat_memory(pl_.channels, b.at(p_.variance.id))},
        };
        // oneDNN only reads SCALE and SHIFT; the const_casts never lead to a write.
        switch (pl_.lowering) {
            case bn_lowering::full:
                args[DNNL_ARG_SCALE] = stat_memory(pl_.channels,
                        p_.gamma ? b.at(p_.gamma->id) : const_cast<float *>(ones_.data()));
                if (bnorm_bwd_binds_shift)
                    args[DNNL_ARG_SHIFT] = stat_memory(pl_.channels, const_cast<float *>(zeros_.data()));
                args[DNNL_ARG_DIFF_SCALE] = stat_memory(pl_.channels, b.at(p_.diff_gamma->id));
                args[DNNL_ARG_DIFF_SHIFT] = stat_memory(pl_.channels, b.at(p_.diff_beta->id));
                break;
            case bn_lowering::scale_only: {
                thread_local core::checked_vector<float> unused_diff_scale;
                unused_diff_scale.resize(size_t(pl_.channels));
                args[DNNL_ARG_SCALE] = stat_memory(pl_.channels, b.at(p_.gamma->id));
                args[DNNL_ARG_DIFF_SCALE] = stat_memory(pl_.channels, unused_diff_scale.data());
                break;
            }
            case bn_lowering::plain: break;
        }
        execute_on_cpu(entry_->primitive, args, entry_->scratchpad);
    }

    std::string path() const override {
        if (pl_.empty) return "bn:zero_sized";
        static const char *const lowering[] = {"full", "scale_only", "plain"};
        return "bn:" + std::string(lowering[int(pl_.lowering)]) + ":" + entry_->impl;
    }

private:
    // src has no element: diff_src is empty, and the sums over an empty
    // reduction are 0 (what the reference writes).
    void write_empty_sums(const buffer_map &b) const {
        if (!p_.diff_gamma) return;
        const int64_t c = pl_.channels;
        const int64_t sg = c > 1 ? p_.diff_gamma_strides[size_t(pl_.kept_axis)] : 1;
        const int64_t sb = c > 1 ? p_.diff_beta_strides[size_t(pl_.kept_axis)] : 1;
        float *g = static_cast<float *>(b.at(p_.diff_gamma->id));
        float *d = static_cast<float *>(b.at(p_.diff_beta->id));
        for (int64_t i = 0; i < c; ++i) g[i * sg] = d[i * sb] = 0.f;
    }

    core::bn_bwd_problem p_;
    plan pl_;
    primitive_cache::entry entry_; // shared with the cache; null when empty
    std::vector<float> ones_, zeros_;
};

} // namespace

std::string batchnorm_why_unsupported(const core::bn_bwd_problem &p) {
    const plan pl = plan_of(p);
    if (!pl.refusal.empty()) return who(p) + pl.refusal;
    if (pl.empty) return {};
    const primitive_cache::entry e =
            team_primitive(pl.key, [&] { return create(pl, p.epsilon); });
    return e->refusal.empty() ? std::string() : who(p) + e->refusal;
}

std::unique_ptr<kernel> compile_batchnorm(const core::bn_bwd_problem &p) {
    const plan pl = plan_of(p);
    if (!pl.refusal.empty()) throw error(status::unimplemented, who(p) + pl.refusal);
    primitive_cache::entry e;
    if (!pl.empty) {
        e = team_primitive(pl.key, [&] { return create(pl, p.epsilon); });
        if (!e->refusal.empty()) throw error(status::unimplemented, who(p) + e->refusal);
    }
    return std::make_unique<batchnorm_kernel>(p, pl, std::move(e));
}

} // namespace bpg::backends::dnnl_impl
