// The smallest complete use of the API: oneDNN's golden InterpolateBackprop
// example (src 1x1x2x2, diff_dst 1x1x3x3 = 0..8, bilinear, half_pixel)
// built, compiled and executed; prints diff_src = [3, 6, 12, 15].
#include <cstdio>
#include <vector>

#include "bpg/bpg.hpp"

int main() {
    using namespace bpg;
    const logical_tensor src(0, data_type::f32, {1, 1, 2, 2}), diff_dst(1, data_type::f32, {1, 1, 3, 3}),
            diff_src(2, data_type::f32); // shape inferred at compile
    op up(0, op::kind::InterpolateBackprop, {src, diff_dst}, {diff_src}, "up_bwd");
    up.set_attr(op::attr::mode, "bilinear")
            .set_attr(op::attr::data_format, "NCX")
            .set_attr(op::attr::sizes, std::vector<int64_t> {3, 3});

    graph g;
    g.add_op(up);
    g.finalize();
    partition p = g.get_partitions().at(0);
    engine eng;
    stream strm(eng);
    compiled_partition cp = p.compile({src, diff_dst}, {diff_src}, eng);

    std::vector<float> src_data(4), dd {0, 1, 2, 3, 4, 5, 6, 7, 8}, out(4);
    cp.execute(strm, {tensor(src, eng, src_data.data()), tensor(diff_dst, eng, dd.data())},
            {tensor(cp.query_logical_tensor(2), eng, out.data())});
    std::printf("diff_src (backend %s) = [%g, %g, %g, %g]\n", cp.get_backend_name().c_str(), out[0], out[1],
            out[2], out[3]);
    return out == std::vector<float> {3, 6, 12, 15} ? 0 : 1;
}
