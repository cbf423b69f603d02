// The README's "Using the library" snippet, built and run by ctest so that it
// keeps compiling; tests/docs/test_readme_snippet.cpp checks that the README's
// ```cpp block is the region between the two marker lines, character for character.
// [readme-snippet begin]
#include <cstdint>
#include <cstdio>
#include <vector>
#include "bpg/bpg.hpp"

int main() {
    using namespace bpg;
    // Gradient of a bilinear 2x2 -> 3x3 upsampling (oneDNN's golden example).
    logical_tensor src(0, data_type::f32, {1, 1, 2, 2}), diff_dst(1, data_type::f32, {1, 1, 3, 3}),
            diff_src(2, data_type::f32); // shape inferred at compile
    op up(0, op::kind::InterpolateBackprop, {src, diff_dst}, {diff_src});
    up.set_attr(op::attr::mode, "bilinear")
            .set_attr(op::attr::data_format, "NCX")
            .set_attr(op::attr::sizes, std::vector<int64_t> {3, 3});
    graph g;
    g.add_op(up);
    g.finalize(); // the ops' rules are checked here; execute checks only the buffers
    engine eng;
    stream strm(eng);
    compiled_partition cp = g.get_partitions().at(0).compile({src, diff_dst}, {diff_src}, eng);
    std::vector<float> s(4), d {0, 1, 2, 3, 4, 5, 6, 7, 8}, out(4);
    cp.execute(strm, {tensor(src, eng, s.data()), tensor(diff_dst, eng, d.data())},
            {tensor(cp.query_logical_tensor(2), eng, out.data())});
    std::printf("diff_src = [%g, %g, %g, %g] on %s\n", out[0], out[1], out[2], out[3],
            cp.get_backend_name().c_str()); // [3, 6, 12, 15] on tbb
    return out == std::vector<float> {3, 6, 12, 15} ? 0 : 1;
}
// [readme-snippet end]
