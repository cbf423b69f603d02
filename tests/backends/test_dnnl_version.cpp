// The oneDNN the dnnl backend runs on: the library loaded at run time is the
// version the build compiled against (a 2.6 build cannot load 3.x, but a
// 3.x build could load another 3.x through LD_LIBRARY_PATH), and, when the
// environment says which one it must be (BPG_EXPECT_ONEDNN, set by
// scripts/test-onednn3.sh), that one. Refusals name the compiled version.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "backends/backend.hpp"
#include "backends/dnnl/dnnl_compat.hpp"
#include "support/dnnl_cpu.hpp"
#include "support/problem_builders.hpp"

namespace bpg::test {
namespace {

using backends::dnnl_impl::loaded_onednn_version;
using backends::dnnl_impl::onednn_name;

TEST(DnnlVersion, LoadedLibraryIsTheOneCompiledAgainst) {
    const std::string loaded = loaded_onednn_version();
    const std::string compiled = std::to_string(DNNL_VERSION_MAJOR) + "." + std::to_string(DNNL_VERSION_MINOR) + ".";
    EXPECT_EQ(loaded.rfind(compiled, 0), 0u) << "loaded oneDNN " << loaded << ", compiled against " << compiled;
    EXPECT_EQ(onednn_name(), "oneDNN " + compiled.substr(0, compiled.size() - 1));
    if (const char *want = std::getenv("BPG_EXPECT_ONEDNN"); want && *want) {
        EXPECT_EQ(loaded, want) << "BPG_EXPECT_ONEDNN";
    }
    std::printf("oneDNN loaded: %s\n", loaded.c_str());
}

std::string dnnl_path(const backends::op_problem &op, const char *pattern) {
    const backends::backend *dnnl = backends::find_backend(backend_kind::dnnl);
    if (!dnnl) throw std::runtime_error("no dnnl backend");
    return dnnl->compile({pattern, {op}, {}})->path();
}

// The kernel paths ("bn:<lowering>:<oneDNN impl>", "resampling:<oneDNN impl>")
// name the implementation each version picks: the same names on 2.6 and 3.9
// for these layouts (docs/onednn-versions.md).
TEST(DnnlVersion, KernelPathsNameTheImplementation) {
    bn_spec s;
    s.src_shape = {2, 3, 4, 5};
    s.stat_shape = {3};
    s.fmt = layout::ncx;
    EXPECT_EQ(dnnl_path(make_bn_problem(s), "bn_bwd"), "bn:full:ncsp_bnorm:any");
    s.src_shape = {2, 4, 5, 16};
    s.stat_shape = {16};
    s.fmt = layout::nxc;
    // The ISA after "jit:" is the CPU's; without AVX-512, oneDNN's NXC jit
    // BatchNorm is the one threaded by channel blocks.
    const std::string nxc = dnnl_path(make_bn_problem(s), "bn_bwd");
    EXPECT_EQ(nxc.rfind(cpu_has_avx512_core() ? "bn:full:bnorm_jit:" : "bn:full:bnorm_tbb_jit:", 0), 0u) << nxc;
    using core::interp_mode;
    const auto interp = [](layout fmt, const dims &src, const dims &dst, const dims &src_strides = {},
                                const dims &dst_strides = {}) {
        return dnnl_path(make_interp_problem(interp_mode::nearest, kernels::coord_mode::half_pixel,
                                 kernels::nearest_rounding::round_prefer_ceil, fmt, src, dst, data_type::f32,
                                 src_strides, dst_strides),
                "interpolate_bwd");
    };
    // (oneDNN's jit resampling backward is AVX-512's alone.)
    const std::string nxc_interp = interp(layout::nxc, {1, 4, 4, 8}, {1, 8, 8, 8});
    if (cpu_has_avx512_core()) {
        EXPECT_EQ(nxc_interp.rfind("resampling:jit:", 0), 0u) << nxc_interp;
    } else {
        EXPECT_EQ(nxc_interp, "resampling:simple:any");
    }
    EXPECT_EQ(interp(layout::ncx, {1, 8, 4, 4}, {1, 8, 8, 8}), "resampling:simple:any");
    EXPECT_EQ(interp(layout::ncx, {1, 8, 4, 4}, {1, 8, 8, 8}, padded_strides({1, 8, 4, 4}, 3),
                      padded_strides({1, 8, 8, 8}, 1)),
            "resampling:ref:any");
}

} // namespace
} // namespace bpg::test
