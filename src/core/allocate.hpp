// The one allocation function of execute paths. Every buffer a kernel, a
// layout copy or the executor takes while a partition runs comes from here,
// so that running out of memory is bpg::error(out_of_memory) naming what was
// being allocated and how much, never std::bad_alloc or a null pointer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace bpg::core {

struct aligned_free {
    void operator()(void *p) const noexcept;
};
using aligned_buffer = std::unique_ptr<void, aligned_free>;

// `bytes` bytes (0 is allowed), 64-byte aligned. `what` names the buffer in
// the error, e.g. "the dense copy of diff_dst (tensor 11)".
aligned_buffer allocate(size_t bytes, const char *what);
aligned_buffer allocate(size_t bytes, const std::string &what);

// n elements of a trivial type, uninitialised.
template <typename T> using array = std::unique_ptr<T[], aligned_free>;
template <typename T> array<T> allocate_array(size_t n, const char *what) {
    static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);
    const size_t bytes = n > SIZE_MAX / sizeof(T) ? SIZE_MAX : n * sizeof(T);
    return array<T>(static_cast<T *>(allocate(bytes, what).release()));
}

// std::vector whose storage comes from allocate(): for working arrays whose
// size follows the problem (per-channel sums, chunk partials).
template <typename T> struct checked_allocator {
    using value_type = T;
    checked_allocator() = default;
    template <typename U> checked_allocator(const checked_allocator<U> &) noexcept {}
    T *allocate(size_t n) {
        const size_t bytes = n > SIZE_MAX / sizeof(T) ? SIZE_MAX : n * sizeof(T);
        return static_cast<T *>(core::allocate(bytes, "working memory").release());
    }
    void deallocate(T *p, size_t) noexcept { aligned_free()(p); }
    template <typename U> bool operator==(const checked_allocator<U> &) const noexcept { return true; }
    template <typename U> bool operator!=(const checked_allocator<U> &) const noexcept { return false; }
};
template <typename T> using checked_vector = std::vector<T, checked_allocator<T>>;

// Tests only: make allocate() fail as if memory ran out, to check that every
// caller turns it into an error and leaves no partial output. fail_after = n
// lets n more allocations succeed (-1: off); fail_over = b fails any request
// of more than b bytes (0: off).
struct allocation_faults {
    std::atomic<int64_t> fail_after {-1};
    std::atomic<size_t> fail_over {0};
};
allocation_faults &test_allocation_faults();

} // namespace bpg::core
