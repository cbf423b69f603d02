#include "core/allocate.hpp"

#include <cstdlib>
#include <string>

#include "bpg/status.hpp"

namespace bpg::core {

void aligned_free::operator()(void *p) const noexcept { std::free(p); }

allocation_faults &test_allocation_faults() {
    static allocation_faults faults;
    return faults;
}

namespace {

bool injected_failure(size_t bytes) {
    allocation_faults &f = test_allocation_faults();
    const size_t over = f.fail_over.load(std::memory_order_relaxed);
    if (over != 0 && bytes > over) return true;
    int64_t left = f.fail_after.load(std::memory_order_relaxed);
    while (left >= 0) {
        if (left == 0) return true;
        if (f.fail_after.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) return false;
    }
    return false;
}

} // namespace

aligned_buffer allocate(size_t bytes, const char *what) {
    // aligned_alloc wants a multiple of the alignment; 0 bytes still gives a
    // distinct pointer, so an empty buffer is never mistaken for a failure.
    // `what` becomes a string only in the error: execute paths allocate often.
    constexpr size_t align = 64;
    void *p = nullptr;
    if (bytes <= SIZE_MAX - align && !injected_failure(bytes))
        p = std::aligned_alloc(align, (bytes + align - 1) / align * align + (bytes == 0 ? align : 0));
    if (!p)
        throw error(status::out_of_memory,
                "out of memory: cannot allocate " + std::to_string(bytes) + " bytes for " + what);
    return aligned_buffer(p);
}

aligned_buffer allocate(size_t bytes, const std::string &what) { return allocate(bytes, what.c_str()); }

} // namespace bpg::core
