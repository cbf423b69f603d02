#include "stream_kernel.hpp"

#include <cstring>
#include <type_traits>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include "bpg/status.hpp"

namespace bpg::bench {

namespace {

__extension__ typedef unsigned __int128 u128;

// Elements per task: large enough that scheduling costs nothing next to the
// memory traffic, small enough to balance two threads on 2-D shapes.
constexpr int64_t grain = int64_t(1) << 16;
using range = tbb::blocked_range<int64_t>;

// Arithmetic type of the elementwise work: float for f32; for 16-bit data the
// raw values themselves (sums wrap modulo 2^16, as a uint16 store would).
template <typename T> struct acc_of { using type = float; };
template <> struct acc_of<uint16_t> { using type = uint16_t; };
template <typename T> using acc_t = typename acc_of<T>::type;

// Reductions work on raw bit patterns with integer add and xor: integer
// arithmetic is associative, so the compiler vectorises the loop as it
// stands, whereas a float sum in a fixed order is one long latency chain
// that would make the yardstick slower than the memory.
inline uint32_t raw(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline uint32_t raw(uint16_t h) { return h; }

// Multipliers that depend on a reduction's result (so the reduction is
// needed) and stay ordinary numbers (no denormals, no overflow; for 16-bit
// data small enough that the products fit an int after promotion).
template <typename A> A coef(uint64_t s);
template <> float coef<float>(uint64_t s) { return (s & 1) ? 0.75f : 0.5f; }
template <> uint16_t coef<uint16_t>(uint64_t s) { return (s & 1) ? 2 : 1; }

template <typename T> double checksum(const T *p, int64_t n) {
    return n == 0 ? 0.0 : double(p[0]) + double(p[n / 2]) + double(p[n - 1]);
}

// Sum of p[0..N) as a balanced tree: short dependency chains, and a shape
// the compiler vectorises across outputs.
template <int N, typename A, typename T> A tree_sum(const T *p) {
    if constexpr (N == 1) return A(p[0]);
    else return A(tree_sum<N / 2, A>(p) + tree_sum<N - N / 2, A>(p + N / 2));
}

// Calls f(std::integral_constant<int, v>) for the common small values of v,
// f(std::integral_constant<int, 0>) otherwise (the caller then uses v at run
// time): the hot loops of the suite's ratios (2, 4, 8) get compile-time
// trip counts.
template <typename F> void with_small(int64_t v, F &&f) {
    switch (v) {
        case 1: f(std::integral_constant<int, 1> {}); break;
        case 2: f(std::integral_constant<int, 2> {}); break;
        case 4: f(std::integral_constant<int, 4> {}); break;
        case 8: f(std::integral_constant<int, 8> {}); break;
        default: f(std::integral_constant<int, 0> {}); break;
    }
}

// n_in = q * n_out: output j sums in[j*q, (j+1)*q).
template <int Q, typename T> void groups_of_q(const T *in, T *out, int64_t n_out, int64_t q) {
    using A = acc_t<T>;
    tbb::parallel_for(range(0, n_out, grain), [&](const range &r) {
        for (int64_t j = r.begin(); j < r.end(); ++j) {
            if constexpr (Q > 0) {
                out[j] = T(tree_sum<Q, A>(in + j * Q));
            } else {
                A s = 0;
                for (int64_t k = 0; k < q; ++k) s += A(in[j * q + k]);
                out[j] = T(s);
            }
        }
    });
}

// n_out = p * n_in (downsampling's backward): the group of output j is
// nonempty only for j = i*p + p-1, where it is {in[i]}.
template <int P, typename T> void spread_p(const T *in, int64_t n_in, T *out, int64_t p) {
    const int64_t step = P > 0 ? P : p;
    tbb::parallel_for(range(0, n_in, grain / step + 1), [&](const range &r) {
        for (int64_t i = r.begin(); i < r.end(); ++i) {
            T *o = out + i * step;
            for (int64_t k = 0; k + 1 < step; ++k) o[k] = T(0);
            o[step - 1] = in[i];
        }
    });
}

// n_in < n_out, any ratio: each group holds at most one input, so walk the
// inputs (not the far more numerous outputs). Input i is the group of output
// j(i) = ceil((i+1) * n_out / n_in) - 1; the outputs between two such j get 0.
template <typename T> void spread_any(const T *in, int64_t n_in, T *out, int64_t n_out) {
    const int64_t p = n_out / n_in, step = n_out % n_in;
    tbb::parallel_for(range(0, n_in, grain / (p + 1) + 1), [&](const range &r) {
        // c = ceil(t / n_in) for t = (i+1) * n_out, with slack = c*n_in - t.
        const u128 t = u128(uint64_t(r.begin()) + 1) * uint64_t(n_out);
        int64_t c = int64_t((t + uint64_t(n_in) - 1) / uint64_t(n_in));
        int64_t slack = int64_t(u128(uint64_t(c)) * uint64_t(n_in) - t);
        int64_t j = r.begin() == 0 ? -1 : int64_t((u128(uint64_t(r.begin())) * uint64_t(n_out) + uint64_t(n_in) - 1) / uint64_t(n_in)) - 1;
        for (int64_t i = r.begin(); i < r.end(); ++i) {
            const int64_t next = c - 1;
            for (int64_t k = j + 1; k < next; ++k) out[k] = T(0);
            out[next] = in[i];
            j = next;
            slack -= step;
            c += p;
            if (slack < 0) {
                slack += n_in;
                ++c;
            }
        }
    });
}

// Any other ratio: output j sums in[floor(j*n_in/n_out), floor((j+1)*n_in/n_out)),
// q or q+1 elements. The first is walked with an integer remainder
// (Bresenham) so the loop has no division.
template <int Q, typename T> void groups_any(const T *in, int64_t n_in, T *out, int64_t n_out) {
    using A = acc_t<T>;
    const int64_t q = n_in / n_out, step = n_in % n_out;
    tbb::parallel_for(range(0, n_out, grain), [&](const range &r) {
        const u128 first = u128(uint64_t(r.begin())) * uint64_t(n_in);
        int64_t i = int64_t(first / uint64_t(n_out));
        int64_t rem = int64_t(first % uint64_t(n_out));
        for (int64_t j = r.begin(); j < r.end(); ++j) {
            rem += step;
            const bool longer = rem >= n_out;
            rem -= longer ? n_out : 0;
            A s = 0;
            if constexpr (Q > 0) {
                s = tree_sum<Q, A>(in + i);
            } else {
                for (int64_t k = 0; k < q; ++k) s += A(in[i + k]);
            }
            if (longer) s += A(in[i + q]);
            out[j] = T(s);
            i += q + (longer ? 1 : 0);
        }
    });
}

template <typename T> double reduce_groups(const T *in, int64_t n_in, T *out, int64_t n_out) {
    if (n_in % n_out == 0) {
        const int64_t q = n_in / n_out;
        with_small(q, [&](auto Q) { groups_of_q<decltype(Q)::value>(in, out, n_out, q); });
    } else if (n_in > 0 && n_out % n_in == 0) {
        const int64_t p = n_out / n_in;
        with_small(p, [&](auto P) { spread_p<decltype(P)::value>(in, n_in, out, p); });
    } else if (n_in < n_out) {
        spread_any(in, n_in, out, n_out);
    } else {
        with_small(n_in / n_out, [&](auto Q) { groups_any<decltype(Q)::value>(in, n_in, out, n_out); });
    }
    return checksum(out, n_out);
}

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

template <typename T> double bn_two_pass(const T *src, const T *dd, T *ds, int64_t n) {
    using A = acc_t<T>;
    const sums2 t = tbb::parallel_reduce(
            range(0, n, grain), sums2 {},
            [&](const range &r, sums2 acc) { return partial_sums(src, dd, r, acc); }, add);
    const A a = coef<A>(t.s1), b = coef<A>(t.s2);
    tbb::parallel_for(range(0, n, grain), [&](const range &r) {
        for (int64_t i = r.begin(); i < r.end(); ++i) ds[i] = T(A(dd[i]) * a + A(src[i]) * b);
    });
    return double(t.s1 + t.s2) + checksum(ds, n);
}

template <typename T> double bn_one_pass(const T *src, const T *dd, T *ds, int64_t n) {
    using A = acc_t<T>;
    const A k = coef<A>(1);
    const sums2 t = tbb::parallel_reduce(
            range(0, n, grain), sums2 {},
            [&](const range &r, sums2 acc) {
                uint32_t s2 = 0;
                for (int64_t i = r.begin(); i < r.end(); ++i) {
                    ds[i] = T(A(dd[i]) * k);
                    s2 += raw(dd[i]) ^ raw(src[i]);
                }
                acc.s2 += s2;
                return acc;
            },
            add);
    return double(t.s2) + checksum(ds, n);
}

[[noreturn]] void bad_dtype(data_type dt) {
    throw error(status::invalid_argument, std::string("streaming kernel: no data type ") + to_string(dt));
}

} // namespace

double stream_reduce(data_type dt, const void *in, int64_t n_in, void *out, int64_t n_out) {
    if (n_out == 0) return 0;
    if (dt == data_type::f32)
        return reduce_groups(static_cast<const float *>(in), n_in, static_cast<float *>(out), n_out);
    if (dt == data_type::bf16 || dt == data_type::f16)
        return reduce_groups(static_cast<const uint16_t *>(in), n_in, static_cast<uint16_t *>(out), n_out);
    bad_dtype(dt);
}

double stream_bn_two_pass(data_type dt, const void *src, const void *diff_dst, void *diff_src, int64_t n) {
    if (dt == data_type::f32)
        return bn_two_pass(static_cast<const float *>(src), static_cast<const float *>(diff_dst),
                static_cast<float *>(diff_src), n);
    if (dt == data_type::bf16 || dt == data_type::f16)
        return bn_two_pass(static_cast<const uint16_t *>(src), static_cast<const uint16_t *>(diff_dst),
                static_cast<uint16_t *>(diff_src), n);
    bad_dtype(dt);
}

double stream_bn_one_pass(data_type dt, const void *src, const void *diff_dst, void *diff_src, int64_t n) {
    if (dt == data_type::f32)
        return bn_one_pass(static_cast<const float *>(src), static_cast<const float *>(diff_dst),
                static_cast<float *>(diff_src), n);
    if (dt == data_type::bf16 || dt == data_type::f16)
        return bn_one_pass(static_cast<const uint16_t *>(src), static_cast<const uint16_t *>(diff_dst),
                static_cast<uint16_t *>(diff_src), n);
    bad_dtype(dt);
}

} // namespace bpg::bench
