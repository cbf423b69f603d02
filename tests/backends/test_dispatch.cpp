// The one dispatch rule (backends::choose_backend), on fake backends so every
// branch is reachable, and on the real registry for the cases it decides.
#include <cstdlib>

#include <gtest/gtest.h>

#include "backends/backend.hpp"
#include "support/expect_error.hpp"
#include "support/backends_in_build.hpp"
#include "support/problem_builders.hpp"

namespace bpg::backends {
namespace {

// A backend that runs a partition unless its pattern is in `refuses`.
class fake : public backend {
public:
    fake(backend_kind k, std::string refuses) : kind_(k), refuses_(std::move(refuses)) {}
    backend_kind kind() const override { return kind_; }
    std::string why_unsupported(const partition_problem &p) const override {
        return p.pattern == refuses_ ? "refuses " + p.pattern : "";
    }
    std::unique_ptr<kernel> compile(const partition_problem &) const override { return nullptr; }

private:
    backend_kind kind_;
    std::string refuses_;
};

partition_problem pattern(const std::string &name) {
    partition_problem p;
    p.pattern = name;
    return p;
}

TEST(Dispatch, FirstBackendInPreferenceOrderThatRunsThePartition) {
    const fake tbb(backend_kind::tbb, "a"), dnnl(backend_kind::dnnl, "b"), ref(backend_kind::ref, "");
    const std::vector<const backend *> order {&tbb, &dnnl, &ref};
    std::string why;
    EXPECT_EQ(&choose_backend(pattern("c"), backend_kind::auto_select, nullptr, order, &why), &tbb);
    EXPECT_NE(why.find("first choice"), std::string::npos) << why;
    EXPECT_EQ(&choose_backend(pattern("a"), backend_kind::auto_select, nullptr, order, &why), &dnnl);
    EXPECT_NE(why.find("passed over tbb: refuses a"), std::string::npos) << why;
    const fake dnnl_a(backend_kind::dnnl, "a");
    EXPECT_EQ(&choose_backend(pattern("a"), backend_kind::auto_select, nullptr, {&tbb, &dnnl_a, &ref}, &why), &ref);
    test::expect_error([&] { choose_backend(pattern("a"), backend_kind::auto_select, nullptr, {&tbb, &dnnl_a}); },
            status::unimplemented, {"no backend runs it", "tbb: refuses a", "dnnl: refuses a"});
}

TEST(Dispatch, ForcedBackendsAndTheEnvironment) {
    const fake tbb(backend_kind::tbb, "a"), ref(backend_kind::ref, "");
    const std::vector<const backend *> order {&tbb, &ref};
    std::string why;
    EXPECT_EQ(&choose_backend(pattern("c"), backend_kind::ref, nullptr, order, &why), &ref);
    EXPECT_EQ(why, "requested by the caller");
    test::expect_error([&] { choose_backend(pattern("a"), backend_kind::tbb, nullptr, order); }, status::unimplemented,
            {"backend 'tbb' cannot run it: refuses a"});
    test::expect_error([&] { choose_backend(pattern("c"), backend_kind::dnnl, nullptr, order); }, status::unimplemented,
            {"'dnnl' is not available", "available: tbb, ref"});
    EXPECT_EQ(&choose_backend(pattern("c"), backend_kind::auto_select, "ref", order, &why), &ref);
    EXPECT_EQ(why, "requested by BPG_BACKEND=ref");
    EXPECT_EQ(&choose_backend(pattern("c"), backend_kind::auto_select, "auto", order), &tbb);
    // The caller's request wins over the environment.
    EXPECT_EQ(&choose_backend(pattern("c"), backend_kind::tbb, "ref", order), &tbb);
    test::expect_error([&] { choose_backend(pattern("c"), backend_kind::auto_select, "fast", order); },
            status::invalid_argument, {"BPG_BACKEND=fast"});
}

// The one exception of the rule: BN training on channels-last bf16 data
// under 1 MB with channels a multiple of 16 tries dnnl first (measured faster there); f32, NCX, use_global_stats and
// other ops keep tbb first, and tbb still runs it when dnnl cannot.
TEST(Dispatch, DnnlFirstForChannelsLastBf16BatchNormTraining) {
    const auto bn = [](data_type dt, test::layout fmt, bool global, dims nxc_shape = {2, 5, 5, 16}) {
        test::bn_spec s;
        const int64_t c = nxc_shape.back();
        s.src_shape = fmt == test::layout::nxc ? nxc_shape : dims {nxc_shape[0], c, nxc_shape[1], nxc_shape[2]};
        s.stat_shape = {c};
        s.fmt = fmt;
        s.dt = dt;
        s.use_global_stats = global;
        partition_problem p;
        p.pattern = "bn_bwd";
        p.ops.push_back(test::make_bn_problem(s));
        return p;
    };
    const fake tbb(backend_kind::tbb, ""), dnnl(backend_kind::dnnl, ""), ref(backend_kind::ref, "");
    const std::vector<const backend *> order {&tbb, &dnnl, &ref};
    std::string why;
    const partition_problem nxc_bf16 = bn(data_type::bf16, test::layout::nxc, false);
    EXPECT_TRUE(dnnl_leads(nxc_bf16));
    // Under 1 MB with whole vectors of channels only: elsewhere tbb leads.
    EXPECT_TRUE(dnnl_leads(bn(data_type::bf16, test::layout::nxc, false, {2, 56, 56, 16})));
    EXPECT_FALSE(dnnl_leads(bn(data_type::bf16, test::layout::nxc, false, {8, 56, 56, 32})));
    EXPECT_FALSE(dnnl_leads(bn(data_type::bf16, test::layout::nxc, false, {8, 128, 128, 64})));
    EXPECT_FALSE(dnnl_leads(bn(data_type::bf16, test::layout::nxc, false, {8, 128, 128, 80})));
    EXPECT_FALSE(dnnl_leads(bn(data_type::bf16, test::layout::nxc, false, {16, 56, 56, 3})));
    EXPECT_EQ(&choose_backend(nxc_bf16, backend_kind::auto_select, nullptr, order, &why), &dnnl);
    EXPECT_NE(why.find("dispatch rule (dnnl, tbb, ref: channels-last bf16 BN training under 1 MB, channels a multiple of 16)"), std::string::npos) << why;
    for (const partition_problem &p : {bn(data_type::f32, test::layout::nxc, false),
                 bn(data_type::bf16, test::layout::ncx, false), bn(data_type::bf16, test::layout::nxc, true)}) {
        EXPECT_FALSE(dnnl_leads(p));
        EXPECT_EQ(&choose_backend(p, backend_kind::auto_select, nullptr, order), &tbb);
    }
    const fake dnnl_no(backend_kind::dnnl, "bn_bwd");
    EXPECT_EQ(&choose_backend(nxc_bf16, backend_kind::auto_select, nullptr, {&tbb, &dnnl_no, &ref}, &why), &tbb);
    EXPECT_NE(why.find("passed over dnnl: refuses bn_bwd"), std::string::npos) << why;
    // Forcing a backend is not affected.
    EXPECT_EQ(&choose_backend(nxc_bf16, backend_kind::tbb, nullptr, order), &tbb);
}

// A backend whose results differ from the reference's on non-finite inputs
// only: the automatic rule passes over it, forcing it still works.
class diverges_on_non_finite : public fake {
public:
    using fake::fake;
    std::string non_finite_divergence(const partition_problem &) const override { return "turns Inf into NaN"; }
};

TEST(Dispatch, AutomaticRulePassesOverBackendsThatDivergeOnNonFiniteValues) {
    const fake tbb(backend_kind::tbb, "a"), ref(backend_kind::ref, "");
    const diverges_on_non_finite dnnl(backend_kind::dnnl, "");
    const std::vector<const backend *> order {&tbb, &dnnl, &ref};
    std::string why;
    EXPECT_EQ(&choose_backend(pattern("a"), backend_kind::auto_select, nullptr, order, &why), &ref);
    EXPECT_NE(why.find("passed over tbb: refuses a; dnnl: turns Inf into NaN"), std::string::npos) << why;
    EXPECT_EQ(&choose_backend(pattern("a"), backend_kind::dnnl, nullptr, order), &dnnl);
    EXPECT_EQ(&choose_backend(pattern("a"), backend_kind::auto_select, "dnnl", order), &dnnl);
}

// The real dnnl backend declares that divergence for linear interpolation
// only (tests/non_finite pins what oneDNN does); nearest and BN are exact.
TEST(Dispatch, DnnlDeclaresItsNonFiniteDivergenceForLinearInterpolation) {
    BPG_SKIP_WITHOUT_DNNL();
    const backend *dnnl = find_backend(backend_kind::dnnl);
    ASSERT_NE(dnnl, nullptr);
    const auto interp = [](core::interp_mode m) {
        partition_problem p;
        p.pattern = "interpolate_bwd";
        p.ops.push_back(test::make_interp_problem(m, kernels::coord_mode::half_pixel,
                kernels::nearest_rounding::round_prefer_ceil, test::layout::ncx, {2, 3, 4, 4}, {2, 3, 8, 8}));
        return p;
    };
    EXPECT_TRUE(dnnl->why_unsupported(interp(core::interp_mode::linear)).empty());
    EXPECT_NE(dnnl->non_finite_divergence(interp(core::interp_mode::linear)).find("may give NaN"), std::string::npos);
    EXPECT_EQ(dnnl->non_finite_divergence(interp(core::interp_mode::nearest)), "");
    test::bn_spec s;
    s.src_shape = {2, 3, 4, 4};
    s.stat_shape = {3};
    s.fmt = test::layout::ncx;
    partition_problem bn;
    bn.pattern = "bn_bwd";
    bn.ops.push_back(test::make_bn_problem(s));
    EXPECT_EQ(dnnl->non_finite_divergence(bn), "");
}

// Without oneDNN (BPG_WITH_DNNL=OFF): tbb, ref, and forcing dnnl is an
// unimplemented error that says why.
TEST(Dispatch, RegistryOrderIsTbbDnnlRef) {
    std::vector<backend_kind> kinds;
    for (const backend *b : registered_backends()) kinds.push_back(b->kind());
    if (test::dnnl_in_build()) {
        EXPECT_EQ(kinds, (std::vector<backend_kind> {backend_kind::tbb, backend_kind::dnnl, backend_kind::ref}));
        return;
    }
    EXPECT_EQ(kinds, (std::vector<backend_kind> {backend_kind::tbb, backend_kind::ref}));
    EXPECT_EQ(find_backend(backend_kind::dnnl), nullptr);
    partition_problem p;
    p.pattern = "relu_bwd";
    test::expect_error([&] { choose_backend(p, backend_kind::dnnl, nullptr); }, status::unimplemented,
            {"backend 'dnnl' is not available in this build (available: tbb, ref)", "BPG_WITH_DNNL=OFF"});
    test::expect_error([&] { choose_backend(p, backend_kind::auto_select, "dnnl"); }, status::unimplemented,
            {"'dnnl' is not available in this build"});
}

} // namespace
} // namespace bpg::backends
