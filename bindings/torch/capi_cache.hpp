// The compiled-partition cache behind the C ABI: least recently used entries
// go first once the capacity is reached; one mutex guards the list and map.
// Keys are fixed-size arrays of integers (no allocation to build or hash one),
// so a steady-state lookup allocates nothing.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "bpg/graph.hpp"

namespace bpg_capi {

struct cache_key {
    static constexpr int capacity = 64;
    std::array<int64_t, capacity> words {};
    int count = 0;
    void push(int64_t v) {
        // Keys are built from tensors of rank <= 8: 64 words always suffice.
        if (count < capacity) words[size_t(count++)] = v;
    }
    void push_float(float f) {
        int32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        push(bits);
    }
    bool operator==(const cache_key &o) const {
        return count == o.count && std::memcmp(words.data(), o.words.data(), sizeof(int64_t) * size_t(count)) == 0;
    }
};

struct cache_key_hash {
    size_t operator()(const cache_key &k) const {
        uint64_t h = 1469598103934665603ull; // FNV-1a offset, mixed per word
        for (int i = 0; i < k.count; ++i) {
            h ^= uint64_t(k.words[size_t(i)]);
            h *= 1099511628211ull;
            h ^= h >> 29;
        }
        return size_t(h);
    }
};

struct cached_partition {
    bpg::compiled_partition cp;
    // Tensors bound at execute, in port order, with null handles: never
    // changed after compile, so any thread may copy them.
    std::vector<bpg::tensor> inputs, outputs;
    // Copies the thread holding `busy` binds in place (no allocation); a
    // thread finding it taken binds a copy of the above.
    std::vector<bpg::tensor> bound_inputs, bound_outputs;
    std::atomic_flag busy = ATOMIC_FLAG_INIT;
    const char *backend = "";
    size_t src_bytes = 0, diff_dst_bytes = 0; // interpolate only
};

class partition_cache {
public:
    std::shared_ptr<cached_partition> find(const cache_key &k) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = index_.find(k);
        if (it == index_.end()) {
            ++misses_;
            return nullptr;
        }
        ++hits_;
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
    }
    // A racing insert of the same key keeps the first entry.
    void insert(const cache_key &k, std::shared_ptr<cached_partition> e) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (index_.count(k)) return;
        order_.emplace_front(k, std::move(e));
        index_.emplace(k, order_.begin());
        trim();
    }
    void info(int64_t out[4]) {
        std::lock_guard<std::mutex> lock(mutex_);
        out[0] = hits_;
        out[1] = misses_;
        out[2] = int64_t(order_.size());
        out[3] = int64_t(capacity_);
    }
    void set_capacity(size_t c) {
        std::lock_guard<std::mutex> lock(mutex_);
        capacity_ = c;
        trim();
    }
    void clear() {
        std::lock_guard<std::mutex> lock(mutex_);
        index_.clear();
        order_.clear();
        hits_ = misses_ = 0;
    }

private:
    void trim() {
        while (order_.size() > capacity_) {
            index_.erase(order_.back().first);
            order_.pop_back();
        }
    }
    using entry = std::pair<cache_key, std::shared_ptr<cached_partition>>;
    std::mutex mutex_;
    std::list<entry> order_; // most recently used first
    std::unordered_map<cache_key, std::list<entry>::iterator, cache_key_hash> index_;
    size_t capacity_ = 256;
    int64_t hits_ = 0, misses_ = 0;
};

inline partition_cache &cache() {
    static partition_cache c;
    return c;
}

} // namespace bpg_capi
