// Which backends this build has: dnnl only with oneDNN (BPG_WITH_DNNL). A
// test loops over the backends of the build and skips its dnnl-only part
// with a reason, so that every other test also runs in a build without oneDNN.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/backend.hpp"

namespace bpg::test {

// auto_select is in every build (it names the dispatch rule, not a backend).
inline bool in_build(backend_kind k) {
    return k == backend_kind::auto_select || backends::find_backend(k) != nullptr;
}

inline std::vector<backend_kind> in_build(std::initializer_list<backend_kind> kinds) {
    std::vector<backend_kind> out;
    for (backend_kind k : kinds)
        if (in_build(k)) out.push_back(k);
    return out;
}

inline bool dnnl_in_build() { return in_build(backend_kind::dnnl); }

// The same for backend names as the tools take them ("auto", "dnnl", ...).
inline std::vector<std::string> in_build(std::initializer_list<const char *> names) {
    std::vector<std::string> out;
    for (const char *n : names)
        if (std::string(n) != "dnnl" || dnnl_in_build()) out.push_back(n);
    return out;
}

} // namespace bpg::test

// Ends the test as skipped, with the reason, in a build without oneDNN.
#define BPG_SKIP_WITHOUT_DNNL()                                                                  \
    do {                                                                                         \
        if (!::bpg::test::dnnl_in_build())                                                       \
            GTEST_SKIP() << "this build has no dnnl backend (built without oneDNN, BPG_WITH_DNNL=OFF)"; \
    } while (0)
