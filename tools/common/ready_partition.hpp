// A partition compiled with its own input and output buffers, ready to be
// executed again and again by the timing tools (bpg-omp-bench, bpg-overhead).
// f32 only; inputs are 0.5 + (i % 7) / 8, so variances are positive.
#pragma once

#include <chrono>
#include <vector>

#include "bpg/graph.hpp"

namespace bpg::tools {

struct ready_partition {
    compiled_partition cp;
    double compile_us = 0; // the time of p.compile
    std::vector<std::vector<float>> memory;
    std::vector<tensor> ins, outs;

    // The first partition of g, compiled with o.
    ready_partition(const graph &g, const compile_options &o) {
        const partition p = g.get_partitions().at(0);
        const auto t0 = std::chrono::steady_clock::now();
        cp = p.compile(p.get_input_ports(), p.get_output_ports(), engine(), o);
        compile_us = us_since(t0);
        memory.reserve(cp.get_inputs().size() + cp.get_outputs().size());
        for (const logical_tensor &lt : cp.get_inputs()) {
            memory.emplace_back(lt.get_mem_size() / sizeof(float));
            for (size_t i = 0; i < memory.back().size(); ++i) memory.back()[i] = 0.5f + float(i % 7) / 8;
            ins.emplace_back(lt, engine(), memory.back().data());
        }
        for (const logical_tensor &lt : cp.get_outputs()) {
            memory.emplace_back(lt.get_mem_size() / sizeof(float));
            outs.emplace_back(lt, engine(), memory.back().data());
        }
    }
    // One execute; its time in microseconds.
    double run_us() const {
        const auto t0 = std::chrono::steady_clock::now();
        cp.execute(stream(engine()), ins, outs);
        return us_since(t0);
    }
    static double us_since(std::chrono::steady_clock::time_point t0) {
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
};

} // namespace bpg::tools
