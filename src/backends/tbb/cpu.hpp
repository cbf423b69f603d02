// What the CPU the process runs on can execute, asked once: the kernels pick
// their AVX-512 paths at run time (the library is built for any x86-64).
#pragma once

#include <atomic>

namespace bpg::tbb_backend {

// Set, the kernels take their generic loops as on a CPU without AVX-512:
// tests compare those loops' bits with the AVX-512 paths'. Not for users.
inline std::atomic<bool> &generic_kernels_only() {
    static std::atomic<bool> on {false};
    return on;
}

inline bool has_avx512f() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes && !generic_kernels_only().load(std::memory_order_relaxed);
}

// Set, the 16-bit BN loops run their target_clones instances where their
// AVX2 instances would (bn_kernels.hpp): tests compare the two. Not for users.
inline std::atomic<bool> &clone_16bit_only() {
    static std::atomic<bool> on {false};
    return on;
}

// AVX2 (the row gather's form for CPUs without AVX-512).
inline bool has_avx2() {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}

// AVX512_BF16 too (vcvtneps2bf16), where has_avx512f().
inline bool has_avx512_bf16() {
    static const bool yes = __builtin_cpu_supports("avx512bf16");
    return yes && has_avx512f();
}

} // namespace bpg::tbb_backend
