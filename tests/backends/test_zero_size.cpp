// Zero-size tensors on every partition kind and backend: a 0 in any axis of
// the data gives empty outputs, and BN's diff_gamma / diff_beta (sums over
// nothing when N * spatial is 0) come out exactly 0. Empty tensors are bound
// with null pointers; non-empty outputs start as a sentinel, so a skipped
// write shows, and ASan catches any write past them. Interpolate refuses a 0
// spatial size at add_op (there is nothing to interpolate from or to).
#include <optional>

#include <gtest/gtest.h>

#include "support/expect_error.hpp"
#include "support/backends_in_build.hpp"
#include "support/partition_kinds.hpp"

namespace bpg::test {
namespace {

struct zero_size_param {
    partition_kind kind;
    backend_kind backend;
};

class ZeroSize : public ::testing::TestWithParam<zero_size_param> {};

bool writes_sums(partition_kind k) {
    return k == partition_kind::bn || k == partition_kind::bn_global_stats || k == partition_kind::relu_into_bn_src
            || k == partition_kind::relu_into_bn_diff_dst;
}

void check_case(const kind_case &c, backend_kind b) {
    SCOPED_TRACE(name_of(c));
    const size_t c_axis = c.nxc ? 3 : 1;
    const size_t zero_axis = size_t(std::find(c.src.begin(), c.src.end(), 0) - c.src.begin());
    if (is_interpolate(c.kind) && zero_axis != 0 && zero_axis != c_axis) {
        // H: the sizes attribute (2H) is 0; W: src's own size (diff_dst's W + 1 is not).
        if (zero_axis == (c.nxc ? 1u : 2u))
            expect_error([&] { build_graph(c); }, status::invalid_argument, {"'sizes'", "must be positive"});
        else
            expect_error([&] { build_graph(c); }, status::invalid_shape, {"has size 0", "spatial sizes must be >= 1"});
        return;
    }
    std::optional<compiled_partition> cp;
    try {
        cp = compile_case(c, b);
    } catch (const error &e) {
        // A backend may refuse a kind (dnnl: ReLU, fusion), never because a tensor is empty.
        ASSERT_EQ(e.code(), status::unimplemented) << e.what();
        kind_case full = c;
        full.src = {2, 3, 4, 5};
        EXPECT_THROW(compile_case(full, b), error) << "refused only when empty: " << e.what();
        return;
    }
    case_buffers bufs(*cp, 7, 0xA5);
    bufs.execute(*cp);
    size_t non_empty = 0;
    for (const auto &out : bufs.outputs()) {
        non_empty += !out.empty();
        for (uint8_t byte : out) ASSERT_EQ(byte, 0) << "a non-empty output is not exactly +0";
    }
    EXPECT_EQ(non_empty, writes_sums(c.kind) && zero_axis != c_axis ? 2u : 0u);
}

TEST_P(ZeroSize, EmptyOutputsAndZeroSumsWithNullPointers) {
    for (bool nxc : {false, true})
        for (data_type dt : {data_type::f32, data_type::bf16})
            for (bool transposed : {false, true})
                for (size_t axis = 0; axis < 4; ++axis) {
                    if (transposed && !is_interpolate(GetParam().kind)) continue;
                    kind_case c {GetParam().kind, {2, 3, 4, 5}, nxc, dt, transposed};
                    c.src[axis] = 0;
                    check_case(c, GetParam().backend);
                }
}

std::vector<zero_size_param> params() {
    std::vector<zero_size_param> all;
    for (partition_kind k : all_partition_kinds())
        for (backend_kind b : in_build({backend_kind::auto_select, backend_kind::tbb, backend_kind::dnnl, backend_kind::ref}))
            all.push_back({k, b});
    return all;
}

INSTANTIATE_TEST_SUITE_P(AllKinds, ZeroSize, ::testing::ValuesIn(params()),
        [](const ::testing::TestParamInfo<zero_size_param> &i) {
            return name_of(i.param.kind) + "_" + (i.param.backend == backend_kind::auto_select ? "auto" : to_string(i.param.backend));
        });

} // namespace
} // namespace bpg::test
