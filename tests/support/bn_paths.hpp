// What the tests of the oneTBB BN kernel paths share (test_tbb_bn_paths.cpp,
// test_tbb_bn_avx2.cpp): cases that take a path with the size and CPU knobs
// set, the path the plan names, and bit-for-bit comparisons of the loops.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/bn_case.hpp"

namespace bpg::test {

struct path_case {
    std::string path; // expected get_kernel_path(), less the ":avx2" avx2_suffix adds
    bn_case c;
    bool large = false;   // thresholds lowered: diff_src counts as large (nontemporal)
    bool generic = false; // a CPU without AVX-512
};

// A case of NCX shape ncx (NXC with nxc: the same shape, channels last).
bn_case make(dims ncx, data_type dt = data_type::f32, bool nxc = false);
bn_case global(bn_case c, bool sums); // use_global_stats, diff_gamma/diff_beta or not
bn_case relu(bn_case c, int into);    // a ReLUBackprop feeding BN input `into`

// Sets the knobs of a case for its scope (compile and execute).
struct knobs {
    explicit knobs(const path_case &pc);
    ~knobs();
};

// ":avx2" where the plan of a 16-bit case runs the generic loops' AVX2
// instances (bn_path.cpp: AVX2 and F16C, no AVX-512 or the generic loops
// asked for), else "": the same rule, asked of the CPU the tests run on.
std::string avx2_suffix(data_type dt);

// Each case's path (its f16c_suffix added) and results against the reference.
void expect_path_taken(const std::vector<path_case> &cases);

bool skip_without_avx512();

using outputs = std::map<size_t, std::vector<float>>;

// src, diff_dst and the relu tensors with full mantissas, so that a changed
// order of additions shows in the bits.
void widen_mantissas(outputs &in);

// The case on the generic loops (no AVX-512 code); with clones, their
// target_clones instances (no AVX2 instance either).
outputs run_generic(const bn_case &c, const outputs &in, bool clones = false);

// Every output of `got` bit for bit equal to `want`'s.
void expect_same_bits(const outputs &got, const outputs &want, const char *what);

// The case on inputs with full mantissas (seed): within the reference's
// tolerance on 1 thread, the same bits on 3 threads and on the generic
// loops (16-bit: with and without the AVX2 instances).
void expect_reference_and_same_bits(const bn_case &c, uint32_t seed);

} // namespace bpg::test
