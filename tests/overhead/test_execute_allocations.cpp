// An execute of a small tbb partition allocates nothing: no operator new
// (binding buffers, checking ports) and no core::allocate (working memory),
// so that a tiny call costs about what its kernel does (issue 25). This
// folder is its own test program because it replaces the global operator
// new with one that counts the calling thread's allocations.
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "core/allocate.hpp"
#include "support/partition_kinds.hpp"

namespace {
thread_local bool counting = false;
thread_local long allocations = 0;

void *counted_new(std::size_t n) {
    if (counting) ++allocations;
    if (void *p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
} // namespace

// Every form that the replaced deletes below free, nothrow ones included (the
// standard library's temporary buffers use them; ASan checks the pairing).
void *operator new(std::size_t n) { return counted_new(n); }
void *operator new[](std::size_t n) { return counted_new(n); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept {
    if (counting) ++allocations;
    return std::malloc(n ? n : 1);
}
void *operator new[](std::size_t n, const std::nothrow_t &t) noexcept { return operator new(n, t); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }

namespace bpg::test {
namespace {

using PK = partition_kind;

// operator new calls of the calling thread while f runs, with core::allocate
// made to fail at its first call (so that any use of it throws).
template <typename F> long allocations_of(F &&f) {
    core::test_allocation_faults().fail_after = 0;
    allocations = 0;
    counting = true;
    try {
        f();
    } catch (...) {
        counting = false;
        core::test_allocation_faults().fail_after = -1;
        throw;
    }
    counting = false;
    core::test_allocation_faults().fail_after = -1;
    return allocations;
}

TEST(ExecuteAllocations, CountingSeesAnAllocation) {
    // Calls of the function itself: a new-expression may be optimised away.
    EXPECT_EQ(allocations_of([] { ::operator delete(::operator new(8)); }), 1);
}

TEST(ExecuteAllocations, SmallTbbPartitionsAllocateNothing) {
    const data_type f32 = data_type::f32, bf16 = data_type::bf16;
    const kind_case cases[] = {
            {PK::interpolate_linear, {1, 1, 2, 2}, false, f32},
            {PK::interpolate_nearest, {1, 1, 2, 2}, false, f32},
            {PK::interpolate_linear, {1, 2, 2, 3}, true, f32},
            {PK::interpolate_nearest, {1, 2, 2, 3}, true, bf16},
            {PK::interpolate_linear, {2, 3, 4, 4}, false, bf16},
            {PK::bn, {1, 1, 2, 2}, false, f32},
            {PK::bn, {2, 3, 4, 4}, false, bf16},
            {PK::bn_diff_src, {2, 3, 4, 4}, false, f32},
            {PK::relu_into_bn_src, {1, 1, 2, 2}, false, f32},
            {PK::relu_into_bn_diff_dst, {2, 5, 3, 7}, false, f32},
    };
    for (const kind_case &c : cases) {
        SCOPED_TRACE(name_of(c));
        const compiled_partition cp = compile_case(c, backend_kind::tbb);
        case_buffers b(cp, 3, 0xA5);
        b.execute(cp); // anything a first call sets up once
        EXPECT_EQ(allocations_of([&] {
            for (int i = 0; i < 3; ++i) b.execute(cp);
        }),
                0);
    }
}

} // namespace
} // namespace bpg::test
