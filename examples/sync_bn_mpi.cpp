// SyncBatchNorm's backward across MPI processes with the graph API, no torch:
// each rank holds some images of one batch (uneven counts, possibly none),
//
//   forward statistics: BatchNormForwardSums -> MPI_Allreduce -> mean, variance
//   backward:           BatchNormTrainingBackpropSums -> MPI_Allreduce
//                       -> BatchNormTrainingBackpropFromSums -> its diff_src slice
//
// and every rank checks its slice, diff_gamma and diff_beta against
// BatchNormTrainingBackprop run by itself on the whole batch. Exit 0 when all
// agree within 1e-5 (relative to the largest value).
//   mpirun -np 2 bpg-example-sync_bn_mpi [N C H W]      (default 5 16 12 10, NCX f32)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include <mpi.h>

#include "bpg/bpg.hpp"

using namespace bpg;

namespace {

using buffers = std::map<size_t, std::vector<float>>; // tensor id -> data

// Tensor ids: src 0, diff_dst 1, mean 2, variance 3, gamma 4, diff_src 5,
// diff_gamma 6, diff_beta 7, the sums 8, 9.
logical_tensor tensor_of(size_t id, const dims &shape) { return logical_tensor(id, data_type::f32, shape, layout_type::strided); }

// Runs the one partition of `o` on the buffers (outputs are resized).
void run(const op &o, buffers &b) {
    graph g;
    g.add_op(o);
    g.finalize();
    const partition p = g.get_partitions().at(0);
    const engine e;
    const compiled_partition cp = p.compile(p.get_input_ports(), p.get_output_ports(), e);
    std::vector<tensor> in, out;
    for (const logical_tensor &lt : cp.get_inputs()) in.emplace_back(lt, e, b.at(lt.get_id()).data());
    for (const logical_tensor &lt : cp.get_outputs()) {
        std::vector<float> &v = b[lt.get_id()];
        v.resize(lt.get_mem_size() / sizeof(float));
        out.emplace_back(lt, e, v.data());
    }
    cp.execute(stream(e), in, out);
}

// Image n's values of src or diff_dst: the same on every rank.
void fill_images(std::vector<float> &v, int64_t n0, int64_t n1, int64_t per_image, uint32_t salt) {
    v.resize(size_t((n1 - n0) * per_image));
    for (int64_t i = n0 * per_image; i < n1 * per_image; ++i) {
        uint32_t h = uint32_t(i) * 2654435761u ^ salt;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        v[size_t(i - n0 * per_image)] = float(h % 2001) / 1000.f - 1.f + (salt == 1 ? 0.5f : 0.f);
    }
}

void all_reduce_sum(std::vector<float> &v) { MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }

} // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const int64_t N = argc > 4 ? std::atoll(argv[1]) : 5, C = argc > 4 ? std::atoll(argv[2]) : 16,
                  H = argc > 4 ? std::atoll(argv[3]) : 12, W = argc > 4 ? std::atoll(argv[4]) : 10;
    const int64_t per_image = C * H * W, count = N * H * W; // count: one channel's elements over all ranks
    // Rank r's images: [n0, n1); rank 0 holds none when there are more ranks than 2.
    const int64_t n0 = ranks > 2 ? (rank == 0 ? 0 : (rank - 1) * N / (ranks - 1)) : rank * N / ranks;
    const int64_t n1 = ranks > 2 ? (rank == 0 ? 0 : rank * N / (ranks - 1)) : (rank + 1) * N / ranks;
    const dims local {n1 - n0, C, H, W}, channels {C};
    int status = 0;
    try {
        buffers b;
        fill_images(b[0], n0, n1, per_image, 1);
        fill_images(b[1], n0, n1, per_image, 2);
        b[4].assign(size_t(C), 1.f);
        for (int64_t c = 0; c < C; ++c) b[4][size_t(c)] = 0.5f + float(c % 5) / 4.f;

        // Forward statistics: shifted sums (shift 0 here; a running mean in training).
        b[12].assign(size_t(C), 0.f);
        op fwd(0, op::kind::BatchNormForwardSums, {tensor_of(0, local), tensor_of(12, channels)},
                {tensor_of(10, channels), tensor_of(11, channels)});
        fwd.set_attr(op::attr::data_format, "NCX");
        run(fwd, b);
        std::vector<float> stats = b[10];
        stats.insert(stats.end(), b[11].begin(), b[11].end());
        all_reduce_sum(stats);
        b[2].resize(size_t(C)), b[3].resize(size_t(C));
        for (size_t c = 0; c < size_t(C); ++c) {
            const double mean = double(stats[c]) / double(count);
            b[2][c] = float(mean);
            b[3][c] = float(double(stats[size_t(C) + c]) / double(count) - mean * mean);
        }

        // Backward: local sums, one all-reduce of 2C floats, diff_src from the global sums.
        op sums(1, op::kind::BatchNormTrainingBackpropSums, {tensor_of(0, local), tensor_of(1, local), tensor_of(2, channels)},
                {tensor_of(8, channels), tensor_of(9, channels)});
        sums.set_attr(op::attr::data_format, "NCX");
        run(sums, b);
        std::vector<float> packed = b[8];
        packed.insert(packed.end(), b[9].begin(), b[9].end());
        all_reduce_sum(packed);
        b[8].assign(packed.begin(), packed.begin() + C);
        b[9].assign(packed.begin() + C, packed.end());
        op from(2, op::kind::BatchNormTrainingBackpropFromSums,
                {tensor_of(0, local), tensor_of(1, local), tensor_of(2, channels), tensor_of(3, channels),
                        tensor_of(8, channels), tensor_of(9, channels), tensor_of(4, channels)},
                {tensor_of(5, local), tensor_of(6, channels), tensor_of(7, channels)});
        from.set_attr(op::attr::epsilon, 1e-5f).set_attr(op::attr::data_format, "NCX");
        from.set_attr(op::attr::global_count, count);
        run(from, b);

        // The check: the whole batch on this rank alone, with the same statistics.
        buffers whole;
        fill_images(whole[0], 0, N, per_image, 1);
        fill_images(whole[1], 0, N, per_image, 2);
        whole[2] = b[2], whole[3] = b[3], whole[4] = b[4];
        const dims all {N, C, H, W};
        op bn(3, op::kind::BatchNormTrainingBackprop,
                {tensor_of(0, all), tensor_of(1, all), tensor_of(2, channels), tensor_of(3, channels), tensor_of(4, channels)},
                {tensor_of(5, all), tensor_of(6, channels), tensor_of(7, channels)});
        bn.set_attr(op::attr::epsilon, 1e-5f).set_attr(op::attr::data_format, "NCX");
        run(bn, whole);
        double worst = 0;
        auto compare = [&](const float *got, const float *want, size_t n) {
            float scale = 1e-30f;
            for (size_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(want[i]));
            for (size_t i = 0; i < n; ++i) worst = std::max(worst, double(std::abs(got[i] - want[i]) / scale));
        };
        compare(b[5].data(), whole[5].data() + n0 * per_image, b[5].size());
        compare(b[6].data(), whole[6].data(), size_t(C));
        compare(b[7].data(), whole[7].data(), size_t(C));
        MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            std::printf("sync_bn_mpi: %d ranks, batch %lldx%lldx%lldx%lld NCX f32, largest difference from one "
                        "process on the whole batch: %.3g (relative)\n",
                    ranks, (long long)N, (long long)C, (long long)H, (long long)W, worst);
        status = worst <= 1e-5 ? 0 : 1;
    } catch (const error &e) {
        std::fprintf(stderr, "sync_bn_mpi rank %d: %s\n", rank, e.what());
        status = 2;
    }
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
