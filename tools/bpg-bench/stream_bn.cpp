// The BatchNormTrainingBackprop yardsticks: two passes (reduce, then update)
// for training, one pass for use_global_stats (stream_kernel.hpp).
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include "stream_detail.hpp"
#include "stream_kernel.hpp"

namespace bpg::bench {

namespace {

using namespace detail;

// Multipliers that depend on a reduction's result (so the reduction is
// needed) and stay ordinary numbers (no denormals, no overflow; for 16-bit
// data small enough that the products fit an int after promotion).
template <typename A> A coef(uint64_t s);
template <> float coef<float>(uint64_t s) { return (s & 1) ? 0.75f : 0.5f; }
template <> uint16_t coef<uint16_t>(uint64_t s) { return (s & 1) ? 2 : 1; }

struct sums2 {
    uint64_t s1 = 0, s2 = 0;
};

sums2 add(sums2 x, const sums2 &y) {
    x.s1 += y.s1;
    x.s2 += y.s2;
    return x;
}

// "sum dd" and "sum dd with src" over [r.begin(), r.end()), on raw bits.
template <typename T> sums2 partial_sums(const T *src, const T *dd, const range &r, sums2 acc) {
    uint32_t s1 = 0, s2 = 0;
    for (int64_t i = r.begin(); i < r.end(); ++i) {
        const uint32_t d = raw(dd[i]);
        s1 += d;
        s2 += d ^ raw(src[i]);
    }
    acc.s1 += s1;
    acc.s2 += s2;
    return acc;
}

template <typename T> double two_pass(const T *src, const T *dd, T *ds, int64_t n, bool nt) {
    using A = acc_t<T>;
    const sums2 t = tbb::parallel_reduce(
            range(0, n, grain), sums2 {},
            [&](const range &r, sums2 acc) { return partial_sums(src, dd, r, acc); }, add);
    const A a = coef<A>(t.s1), b = coef<A>(t.s2);
    tbb::parallel_for(range(0, n, grain), [&](const range &r) {
        T buf[tile_elems];
        for (int64_t i0 = r.begin(); i0 < r.end(); i0 += tile_elems) {
            const int64_t len = std::min(tile_elems, r.end() - i0);
            for (int64_t k = 0; k < len; ++k) buf[k] = T(A(dd[i0 + k]) * a + A(src[i0 + k]) * b);
            store_tile(ds + i0, buf, len, nt);
        }
        end_task(nt);
    });
    return double(t.s1 + t.s2) + checksum(ds, n);
}

template <typename T> double one_pass(const T *src, const T *dd, T *ds, int64_t n, bool nt) {
    using A = acc_t<T>;
    const A k = coef<A>(1);
    const sums2 t = tbb::parallel_reduce(
            range(0, n, grain), sums2 {},
            [&](const range &r, sums2 acc) {
                T buf[tile_elems];
                uint32_t s2 = 0;
                for (int64_t i0 = r.begin(); i0 < r.end(); i0 += tile_elems) {
                    const int64_t len = std::min(tile_elems, r.end() - i0);
                    for (int64_t m = 0; m < len; ++m) {
                        buf[m] = T(A(dd[i0 + m]) * k);
                        s2 += raw(dd[i0 + m]) ^ raw(src[i0 + m]);
                    }
                    store_tile(ds + i0, buf, len, nt);
                }
                end_task(nt);
                acc.s2 += s2;
                return acc;
            },
            add);
    return double(t.s2) + checksum(ds, n);
}

} // namespace

double stream_bn_two_pass(data_type dt, const void *src, const void *diff_dst, void *diff_src, int64_t n,
        bool nontemporal) {
    return for_dtype(dt, [&](auto zero) {
        using T = decltype(zero);
        return two_pass(static_cast<const T *>(src), static_cast<const T *>(diff_dst), static_cast<T *>(diff_src),
                n, nontemporal);
    });
}

double stream_bn_one_pass(data_type dt, const void *src, const void *diff_dst, void *diff_src, int64_t n,
        bool nontemporal) {
    return for_dtype(dt, [&](auto zero) {
        using T = decltype(zero);
        return one_pass(static_cast<const T *>(src), static_cast<const T *>(diff_dst), static_cast<T *>(diff_src),
                n, nontemporal);
    });
}

} // namespace bpg::bench
