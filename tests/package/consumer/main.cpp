// Runs one InterpolateBackprop through an installed bpg: oneDNN's golden
// case (docs/semantics.md), 1x1x2x2 <- 1x1x3x3 bilinear, diff_dst 0..8.
#include <cstdio>
#include <cstring>
#include <vector>

#include "bpg/bpg.hpp"

int main() {
    using namespace bpg;
    logical_tensor src(0, data_type::f32, {1, 1, 2, 2}), diff_dst(1, data_type::f32, {1, 1, 3, 3}),
            diff_src(2, data_type::f32, {1, 1, 2, 2});
    op up(0, op::kind::InterpolateBackprop, {src, diff_dst}, {diff_src});
    up.set_attr(op::attr::mode, "bilinear").set_attr(op::attr::data_format, "NCX")
            .set_attr(op::attr::sizes, std::vector<int64_t> {3, 3});
    graph g;
    g.add_op(up);
    g.finalize();
    engine eng;
    stream strm(eng);
    std::vector<float> s(4, 0.f), d {0, 1, 2, 3, 4, 5, 6, 7, 8}, out(4, -1.f);
    compiled_partition cp = g.get_partitions()[0].compile({src, diff_dst}, {diff_src}, eng);
    cp.execute(strm, {tensor(src, eng, s.data()), tensor(diff_dst, eng, d.data())},
            {tensor(diff_src, eng, out.data())});
    const float want[4] = {3, 6, 12, 15};
    const version_info v = version();
    std::printf("bpg %s (headers %s): [%g, %g, %g, %g]\n", v.text, BPG_VERSION_STRING, out[0], out[1],
            out[2], out[3]);
    const bool ok = std::memcmp(out.data(), want, sizeof want) == 0 && std::strcmp(v.text, BPG_VERSION_STRING) == 0;
    std::puts(ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
