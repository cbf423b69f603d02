// The backward of a small UNet-style decoder block through the graph API,
// checked against central finite differences of a forward written here in f64:
//
//   forward:  x --upsample 2x bilinear--> u --1x1 conv (W)--> z --BN (batch stats)--> b --ReLU--> y
//             loss = sum(g * y) for a fixed g
//   backward: g --ReLUBackprop--> db --BatchNormTrainingBackprop--> dz, dgamma, dbeta   (one fused partition)
//             dz --W^T (by hand: bpg has no convolution)--> du --InterpolateBackprop--> dx
//
// Every element of dx, dgamma and dbeta is compared with
// (loss(p + h) - loss(p - h)) / 2h. Exit code 0 when all agree.
// Usage: bpg-example-unet_decoder_fd [N CIN COUT H W]   (default 2 3 4 3 4)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bpg/bpg.hpp"

using namespace bpg;

namespace {

struct block {
    int64_t n, cin, cout, h, w;
    std::vector<double> weight; // [cout][cin]
    std::vector<double> gamma, beta, g; // g: the loss weights, shape of y
    double eps = 1e-5;
    int64_t H() const { return 2 * h; }
    int64_t W() const { return 2 * w; }
};

// Bilinear half_pixel upsample weights of one axis (docs/semantics.md): output o
// reads floor(s) and floor(s)+1 with s = (o + 0.5) / 2 - 0.5 clamped to [0, in-1].
void taps(int64_t o, int64_t in, int64_t &i0, int64_t &i1, double &w1) {
    double s = std::clamp((double(o) + 0.5) * double(in) / double(2 * in) - 0.5, 0.0, double(in - 1));
    i0 = int64_t(std::floor(s));
    i1 = std::min(i0 + 1, in - 1);
    w1 = s - double(i0);
}

struct forward_result {
    double loss;
    std::vector<double> z, b, mean, var; // z, b: [n][cout][H][W]; mean, var: [cout]
};

forward_result forward(const block &k, const std::vector<double> &x, const std::vector<double> &gamma,
        const std::vector<double> &beta) {
    const int64_t H = k.H(), W = k.W(), plane = H * W;
    std::vector<double> u(size_t(k.n * k.cin * plane));
    for (int64_t nc = 0; nc < k.n * k.cin; ++nc)
        for (int64_t oy = 0; oy < H; ++oy)
            for (int64_t ox = 0; ox < W; ++ox) {
                int64_t y0, y1, x0, x1;
                double wy, wx;
                taps(oy, k.h, y0, y1, wy);
                taps(ox, k.w, x0, x1, wx);
                auto at = [&](int64_t yy, int64_t xx) { return x[size_t((nc * k.h + yy) * k.w + xx)]; };
                u[size_t(nc * plane + oy * W + ox)] = (1 - wy) * ((1 - wx) * at(y0, x0) + wx * at(y0, x1))
                        + wy * ((1 - wx) * at(y1, x0) + wx * at(y1, x1));
            }
    forward_result r;
    r.z.assign(size_t(k.n * k.cout * plane), 0.0);
    for (int64_t n = 0; n < k.n; ++n)
        for (int64_t co = 0; co < k.cout; ++co)
            for (int64_t ci = 0; ci < k.cin; ++ci)
                for (int64_t p = 0; p < plane; ++p)
                    r.z[size_t((n * k.cout + co) * plane + p)]
                            += k.weight[size_t(co * k.cin + ci)] * u[size_t((n * k.cin + ci) * plane + p)];
    r.mean.assign(size_t(k.cout), 0.0);
    r.var.assign(size_t(k.cout), 0.0);
    const double m = double(k.n * plane);
    for (int64_t c = 0; c < k.cout; ++c) {
        for (int64_t n = 0; n < k.n; ++n)
            for (int64_t p = 0; p < plane; ++p) r.mean[size_t(c)] += r.z[size_t((n * k.cout + c) * plane + p)] / m;
        for (int64_t n = 0; n < k.n; ++n)
            for (int64_t p = 0; p < plane; ++p)
                r.var[size_t(c)] += std::pow(r.z[size_t((n * k.cout + c) * plane + p)] - r.mean[size_t(c)], 2) / m;
    }
    r.b.resize(r.z.size());
    r.loss = 0;
    for (size_t i = 0; i < r.z.size(); ++i) {
        const size_t c = (i / size_t(plane)) % size_t(k.cout);
        r.b[i] = gamma[c] * (r.z[i] - r.mean[c]) / std::sqrt(r.var[c] + k.eps) + beta[c];
        r.loss += k.g[i] * std::max(0.0, r.b[i]);
    }
    return r;
}

std::vector<float> to_f32(const std::vector<double> &v) { return std::vector<float>(v.begin(), v.end()); }

// Runs the one partition of a finalized graph with every port bound by id.
void run(const graph &g, std::vector<std::pair<size_t, float *>> buffers) {
    engine eng;
    for (const partition &p : g.get_partitions()) {
        compiled_partition cp = p.compile(p.get_input_ports(), p.get_output_ports(), eng);
        std::vector<tensor> ins, outs;
        auto bind = [&](const logical_tensor &lt, std::vector<tensor> &to) {
            for (auto &[id, ptr] : buffers)
                if (id == lt.get_id()) to.emplace_back(lt, eng, ptr);
        };
        for (const logical_tensor &lt : cp.get_inputs()) bind(lt, ins);
        for (const logical_tensor &lt : cp.get_outputs()) bind(lt, outs);
        cp.execute(stream(eng), ins, outs);
        std::printf("  partition %-16s on %s\n", p.get_pattern_name().c_str(), cp.get_backend_name().c_str());
    }
}

} // namespace

int main(int argc, char **argv) {
    block k {2, 3, 4, 3, 4, {}, {}, {}, {}};
    if (argc == 6) k = {std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]),
                           std::atoll(argv[5]), {}, {}, {}, {}};
    std::mt19937 rng(7);
    std::normal_distribution<double> normal(0.0, 1.0);
    const int64_t plane = k.H() * k.W(), act = k.n * k.cout * plane;
    std::vector<double> x(size_t(k.n * k.cin * k.h * k.w));
    for (double &v : x) v = normal(rng);
    for (int64_t i = 0; i < k.cout * k.cin; ++i) k.weight.push_back(normal(rng) / std::sqrt(double(k.cin)));
    for (int64_t c = 0; c < k.cout; ++c) {
        k.gamma.push_back(1.0 + 0.25 * normal(rng));
        k.beta.push_back(0.1 * normal(rng));
    }
    for (int64_t i = 0; i < act; ++i) k.g.push_back(normal(rng));
    std::printf("UNet decoder block backward: x %lldx%lldx%lldx%lld -> upsample 2x -> 1x1 conv to %lld channels "
                "-> BN -> ReLU\n", (long long)k.n, (long long)k.cin, (long long)k.h, (long long)k.w, (long long)k.cout);

    try {
        const forward_result f = forward(k, x, k.gamma, k.beta);
        const data_type f32 = data_type::f32;
        const dims zd {k.n, k.cout, k.H(), k.W()}, ud {k.n, k.cin, k.H(), k.W()}, xd {k.n, k.cin, k.h, k.w},
                cd {k.cout};
        // Graph 1: ReLUBackprop (on BN's output b) -> BatchNormTrainingBackprop. Ids:
        // 0 b, 1 g, 2 db, 3 z, 4 mean, 5 var, 6 gamma, 7 dz, 8 dgamma, 9 dbeta.
        graph bn_graph;
        op relu(0, op::kind::ReLUBackprop, {logical_tensor(0, f32, zd), logical_tensor(1, f32, zd)},
                {logical_tensor(2, f32, zd)});
        relu.set_attr(op::attr::use_dst, false);
        op bn(1, op::kind::BatchNormTrainingBackprop,
                {logical_tensor(3, f32, zd), logical_tensor(2, f32, zd), logical_tensor(4, f32, cd),
                        logical_tensor(5, f32, cd), logical_tensor(6, f32, cd)},
                {logical_tensor(7, f32, zd), logical_tensor(8, f32, cd), logical_tensor(9, f32, cd)});
        bn.set_attr(op::attr::epsilon, float(k.eps)).set_attr(op::attr::data_format, "NCX");
        bn_graph.add_op(relu);
        bn_graph.add_op(bn);
        bn_graph.finalize();
        std::vector<float> b = to_f32(f.b), g = to_f32(k.g), z = to_f32(f.z), mean = to_f32(f.mean),
                           var = to_f32(f.var), gamma = to_f32(k.gamma);
        std::vector<float> dz(size_t(act), 0.f), dgamma(size_t(k.cout), 0.f), dbeta(size_t(k.cout), 0.f);
        run(bn_graph, {{0, b.data()}, {1, g.data()}, {3, z.data()}, {4, mean.data()}, {5, var.data()},
                              {6, gamma.data()}, {7, dz.data()}, {8, dgamma.data()}, {9, dbeta.data()}});

        // The 1x1 convolution's backward, by hand: du = W^T dz at every pixel.
        std::vector<float> du(size_t(k.n * k.cin * plane), 0.f);
        for (int64_t n = 0; n < k.n; ++n)
            for (int64_t ci = 0; ci < k.cin; ++ci)
                for (int64_t co = 0; co < k.cout; ++co)
                    for (int64_t p = 0; p < plane; ++p)
                        du[size_t((n * k.cin + ci) * plane + p)] += float(k.weight[size_t(co * k.cin + ci)])
                                * dz[size_t((n * k.cout + co) * plane + p)];

        // Graph 2: InterpolateBackprop. Ids: 0 x (shape only), 1 du, 2 dx.
        graph up_graph;
        op up(0, op::kind::InterpolateBackprop, {logical_tensor(0, f32, xd), logical_tensor(1, f32, ud)},
                {logical_tensor(2, f32, xd)});
        up.set_attr(op::attr::mode, "bilinear").set_attr(op::attr::data_format, "NCX")
                .set_attr(op::attr::sizes, std::vector<int64_t> {k.H(), k.W()});
        up_graph.add_op(up);
        up_graph.finalize();
        std::vector<float> xf = to_f32(x), dx(x.size());
        run(up_graph, {{0, xf.data()}, {1, du.data()}, {2, dx.data()}});

        // Central differences of the f64 forward.
        const double h = 1e-6;
        auto numeric = [&](std::vector<double> &param, size_t i, const std::vector<double> &xs,
                               const std::vector<double> &gs, const std::vector<double> &bs) {
            const double keep = param[i];
            param[i] = keep + h;
            const double up_loss = forward(k, xs, gs, bs).loss;
            param[i] = keep - h;
            const double down_loss = forward(k, xs, gs, bs).loss;
            param[i] = keep;
            return (up_loss - down_loss) / (2 * h);
        };
        double worst = 0;
        auto compare = [&](const char *name, const std::vector<float> &analytic, std::vector<double> &param,
                               std::vector<double> &xs, std::vector<double> &gs, std::vector<double> &bs) {
            double err = 0, scale = 0;
            for (size_t i = 0; i < analytic.size(); ++i) {
                const double num = numeric(param, i, xs, gs, bs);
                err = std::max(err, std::fabs(num - double(analytic[i])));
                scale = std::max(scale, std::fabs(num));
            }
            const double rel = err / std::max(scale, 1e-12);
            worst = std::max(worst, rel);
            std::printf("  %-7s %3zu elements  max |bpg - finite difference| = %.3g (%.3g of max |gradient|)\n", name,
                    analytic.size(), err, rel);
        };
        std::vector<double> gm = k.gamma, bt = k.beta;
        compare("dx", dx, x, x, gm, bt);
        compare("dgamma", dgamma, gm, x, gm, bt);
        compare("dbeta", dbeta, bt, x, gm, bt);
        const bool ok = worst < 1e-4;
        std::puts(ok ? "OK" : "FAILED: the gradient does not match finite differences");
        return ok ? 0 : 1;
    } catch (const error &e) {
        std::fprintf(stderr, "error (%s): %s\n", to_string(e.code()), e.what());
        return 2;
    }
}
