// Writing a large output with non-temporal stores: an ordinary store first
// reads the line it writes (write-allocate), a fifth more memory traffic for
// a kernel that reads two tensors and writes one. Words used across the
// kernels: "nontemporal" is the plans' store policy; a nontemporal run is
// either "streamed" (whole lines straight from the registers, where it is
// 64-byte aligned) or "staged" (computed into a per-thread stage buffer,
// then copied out with copy_nontemporal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace bpg::tbb_backend {

// Outputs at least this large are written non-temporally: they leave the
// cache anyway, and the next reader finds them in memory either way.
constexpr int64_t nontemporal_min_bytes = int64_t(16) << 20;

// Copies bytes to dst, streaming the 64-byte-aligned middle past the caches
// (AVX-512 or AVX2; plain memcpy otherwise). Ends with a store fence.
void copy_nontemporal(void *dst, const void *src, size_t bytes);

// A per-thread scratch buffer of at least `bytes` (64-byte aligned), reused;
// null when memory runs out: the stage is only a way of storing, so out_run
// then writes to its output directly (the same values).
void *stage_buffer(size_t bytes);

// Whether AVX-512 non-temporal stores of whole lines can be written from p
// on (the CPU has AVX-512, and p is 64-byte aligned): where a kernel streams
// straight from its registers instead of through the stage.
bool streams_to(const void *p);

// A contiguous run of n elements of an output being written: straight to dst,
// or (staged) into the thread's stage buffer and then, at finish(), out with
// non-temporal stores. Kernels write to `out` either way.
template <typename T> struct out_run {
    T *dst, *out;
    int64_t n;
    bool staged;
    out_run(T *dst_, int64_t n_, bool staged_) : dst(dst_), n(n_), staged(staged_) {
        out = staged ? static_cast<T *>(stage_buffer(size_t(n) * sizeof(T))) : dst;
        if (!out) out = dst, staged = false;
    }
    void finish() const {
        if (staged) copy_nontemporal(dst, out, size_t(n) * sizeof(T));
    }
    // The same run written again at `other` (after finish()): from the stage
    // past the caches, or copied from dst, which was just written.
    void finish_copy(T *other) const {
        if (staged) copy_nontemporal(other, out, size_t(n) * sizeof(T));
        else std::memcpy(other, dst, size_t(n) * sizeof(T));
    }
};

} // namespace bpg::tbb_backend
