#include "suites.hpp"

namespace bpg::bench {

namespace {

bench_case interp(const std::string &mode, const std::string &format, data_type dt, dims src, dims dst,
        const std::string &coord = "half_pixel") {
    bench_case c;
    c.op = bench_op::interpolate;
    c.mode = mode;
    c.format = format;
    c.dtype = dt;
    c.coord = coord;
    c.src = std::move(src);
    c.dst = std::move(dst);
    return c;
}

// The same problem in NCX and NXC: shapes are given in NCX order and
// permuted (channel axis moved last) for NXC.
dims to_nxc(dims d) {
    const dim ch = d[1];
    d.erase(d.begin() + 1);
    d.push_back(ch);
    return d;
}

void both_layouts(std::vector<bench_case> &out, const std::string &mode, data_type dt, const dims &src,
        const dims &dst, const std::string &coord = "half_pixel") {
    out.push_back(interp(mode, "NCX", dt, src, dst, coord));
    out.push_back(interp(mode, "NXC", dt, to_nxc(src), to_nxc(dst), coord));
}

bench_case bn(const std::string &format, data_type dt, const dims &ncx_shape, bool global_stats) {
    bench_case c;
    c.op = bench_op::batchnorm;
    c.format = format;
    c.dtype = dt;
    c.shape = format == "NCX" ? ncx_shape : to_nxc(ncx_shape);
    c.global_stats = global_stats;
    return c;
}

} // namespace

std::vector<bench_case> interpolate_suite() {
    const data_type f32 = data_type::f32;
    const dims small {16, 64, 56, 56}, large {16, 64, 112, 112};
    std::vector<bench_case> s;
    // Issue 3's table: 2x up, 2-D and 3-D, both layouts.
    both_layouts(s, "bilinear", f32, small, large);
    both_layouts(s, "nearest", f32, small, large);
    both_layouts(s, "trilinear", f32, {2, 32, 32, 32, 32}, {2, 32, 64, 64, 64});
    // 16-bit data (f32 accumulation inside the kernels).
    both_layouts(s, "bilinear", data_type::bf16, small, large);
    both_layouts(s, "bilinear", data_type::f16, small, large);
    // A coordinate mode oneDNN's primitive does not compute.
    s.push_back(interp("bilinear", "NCX", f32, small, large, "align_corners"));
    // Downsampling 0.5x: diff_src is the larger tensor.
    both_layouts(s, "bilinear", f32, large, small);
    // 1-D: long rows (33.5M diff_dst elements, 268 MB for all three tensors).
    s.push_back(interp("linear", "NCX", f32, {16, 256, 4096}, {16, 256, 8192}));
    // Channels-last with N = 1: parallelism must come from the spatial axes.
    s.push_back(interp("bilinear", "NXC", f32, {1, 112, 112, 64}, {1, 224, 224, 64}));
    return s;
}

std::vector<bench_case> batchnorm_suite() {
    const data_type f32 = data_type::f32;
    const dims shape {16, 64, 112, 112};
    std::vector<bench_case> s;
    // Issue 4's table: full training gradient with diff_gamma/diff_beta, and
    // use_global_stats, both layouts.
    for (bool global_stats : {false, true})
        for (const char *format : {"NCX", "NXC"}) s.push_back(bn(format, f32, shape, global_stats));
    // use_global_stats asking diff_src alone (frozen statistics): one read,
    // one write.
    for (const char *format : {"NCX", "NXC"}) {
        bench_case c = bn(format, f32, shape, true);
        c.outputs = 1;
        s.push_back(c);
    }
    for (data_type dt : {data_type::bf16, data_type::f16})
        for (const char *format : {"NCX", "NXC"}) s.push_back(bn(format, dt, shape, false));
    // Channels-last with 256 channels: off the register blocks (16-64), the
    // AVX-512 loads on each row's vectors (f16 had been 17x the streaming
    // kernel there, converted lane by lane).
    s.push_back(bn("NXC", data_type::f16, {16, 256, 56, 56}, false));
    // Issue 4's fusion: ReLUBackprop -> BN diff_dst, fused (each such case
    // also times the two ops apart in the same rounds).
    for (const char *format : {"NCX", "NXC"}) {
        bench_case c = bn(format, f32, shape, false);
        c.relu = true;
        s.push_back(c);
    }
    return s;
}

std::vector<bench_case> suite(const std::string &name) {
    if (name == "interpolate") return interpolate_suite();
    if (name == "batchnorm") return batchnorm_suite();
    if (name == "all") {
        std::vector<bench_case> s = interpolate_suite();
        for (bench_case &c : batchnorm_suite()) s.push_back(std::move(c));
        return s;
    }
    throw error(status::invalid_argument, "--suite " + name + " is not one of interpolate, batchnorm, all");
}

} // namespace bpg::bench
