// A list that keeps its first N items inside itself and only the rest on the
// heap: the per-execute lists of a partition (its ports, their buffers) are
// short, and an execute of a small partition should allocate nothing.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace bpg::core {

template <typename T, size_t N> class inline_list {
public:
    void push_back(const T &v) {
        if (size_ < N) local_[size_] = v;
        else overflow_.push_back(v);
        ++size_;
    }
    T &back() { return (*this)[size_ - 1]; }
    T &operator[](size_t i) { return i < N ? local_[i] : overflow_[i - N]; }
    const T &operator[](size_t i) const { return i < N ? local_[i] : overflow_[i - N]; }
    size_t size() const { return size_; }

private:
    std::array<T, N> local_ {};
    std::vector<T> overflow_; // items N and on
    size_t size_ = 0;
};

} // namespace bpg::core
