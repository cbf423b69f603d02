// The backend registry and the one dispatch rule (see backend.hpp).
#include "backends/backend.hpp"

#include "backends/dnnl/dnnl_backend.hpp"
#include "backends/ref/ref_backend.hpp"
#include "backends/tbb/tbb_backend.hpp"

namespace bpg::backends {

const std::vector<const backend *> &registered_backends() {
    // Order = preference for auto_select. Fast backends are added before
    // the reference, which claims whatever is left.
    static const tbb_backend_impl tbb;
    static const ref_backend ref;
    // dnnl comes after ref: reached only when forced, until the rule is redesigned.
    static const dnnl_backend dnnl;
    static const std::vector<const backend *> all {&tbb, &ref, &dnnl};
    return all;
}

const backend *find_backend(backend_kind k) {
    for (const backend *b : registered_backends())
        if (b->kind() == k) return b;
    return nullptr;
}

namespace {

const backend &forced(const partition_problem &p, backend_kind k, const std::string &why,
        std::string *reason) {
    const backend *b = find_backend(k);
    if (!b) {
        std::string available;
        for (const backend *r : registered_backends())
            available += std::string(available.empty() ? "" : ", ") + to_string(r->kind());
        throw error(status::unimplemented,
                std::string("partition ") + p.pattern + ": backend '" + to_string(k)
                        + "' is not available in this build (available: " + available + ")");
    }
    std::string no = b->why_unsupported(p);
    if (!no.empty())
        throw error(status::unimplemented,
                std::string("partition ") + p.pattern + ": backend '" + to_string(k)
                        + "' cannot run it: " + no);
    if (reason) *reason = why;
    return *b;
}

} // namespace

const backend &choose_backend(const partition_problem &p, backend_kind requested,
        const char *env, std::string *reason) {
    if (requested != backend_kind::auto_select)
        return forced(p, requested, "requested by the caller", reason);
    if (env && *env) {
        backend_kind k;
        if (!backend_from_string(env, k))
            throw error(status::invalid_argument,
                    std::string("BPG_BACKEND=") + env + " is not one of auto, ref, tbb, dnnl");
        if (k != backend_kind::auto_select)
            return forced(p, k, std::string("requested by BPG_BACKEND=") + env, reason);
    }
    for (const backend *b : registered_backends())
        if (b->why_unsupported(p).empty()) {
            if (reason) *reason = std::string("first backend in preference order that supports it");
            return *b;
        }
    throw error(status::unimplemented, "partition " + p.pattern + ": no backend supports it");
}

} // namespace bpg::backends
