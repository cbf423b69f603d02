// The backend registry and the one dispatch rule (see backend.hpp).
#include "backends/backend.hpp"

#include <algorithm>

#include "backends/ref/ref_backend.hpp"
#include "backends/tbb/channel_blocks.hpp"
#include "backends/tbb/nontemporal.hpp"
#include "backends/tbb/tbb_backend.hpp"
#if BPG_WITH_DNNL
#include "backends/dnnl/dnnl_backend.hpp"
#endif

namespace bpg::backends {

const std::vector<const backend *> &registered_backends() {
    // Preference order of the dispatch rule (see choose_backend). Without
    // oneDNN (BPG_WITH_DNNL off) dnnl is absent: forcing it is an
    // unimplemented error naming the backends of the build.
    static const tbb_backend_impl tbb;
    static const ref_backend ref;
#if BPG_WITH_DNNL
    static const dnnl_backend dnnl;
    static const std::vector<const backend *> all {&tbb, &dnnl, &ref};
#else
    static const std::vector<const backend *> all {&tbb, &ref};
#endif
    return all;
}

namespace {

const backend *find_in(const std::vector<const backend *> &order, backend_kind k) {
    for (const backend *b : order)
        if (b->kind() == k) return b;
    return nullptr;
}

std::string names(const std::vector<const backend *> &order) {
    std::string s;
    for (const backend *b : order) s += std::string(s.empty() ? "" : ", ") + to_string(b->kind());
    return s;
}

const backend &forced(const partition_problem &p, backend_kind k, const std::string &why,
        const std::vector<const backend *> &order, std::string *reason) {
    const backend *b = find_in(order, k);
    if (!b) {
        const bool no_onednn = k == backend_kind::dnnl && !find_in(registered_backends(), k);
        throw error(status::unimplemented,
                std::string("partition ") + p.pattern + ": backend '" + to_string(k)
                        + "' is not available in this build (available: " + names(order) + ")"
                        + (no_onednn ? "; bpg was built without oneDNN (BPG_WITH_DNNL=OFF)" : ""));
    }
    const std::string no = b->why_unsupported(p);
    if (!no.empty())
        throw error(status::unimplemented,
                std::string("partition ") + p.pattern + ": backend '" + to_string(k) + "' cannot run it: " + no);
    if (reason) *reason = why;
    return *b;
}

} // namespace

bool dnnl_leads(const partition_problem &p) {
    if (p.ops.size() != 1) return false;
    const auto *bn = std::get_if<core::bn_bwd_problem>(&p.ops[0]);
    if (!bn || bn->part != core::bn_bwd_part::whole || bn->use_global_stats || bn->src.dt != data_type::bf16)
        return false;
    int kept = -1, count = 0;
    for (size_t a = 0; a < bn->reduced.size(); ++a)
        if (!bn->reduced[a]) kept = int(a), ++count;
    if (count != 1 || bn->src.strides[size_t(kept)] != 1 || bn->src.shape[size_t(kept)] <= 1) return false;
    // Small problems with whole vectors of channels only: elsewhere tbb was
    // faster (bench/NOTES.md).
    const int64_t channels = bn->src.shape[size_t(kept)];
    int64_t bytes = 2;
    for (int64_t d : bn->src.shape) bytes *= d;
    return bytes < (int64_t(1) << 20) && channels % 16 == 0;
}

const backend *find_backend(backend_kind k) { return find_in(registered_backends(), k); }

// THE dispatch rule. With a backend forced (by the caller, or BPG_BACKEND),
// that backend or an error. Otherwise the first backend, in this order, that
// computes the partition exactly, non-finite values included:
//   1. tbb  - our oneTBB kernels: faster than oneDNN on every interpolate
//             case of bpg-bench and on NCX BN, level with it or faster on
//             NXC BN f32 (docs/dispatch.md); they run every layout;
//   2. dnnl - oneDNN 2.6+ or 3.x primitives, where they compute
//             docs/semantics.md exactly (only in builds with oneDNN);
//   3. ref  - the reference, which runs everything.
// One exception, where oneDNN measured faster: dnnl goes before tbb for
// BatchNormTrainingBackprop training on channels-last bf16 data under 1 MB
// with channels a multiple of 16 (dnnl_leads).
// The reason names the backends passed over and why.
const backend &choose_backend(const partition_problem &p, backend_kind requested, const char *env,
        const std::vector<const backend *> &order, std::string *reason) {
    if (requested != backend_kind::auto_select) return forced(p, requested, "requested by the caller", order, reason);
    if (env && *env) {
        backend_kind k;
        if (!backend_from_string(env, k))
            throw error(status::invalid_argument, std::string("BPG_BACKEND=") + env + " is not one of auto, ref, tbb, dnnl");
        if (k != backend_kind::auto_select)
            return forced(p, k, std::string("requested by BPG_BACKEND=") + env, order, reason);
    }
    std::vector<const backend *> ord = order;
    const bool lead = dnnl_leads(p);
    if (lead)
        std::stable_partition(ord.begin(), ord.end(), [](const backend *b) { return b->kind() == backend_kind::dnnl; });
    const std::string rule = "dispatch rule (" + names(ord) + (lead ? ": channels-last bf16 BN training under 1 MB, channels a multiple of 16" : "") + ")";
    std::string passed;
    for (const backend *b : ord) {
        std::string no = b->why_unsupported(p);
        if (no.empty()) no = b->non_finite_divergence(p);
        if (no.empty()) {
            if (reason) *reason = passed.empty() ? "first choice of the " + rule : rule + "; passed over " + passed;
            return *b;
        }
        passed += std::string(passed.empty() ? "" : "; ") + to_string(b->kind()) + ": " + no;
    }
    throw error(status::unimplemented, "partition " + p.pattern + ": no backend runs it (" + passed + ")");
}

const backend &choose_backend(const partition_problem &p, backend_kind requested, const char *env, std::string *reason) {
    return choose_backend(p, requested, env, registered_backends(), reason);
}

} // namespace bpg::backends
