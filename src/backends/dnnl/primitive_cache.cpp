#include "backends/dnnl/primitive_cache.hpp"

#include "backends/dnnl/openmp_team.hpp"

namespace bpg::backends::dnnl_impl {

void primitive_cache::touch(slot &s, const std::string &key) {
    lru_.erase(s.lru);
    lru_.push_front(key);
    s.lru = lru_.begin();
}

void primitive_cache::evict() {
    while (map_.size() > capacity_ && !lru_.empty()) {
        map_.erase(lru_.back());
        lru_.pop_back();
    }
}

primitive_cache::entry primitive_cache::get_or_create(const std::string &key, const factory &make) {
    std::promise<entry> promise;
    uint64_t my_id = 0;
    {
        std::unique_lock<std::mutex> lock(mu_);
        auto it = map_.find(key);
        if (it != map_.end()) {
            ++stats_.hits;
            touch(it->second, key);
            std::shared_future<entry> f = it->second.value;
            lock.unlock(); // the creator may still be working: wait unlocked
            return f.get();
        }
        ++stats_.misses;
        my_id = ++next_id_;
        lru_.push_front(key);
        map_[key] = slot {promise.get_future().share(), lru_.begin(), my_id};
        evict();
    }
    try {
        entry e = std::make_shared<const cached_primitive>(make());
        promise.set_value(e);
        return e;
    } catch (...) {
        // Forget the failed key (if it is still our slot) so that a later
        // call retries; waiters and this caller see the error.
        {
            std::lock_guard<std::mutex> lock(mu_);
            auto it = map_.find(key);
            if (it != map_.end() && it->second.id == my_id) {
                lru_.erase(it->second.lru);
                map_.erase(it);
            }
        }
        promise.set_exception(std::current_exception());
        throw;
    }
}

cache_stats primitive_cache::stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    cache_stats s = stats_;
    s.entries = map_.size();
    return s;
}

void primitive_cache::clear() {
    std::lock_guard<std::mutex> lock(mu_);
    map_.clear();
    lru_.clear();
    stats_ = {};
}

primitive_cache &global_primitive_cache() {
    static primitive_cache cache(256);
    return cache;
}

primitive_cache::entry team_primitive(const std::string &key, const primitive_cache::factory &make) {
    return global_primitive_cache().get_or_create(key + " threads=" + std::to_string(openmp_team_size()), [&] {
        const openmp_team_for_call team;
        return make();
    });
}

} // namespace bpg::backends::dnnl_impl
