// The oneTBB ReLUBackprop kernel (run alone, not fused into BN) against the
// reference, bit for bit: ranks 1-5, the three tensors in the same or in
// different layouts (dense, channels-last, padded rows, so that axes merge
// fully, partly or not at all), every dtype, the boundary inputs (0, -0, NaN,
// inf, subnormals), and a diff_src large enough to leave with non-temporal
// stores. Nothing outside a tensor's view is written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/tbb/relu_run.hpp"
#include "reference/reference.hpp"
#include "support/problem_builders.hpp"

namespace bpg {
namespace {

uint64_t bits_of(double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

// Inputs with every boundary value now and then; gradients with a sign.
std::vector<double> values(int64_t n, std::mt19937 &rng, bool boundaries) {
    const double special[] = {0.0, -0.0, std::numeric_limits<double>::quiet_NaN(),
            std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), 1e-45, -1e-45, 1e-40};
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        v[size_t(i)] = boundaries && i % 7 == 3 ? special[size_t(i / 7) % 8] : u(rng);
    return v;
}

void expect_reference_bits(const core::relu_bwd_problem &p, std::mt19937 &rng, const std::string &what) {
    SCOPED_TRACE(what);
    const int64_t n = p.diff_src.element_count();
    const std::vector<double> x = values(n, rng, true), g = values(n, rng, false);
    test::buffer in(p.input, x), dd(p.diff_dst, g), want(p.diff_src), got(p.diff_src);
    reference::relu_bwd(p, in.data(), dd.data(), want.data());
    tbb_backend::run_relu_bwd(p, tbb_backend::relu_nontemporal(p), in.data(), dd.data(), got.data());
    EXPECT_TRUE(got.padding_intact());
    const std::vector<double> w = want.dense(), o = got.dense();
    ASSERT_EQ(w.size(), o.size());
    for (size_t i = 0; i < w.size(); ++i) ASSERT_EQ(bits_of(o[i]), bits_of(w[i])) << "element " << i;
}

dims layout(const dims &shape, int kind) {
    std::vector<int> order(shape.size());
    for (size_t a = 0; a < shape.size(); ++a) order[a] = int(a);
    switch (kind) {
        case 0: return test::padded_strides(shape, 0); // dense
        case 1: // channels-last: axis 1 innermost
            if (shape.size() > 2) {
                order.erase(order.begin() + 1);
                order.push_back(1);
            }
            return test::permuted_strides(shape, order);
        default: return test::padded_strides(shape, 3); // gaps after every row
    }
}

TEST(TbbRelu, ReferenceBitsOnEveryLayoutAndDtype) {
    std::mt19937 rng(7);
    const std::vector<dims> shapes = {{37}, {3, 5}, {2, 3, 7, 7}, {1, 4, 1, 9}, {2, 3, 4, 5, 6}, {2, 20, 1, 1},
            {3, 1, 17}, {1, 1, 1, 1}};
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
        for (const dims &shape : shapes)
            for (int lx = 0; lx < 3; ++lx)
                for (int ly = 0; ly < 3; ++ly) {
                    // The input in layout lx, diff_dst in lx too or dense, diff_src in ly.
                    const auto p = test::make_relu_problem(shape, dt, layout(shape, lx),
                            layout(shape, ly == 2 ? 0 : lx), layout(shape, ly));
                    expect_reference_bits(p, rng, "dt " + std::to_string(int(dt)) + " rank "
                                    + std::to_string(shape.size()) + " layouts " + std::to_string(lx)
                                    + std::to_string(ly));
                }
}

// 2^22 f32 (16 MB of diff_src, streamed), one dense axis cut into pieces;
// the same with padded rows (rows of 2048, not merged).
TEST(TbbRelu, LargeTensorsStreamed) {
    std::mt19937 rng(11);
    const dims shape {4, 16, 256, 256};
    EXPECT_TRUE(tbb_backend::relu_nontemporal(test::make_relu_problem(shape)));
    EXPECT_FALSE(tbb_backend::relu_nontemporal(test::make_relu_problem({4, 16, 256, 255})));
    expect_reference_bits(test::make_relu_problem(shape), rng, "dense");
    expect_reference_bits(test::make_relu_problem(shape, data_type::f32, test::padded_strides(shape, 16),
                                  test::padded_strides(shape, 0), test::padded_strides(shape, 16)),
            rng, "padded");
}

} // namespace
} // namespace bpg
