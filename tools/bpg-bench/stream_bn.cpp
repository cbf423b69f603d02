// The BatchNormTrainingBackprop yardsticks: two passes (reduce, then update)
// for training, with a ReLUBackprop fused in front or not, and one pass for
// use_global_stats (stream_kernel.hpp).
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

// A third stream (a ReLU's input, its decisions) is folded into diff_dst's
// bits when there is one.
template <bool Third, typename T> uint32_t dd_bits(const T *dd, const T *third, int64_t i) {
    if constexpr (Third) return raw(dd[i]) ^ raw(third[i]);
    else return raw(dd[i]);
}

// "sum dd" and "sum dd with src" over [r.begin(), r.end()), on raw bits.
template <bool Third, typename T>
sums2 partial_sums(const T *src, const T *dd, const T *third, const range &r, sums2 acc) {
    uint32_t s1 = 0, s2 = 0;
    for (int64_t i = r.begin(); i < r.end(); ++i) {
        const uint32_t d = dd_bits<Third>(dd, third, i);
        s1 += d;
        s2 += d ^ raw(src[i]);
    }
    acc.s1 += s1;
    acc.s2 += s2;
    return acc;
}

// Pass 1 reads src, dd (and third); pass 2 reads src and dd again and writes
// diff_src = a*dd + b*src.
template <bool Third, typename T> double two_pass(const T *src, const T *dd, const T *third, T *ds, int64_t n, bool nt) {
    using A = acc_t<T>;
    const sums2 t = tbb::parallel_reduce(
            range(0, n, grain), sums2 {},
            [&](const range &r, sums2 acc) { return partial_sums<Third>(src, dd, third, r, acc); }, add);
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

// One pass: reads src, dd (and third), reduces them and writes diff_src = k*dd.
template <bool Third, typename T> double one_pass(const T *src, const T *dd, const T *third, T *ds, int64_t n, bool nt) {
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
                        s2 += dd_bits<Third>(dd, third, i0 + m) ^ raw(src[i0 + m]);
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

// Runs kernel<Third> on the data type's element type.
template <template <bool, typename> class Kernel>
double dispatch(data_type dt, const void *src, const void *dd, const void *third, void *ds, int64_t n, bool nt) {
    return for_dtype(dt, [&](auto zero) {
        using T = decltype(zero);
        const T *s = static_cast<const T *>(src), *d = static_cast<const T *>(dd), *t = static_cast<const T *>(third);
        T *o = static_cast<T *>(ds);
        return third ? Kernel<true, T>::run(s, d, t, o, n, nt) : Kernel<false, T>::run(s, d, t, o, n, nt);
    });
}
template <bool Third, typename T> struct two_pass_kernel {
    static double run(const T *s, const T *d, const T *t, T *o, int64_t n, bool nt) { return two_pass<Third>(s, d, t, o, n, nt); }
};
template <bool Third, typename T> struct one_pass_kernel {
    static double run(const T *s, const T *d, const T *t, T *o, int64_t n, bool nt) { return one_pass<Third>(s, d, t, o, n, nt); }
};

} // namespace

double stream_bn_two_pass(data_type dt, const void *src, const void *diff_dst, const void *third, void *diff_src,
        int64_t n, bool nontemporal) {
    return dispatch<two_pass_kernel>(dt, src, diff_dst, third, diff_src, n, nontemporal);
}

double stream_bn_one_pass(data_type dt, const void *src, const void *diff_dst, const void *third, void *diff_src,
        int64_t n, bool nontemporal) {
    return dispatch<one_pass_kernel>(dt, src, diff_dst, third, diff_src, n, nontemporal);
}

} // namespace bpg::bench
