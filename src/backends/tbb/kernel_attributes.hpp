// Attributes the oneTBB kernels are compiled with.
#pragma once

// Inlined into every caller, so that the code is compiled for the caller's
// instruction set (a target_clones instance, or an AVX-512 target function)
// rather than once for the baseline.
#define BPG_ALWAYS_INLINE inline __attribute__((always_inline))
// The same for a lambda (after its parameter list).
#define BPG_LAMBDA_INLINE __attribute__((always_inline))
// An entry point compiled three times, picked at load time by the CPU (ifunc):
// AVX-512, AVX2, and the baseline.
#if defined(__SANITIZE_THREAD__)
// Not under ThreadSanitizer: the clones' ifunc resolvers run at program load,
// before the TSan runtime is set up, and crash. The baseline code is checked.
#define BPG_CLONES
#else
#define BPG_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
