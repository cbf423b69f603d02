// The oneTBB BatchNormTrainingBackprop kernels (and the fused ReLUBackprop)
// against the reference: random shapes, every option, layouts and dtypes;
// inf/NaN exactly where the reference has them; accuracy on a channel of 10^8
// elements; the same bits for any number of threads; fused = unfused.
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "backends/tbb/cpu.hpp"
#include "support/bn_case.hpp"
#include "support/default_threads.hpp"

namespace bpg::test {
namespace {

// bn_inputs with full mantissas in the data tensors: its multiples of 1/64
// mostly sum exactly, in any order, so a test of bits on them could miss a
// change of summation order.
std::map<size_t, std::vector<float>> rough_bn_inputs(const bn_case &c, uint32_t seed) {
    auto in = bn_inputs(c, seed);
    for (auto &[id, v] : in)
        if (id == 0 || id == 1 || id >= 10)
            for (float &x : v) x = x * 1.1f + 0.0123f;
    return in;
}

dims nxc_of(const dims &ncx) {
    dims d {ncx[0]};
    d.insert(d.end(), ncx.begin() + 2, ncx.end());
    d.push_back(ncx[1]);
    return d;
}

TEST(TbbBatchNorm, MatchesReferenceForEveryOptionLayoutAndDtype) {
    std::mt19937 rng(7);
    const std::vector<dims> shapes = {{4, 3}, {2, 5, 7}, {2, 3, 4, 5}, {1, 17, 3, 3}, {3, 2, 2, 3, 2}, {2, 1, 9, 1}, {1, 4, 1, 1, 2, 3}};
    int n = 0;
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
        for (const dims &ncx : shapes)
            for (int layout = 0; layout < 3; ++layout)
                for (int option = 0; option < 6; ++option) {
                    bn_case c;
                    c.dt = dt;
                    c.nxc = layout == 1;
                    c.shape = c.nxc ? nxc_of(ncx) : ncx;
                    c.stat_shape = {ncx[1]};
                    if (layout == 2 && ncx.size() > 2) { // NCX with channels-last strides
                        dims s(ncx.size());
                        int64_t acc = ncx[1];
                        s[1] = 1;
                        for (size_t a = ncx.size() - 1; a >= 2; --a) { s[a] = acc; acc *= ncx[a]; }
                        s[0] = acc;
                        c.data_strides = s;
                    }
                    c.global_stats = option == 1 || option == 4;
                    c.gamma = option != 2;
                    c.three_outputs = option != 3 && option != 4;
                    c.relu = option == 5 ? int(rng() % 2) : -1;
                    if (dt == data_type::bf16 && option == 0) c.stat_dt = data_type::bf16;
                    const auto in = bn_inputs(c, uint32_t(n++));
                    expect_bn_close(run_bn(c, backend_kind::tbb, in), run_bn(c, backend_kind::ref, in), c);
                }
    EXPECT_GT(n, 300);
}

// DirectML statistics: kept axes adjacent in memory run on tbb; others are
// refused by it (the reference runs them).
TEST(TbbBatchNorm, RankMatchedStatistics) {
    bn_case c;
    c.shape = {2, 3, 4, 5};
    c.stat_shape = {1, 3, 4, 1};
    auto in = bn_inputs(c, 1);
    expect_bn_close(run_bn(c, backend_kind::tbb, in), run_bn(c, backend_kind::ref, in), c);
    c.stat_shape = {1, 3, 1, 5};
    in = bn_inputs(c, 2);
    try {
        run_bn(c, backend_kind::tbb, in);
        ADD_FAILURE() << "kept axes 1 and 3 are not adjacent: tbb should refuse";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::unimplemented);
        EXPECT_NE(std::string(e.what()).find("not adjacent"), std::string::npos) << e.what();
    }
    expect_bn_close(run_bn(c, backend_kind::auto_select, in), run_bn(c, backend_kind::ref, in), c);
}

// eps = 0 with a zero variance: 1/sqrt(0) = inf, and inf/NaN must appear in
// exactly the elements where the reference has them (training and global).
TEST(TbbBatchNorm, ZeroVarianceGivesTheReferenceInfNan) {
    // (NCX with 48 channels: short rows in channel groups, channel 1's group
    // written row by row around it.)
    for (bool global : {false, true})
        for (int layout = 0; layout < 3; ++layout) {
            const bool nxc = layout == 1;
            const int64_t k = layout == 2 ? 48 : 4;
            bn_case c;
            c.shape = nxc ? dims {2, 3, 3, k} : dims {2, k, 3, 3};
            c.nxc = nxc;
            c.stat_shape = {k};
            c.epsilon = 0.f;
            c.global_stats = global;
            auto in = bn_inputs(c, 5);
            in[3][1] = 0.f; // channel 1: zero variance
            for (size_t i = 0; i < in[1].size(); i += 5) in[1][i] = 0.f; // some zero gradients
            const auto got = run_bn(c, backend_kind::tbb, in), want = run_bn(c, backend_kind::ref, in);
            for (size_t id : {5, 6, 7}) {
                ASSERT_EQ(got.at(id).size(), want.at(id).size());
                for (size_t i = 0; i < want.at(id).size(); ++i) {
                    const float g = got.at(id)[i], w = want.at(id)[i];
                    EXPECT_EQ(std::isnan(g), std::isnan(w)) << "output " << id << "[" << i << "] " << g << " vs " << w;
                    EXPECT_EQ(std::isinf(g), std::isinf(w)) << "output " << id << "[" << i << "] " << g << " vs " << w;
                    if (std::isinf(w)) {
                        EXPECT_EQ(g, w);
                    } else if (!std::isnan(w)) {
                        EXPECT_NEAR(g, w, 1e-4 * (1 + std::abs(w))) << "output " << id << "[" << i << "]";
                    }
                }
            }
        }
}

// One channel of 10^8 elements, src = 1000 +- 0.01, diff_dst = 1 + (src -
// 1000) * 100: diff_gamma and diff_beta within 1e-5 of sums in f64.
TEST(TbbBatchNorm, LargeChannelKeepsAccuracy) {
    const int64_t n = 100'000'000;
    bn_case c;
    c.shape = {1, 1, n};
    c.stat_shape = {1};
    std::map<size_t, std::vector<float>> in;
    in[0].resize(size_t(n));
    in[1].resize(size_t(n));
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-0.01f, 0.01f);
    double db = 0, dg_raw = 0;
    for (int64_t i = 0; i < n; ++i) {
        const float s = 1000.f + u(rng), d = 1.f + (s - 1000.f) * 100.f;
        in[0][size_t(i)] = s;
        in[1][size_t(i)] = d;
        db += d;
        dg_raw += double(d) * (double(s) - 1000.0);
    }
    in[2] = {1000.f};
    in[3] = {1e-4f};
    in[4] = {1.f};
    const auto got = run_bn(c, backend_kind::tbb, in, true, /*read_diff_src=*/false);
    const double inv = 1.0 / std::sqrt(double(1e-4f) + double(c.epsilon));
    EXPECT_NEAR(got.at(7)[0], db, 1e-5 * std::abs(db));
    EXPECT_NEAR(got.at(6)[0], dg_raw * inv, 1e-5 * std::abs(dg_raw * inv));
}

TEST(TbbBatchNorm, SameBitsForAnyThreadCount) {
    for (bool nxc : {false, true}) {
        bn_case c;
        c.nxc = nxc;
        c.shape = nxc ? dims {3, 37, 29, 24} : dims {3, 24, 37, 29};
        c.stat_shape = {24};
        const auto in = rough_bn_inputs(c, 9);
        std::map<size_t, std::vector<float>> first;
        for (int threads : {1, 2, 3, 8}) {
            std::map<size_t, std::vector<float>> got;
            with_default_threads(threads, [&] { got = run_bn(c, backend_kind::tbb, in); });
            if (first.empty()) first = got;
            for (auto &[id, v] : got)
                EXPECT_EQ(0, std::memcmp(v.data(), first.at(id).data(), v.size() * 4)) << c.name() << " threads " << threads;
        }
    }
}

// ReLUBackprop fused into BN: the bits of the two ops run apart on the same
// backend, and the reference's values. Returns the fused outputs.
std::map<size_t, std::vector<float>> expect_fused_equals_apart(const bn_case &c, uint32_t seed) {
    const auto in = bn_inputs(c, seed);
    const auto fused = run_bn(c, backend_kind::tbb, in, true);
    const auto apart = run_bn(c, backend_kind::tbb, in, false);
    for (auto &[id, v] : fused) EXPECT_EQ(v, apart.at(id)) << c.name() << " output " << id;
    expect_bn_close(fused, run_bn(c, backend_kind::ref, in), c);
    return fused;
}

// Into either input, both layouts.
TEST(TbbBatchNorm, FusedReluEqualsOpsRunApart) {
    for (int into : {0, 1})
        for (bool nxc : {false, true}) {
            bn_case c;
            c.nxc = nxc;
            c.shape = nxc ? dims {2, 6, 7, 5} : dims {2, 5, 6, 7};
            c.stat_shape = {5};
            c.relu = into;
            expect_fused_equals_apart(c, 4);
        }
}

// Channels-last with 16 channels or more keeps the fused ReLU's decisions
// as bits (register-blocked for K = 16, 32, 48, 64; sums in memory for other
// K, with a partial last word when K % 16 != 0), into either input.
TEST(TbbBatchNorm, FusedReluMaskPathEqualsOpsRunApart) {
    for (int into : {0, 1})
        for (int64_t k : {16, 32, 64, 24, 80, 130}) {
            bn_case c;
            c.nxc = true;
            c.shape = {2, 9, 7, k};
            c.stat_shape = {k};
            c.relu = into;
            if (tbb_backend::has_avx512f()) {
                EXPECT_EQ(compile_bn_case(c, backend_kind::tbb).get_kernel_path(),
                        "bn:two_sweeps:sums=relu_mask_avx512:update=relu_mask_avx512:cached");
            }
            expect_fused_equals_apart(c, 12);
        }
}

// An f32 diff_src of 16 MB or more leaves with non-temporal stores:
// straight from the registers when its rows start 64-byte aligned (training,
// use_global_stats, a ReLU fused into either input; channels-last and planar),
// through a staged run when not. Both give the reference's values, and the
// same bits as each other and on 1 and 3 threads.
TEST(TbbBatchNorm, LargeOutputsMatchReference) {
    // NXC and NCX x training, use_global_stats with diff_gamma/diff_beta (the
    // sums pass writes diff_src) and without (diff_src = a * diff_dst alone,
    // src not read) x no ReLU, a ReLU into diff_dst, into src.
    for (int variant = 0; variant < 18; ++variant) {
        bn_case c;
        c.nxc = variant % 2 == 0;
        c.shape = c.nxc ? dims {4, 128, 128, 64} : dims {4, 64, 128, 128}; // 2^22 floats: 16 MB
        c.stat_shape = {64};
        const int mode = variant / 2 % 3; // training, use_global_stats with its sums, without
        c.global_stats = mode != 0;
        c.three_outputs = mode != 2;
        c.relu = variant / 6 == 1 ? 1 : variant / 6 == 2 ? 0 : -1;
        const std::string path = compile_bn_case(c, backend_kind::tbb).get_kernel_path();
        EXPECT_EQ(path.substr(path.size() - 12), ":nontemporal") << path;
        const auto in = bn_inputs(c, 21);
        const auto aligned = run_bn(c, backend_kind::tbb, in);
        expect_bn_close(aligned, run_bn(c, backend_kind::ref, in), c);
        c.misaligned = true;
        std::map<size_t, std::vector<float>> staged;
        with_default_threads(3, [&] { staged = run_bn(c, backend_kind::tbb, in); });
        with_default_threads(1, [&] { c.misaligned = false; EXPECT_EQ(run_bn(c, backend_kind::tbb, in), aligned) << c.name(); });
        for (auto &[id, v] : staged)
            EXPECT_EQ(0, std::memcmp(v.data(), aligned.at(id).data(), v.size() * 4)) << c.name() << " output " << id;
    }
}

// The reference's values, and the same bits on 3 threads and from buffers
// off a 64-byte boundary (where nothing streams from the registers).
void expect_reference_values_and_same_bits(bn_case c, uint32_t seed) {
    const auto in = rough_bn_inputs(c, seed);
    const auto got = run_bn(c, backend_kind::tbb, in);
    expect_bn_close(got, run_bn(c, backend_kind::ref, in), c);
    with_default_threads(3, [&] { EXPECT_EQ(run_bn(c, backend_kind::tbb, in), got) << c.name(); });
    c.misaligned = true;
    EXPECT_EQ(run_bn(c, backend_kind::tbb, in), got) << c.name() << " staged";
}

// A 16-bit diff_src of 16 MB or more streams out in whole lines (two
// vectors per non-temporal store). Channels-last: with K = 48 two rows make
// a unit, and a task's odd last row ends in an ordinary store. NCX: rows of
// 129 * 129 start on a 64-byte boundary one time in 32 and end in a tail of
// ordinary stores. The bits of the staged path (buffers off a 64-byte
// boundary) and of 3 threads, and the reference's values; also with a ReLU
// fused into diff_dst, and use_global_stats with diff_src alone (0) or with
// diff_gamma/diff_beta (1: the sums pass writes diff_src).
TEST(TbbBatchNorm, LargeSixteenBitStreamsWholeLines) {
    struct variant {
        bool nxc;
        data_type dt;
        int64_t k;
        int relu;
        int global_stats; // -1: training
    };
    const data_type bf16 = data_type::bf16, f16 = data_type::f16;
    for (const variant v : {variant {true, bf16, 64, -1, -1}, variant {true, bf16, 48, -1, -1},
                 variant {true, f16, 64, -1, -1}, variant {true, f16, 48, -1, -1}, variant {true, bf16, 64, 1, -1},
                 variant {true, bf16, 64, -1, 0}, variant {false, bf16, 128, -1, -1}, variant {false, f16, 129, -1, -1},
                 variant {false, bf16, 128, 1, -1}, variant {false, f16, 128, 0, 0}, variant {false, bf16, 129, 1, 1},
                 variant {false, f16, 128, -1, 1}, variant {true, bf16, 48, -1, 1}, variant {true, f16, 64, 0, 1}}) {
        bn_case c;
        c.nxc = v.nxc;
        c.dt = v.dt;
        c.relu = v.relu;
        c.global_stats = v.global_stats >= 0;
        c.three_outputs = v.global_stats != 0;
        // 16.0 or 16.1 MB; A odd for K = 48. NCX: k is the spatial side.
        c.shape = !v.nxc ? dims {8, 64, v.k, v.k} : v.k == 64 ? dims {8, 128, 128, 64} : dims {5, 177, 199, 48};
        c.stat_shape = {v.nxc ? v.k : 64};
        expect_reference_values_and_same_bits(c, 31);
    }
}

// A channels-last case of K = v.k channels: large, 16 MB or more of
// diff_src (an odd row count), else the shape `small`.
struct channels_last_variant {
    data_type dt;
    int64_t k;
    int relu;
    int global_stats; // -1: training; 0, 1: use_global_stats without, with diff_gamma/diff_beta
    bool large;
};
bn_case channels_last_case(const channels_last_variant &v, const dims &small) {
    bn_case c;
    c.nxc = true;
    c.dt = v.dt;
    c.relu = v.relu;
    c.global_stats = v.global_stats >= 0;
    c.three_outputs = v.global_stats != 0;
    const int64_t rows = ((int64_t(16) << 20) / (int64_t(size_of(v.dt)) * v.k) + 400) | 1;
    c.shape = v.large ? dims {1, rows / 101 | 1, 101, v.k} : small;
    c.stat_shape = {v.k};
    return c;
}

// Channels-last with a channel count off the register blocks (K > 64, or not
// a multiple of 16) runs the AVX-512 loads on each row's whole vectors and
// the last K % 16 channels one by one. Large (16 MB or more): diff_src
// streams from the registers in whole lines when K % 16 == 0 (16-bit: a line
// may span two rows, K = 80 and 112 with an odd row count end in an ordinary
// store), through a staged run when not (K = 130). Small: ordinary stores.
// The reference's values, the same bits on 3 threads and from the staged
// path (buffers off a 64-byte boundary); training, use_global_stats with
// diff_gamma/diff_beta (1) and without (0), a ReLU fused into either input.
void expect_channels_last_cases(const std::vector<channels_last_variant> &variants, const dims &small_rows,
        uint32_t seed) {
    for (const channels_last_variant &v : variants) {
        dims small = small_rows;
        small.push_back(v.k);
        const bn_case c = channels_last_case(v, small);
        expect_reference_values_and_same_bits(c, seed);
        if (v.relu >= 0 && !v.large) expect_fused_equals_apart(c, seed);
    }
}

// Large: 16.2-16.8 MB of diff_src (label `large`); small: 2 x 9 x 7 rows.
TEST(TbbBatchNorm, LargeChannelsLastAnyChannelCount) {
    using variant = channels_last_variant;
    const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;
    expect_channels_last_cases({variant {f32, 80, -1, -1, true}, variant {bf16, 112, -1, -1, true},
                                       variant {f16, 80, -1, -1, true}, variant {bf16, 128, 1, -1, true},
                                       variant {f16, 112, -1, 1, true}, variant {bf16, 80, -1, 0, true},
                                       variant {f32, 130, -1, -1, true}, variant {f16, 130, 0, 1, true}},
            {2, 9, 7}, 41);
}

TEST(TbbBatchNorm, ChannelsLastAnyChannelCount) {
    using variant = channels_last_variant;
    const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;
    expect_channels_last_cases({variant {bf16, 96, 0, -1, false}, variant {f32, 20, -1, 1, false},
                                       variant {f16, 130, 1, -1, false}, variant {bf16, 144, -1, 0, false}},
            {2, 9, 7}, 41);
}

// Channels-last with fewer than 16 channels (rows of every tensor one after
// another) runs a range of rows as one flat run of whole vectors, each
// lane's channel from a pattern that repeats every K / gcd(K, 16) vectors:
// pass 1 sums into slots (lanes of the pattern's vectors), pass 2 picks the
// lanes' channel constants. Large (16 MB or more, an odd row
// count): diff_src streams from the run's first line boundary on. The
// reference's values, the same bits on 3 threads and from buffers off a
// 64-byte boundary (the elements before the first line one by one);
// training, use_global_stats with diff_gamma/diff_beta (1) and without (0),
// a ReLU fused into either input.
// Large: 16.0-16.3 MB of diff_src (label `large`); small: 2 x 37 x 7 rows
// (259: one chunk of 256 rows and a partial one).
TEST(TbbBatchNorm, LargeChannelsLastFewChannels) {
    using variant = channels_last_variant;
    const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;
    expect_channels_last_cases({variant {f32, 3, -1, -1, true}, variant {bf16, 5, 1, -1, true},
                                       variant {f16, 12, -1, 1, true}, variant {f32, 15, 0, 0, true}},
            {2, 37, 7}, 47);
}

TEST(TbbBatchNorm, ChannelsLastFewChannels) {
    using variant = channels_last_variant;
    const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;
    expect_channels_last_cases({variant {f32, 1, -1, -1, false}, variant {f32, 2, 0, 1, false},
                                       variant {bf16, 3, -1, 0, false}, variant {f16, 6, 1, -1, false},
                                       variant {f32, 7, 1, -1, false}, variant {bf16, 8, 0, 1, false},
                                       variant {f16, 9, -1, -1, false}, variant {f32, 13, -1, 1, false},
                                       variant {bf16, 15, 0, -1, false}, variant {f16, 1, 1, 0, false}},
            {2, 37, 7}, 47);
}

// The generic loops (a CPU without AVX-512) give the AVX-512 paths' bits:
// every layout path (planar rows long and short, in channel groups;
// channels-last on the register blocks, off them, and under 16 channels),
// every dtype, training, use_global_stats with and without its sums, a ReLU
// fused into either input.
TEST(TbbBatchNorm, GenericLoopsGiveTheAvx512Bits) {
    if (!tbb_backend::has_avx512f()) GTEST_SKIP() << "no AVX-512 on this CPU";
    const std::vector<dims> shapes = {{2, 3, 7, 7}, {2, 48, 7, 7}, {2, 5, 31, 33}, {3, 16, 9, 7}, {2, 80, 5, 3},
            {2, 3, 37, 7}, {2, 12, 9, 11}, {1, 15, 13, 7}, {2, 1, 11, 9}};
    int n = 0;
    for (data_type dt : {data_type::f32, data_type::bf16, data_type::f16})
        for (const dims &ncx : shapes)
            for (bool nxc : {false, true})
                for (int option = 0; option < 5; ++option) {
                    bn_case c;
                    c.dt = dt;
                    c.nxc = nxc;
                    c.shape = nxc ? nxc_of(ncx) : ncx;
                    c.stat_shape = {ncx[1]};
                    c.global_stats = option == 1 || option == 2;
                    c.three_outputs = option != 2;
                    c.relu = option >= 3 ? option - 3 : -1;
                    const auto in = rough_bn_inputs(c, uint32_t(n++));
                    const auto avx512 = run_bn(c, backend_kind::tbb, in);
                    tbb_backend::generic_kernels_only() = true;
                    const auto generic = run_bn(c, backend_kind::tbb, in);
                    tbb_backend::generic_kernels_only() = false;
                    for (auto &[id, v] : avx512)
                        EXPECT_EQ(0, std::memcmp(v.data(), generic.at(id).data(), v.size() * 4))
                                << c.name() << " output " << id;
                }
    EXPECT_EQ(n, 270);
}

// The bits kept for large channels-last problems: K = 128 streams diff_src
// from the registers, K = 112 (rows not whole vectors) through a staged run.
TEST(TbbBatchNorm, LargeFusedReluChannelsLastEqualsOpsRunApart) {
    for (int64_t k : {128, 112})
        for (int into : {0, 1}) {
            bn_case c;
            c.nxc = true;
            c.shape = {4, k == 128 ? 96 : 104, 96, k}; // 18.9 or 17.9 MB: past 16 MB, streamed
            c.stat_shape = {k};
            c.relu = into;
            expect_fused_equals_apart(c, 29);
        }
}

// A ReLU fused into a large NCX problem (diff_src streamed) whose rows are
// not whole vectors: B = 129 * 129, so 16 of every 17 rows start off a
// 64-byte boundary and every row ends in a one-element tail. Pass 1 keeps
// the ReLU's decisions for the whole vectors, pass 2 reads them on the rows
// it streams and the relu input on the others; also the same bits on 1 and
// 3 threads.
TEST(TbbBatchNorm, LargeFusedReluOddRowsEqualsOpsRunApart) {
    for (int into : {0, 1}) {
        bn_case c;
        c.shape = {4, 64, 129, 129}; // 16.3 MB per tensor
        c.stat_shape = {64};
        c.relu = into;
        const auto fused = expect_fused_equals_apart(c, 23);
        const auto in = bn_inputs(c, 23);
        for (int threads : {1, 3})
            with_default_threads(threads, [&] {
                EXPECT_EQ(run_bn(c, backend_kind::tbb, in, true), fused) << c.name() << " threads " << threads;
            });
    }
}

// NCX rows shorter than ~4 KB (7x7, 5x3, 1x9) run in groups of channels, row
// a of a group being one run in memory: pass 1's pairs of partials 8 rows at
// a time, pass 2 one output run per row of the group. Group sizes 2 to 16
// with a partial last group (K = 260), every dtype, a ReLU fused into either
// input, and use_global_stats (which does not group); one large (16.8 MB, staged
// run) case. The reference's values, the same bits on 3 threads and from
// buffers off a 64-byte boundary.
TEST(TbbBatchNorm, PlanarShortRowsInChannelGroups) {
    struct variant {
        data_type dt;
        dims shape;
        int relu;
        bool global_stats;
    };
    const data_type f32 = data_type::f32, bf16 = data_type::bf16, f16 = data_type::f16;
    for (const variant &v : {variant {f32, {3, 48, 7, 7}, -1, false}, variant {bf16, {3, 48, 7, 7}, 1, false},
                 variant {f16, {2, 40, 5, 3}, 0, false}, variant {f32, {2, 260, 1, 9}, 1, false},
                 variant {bf16, {2, 260, 1, 9}, -1, false}, variant {f16, {3, 64, 7, 7}, -1, false},
                 variant {f32, {3, 64, 7, 7}, 0, false}, variant {f32, {2, 64, 5, 5}, -1, true},
                 variant {f32, {168, 512, 7, 7}, 1, false}}) {
        bn_case c;
        c.dt = v.dt;
        c.shape = v.shape;
        c.stat_shape = {v.shape[1]};
        c.relu = v.relu;
        c.global_stats = v.global_stats;
        const std::string path = compile_bn_case(c, backend_kind::tbb).get_kernel_path();
        EXPECT_EQ(path.rfind(v.global_stats ? "bn:global_sums:" : "bn:channel_groups:", 0), 0u) << path;
        expect_reference_values_and_same_bits(c, 43);
        if (v.relu >= 0) expect_fused_equals_apart(c, 43);
    }
}

} // namespace
} // namespace bpg::test
