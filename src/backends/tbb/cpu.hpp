// What the CPU the process runs on can execute, asked once: the kernels pick
// their AVX-512 paths at run time (the library is built for any x86-64).
#pragma once

namespace bpg::tbb_backend {

inline bool has_avx512f() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}

} // namespace bpg::tbb_backend
