// The backend's own primitive cache: full problem key -> the created oneDNN
// primitive and what the backend decided about it, so that compiling the same
// problem again (and the why_unsupported that dispatch asks first) is a map
// lookup, not a primitive-descriptor search and JIT code generation.
//
// oneDNN keeps its own global cache (dnnl::get_primitive_cache_capacity(),
// 1024 by default) keyed by the primitive descriptor, but reaching it still
// costs a descriptor creation and implementation search per compile. This one
// sits in front of it.
//
// Thread safety: any number of threads may call get_or_create at once. The
// first caller of a key creates the entry outside the lock; concurrent callers
// of the same key wait for that one creation (std::shared_future), so a
// primitive is never created twice for one key. A creation that throws is not
// cached; its callers see the exception.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

namespace bpg::backends::dnnl_impl {

// One cached problem. `refusal` is non-empty when the backend will not run
// it (then `primitive` may be empty); `impl` is oneDNN's implementation name.
struct cached_primitive {
    std::string refusal;
    std::string impl;
    dnnl::primitive primitive;
    dnnl::memory::desc scratchpad;
};

struct cache_stats {
    uint64_t hits = 0;
    uint64_t misses = 0; // creations started
    size_t entries = 0;
};

class primitive_cache {
public:
    using entry = std::shared_ptr<const cached_primitive>;
    using factory = std::function<cached_primitive()>;

    explicit primitive_cache(size_t capacity) : capacity_(capacity) {}

    // The entry of key, created by make() on a miss. Least recently used
    // entries beyond the capacity are dropped (compiled kernels keep theirs).
    entry get_or_create(const std::string &key, const factory &make);

    cache_stats stats() const;
    void clear(); // drops entries and zeroes the counters (for tests)

private:
    struct slot {
        std::shared_future<entry> value;
        std::list<std::string>::iterator lru; // position in lru_
        uint64_t id = 0;                      // which creation filled it
    };
    void touch(slot &s, const std::string &key); // caller holds mu_
    void evict();                                 // caller holds mu_

    mutable std::mutex mu_;
    size_t capacity_;
    std::unordered_map<std::string, slot> map_;
    std::list<std::string> lru_; // front = most recently used
    cache_stats stats_;
    uint64_t next_id_ = 0;
};

// The backend's single cache instance.
primitive_cache &global_primitive_cache();

// The global cache's entry of key for the current run's OpenMP team size
// (openmp_team.hpp): created with the team set as execute will set it (oneDNN
// sizes some primitives for it), cached per team size.
primitive_cache::entry team_primitive(const std::string &key, const primitive_cache::factory &make);

} // namespace bpg::backends::dnnl_impl
