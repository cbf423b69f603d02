// Reference ReLUBackprop: diff_src = diff_dst where the input is > 0, else 0.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "reference/reference.hpp"
#include "support/problem_builders.hpp"

namespace bpg {
namespace {

std::vector<double> run_bwd(const core::relu_bwd_problem &p, const std::vector<double> &input,
        const std::vector<double> &dd) {
    test::buffer in(p.input, input), g(p.diff_dst, dd), out(p.diff_src);
    reference::relu_bwd(p, in.data(), g.data(), out.data());
    EXPECT_TRUE(out.padding_intact());
    return out.dense();
}

const double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();

// Boundary inputs: 0 and -0 are not > 0; NaN is not > 0 (so it gives 0, not
// NaN); the smallest positive subnormal and +inf are.
const std::vector<double> inputs = {2.0, -3.0, 0.0, -0.0, nan, inf, -inf, 1e-45, 0.5};
const std::vector<double> grads = {1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -9.0};
const std::vector<double> expected = {1.5, 0, 0, 0, 0, 6.0, 0, 8.0, -9.0};

TEST(ReluRef, PassesGradientWhereInputIsPositive) {
    EXPECT_EQ(run_bwd(test::make_relu_problem({3, 3}), inputs, grads), expected);
}

TEST(ReluRef, GradientNaNPassesThroughOnlyWherePositive) {
    const auto out = run_bwd(test::make_relu_problem({1, 2}), {1.0, -1.0}, {nan, nan});
    EXPECT_TRUE(std::isnan(out[0]));
    EXPECT_EQ(out[1], 0.0);
}

TEST(ReluRef, SixteenBitTypes) {
    // 1e-45 is 0 in bf16 and f16, so that element's gradient drops out.
    std::vector<double> want = expected;
    want[7] = 0.0;
    for (data_type dt : {data_type::bf16, data_type::f16})
        EXPECT_EQ(run_bwd(test::make_relu_problem({9}, dt), inputs, grads), want);
}

TEST(ReluRef, StridedTensorsGiveTheDenseValues) {
    const dims shape{3, 3};
    const auto p = test::make_relu_problem(shape, data_type::f32,
            test::permuted_strides(shape, {1, 0}), test::padded_strides(shape, 2),
            test::padded_strides(shape, 1));
    EXPECT_EQ(run_bwd(p, inputs, grads), expected);
}

} // namespace
} // namespace bpg
