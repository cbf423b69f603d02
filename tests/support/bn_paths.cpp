#include "support/bn_paths.hpp"

#include <cstring>

#include <gtest/gtest.h>

#include "backends/tbb/convert_rows.hpp"
#include "backends/tbb/cpu.hpp"
#include "backends/tbb/size_thresholds.hpp"
#include "support/default_threads.hpp"

namespace bpg::test {

bn_case make(dims ncx, data_type dt, bool nxc) {
    bn_case c;
    c.dt = dt;
    c.nxc = nxc;
    c.stat_shape = {ncx[1]};
    if (nxc) {
        dims d {ncx[0]};
        d.insert(d.end(), ncx.begin() + 2, ncx.end());
        d.push_back(ncx[1]);
        ncx = d;
    }
    c.shape = ncx;
    return c;
}

bn_case global(bn_case c, bool sums) {
    c.global_stats = true;
    c.three_outputs = sums;
    return c;
}

bn_case relu(bn_case c, int into) {
    c.relu = into;
    return c;
}

knobs::knobs(const path_case &pc) {
    tbb_backend::test_size_threshold_shift() = pc.large ? 12 : 0;
    tbb_backend::generic_kernels_only() = pc.generic;
}

knobs::~knobs() {
    tbb_backend::test_size_threshold_shift() = 0;
    tbb_backend::generic_kernels_only() = false;
}

std::string avx2_suffix(data_type dt) {
    using namespace tbb_backend;
    const bool avx2 = dt != data_type::f32 && !has_avx512f() && has_avx2() && f16c_available() && !clone_16bit_only();
    return avx2 ? ":avx2" : "";
}

void expect_path_taken(const std::vector<path_case> &cases) {
    uint32_t seed = 1;
    for (const path_case &pc : cases) {
        const knobs set(pc);
        SCOPED_TRACE(pc.c.name() + (pc.large ? " large" : "") + (pc.generic ? " generic" : ""));
        const std::string want = pc.path == "bn:zero_sized" ? pc.path : pc.path + avx2_suffix(pc.c.dt);
        EXPECT_EQ(compile_bn_case(pc.c, backend_kind::tbb).get_kernel_path(), want);
        const auto in = bn_inputs(pc.c, seed++);
        expect_bn_close(run_bn(pc.c, backend_kind::tbb, in), run_bn(pc.c, backend_kind::ref, in), pc.c);
    }
}

bool skip_without_avx512() { return !tbb_backend::has_avx512f(); }

void widen_mantissas(outputs &in) {
    for (auto &[id, v] : in)
        if (id == 0 || id == 1 || id >= 10)
            for (float &x : v) x = x * 1.1f + 0.0123f;
}

outputs run_generic(const bn_case &c, const outputs &in, bool clones) {
    tbb_backend::generic_kernels_only() = true;
    tbb_backend::clone_16bit_only() = clones;
    outputs out = run_bn(c, backend_kind::tbb, in);
    tbb_backend::generic_kernels_only() = false;
    tbb_backend::clone_16bit_only() = false;
    return out;
}

void expect_same_bits(const outputs &got, const outputs &want, const char *what) {
    for (auto &[id, v] : got)
        EXPECT_EQ(0, std::memcmp(v.data(), want.at(id).data(), v.size() * 4)) << what << ", output " << id;
}

void expect_reference_and_same_bits(const bn_case &c, uint32_t seed) {
    auto in = bn_inputs(c, seed);
    widen_mantissas(in);
    outputs one, three;
    with_default_threads(1, [&] { one = run_bn(c, backend_kind::tbb, in); });
    with_default_threads(3, [&] { three = run_bn(c, backend_kind::tbb, in); });
    expect_bn_close(one, run_bn(c, backend_kind::ref, in), c);
    expect_same_bits(one, three, "3 threads");
    expect_same_bits(one, run_generic(c, in), "generic");
    if (c.dt != data_type::f32) expect_same_bits(one, run_generic(c, in, true), "generic, target_clones");
}

} // namespace bpg::test
