// Runs test code with a library default thread count: partitions compiled
// inside take it (compile_options.max_threads = 0), as they once took the
// size of the caller's oneTBB arena. Restores the default (0) after.
#pragma once

#include "bpg/threading.hpp"

namespace bpg::test {

template <typename F> void with_default_threads(int n, const F &f) {
    struct restore {
        ~restore() { set_max_threads(0); }
    } on_exit;
    set_max_threads(n);
    f();
}

} // namespace bpg::test
