// The buffers of one execute, by tensor id. A partition has a handful of
// ports, so a flat list searched in order is enough, and it lives inside the
// object (core::inline_list): binding a small partition allocates nothing.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/inline_list.hpp"

namespace bpg::backends {

class buffer_map {
public:
    buffer_map() = default;
    buffer_map(std::initializer_list<std::pair<size_t, void *>> entries) {
        for (const auto &e : entries) (*this)[e.first] = e.second;
    }

    // The buffer of tensor `id`, which must be bound (std::out_of_range if not).
    void *at(size_t id) const {
        for (size_t i = 0; i < entries_.size(); ++i)
            if (entries_[i].first == id) return entries_[i].second;
        throw std::out_of_range("buffer_map: tensor " + std::to_string(id) + " is not bound");
    }
    // The slot of `id`, added (null) when absent.
    void *&operator[](size_t id) {
        for (size_t i = 0; i < entries_.size(); ++i)
            if (entries_[i].first == id) return entries_[i].second;
        entries_.push_back({id, nullptr});
        return entries_.back().second;
    }
    size_t size() const { return entries_.size(); }

private:
    core::inline_list<std::pair<size_t, void *>, 16> entries_;
};

} // namespace bpg::backends
