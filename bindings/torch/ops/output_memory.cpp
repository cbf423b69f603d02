#include "ops/output_memory.h"

#include <ATen/EmptyTensor.h>
#include <c10/core/CPUAllocator.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace bpg_torch {

namespace {

constexpr size_t huge_page = size_t(2) << 20, small_page = 4096;

// Whether the process tells glibc how to serve large blocks (see the header).
bool malloc_tuned() {
    const char *tunables = std::getenv("GLIBC_TUNABLES");
    return std::getenv("MALLOC_MMAP_THRESHOLD_") || std::getenv("MALLOC_MMAP_MAX_")
            || (tunables && std::strstr(tunables, "glibc.malloc.mmap_"));
}

struct mapping {
    void *start;
    size_t bytes;
};

void unmap(void *ctx) {
    const mapping *m = static_cast<const mapping *>(ctx);
    munmap(m->start, m->bytes);
    delete m;
}

// Large blocks: an anonymous mapping starting on a 2 MB boundary (so every
// whole 2 MB of it can be one huge page), ending at the block's last 4 KB
// page (a partial last 2 MB stays in small pages: nothing is committed
// beyond the block). Small blocks, or a failed mapping: torch's allocator.
struct huge_page_allocator final : c10::Allocator {
    c10::DataPtr allocate(size_t n) const override {
        static const bool tuned = malloc_tuned();
        if (n < huge_output_min_bytes || tuned) return c10::GetCPUAllocator()->allocate(n);
        const size_t bytes = (n + small_page - 1) / small_page * small_page;
        void *raw = mmap(nullptr, bytes + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) return c10::GetCPUAllocator()->allocate(n);
        char *const begin = static_cast<char *>(raw), *const end = begin + bytes + huge_page;
        char *const p = reinterpret_cast<char *>((reinterpret_cast<uintptr_t>(raw) + huge_page - 1) / huge_page * huge_page);
        if (p > begin) munmap(begin, size_t(p - begin));
        if (p + bytes < end) munmap(p + bytes, size_t(end - (p + bytes)));
        // Advice only: where THP is off the block is still valid memory.
        madvise(p, bytes, MADV_HUGEPAGE);
        return {p, new mapping {p, bytes}, &unmap, c10::Device(c10::DeviceType::CPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return nullptr; } // each block carries its own
};

c10::Allocator *output_allocator() {
    static huge_page_allocator allocator;
    return &allocator;
}

void check_cpu(const at::TensorOptions &options) {
    TORCH_CHECK(options.device().is_cpu(), "bpg_torch: outputs are allocated on CPU, asked for ", options.device());
}

} // namespace

at::Tensor empty_output(at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions &options) {
    check_cpu(options);
    return at::detail::empty_strided_generic(sizes, strides, output_allocator(), c10::DispatchKeySet(c10::DispatchKey::CPU),
            c10::typeMetaToScalarType(options.dtype()));
}

at::Tensor empty_output(at::IntArrayRef sizes, at::MemoryFormat format, const at::TensorOptions &options) {
    check_cpu(options);
    return at::detail::empty_generic(sizes, output_allocator(), c10::DispatchKeySet(c10::DispatchKey::CPU),
            c10::typeMetaToScalarType(options.dtype()), format);
}

} // namespace bpg_torch
