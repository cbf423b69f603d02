// A 64-byte aligned host buffer holding one tensor in its logical tensor's
// strided layout.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>

#include "bpg/tensor.hpp"

namespace bpg::tools {

class host_buffer {
public:
    host_buffer() = default;
    explicit host_buffer(const logical_tensor &lt);
    const logical_tensor &lt() const { return lt_; }
    void *data() const { return data_.get(); }
    size_t bytes() const { return bytes_; }

private:
    struct free_deleter { void operator()(void *p) const { std::free(p); } };
    logical_tensor lt_;
    std::unique_ptr<void, free_deleter> data_;
    size_t bytes_ = 0;
};

} // namespace bpg::tools
