// What oneDNN computes on the CPU the tests run on. Its jit resampling
// backward and its bf16 primitives need AVX-512 (avx512_core: F, BW, VL, DQ);
// on an AVX2 machine it takes simple:any for NXC resampling, bnorm_tbb_jit
// for NXC BatchNorm, and refuses bf16. Tests pinning those paths check what
// oneDNN does there instead.
#pragma once

namespace bpg::test {

inline bool cpu_has_avx512_core() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
            && __builtin_cpu_supports("avx512dq");
}

} // namespace bpg::test
