// Debian's oneDNN runs on OpenMP. After each oneDNN call libgomp's idle
// workers keep spinning by default and take cores from the oneTBB kernels
// that run next (measured: 1.4-1.8x slower oneTBB partitions when the two
// alternate; tests/backends/test_dnnl_omp_tbb.cpp). OMP_WAIT_POLICY=passive
// removes that, but libgomp reads it once, before main(). So the tools start
// themselves again with it set, unless the user chose a policy.
#pragma once

#include <cstdlib>
#include <unistd.h>

namespace bpg::tools {

inline void use_passive_openmp(char **argv) {
    if (std::getenv("OMP_WAIT_POLICY") != nullptr) return; // the user's choice stands
    ::setenv("OMP_WAIT_POLICY", "passive", 1);
    ::execv("/proc/self/exe", argv); // returns only on failure: then run as we are
}

} // namespace bpg::tools
