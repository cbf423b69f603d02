// Working memory a compiled kernel keeps from one execute to the next. Taken
// fresh every execute, a block of a few MB came back from the system each
// time (glibc returns freed blocks at the top of the heap), and its page
// faults cost up to 4x the kernel on 3-D interpolate (bench/NOTES.md). One
// block, grown to the largest request; an execute that finds it in use (the
// same compiled partition run by another thread at the same time) takes
// memory of its own for that run.
#pragma once

#include <atomic>
#include <cstddef>

#include "core/allocate.hpp"

namespace bpg::tbb_backend {

// `bytes` rounded up to a multiple of 64: pieces of one block laid out one
// after another stay 64-byte aligned, as core::allocate's blocks are.
inline size_t round64(size_t bytes) { return (bytes + 63) / 64 * 64; }

class kept_memory {
public:
    kept_memory() = default;
    kept_memory(const kept_memory &) = delete;
    kept_memory &operator=(const kept_memory &) = delete;

    // `bytes` bytes, 64-byte aligned, until the lease ends.
    class lease {
    public:
        lease(const lease &) = delete;
        lease &operator=(const lease &) = delete;
        lease(lease &&other) noexcept : kept_(other.kept_), own_(std::move(other.own_)), at_(other.at_) {
            other.kept_ = nullptr;
        }
        ~lease() {
            if (kept_) kept_->busy_.store(false, std::memory_order_release);
        }
        char *get() const { return at_; }

    private:
        friend class kept_memory;
        lease(const kept_memory *kept, core::aligned_buffer own, char *at) : kept_(kept), own_(std::move(own)), at_(at) {}
        const kept_memory *kept_;
        core::aligned_buffer own_;
        char *at_;
    };

    // Throws bpg::error(out_of_memory) naming `what` (core::allocate).
    lease take(size_t bytes, const char *what) const {
        if (bytes == 0) return lease(nullptr, nullptr, nullptr); // (small plans: their scratch on the stack)
        if (busy_.exchange(true, std::memory_order_acquire)) {
            core::aligned_buffer own = core::allocate(bytes, what);
            char *at = static_cast<char *>(own.get());
            return lease(nullptr, std::move(own), at);
        }
        if (bytes > bytes_) {
            block_.reset();
            bytes_ = 0;
            try {
                block_ = core::allocate(bytes, what);
            } catch (...) {
                busy_.store(false, std::memory_order_release);
                throw;
            }
            bytes_ = bytes;
        }
        return lease(this, nullptr, static_cast<char *>(block_.get()));
    }

private:
    mutable std::atomic<bool> busy_ {false};
    mutable core::aligned_buffer block_;
    mutable size_t bytes_ = 0;
};

} // namespace bpg::tbb_backend
