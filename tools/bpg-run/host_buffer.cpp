#include "host_buffer.hpp"

#include <cstring>
#include <new>

namespace bpg::tools {

host_buffer::host_buffer(const logical_tensor &lt) : lt_(lt), bytes_(lt.get_mem_size()) {
    const size_t rounded = (bytes_ + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, rounded > 0 ? rounded : 64);
    if (!p)
        throw error(status::out_of_memory,
                "cannot allocate " + std::to_string(bytes_) + " bytes for tensor "
                        + std::to_string(lt.get_id()));
    // Zeroed so that layout gaps (padded strides) hold defined bytes.
    std::memset(p, 0, rounded > 0 ? rounded : 64);
    data_.reset(p);
}

} // namespace bpg::tools
