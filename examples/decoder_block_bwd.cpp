// The backward pass of a UNet-style decoder step, built through the C++ API:
//
//   forward:  x --BN--> y --ReLU--> r --upsample 2x (bilinear)--> u
//   backward: du --InterpolateBackprop--> dr --ReLUBackprop--> dy --BatchNormTrainingBackprop--> dx, dgamma, dbeta
//
// The library partitions it into [InterpolateBackprop] and the fused
// [ReLUBackprop -> BatchNormTrainingBackprop]; each partition is compiled by
// the dispatch rule, timed, and compared with the reference backend.
// Usage: bpg-example-decoder_block_bwd [N C H W] [--json FILE]   (default 8 32 56 56)
// --json writes the graph in the oneDNN Graph JSON format (for bpg-run).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bpg/bpg.hpp"
#include "bpg/json.hpp"

using namespace bpg;

namespace {

struct shape4 { int64_t n, c, h, w; };

double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Inputs of the backward that agree with a real forward pass.
std::map<size_t, std::vector<float>> make_inputs(const shape4 &s) {
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.f, 1.f);
    const int64_t hw = s.h * s.w, total = s.n * s.c * hw;
    const size_t count = size_t(total), channels = size_t(s.c);
    std::vector<float> x(count), mean(channels), var(channels), gamma(channels), r(count);
    for (float &v : x) v = 2.f * normal(rng) + 0.5f;
    for (int64_t c = 0; c < s.c; ++c) {
        double sum = 0, sq = 0;
        for (int64_t n = 0; n < s.n; ++n)
            for (int64_t i = 0; i < hw; ++i) sum += x[size_t((n * s.c + c) * hw + i)];
        const double m = sum / double(s.n * hw);
        for (int64_t n = 0; n < s.n; ++n)
            for (int64_t i = 0; i < hw; ++i) sq += std::pow(x[size_t((n * s.c + c) * hw + i)] - m, 2);
        mean[size_t(c)] = float(m);
        var[size_t(c)] = float(sq / double(s.n * hw));
        gamma[size_t(c)] = 0.5f + 0.01f * float(c);
        const float inv = 1.f / std::sqrt(var[size_t(c)] + 1e-5f);
        for (int64_t n = 0; n < s.n; ++n)
            for (int64_t i = 0; i < hw; ++i) {
                const size_t k = size_t((n * s.c + c) * hw + i);
                r[k] = std::max(0.f, gamma[size_t(c)] * (x[k] - mean[size_t(c)]) * inv + 0.1f);
            }
    }
    std::vector<float> du(count * 4);
    for (float &v : du) v = normal(rng);
    return {{0, x}, {1, mean}, {2, var}, {3, gamma}, {10, r}, {11, du}};
}

graph build_graph(const shape4 &s) {
    const data_type f32 = data_type::f32;
    const dims act {s.n, s.c, s.h, s.w}, up {s.n, s.c, 2 * s.h, 2 * s.w}, ch {s.c};
    // Tensor ids: 0 x, 1 mean, 2 variance, 3 gamma, 10 r (ReLU output),
    // 11 du, 12 dr, 13 dy, 20 dx, 21 dgamma, 22 dbeta.
    op upsample_bwd(0, op::kind::InterpolateBackprop, {logical_tensor(10, f32, act), logical_tensor(11, f32, up)},
            {logical_tensor(12, f32, act)}, "upsample_bwd");
    upsample_bwd.set_attr(op::attr::mode, "bilinear")
            .set_attr(op::attr::data_format, "NCX")
            .set_attr(op::attr::sizes, std::vector<int64_t> {2 * s.h, 2 * s.w});
    op relu_bwd(1, op::kind::ReLUBackprop, {logical_tensor(10, f32, act), logical_tensor(12, f32, act)},
            {logical_tensor(13, f32, act)}, "relu_bwd");
    relu_bwd.set_attr(op::attr::use_dst, true);
    op bn_bwd(2, op::kind::BatchNormTrainingBackprop,
            {logical_tensor(0, f32, act), logical_tensor(13, f32, act), logical_tensor(1, f32, ch),
                    logical_tensor(2, f32, ch), logical_tensor(3, f32, ch)},
            {logical_tensor(20, f32, act), logical_tensor(21, f32, ch), logical_tensor(22, f32, ch)}, "bn_bwd");
    bn_bwd.set_attr(op::attr::epsilon, 1e-5f).set_attr(op::attr::data_format, "NCX");
    graph g;
    for (const op &o : {upsample_bwd, relu_bwd, bn_bwd}) g.add_op(o);
    g.finalize();
    return g;
}

using buffers = std::map<size_t, std::vector<float>>;

// Runs a compiled partition on the buffers (outputs are allocated).
void run(const compiled_partition &cp, buffers &b, const engine &eng) {
    std::vector<tensor> in, out;
    for (const logical_tensor &lt : cp.get_inputs()) in.emplace_back(lt, eng, b.at(lt.get_id()).data());
    for (const logical_tensor &lt : cp.get_outputs()) {
        b[lt.get_id()].assign(size_t(lt.element_count()), 0.f);
        out.emplace_back(lt, eng, b[lt.get_id()].data());
    }
    stream strm(eng);
    cp.execute(strm, in, out);
}

} // namespace

int main(int argc, char **argv) {
    shape4 s {8, 32, 56, 56};
    std::string json_path;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() >= 2 && args[args.size() - 2] == "--json") {
        json_path = args.back();
        args.resize(args.size() - 2);
    }
    if (args.size() == 4)
        s = {std::atoll(args[0].c_str()), std::atoll(args[1].c_str()), std::atoll(args[2].c_str()),
                std::atoll(args[3].c_str())};
    try {
        const version_info v = version();
        std::printf("backprop-graph %d.%d.%d: decoder block backward (upsample 2x bilinear -> ReLU -> BN), "
                    "NCX f32, x %lldx%lldx%lldx%lld\n",
                v.major, v.minor, v.patch, (long long)s.n, (long long)s.c, (long long)s.h, (long long)s.w);
        const graph g = build_graph(s);
        if (!json_path.empty()) {
            std::FILE *f = std::fopen(json_path.c_str(), "w");
            if (!f) throw error(status::invalid_argument, "cannot write " + json_path);
            std::fputs(write_graph_json(document_of(g)).c_str(), f);
            std::fclose(f);
        }
        buffers b = make_inputs(s);
        engine eng;
        double worst = 0;
        for (const partition &p : g.get_partitions()) {
            const compiled_partition cp = p.compile(p.get_input_ports(), p.get_output_ports(), eng);
            std::vector<double> t;
            for (int r = 0; r < 5; ++r) {
                const double t0 = now_ms();
                run(cp, b, eng);
                t.push_back(now_ms() - t0);
            }
            std::sort(t.begin(), t.end());
            compile_options ref_opts;
            ref_opts.backend = backend_kind::ref;
            const compiled_partition ref = p.compile(p.get_input_ports(), p.get_output_ports(), eng, ref_opts);
            buffers rb = b;
            run(ref, rb, eng);
            double err = 0;
            for (const logical_tensor &lt : cp.get_outputs()) {
                const auto &got = b.at(lt.get_id()), &want = rb.at(lt.get_id());
                for (size_t i = 0; i < got.size(); ++i)
                    err = std::max(err, double(std::abs(got[i] - want[i])) / std::max(1.0, double(std::abs(want[i]))));
            }
            worst = std::max(worst, err);
            std::string ops;
            for (size_t id : p.get_ops()) ops += (ops.empty() ? "" : ",") + std::to_string(id);
            std::printf("partition %zu %-16s ops [%s] ran on %-4s %8.3f ms (median of 5)  max rel err vs reference %.3g\n",
                    p.get_id(), p.get_pattern_name().c_str(), ops.c_str(), cp.get_backend_name().c_str(), t[2], err);
        }
        double dgamma0 = b.at(21)[0], dbeta0 = b.at(22)[0];
        std::printf("dgamma[0] = %.6g, dbeta[0] = %.6g\n", dgamma0, dbeta0);
        if (worst > 1e-4) {
            std::printf("FAILED: error against the reference above 1e-4\n");
            return 1;
        }
        std::printf("OK\n");
        return 0;
    } catch (const error &e) {
        std::fprintf(stderr, "error (%s): %s\n", to_string(e.code()), e.what());
        return 2;
    }
}
