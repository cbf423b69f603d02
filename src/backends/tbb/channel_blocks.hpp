// The channels-last BN loops that keep a row's K = 16 * NB channels (NB = 1
// to 4) in registers are templates on NB; with_blocks picks the instance.
#pragma once

#include <cstdint>
#include <type_traits>

namespace bpg::tbb_backend {

// Whether K channels fit the register blocks: K = 16 * NB, NB = 1 to 4.
inline bool fits_blocks(int64_t K) { return K > 0 && K % 16 == 0 && K <= 64; }

// Calls f(std::integral_constant<int, NB>{}) with NB = K / 16 (the caller has
// checked fits_blocks(K)). Inlined, with f, into its caller,
// so that f's body is compiled for the caller's instruction set (a
// target_clones instance); f must be declared always_inline for that too.
template <typename F> inline __attribute__((always_inline)) decltype(auto) with_blocks(int64_t K, F &&f) {
    switch (K / 16) {
        case 1: return f(std::integral_constant<int, 1> {});
        case 2: return f(std::integral_constant<int, 2> {});
        case 3: return f(std::integral_constant<int, 3> {});
        default: return f(std::integral_constant<int, 4> {});
    }
}

} // namespace bpg::tbb_backend
