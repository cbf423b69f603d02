// A DirectML tensor for tests: owns its Sizes/Strides arrays, a desc pointing
// at them (TotalTensorSizeInBytes from calc_buffer_tensor_size) and a buffer
// of 16-bit or 32-bit elements. Values are set and read as floats in the
// tensor's logical row-major order, whatever its strides.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "bpg/dml.hpp"
#include "kernels/dtype_convert.hpp"

namespace bpg::test {

struct dml_tensor {
    std::vector<uint32_t> sizes, strides; // strides empty: packed, desc.Strides null
    dml::buffer_tensor_desc desc;
    std::vector<uint32_t> storage; // 4-byte words: DirectML buffers are DWORD-sized

    dml_tensor(dml::tensor_data_type t, std::vector<uint32_t> s, std::vector<uint32_t> st = {})
        : sizes(std::move(s)), strides(std::move(st)) {
        desc.DataType = t;
        desc.DimensionCount = uint32_t(sizes.size());
        desc.Sizes = sizes.data();
        desc.Strides = strides.empty() ? nullptr : strides.data();
        desc.TotalTensorSizeInBytes = dml::calc_buffer_tensor_size(t, desc.DimensionCount, desc.Sizes, desc.Strides);
        storage.assign(size_t(desc.TotalTensorSizeInBytes / 4), 0u);
    }
    // Copies point their desc at their own arrays.
    dml_tensor(const dml_tensor &o) : sizes(o.sizes), strides(o.strides), desc(o.desc), storage(o.storage) { rebind(); }
    dml_tensor &operator=(const dml_tensor &o) {
        sizes = o.sizes;
        strides = o.strides;
        desc = o.desc;
        storage = o.storage;
        rebind();
        return *this;
    }
    void rebind() {
        desc.Sizes = sizes.data();
        desc.Strides = strides.empty() ? nullptr : strides.data();
    }

    bool half() const { return desc.DataType == dml::tensor_data_type::float16; }
    void *data() { return storage.data(); }
    size_t count() const {
        size_t n = 1;
        for (uint32_t s : sizes) n *= s;
        return n;
    }
    // Element offset of the i-th element in row-major order.
    size_t offset(size_t i) const {
        size_t off = 0, packed = 1;
        for (size_t a = sizes.size(); a-- > 0;) {
            const size_t idx = i % sizes[a];
            i /= sizes[a];
            off += idx * (strides.empty() ? packed : strides[a]);
            packed *= sizes[a];
        }
        return off;
    }
    void set(size_t i, float v) {
        if (half()) {
            const uint16_t h = kernels::f32_to_f16(v);
            std::memcpy(reinterpret_cast<char *>(storage.data()) + 2 * offset(i), &h, 2);
        } else {
            std::memcpy(reinterpret_cast<char *>(storage.data()) + 4 * offset(i), &v, 4);
        }
    }
    float get(size_t i) const {
        if (half()) {
            uint16_t h;
            std::memcpy(&h, reinterpret_cast<const char *>(storage.data()) + 2 * offset(i), 2);
            return kernels::f16_to_f32(h);
        }
        float v;
        std::memcpy(&v, reinterpret_cast<const char *>(storage.data()) + 4 * offset(i), 4);
        return v;
    }
    std::vector<float> values() const {
        std::vector<float> v(count());
        for (size_t i = 0; i < v.size(); ++i) v[i] = get(i);
        return v;
    }
    void fill(std::vector<float> v) {
        for (size_t i = 0; i < v.size(); ++i) set(i, v[i]);
    }
    void fill_random(uint32_t seed, float lo, float hi) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> d(lo, hi);
        for (size_t i = 0; i < count(); ++i) set(i, d(rng));
    }
};

} // namespace bpg::test
