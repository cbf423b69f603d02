// The oneDNN the dnnl backend runs on: the library loaded at run time is the
// version the build compiled against (a 2.6 build cannot load 3.x, but a
// 3.x build could load another 3.x through LD_LIBRARY_PATH), and, when the
// environment says which one it must be (BPG_EXPECT_ONEDNN, set by
// scripts/test-onednn3.sh), that one. Refusals name the compiled version.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "backends/dnnl/dnnl_compat.hpp"

namespace bpg::test {
namespace {

using backends::dnnl_impl::loaded_onednn_version;
using backends::dnnl_impl::onednn_name;

TEST(DnnlVersion, LoadedLibraryIsTheOneCompiledAgainst) {
    const std::string loaded = loaded_onednn_version();
    const std::string compiled = std::to_string(DNNL_VERSION_MAJOR) + "." + std::to_string(DNNL_VERSION_MINOR) + ".";
    EXPECT_EQ(loaded.rfind(compiled, 0), 0u) << "loaded oneDNN " << loaded << ", compiled against " << compiled;
    EXPECT_EQ(onednn_name(), "oneDNN " + compiled.substr(0, compiled.size() - 1));
    if (const char *want = std::getenv("BPG_EXPECT_ONEDNN"); want && *want)
        EXPECT_EQ(loaded, want) << "BPG_EXPECT_ONEDNN";
    std::printf("oneDNN loaded: %s\n", loaded.c_str());
}

} // namespace
} // namespace bpg::test
