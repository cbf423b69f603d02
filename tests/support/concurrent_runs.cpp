#include "support/concurrent_runs.hpp"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/small_partitions.hpp"

namespace bpg::test {

void expect_concurrent_runs_give_sequential_bits(const compiled_partition &cp, int threads, int runs_per_thread,
        uint32_t first_seed) {
    std::vector<std::unique_ptr<port_buffers>> mine;
    std::vector<std::vector<uint32_t>> want;
    for (int t = 0; t < threads; ++t) {
        mine.push_back(std::make_unique<port_buffers>(cp, first_seed + uint32_t(t)));
        mine.back()->poison_outputs();
        mine.back()->execute(cp);
        want.push_back(mine.back()->output_bits());
    }
    std::atomic<int> mismatches {0}, errors {0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            try {
                for (int r = 0; r < runs_per_thread; ++r) {
                    mine[size_t(t)]->poison_outputs();
                    mine[size_t(t)]->execute(cp);
                    if (mine[size_t(t)]->output_bits() != want[size_t(t)]) ++mismatches;
                }
            } catch (...) {
                ++errors;
            }
        });
    for (std::thread &th : pool) th.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(mismatches.load(), 0) << "of " << threads * runs_per_thread << " concurrent runs";
}

} // namespace bpg::test
