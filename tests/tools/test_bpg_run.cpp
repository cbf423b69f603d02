// bpg-run end to end: the four conformance files, their NXC / bf16 / f16 /
// strided rewrites against the f32 NCX result, an independent check of the
// outputs, .npy inputs, and the error contract (exit 2, one stderr line,
// nothing written).
#include <cmath>
#include <cstring>
#include <numeric>

#include <gtest/gtest.h>

#include "io/npy.hpp"
#include "kernels/dtype_convert.hpp"
#include "tools/tool_runner.hpp"

namespace bpg::test {
namespace {

using io::npy_array;

npy_array f32_array(const dims &shape, const std::vector<float> &v) {
    npy_array a;
    a.descr = "<f4";
    a.shape = shape;
    a.data.resize(v.size() * 4);
    std::memcpy(a.data.data(), v.data(), a.data.size());
    return a;
}

// Outputs are written in their dtype: f16 as "<f2", f32 and bf16 as "<f4".
std::vector<float> as_f32(const npy_array &a) {
    if (a.descr == "<f2") {
        std::vector<float> v(a.data.size() / 2);
        for (size_t i = 0; i < v.size(); ++i) {
            uint16_t h;
            std::memcpy(&h, a.data.data() + 2 * i, 2);
            v[i] = kernels::f16_to_f32(h);
        }
        return v;
    }
    EXPECT_EQ(a.descr, "<f4");
    std::vector<float> v(a.data.size() / 4);
    std::memcpy(v.data(), a.data.data(), a.data.size());
    return v;
}

int64_t count(const dims &d) { return std::accumulate(d.begin(), d.end(), int64_t(1), std::multiplies<>()); }

// Multiples of 1/64 in [-2, 2]: exact in f32, bf16 and f16.
std::vector<float> pattern(const dims &shape, uint32_t seed) {
    std::vector<float> v(size_t(count(shape)));
    uint32_t x = seed * 2654435761u + 1;
    for (float &f : v) {
        x = x * 1664525u + 1013904223u;
        f = float(int((x >> 9) % 257) - 128) / 64.f;
    }
    return v;
}

// Dense row-major array permuted: out[perm-applied index] = in[index], where
// out axis k is in axis perm[k].
std::vector<float> permute(const std::vector<float> &in, const dims &shape, const std::vector<int> &perm) {
    const int r = int(shape.size());
    dims out_shape(r);
    for (int k = 0; k < r; ++k) out_shape[k] = shape[perm[k]];
    std::vector<float> out(in.size());
    dims idx(r, 0);
    for (size_t i = 0; i < in.size(); ++i) {
        int64_t o = 0;
        for (int k = 0; k < r; ++k) o = o * out_shape[k] + idx[perm[k]];
        out[size_t(o)] = in[i];
        for (int a = r - 1; a >= 0 && ++idx[a] == shape[a]; --a) idx[a] = 0;
    }
    return out;
}

std::vector<int> ncx_to_nxc(int r) {
    std::vector<int> p {0};
    for (int a = 2; a < r; ++a) p.push_back(a);
    p.push_back(1);
    return p;
}
std::vector<int> nxc_to_ncx(int r) {
    std::vector<int> p {0, r - 1};
    for (int a = 1; a < r - 1; ++a) p.push_back(a);
    return p;
}

double max_rel_diff(const std::vector<float> &a, const std::vector<float> &b) {
    EXPECT_EQ(a.size(), b.size());
    double scale = 0, diff = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        scale = std::max(scale, double(std::abs(b[i])));
        diff = std::max(diff, double(std::abs(a[i] - b[i])));
    }
    return diff / std::max(scale, 1e-30);
}

struct io_case {
    std::string file;
    std::vector<std::pair<size_t, dims>> inputs; // graph inputs (NCX shapes)
    std::vector<std::pair<size_t, dims>> outputs;
};

const io_case interp_nearest {"interpolate_bwd.json", {{0, {2, 17, 7, 14}}, {1, {2, 17, 6, 12}}}, {{2, {2, 17, 7, 14}}}};
const io_case interp_linear {"interpolate_bwd_2d.json", {{0, {2, 16, 3, 11}}, {1, {2, 16, 5, 11}}}, {{2, {2, 16, 3, 11}}}};
const io_case bnorm {"bnorm_bwd.json",
        {{0, {2, 192, 71, 71}}, {1, {2, 192, 71, 71}}, {2, {192}}, {3, {192}}, {4, {192}}},
        {{5, {2, 192, 71, 71}}, {6, {192}}, {7, {192}}}};
const io_case fusion {"bn_bwd_relu_bwd_fusion.json",
        {{0, {1, 32, 28, 28}}, {1, {1, 32, 28, 28}}, {3, {1, 32, 28, 28}}, {4, {32}}, {5, {32}}, {6, {32}}},
        {{7, {1, 32, 28, 28}}, {8, {32}}, {9, {32}}}};

// Writes the NCX inputs (transposed to NXC when asked); variance inputs are
// made positive.
std::string write_inputs(const io_case &c, const std::string &name, bool nxc) {
    const std::string dir = temp_dir(name + "-in");
    for (const auto &[id, shape] : c.inputs) {
        std::vector<float> v = pattern(shape, uint32_t(id) + 7);
        const bool variance = (c.file == "bnorm_bwd.json" && id == 3) || (c.file == "bn_bwd_relu_bwd_fusion.json" && id == 5);
        if (variance)
            for (float &x : v) x = std::abs(x) + 0.5f;
        dims s = shape;
        if (nxc && shape.size() > 1) {
            v = permute(v, shape, ncx_to_nxc(int(shape.size())));
            for (size_t k = 0; k < shape.size(); ++k) s[k] = shape[ncx_to_nxc(int(shape.size()))[k]];
        }
        io::write_npy(dir + "/" + std::to_string(id) + ".npy", f32_array(s, v));
    }
    return dir;
}

// Runs the case and returns its outputs, in NCX order.
std::vector<std::vector<float>> run_case(const io_case &c, const std::string &name, const std::string &extra, bool nxc) {
    const std::string in = write_inputs(c, name, nxc), out = temp_dir(name + "-out");
    tool_result r = run_tool("bpg-run", conformance(c.file) + " --inputs " + in + " --outputs " + out + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    std::vector<std::vector<float>> res;
    for (const auto &[id, shape] : c.outputs) {
        std::vector<float> v = as_f32(io::read_npy(out + "/" + std::to_string(id) + ".npy"));
        if (nxc && shape.size() > 1) {
            dims s(shape.size());
            for (size_t k = 0; k < shape.size(); ++k) s[k] = shape[ncx_to_nxc(int(shape.size()))[k]];
            v = permute(v, s, nxc_to_ncx(int(shape.size())));
        }
        res.push_back(v);
    }
    return res;
}

std::string nxc_shapes(const io_case &c) {
    std::string s;
    for (const auto &[id, shape] : c.inputs) {
        dims d = shape;
        if (shape.size() > 1)
            for (size_t k = 0; k < shape.size(); ++k) d[k] = shape[ncx_to_nxc(int(shape.size()))[k]];
        std::string t;
        for (dim x : d) t += (t.empty() ? "" : "x") + std::to_string(x);
        s += (s.empty() ? "" : "+") + std::to_string(id) + ":" + t;
    }
    return s;
}

std::string channels_last_tags(const io_case &c) {
    std::string s;
    for (const auto &[id, shape] : c.inputs) {
        std::string t, tag = shape.size() == 4 ? "*acdb" : "";
        for (dim x : shape) t += (t.empty() ? "" : "x") + std::to_string(x);
        s += (s.empty() ? "" : "+") + std::to_string(id) + ":" + t + tag;
    }
    return s;
}

class ConformanceRewrites : public ::testing::TestWithParam<io_case> {};

// The same graph rewritten to NXC, to NCX data with channels-last strides, to
// bf16 and to f16 gives the f32 NCX result (exactly for layouts, within the
// dtype's rounding for bf16/f16; inputs are exact in every dtype).
TEST_P(ConformanceRewrites, LayoutsAndDtypesAgreeWithF32Ncx) {
    BPG_REQUIRE_CONFORMANCE();
    const io_case &c = GetParam();
    const std::string name = c.file.substr(0, c.file.size() - 5);
    const auto base = run_case(c, name + "-f32", "", false);
    // In the fusion graph op 0 is the (layout-free) ReLU and op 1 the BN.
    const std::string layout_op = c.file == "bn_bwd_relu_bwd_fusion.json" ? "1" : "0";
    const auto nxc = run_case(c, name + "-nxc",
            "--in-shapes " + nxc_shapes(c) + " --op-attrs " + layout_op + ":data_format:NXC", true);
    const auto strided = run_case(c, name + "-acdb", "--in-shapes " + channels_last_tags(c), false);
    const auto bf16 = run_case(c, name + "-bf16", "--dt bf16", false);
    const auto f16 = run_case(c, name + "-f16", "--dt f16", false);
    for (size_t k = 0; k < base.size(); ++k) {
        SCOPED_TRACE("output " + std::to_string(c.outputs[k].first));
        EXPECT_LE(max_rel_diff(nxc[k], base[k]), 1e-6);
        EXPECT_LE(max_rel_diff(strided[k], base[k]), 1e-6);
        EXPECT_LE(max_rel_diff(bf16[k], base[k]), 3e-2);
        EXPECT_LE(max_rel_diff(f16[k], base[k]), 4e-3);
    }
}

INSTANTIATE_TEST_SUITE_P(AllFourFiles, ConformanceRewrites, ::testing::Values(interp_nearest, interp_linear, bnorm, fusion),
        [](const auto &info) {
            std::string n = info.param.file.substr(0, info.param.file.size() - 5);
            for (char &ch : n)
                if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
            return n;
        });

// Interpolate is linear, so its backward is the adjoint of the forward:
// <fwd(x), g> = <x, bwd(g)>. The forward here is written from docs/semantics.md
// with plain doubles (exact enough at these sizes), independent of src/.
double half_pixel(int64_t o, int64_t in, int64_t out) { return (double(o) + 0.5) * double(in) / double(out) - 0.5; }

std::vector<double> forward_nearest_or_linear(const std::vector<double> &x, const dims &src, const dims &dst, bool linear) {
    std::vector<double> y(size_t(count(dst)), 0.0);
    const int64_t NC = src[0] * src[1], H = src[2], W = src[3], OH = dst[2], OW = dst[3];
    auto taps = [&](int64_t o, int64_t in, int64_t out, int64_t *i, double *w) {
        double s = half_pixel(o, in, out);
        if (!linear) {
            i[0] = std::clamp<int64_t>(int64_t(std::floor(s + 0.5)), 0, in - 1);
            w[0] = 1;
            i[1] = i[0];
            w[1] = 0;
            return;
        }
        s = std::clamp(s, 0.0, double(in - 1));
        i[0] = int64_t(std::floor(s));
        i[1] = std::min(i[0] + 1, in - 1);
        w[1] = s - double(i[0]);
        w[0] = 1 - w[1];
    };
    for (int64_t p = 0; p < NC; ++p)
        for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
                int64_t ih[2], iw[2];
                double wh[2], ww[2];
                taps(oh, H, OH, ih, wh);
                taps(ow, W, OW, iw, ww);
                double acc = 0;
                for (int a = 0; a < 2; ++a)
                    for (int b = 0; b < 2; ++b) acc += wh[a] * ww[b] * x[size_t((p * H + ih[a]) * W + iw[b])];
                y[size_t((p * OH + oh) * OW + ow)] = acc;
            }
    return y;
}

TEST(BpgRunOutputsConformance, InterpolateIsTheAdjointOfAnIndependentForward) {
    BPG_REQUIRE_CONFORMANCE();
    for (const io_case *c : {&interp_nearest, &interp_linear}) {
        SCOPED_TRACE(c->file);
        const auto out = run_case(*c, "adjoint", "", false);
        const dims src = c->inputs[0].second, dst = c->inputs[1].second;
        const std::vector<float> g = pattern(dst, 1 + 7); // what write_inputs wrote for tensor 1
        std::vector<double> x(size_t(count(src)));
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(double(i) * 0.37);
        const auto y = forward_nearest_or_linear(x, src, dst, c == &interp_linear);
        double lhs = 0, rhs = 0;
        for (size_t i = 0; i < y.size(); ++i) lhs += y[i] * g[i];
        for (size_t i = 0; i < x.size(); ++i) rhs += x[i] * out[0][i];
        EXPECT_NEAR(lhs, rhs, 1e-4 * std::max(1.0, std::abs(lhs)));
    }
}

// BatchNormTrainingBackprop outputs against the formulas of docs/semantics.md,
// written out here in double for the first channels.
TEST(BpgRunOutputsConformance, BatchNormMatchesTheFormula) {
    BPG_REQUIRE_CONFORMANCE();
    const auto out = run_case(bnorm, "bn-formula", "", false);
    const dims shape = bnorm.inputs[0].second;
    const auto src = pattern(shape, 7), dd = pattern(shape, 8), mean = pattern({192}, 9), gamma = pattern({192}, 11);
    auto var = pattern({192}, 10);
    for (float &v : var) v = std::abs(v) + 0.5f;
    const double eps = 0.0625;
    const int64_t C = shape[1], HW = shape[2] * shape[3], M = shape[0] * HW;
    for (int64_t c = 0; c < 8; ++c) {
        const double inv = 1.0 / std::sqrt(double(var[c]) + eps);
        double db = 0, dg = 0;
        for (int64_t n = 0; n < shape[0]; ++n)
            for (int64_t i = 0; i < HW; ++i) {
                const size_t k = size_t((n * C + c) * HW + i);
                db += dd[k];
                dg += dd[k] * (src[k] - mean[c]) * inv;
            }
        EXPECT_NEAR(out[2][c], db, 1e-5 * std::max(1.0, std::abs(db)));
        EXPECT_NEAR(out[1][c], dg, 1e-5 * std::max(1.0, std::abs(dg)));
        for (int64_t i = 0; i < HW; i += 997) {
            const size_t k = size_t(c * HW + i);
            const double xhat = (src[k] - mean[c]) * inv;
            const double want = gamma[c] * inv * (dd[k] - db / double(M) - xhat * dg / double(M));
            EXPECT_NEAR(out[0][k], want, 1e-5 * std::max(1.0, std::abs(want)));
        }
    }
}

TEST(BpgRunConformance, ReportsPartitionsBackendsAndTimes) {
    BPG_REQUIRE_CONFORMANCE();
    tool_result r = run_tool("bpg-run", conformance("bn_bwd_relu_bwd_fusion.json"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("2 ops, 1 partitions"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("relu_bwd+bn_bwd"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ran on "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" ms"), std::string::npos) << r.out;
}

TEST(BpgRunConformance, BadInputsExitTwoWithOneLineAndWriteNothing) {
    BPG_REQUIRE_CONFORMANCE();
    const std::string out = temp_dir("bad-out");
    auto expect_bad = [&](const std::string &args, const std::string &part) {
        SCOPED_TRACE(args);
        tool_result r = run_tool("bpg-run", args + " --outputs " + out + "/o");
        EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(out + "/o")) << "outputs written on error";
    };
    expect_bad("/nonexistent/graph.json", "/nonexistent/graph.json");
    const std::string bad_json = temp_dir("bad-json") + "/g.json";
    std::ofstream(bad_json) << "{ \"graph\": [ ";
    expect_bad(bad_json, "g.json");
    expect_bad(conformance("interpolate_bwd.json") + " --backend fastest", "--backend fastest");
    expect_bad(conformance("interpolate_bwd.json") + " --op-attrs 0:sizes:6x13", "'sizes'[1] = 13");
    expect_bad(conformance("interpolate_bwd.json") + " --op-attrs 0:mode:cubic", "cubic");
    expect_bad(conformance("interpolate_bwd.json") + " --in-shapes 0:2x17x7x14*abce+1:2x17x6x12", "abce");
    // An input file whose shape is not the tensor's.
    const std::string in = temp_dir("bad-npy");
    io::write_npy(in + "/1.npy", f32_array({2, 17, 6, 11}, std::vector<float>(2 * 17 * 6 * 11)));
    expect_bad(conformance("interpolate_bwd.json") + " --inputs " + in, "1.npy");
    std::ofstream(in + "/0.npy") << "not an npy file";
    std::filesystem::remove(in + "/1.npy");
    expect_bad(conformance("interpolate_bwd.json") + " --inputs " + in, "0.npy");
    expect_bad("--no-such-flag " + conformance("interpolate_bwd.json"), "--no-such-flag");
}

// A graph input read from a file is used: oneDNN's golden example.
TEST(BpgRun, InputsFromNpyFiles) {
    const std::string dir = temp_dir("golden");
    std::ofstream(dir + "/g.json") << R"({"version": "3.0.0", "engine_kind": "cpu", "fpmath_mode": "strict", "graph": [
      {"id": 0, "name": "up", "kind": "InterpolateBackprop",
       "attrs": {"mode": {"type": "string", "value": "nearest"}, "data_format": {"type": "string", "value": "NCX"},
                 "sizes": {"type": "s64[]", "value": [3, 3]}},
       "inputs": [{"id": 0, "dtype": "f32", "shape": [1, 1, 2, 2], "stride": [4, 4, 2, 1], "layout_type": "strided", "property_type": "undef"},
                  {"id": 1, "dtype": "f32", "shape": [1, 1, 3, 3], "stride": [9, 9, 3, 1], "layout_type": "strided", "property_type": "undef"}],
       "outputs": [{"id": 2, "dtype": "f32", "shape": [1, 1, 2, 2], "stride": [4, 4, 2, 1], "layout_type": "strided", "property_type": "undef"}]}]})";
    std::vector<float> dd(9);
    std::iota(dd.begin(), dd.end(), 0.f);
    io::write_npy(dir + "/1.npy", f32_array({1, 1, 3, 3}, dd));
    tool_result r = run_tool("bpg-run", dir + "/g.json --inputs " + dir + " --outputs " + dir + "/out");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("from " + dir + ": 1"), std::string::npos) << r.out;
    EXPECT_EQ(as_f32(io::read_npy(dir + "/out/2.npy")), (std::vector<float> {0, 3, 9, 24}));
}

} // namespace
} // namespace bpg::test
