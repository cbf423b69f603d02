#include "suites.hpp"

#include <algorithm>

namespace bpg::bench {

namespace {

const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;

// The same problem in NCX and NXC: shapes are given in NCX order and
// permuted (channel axis moved last) for NXC.
dims to_nxc(dims d) {
    const dim ch = d[1];
    d.erase(d.begin() + 1);
    d.push_back(ch);
    return d;
}

bench_case interp(const std::string &cls, const std::string &mode, const std::string &format, data_type dt,
        const dims &ncx_src, const dims &ncx_dst, const std::string &coord) {
    bench_case c;
    c.case_class = cls;
    c.op = bench_op::interpolate;
    c.mode = mode;
    c.format = format;
    c.dtype = dt;
    c.coord = coord;
    c.src = format == "NCX" ? ncx_src : to_nxc(ncx_src);
    c.dst = format == "NCX" ? ncx_dst : to_nxc(ncx_dst);
    return c;
}

// Every interpolate problem of the suite in f32, bf16 and f16 (16-bit data
// accumulates in f32 inside the kernels), each in both layouts.
void interp_cases(std::vector<bench_case> &out, const std::string &cls, const std::string &mode, const dims &src,
        const dims &dst, const std::string &coord = "half_pixel") {
    for (data_type dt : {f32, bf16, f16})
        for (const char *format : {"NCX", "NXC"}) out.push_back(interp(cls, mode, format, dt, src, dst, coord));
}

bench_case bn(const std::string &cls, const std::string &format, data_type dt, const dims &ncx_shape,
        bool global_stats) {
    bench_case c;
    c.case_class = cls;
    c.op = bench_op::batchnorm;
    c.format = format;
    c.dtype = dt;
    c.shape = format == "NCX" ? ncx_shape : to_nxc(ncx_shape);
    c.global_stats = global_stats;
    return c;
}

// BN training in every dtype and the given layouts.
void bn_cases(std::vector<bench_case> &out, const std::string &cls, const dims &shape,
        std::initializer_list<const char *> formats) {
    for (data_type dt : {f32, bf16, f16})
        for (const char *format : formats) out.push_back(bn(cls, format, dt, shape, false));
}

// A tiny partition timed per call (overhead) and a small one timed on its
// first execute (first_call): what a call costs beyond moving its bytes.
bench_case with_kind(bench_case c, bench_kind k) {
    c.kind = k;
    c.case_class = to_string(k);
    return c;
}

} // namespace

std::vector<bench_case> interpolate_suite() {
    const dims small {16, 64, 56, 56}, large {16, 64, 112, 112};
    std::vector<bench_case> s;
    // Issue 3's table: 2x up, both layouts.
    interp_cases(s, "default", "bilinear", small, large);
    interp_cases(s, "default", "nearest", small, large);
    interp_cases(s, "3d", "trilinear", {2, 32, 32, 32, 32}, {2, 32, 64, 64, 64});
    // A coordinate mode oneDNN's primitive does not compute.
    interp_cases(s, "align_corners", "bilinear", small, large, "align_corners");
    // Downsampling 0.5x: diff_src is the larger tensor.
    interp_cases(s, "down", "bilinear", large, small);
    // Short rows, where a row's overhead is not amortised: the deep layers
    // of a ResNet/UNet (7x7 and 14x14 maps, 512-1024 channels), up and down.
    interp_cases(s, "short_rows", "bilinear", {16, 512, 7, 7}, {16, 512, 14, 14});
    interp_cases(s, "short_rows", "bilinear", {16, 512, 14, 14}, {16, 512, 7, 7});
    interp_cases(s, "short_rows", "bilinear", {16, 1024, 14, 14}, {16, 1024, 28, 28});
    interp_cases(s, "short_rows", "bilinear", {16, 1024, 28, 28}, {16, 1024, 14, 14});
    // Scales that are not integers: 1.5x, and Inception's 224 -> 299.
    interp_cases(s, "non_integer", "bilinear", small, {16, 64, 84, 84});
    interp_cases(s, "non_integer", "bilinear", {2, 32, 224, 224}, {2, 32, 299, 299});
    // 1-D: long rows (33.5M diff_dst elements, 268 MB for all three tensors in f32).
    interp_cases(s, "1d", "linear", {16, 256, 4096}, {16, 256, 8192});
    // N = 1: parallelism must come from the other axes (19 MB in f32: it
    // fits in a 32 MiB L3, so its yardstick can run from cache).
    interp_cases(s, "batch1", "bilinear", {1, 64, 112, 112}, {1, 64, 224, 224});
    s.push_back(with_kind(interp("", "bilinear", "NCX", f32, {1, 1, 2, 2}, {1, 1, 4, 4}, "half_pixel"),
            bench_kind::overhead));
    s.push_back(with_kind(interp("", "bilinear", "NCX", f32, {2, 16, 28, 28}, {2, 16, 56, 56}, "half_pixel"),
            bench_kind::first_call));
    return s;
}

std::vector<bench_case> batchnorm_suite() {
    const dims shape {16, 64, 112, 112};
    std::vector<bench_case> s;
    // Issue 4's table: full training gradient with diff_gamma/diff_beta, and
    // use_global_stats, both layouts.
    for (bool global_stats : {false, true})
        for (const char *format : {"NCX", "NXC"}) s.push_back(bn("default", format, f32, shape, global_stats));
    // use_global_stats asking diff_src alone (frozen statistics): one read,
    // one write.
    for (const char *format : {"NCX", "NXC"}) {
        bench_case c = bn("default", format, f32, shape, true);
        c.outputs = 1;
        s.push_back(c);
    }
    for (data_type dt : {bf16, f16})
        for (const char *format : {"NCX", "NXC"}) s.push_back(bn("default", format, dt, shape, false));
    // Channels-last with 256 channels: off the register blocks (16-64), the
    // AVX-512 loads on each row's vectors (f16 had been 17x the streaming
    // kernel there, converted lane by lane).
    s.push_back(bn("default", "NXC", f16, {16, 256, 56, 56}, false));
    // Issue 4's fusion: ReLUBackprop -> BN diff_dst, fused (each such case
    // also times the two ops apart in the same rounds).
    for (const char *format : {"NCX", "NXC"}) {
        bench_case c = bn("relu_fused", format, f32, shape, false);
        c.relu = true;
        s.push_back(c);
    }
    // [N, C] after a fully connected layer: C is the contiguous axis in both
    // layouts, so one layout is enough (8 MB per f32 tensor: oneDNN 2.6's
    // bf16 kernel takes near a second per run here).
    bn_cases(s, "bn_rank2", {128, 16384}, {"NCX"});
    s.push_back(bn("bn_rank2", "NCX", f32, {128, 16384}, true));
    // 7x7 maps: NCX rows of 49 elements per channel.
    bn_cases(s, "bn_7x7", {128, 512, 7, 7}, {"NCX", "NXC"});
    // Rank 5 (3-D convolutions).
    bn_cases(s, "bn_3d", {2, 64, 32, 56, 56}, {"NCX", "NXC"});
    s.push_back(with_kind(bn("", "NCX", f32, {1, 1, 2, 2}, false), bench_kind::overhead));
    s.push_back(with_kind(bn("", "NCX", f32, {2, 16, 28, 28}, false), bench_kind::first_call));
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

std::vector<std::string> suite_classes() {
    std::vector<std::string> names;
    for (const bench_case &c : suite("all"))
        if (std::find(names.begin(), names.end(), c.case_class) == names.end()) names.push_back(c.case_class);
    return names;
}

std::vector<bench_case> select_classes(const std::vector<bench_case> &cases, const std::string &list,
        const std::string &suite_name) {
    const std::vector<std::string> known = suite_classes();
    std::string known_text;
    for (const std::string &k : known) known_text += (known_text.empty() ? "" : ", ") + k;
    std::vector<std::string> wanted;
    size_t pos = 0;
    while (true) {
        const size_t comma = list.find(',', pos);
        const std::string name = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (std::find(known.begin(), known.end(), name) == known.end())
            throw error(status::invalid_argument,
                    "--class " + (name.empty() ? std::string("''") : name) + " is not one of " + known_text);
        wanted.push_back(name);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    std::vector<bench_case> out;
    for (const bench_case &c : cases)
        if (std::find(wanted.begin(), wanted.end(), c.case_class) != wanted.end()) out.push_back(c);
    if (out.empty())
        throw error(status::invalid_argument, "--class " + list + ": no case of the suite " + suite_name
                        + " is in that class");
    return out;
}

} // namespace bpg::bench
