// BatchNormTrainingBackpropSums and BatchNormTrainingBackpropFromSums, the BN
// backward split for SyncBatchNorm: a batch cut into "ranks" (one of them
// empty), each rank's sums added, and each rank's diff_src from the global
// sums, equal BatchNormTrainingBackprop on the whole batch; on tbb and ref,
// both layouts, every dtype; BatchNormForwardSums against sums in f64, a
// mean far from 0 too; the tbb paths; the same bits on any thread count; the
// schema's errors.
#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
#include "bpg/graph.hpp"
#include "core/tensor_desc.hpp"
#include "support/aligned.hpp"
#include "support/backends_in_build.hpp"
#include "support/bn_paths.hpp"
#include "support/default_threads.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

using values = std::map<size_t, std::vector<float>>;

// Tensor ids: src 0, diff_dst 1, mean 2, variance 3, gamma 4, diff_src 5,
// diff_gamma 6, diff_beta 7, sum_diff_dst 8, sum_diff_dst_centered 9.
struct split_case {
    int64_t n = 5, c = 6, h = 3, w = 4;
    bool nxc = false;
    data_type dt = data_type::f32;
    dims shape(int64_t batch) const { return nxc ? dims {batch, h, w, c} : dims {batch, c, h, w}; }
    std::string name() const { return std::string(nxc ? "NXC " : "NCX ") + to_string(dt); }
};

logical_tensor data(const split_case &k, size_t id, int64_t batch) {
    return logical_tensor(id, k.dt, k.shape(batch), layout_type::strided);
}
logical_tensor stat(const split_case &k, size_t id) { return logical_tensor(id, data_type::f32, {k.c}, layout_type::strided); }

op whole_op(const split_case &k) {
    op o(0, op::kind::BatchNormTrainingBackprop,
            {data(k, 0, k.n), data(k, 1, k.n), stat(k, 2), stat(k, 3), stat(k, 4)},
            {data(k, 5, k.n), stat(k, 6), stat(k, 7)});
    o.set_attr(op::attr::epsilon, 1e-3f).set_attr(op::attr::data_format, k.nxc ? "NXC" : "NCX");
    return o;
}

op sums_op(const split_case &k, int64_t batch) {
    op o(0, op::kind::BatchNormTrainingBackpropSums, {data(k, 0, batch), data(k, 1, batch), stat(k, 2)},
            {stat(k, 8), stat(k, 9)});
    o.set_attr(op::attr::data_format, k.nxc ? "NXC" : "NCX");
    return o;
}

op forward_sums_op(const split_case &k) {
    op o(0, op::kind::BatchNormForwardSums, {data(k, 0, k.n), stat(k, 2)}, {stat(k, 8), stat(k, 9)});
    o.set_attr(op::attr::data_format, k.nxc ? "NXC" : "NCX");
    return o;
}

op from_sums_op(const split_case &k, int64_t batch, int64_t global_count) {
    op o(0, op::kind::BatchNormTrainingBackpropFromSums,
            {data(k, 0, batch), data(k, 1, batch), stat(k, 2), stat(k, 3), stat(k, 8), stat(k, 9), stat(k, 4)},
            {data(k, 5, batch), stat(k, 6), stat(k, 7)});
    o.set_attr(op::attr::epsilon, 1e-3f).set_attr(op::attr::data_format, k.nxc ? "NXC" : "NCX");
    o.set_attr(op::attr::global_count, global_count);
    return o;
}

// Compiles the op's one partition for `b` and runs it on `in` (C order);
// the outputs by id, and the compiled partition's backend and kernel path.
struct run_result {
    values out;
    backend_kind backend;
    std::string path;
};

run_result run_op(const op &o, const values &in, backend_kind b) {
    graph g;
    g.add_op(o);
    g.finalize();
    const partition p = g.get_partitions().at(0);
    engine e;
    compile_options opts;
    opts.backend = b;
    const compiled_partition cp = p.compile(p.get_input_ports(), p.get_output_ports(), e, opts);
    std::map<size_t, std::vector<char>> buf;
    auto buffer_of = [&](const logical_tensor &lt) -> void * {
        auto &v = buf[lt.get_id()];
        if (v.empty()) v.resize(lt.get_mem_size() + 64);
        return v.data() + bytes_to_line(v.data());
    };
    std::vector<tensor> ti, to;
    for (const logical_tensor &lt : cp.get_inputs()) {
        size_t i = 0;
        void *ptr = buffer_of(lt);
        const std::vector<float> &v = in.at(lt.get_id());
        core::for_each_index(lt.get_dims(), lt.get_strides(),
                [&](const dims &, int64_t off) { core::store_from_double(ptr, lt.get_data_type(), off, v[i++]); });
        ti.emplace_back(lt, e, ptr);
    }
    for (const logical_tensor &lt : cp.get_outputs()) to.emplace_back(lt, e, buffer_of(lt));
    cp.execute(stream(e), ti, to);
    run_result r {{}, cp.get_backend(), cp.get_kernel_path()};
    for (const logical_tensor &lt : cp.get_outputs()) {
        std::vector<float> v;
        const void *ptr = buffer_of(lt);
        core::for_each_index(lt.get_dims(), lt.get_strides(),
                [&](const dims &, int64_t off) { v.push_back(float(core::load_as_double(ptr, lt.get_data_type(), off))); });
        r.out[lt.get_id()] = v;
    }
    return r;
}

values inputs_of(const split_case &k, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    auto fill = [&](int64_t count, float scale, float shift) {
        std::vector<float> v(static_cast<size_t>(count));
        for (float &x : v) x = u(rng) * scale + shift;
        return v;
    };
    const int64_t elements = k.n * k.c * k.h * k.w;
    return {{0, fill(elements, 1.f, 0.3f)}, {1, fill(elements, 1.f, 0.f)}, {2, fill(k.c, 0.2f, 0.3f)},
            {3, fill(k.c, 0.4f, 0.8f)}, {4, fill(k.c, 0.5f, 1.f)}};
}

// Rows [n0, n1) of a batch-major tensor (N is the outer axis in both layouts).
std::vector<float> rows(const std::vector<float> &v, int64_t per_row, int64_t n0, int64_t n1) {
    return {v.begin() + n0 * per_row, v.begin() + n1 * per_row};
}

void expect_close(const std::vector<float> &got, const std::vector<float> &want, data_type dt, const std::string &what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    float scale = 0.f;
    for (float v : want) scale = std::max(scale, std::abs(v));
    const float rel = dt == data_type::f32 ? 1e-5f : dt == data_type::bf16 ? 1.f / 64 : 1.f / 512;
    int bad = 0;
    for (size_t i = 0; i < got.size() && bad < 3; ++i)
        if (!(std::abs(got[i] - want[i]) <= 2e-5f * scale + rel * std::abs(want[i]))) {
            ++bad;
            ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " want " << want[i];
        }
}

// The batch cut into ranks of `parts` images (0: an empty rank), the split
// run on each, against the whole op on the whole batch (ref).
void expect_split_equals_whole(const split_case &k, const std::vector<int64_t> &parts, backend_kind b, uint32_t seed) {
    SCOPED_TRACE(k.name() + " on " + to_string(b));
    const values in = inputs_of(k, seed);
    const run_result whole = run_op(whole_op(k), in, backend_kind::ref);
    const int64_t per_row = k.c * k.h * k.w;
    std::vector<double> s1(size_t(k.c), 0.0), s2(size_t(k.c), 0.0);
    int64_t n0 = 0;
    for (int64_t part : parts) { // each rank's sums, then the all-reduce
        values local = in;
        local[0] = rows(in.at(0), per_row, n0, n0 + part);
        local[1] = rows(in.at(1), per_row, n0, n0 + part);
        const run_result r = run_op(sums_op(k, part), local, b);
        if (part > 0 && b == backend_kind::tbb) {
            EXPECT_EQ(r.path.rfind("bn:local_sums:", 0), 0u) << r.path;
        }
        for (size_t c = 0; c < size_t(k.c); ++c) s1[c] += r.out.at(8)[c], s2[c] += r.out.at(9)[c];
        n0 += part;
    }
    ASSERT_EQ(n0, k.n);
    values global = in;
    global[8] = std::vector<float>(s1.begin(), s1.end());
    global[9] = std::vector<float>(s2.begin(), s2.end());
    std::vector<float> diff_src;
    n0 = 0;
    for (int64_t part : parts) {
        values local = global;
        local[0] = rows(in.at(0), per_row, n0, n0 + part);
        local[1] = rows(in.at(1), per_row, n0, n0 + part);
        // An empty rank has nothing for tbb to run: the dispatch rule takes ref.
        const run_result r = run_op(from_sums_op(k, part, k.n * k.h * k.w), local,
                part > 0 ? b : backend_kind::auto_select);
        if (part > 0 && b == backend_kind::tbb) {
            EXPECT_EQ(r.path.rfind("bn:from_sums:", 0), 0u) << r.path;
        }
        diff_src.insert(diff_src.end(), r.out.at(5).begin(), r.out.at(5).end());
        expect_close(r.out.at(6), whole.out.at(6), data_type::f32, "diff_gamma");
        expect_close(r.out.at(7), whole.out.at(7), data_type::f32, "diff_beta");
        n0 += part;
    }
    expect_close(diff_src, whole.out.at(5), k.dt, "diff_src");
}

TEST(BatchNormSplit, RanksWithGlobalSumsEqualTheWholeBatch) {
    uint32_t seed = 1;
    for (backend_kind b : {backend_kind::tbb, backend_kind::ref})
        for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
            for (bool nxc : {false, true}) {
                split_case k;
                k.dt = dt;
                k.nxc = nxc;
                expect_split_equals_whole(k, {2, 0, 3}, b, seed++);
                expect_split_equals_whole(k, {5}, b, seed++); // one process
            }
}

// Channel counts on every channels-last loop (< 16, register blocks, wide)
// and planar rows long enough for the per-channel chunks.
TEST(BatchNormSplit, EveryLayoutPathOfTheKernel) {
    uint32_t seed = 100;
    for (int64_t c : {3, 32, 80})
        for (bool nxc : {false, true}) {
            split_case k;
            k.c = c;
            k.nxc = nxc;
            k.h = 9, k.w = 11;
            expect_split_equals_whole(k, {1, 3, 1}, backend_kind::tbb, seed++);
        }
}

// sum (src - shift) and sum (src - shift)^2 per channel, in f64 here.
void expect_forward_sums(const split_case &k, float offset, backend_kind b, uint32_t seed) {
    SCOPED_TRACE(k.name() + " offset " + std::to_string(offset) + " on " + to_string(b));
    values in = inputs_of(k, seed);
    for (float &x : in[0]) x = float(x + offset);
    in[2] = std::vector<float>(size_t(k.c), offset + 0.1f); // the shift: near the mean
    for (size_t j = 0; j < in[0].size(); ++j) // (as the kernel reads it)
        in[0][j] = float(core::load_as_double(&in[0][j], data_type::f32, 0));
    const run_result r = run_op(forward_sums_op(k), in, b);
    if (b == backend_kind::tbb) {
        EXPECT_EQ(r.path, "bn:local_sums:sums=shifted_squares:update=none:cached" + avx2_suffix(k.dt));
        if (k.dt != data_type::f32) { // the target_clones loops: the AVX2 instance's bits
            tbb_backend::clone_16bit_only() = true;
            const run_result clones = run_op(forward_sums_op(k), in, b);
            tbb_backend::clone_16bit_only() = false;
            EXPECT_EQ(clones.path, "bn:local_sums:sums=shifted_squares:update=none:cached");
            for (size_t id : {size_t(8), size_t(9)})
                EXPECT_EQ(0, std::memcmp(r.out.at(id).data(), clones.out.at(id).data(), r.out.at(id).size() * 4))
                        << "output " << id;
        }
    }
    std::vector<double> s1(size_t(k.c)), s2(size_t(k.c));
    const dims shape = k.shape(k.n);
    const logical_tensor lt = data(k, 0, k.n);
    size_t i = 0;
    core::for_each_index(shape, lt.get_strides(), [&](const dims &idx, int64_t) {
        const size_t c = size_t(idx[k.nxc ? 3 : 1]);
        // The data as stored in the case's dtype.
        std::vector<char> one(8);
        core::store_from_double(one.data(), k.dt, 0, in[0][i++]);
        const double d = core::load_as_double(one.data(), k.dt, 0) - double(in[2][c]);
        s1[c] += d, s2[c] += d * d;
    });
    expect_close(r.out.at(8), std::vector<float>(s1.begin(), s1.end()), data_type::f32, "sum_src");
    expect_close(r.out.at(9), std::vector<float>(s2.begin(), s2.end()), data_type::f32, "sum_squares");
}

TEST(BatchNormSplit, ForwardSumsOnEveryLayoutAndDtype) {
    uint32_t seed = 200;
    for (backend_kind b : {backend_kind::tbb, backend_kind::ref})
        for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
            for (bool nxc : {false, true})
                for (int64_t c : {3, 32, 80}) {
                    split_case k;
                    k.dt = dt, k.nxc = nxc, k.c = c, k.h = 7, k.w = 9;
                    expect_forward_sums(k, 0.f, b, seed++);
                    expect_forward_sums(k, dt == data_type::f32 ? 50.f : 2.f, b, seed++); // mean far from 0
                }
}

// 10^8 elements in one channel, mean 100 and standard deviation ~0.3: the
// variance from the sums within 1e-5 of the f64 one (planar and channels-last).
TEST(BatchNormSplit, ForwardSumsKeepTheVarianceOver1e8Elements) {
    for (bool nxc : {false, true}) {
        split_case k;
        k.nxc = nxc, k.n = 1, k.c = nxc ? 2 : 1, k.h = 5000, k.w = nxc ? 10000 : 20000;
        const int64_t per_channel = k.h * k.w;
        values in;
        in[0].resize(size_t(k.c * per_channel));
        uint32_t h = 12345;
        for (float &x : in[0]) {
            h = h * 1664525u + 1013904223u;
            x = 100.f + float(h >> 8) / float(1 << 24) - 0.5f;
        }
        in[2] = std::vector<float>(size_t(k.c), 100.25f); // a shift off the mean
        std::vector<double> s1(size_t(k.c)), s2(size_t(k.c));
        for (size_t i = 0; i < in[0].size(); ++i) {
            const size_t c = nxc ? i % size_t(k.c) : i / size_t(per_channel);
            const double d = double(in[0][i]) - 100.25;
            s1[c] += d, s2[c] += d * d;
        }
        const run_result r = run_op(forward_sums_op(k), in, backend_kind::tbb);
        for (size_t c = 0; c < size_t(k.c); ++c) {
            const double m = double(per_channel);
            const double want = s2[c] / m - (s1[c] / m) * (s1[c] / m);
            const double got = double(r.out.at(9)[c]) / m - (double(r.out.at(8)[c]) / m) * (double(r.out.at(8)[c]) / m);
            EXPECT_NEAR(got, want, 1e-5 * want) << k.name() << " channel " << c;
        }
    }
}

TEST(BatchNormSplit, SameBitsOnAnyThreadCount) {
    split_case k;
    k.n = 4, k.c = 24, k.h = 17, k.w = 19;
    for (bool nxc : {false, true}) {
        k.nxc = nxc;
        values in = inputs_of(k, 7);
        in[8] = std::vector<float>(size_t(k.c), 0.5f);
        in[9] = std::vector<float>(size_t(k.c), -0.25f);
        values one_sums, one_ds, one_forward;
        with_default_threads(1, [&] {
            one_forward = run_op(forward_sums_op(k), in, backend_kind::tbb).out;
            one_sums = run_op(sums_op(k, k.n), in, backend_kind::tbb).out;
            one_ds = run_op(from_sums_op(k, k.n, 3 * k.n * k.h * k.w), in, backend_kind::tbb).out;
        });
        with_default_threads(3, [&] {
            EXPECT_EQ(run_op(forward_sums_op(k), in, backend_kind::tbb).out, one_forward) << k.name();
            EXPECT_EQ(run_op(sums_op(k, k.n), in, backend_kind::tbb).out, one_sums) << k.name();
            EXPECT_EQ(run_op(from_sums_op(k, k.n, 3 * k.n * k.h * k.w), in, backend_kind::tbb).out, one_ds) << k.name();
        });
    }
}

TEST(BatchNormSplit, SchemaErrorsNameTheRule) {
    split_case k;
    graph g;
    expect_error([&] { g.add_op(from_sums_op(k, k.n, 0)); }, status::invalid_argument,
            {"BatchNormTrainingBackpropFromSums op 0", "'global_count' = 0", "must be >= 1"});
    expect_error([&] { g.add_op(from_sums_op(k, k.n, k.n * k.h * k.w - 1)); }, status::invalid_argument,
            {"'global_count' = 59", "the 60 elements of src in one channel's reduction"});
    op bf16_sums(0, op::kind::BatchNormTrainingBackpropSums, {data(k, 0, k.n), data(k, 1, k.n), stat(k, 2)},
            {stat(k, 8), logical_tensor(9, data_type::bf16, {k.c}, layout_type::strided)});
    bf16_sums.set_attr(op::attr::data_format, "NCX");
    expect_error([&] { g.add_op(bf16_sums); }, status::invalid_data_type, {"sum_diff_dst_centered", "bf16; allowed: f32"});
    op no_count = from_sums_op(k, k.n, 60);
    op missing(1, op::kind::BatchNormTrainingBackpropFromSums, no_count.get_inputs(), no_count.get_outputs());
    missing.set_attr(op::attr::epsilon, 1e-3f);
    expect_error([&] { g.add_op(missing); }, status::invalid_argument, {"global_count"});
}

TEST(BatchNormSplit, DnnlRefusesTheSplit) {
    BPG_SKIP_WITHOUT_DNNL();
    split_case k;
    graph g;
    g.add_op(sums_op(k, k.n));
    g.finalize();
    const partition p = g.get_partitions().at(0);
    compile_options opts;
    opts.backend = backend_kind::dnnl;
    expect_error([&] { p.compile(p.get_input_ports(), p.get_output_ports(), engine(), opts); }, status::unimplemented,
            {"backend 'dnnl' cannot run it", "split at its sums"});
}

} // namespace
} // namespace bpg::test
