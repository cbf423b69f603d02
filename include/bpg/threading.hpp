// How many threads the library's backends use. The oneTBB kernels and the
// oneDNN primitives (OpenMP in Debian's oneDNN) are limited together, so a
// caller sets one number. 0 restores the default (all cores).
#pragma once

namespace bpg {

void set_max_threads(int n);
int get_max_threads(); // what the backends will use now

} // namespace bpg
