// The InterpolateBackprop yardstick: diff_dst read once, diff_src written
// once, output j = the sum of a contiguous group of inputs (stream_kernel.hpp).
#include <type_traits>

#include <tbb/parallel_for.h>

#include "stream_detail.hpp"
#include "stream_kernel.hpp"

namespace bpg::bench {

namespace {

using namespace detail;

__extension__ typedef unsigned __int128 u128;

// Sum of p[0..N) as a balanced tree: short dependency chains, and a shape
// the compiler vectorises across outputs.
template <int N, typename A, typename T> A tree_sum(const T *p) {
    if constexpr (N == 1) return A(p[0]);
    else return A(tree_sum<N / 2, A>(p) + tree_sum<N - N / 2, A>(p + N / 2));
}

// Calls f(std::integral_constant<int, v>) for the common small values of v,
// f(std::integral_constant<int, 0>) otherwise (the callee then uses v at run
// time): the hot loops of the suite's ratios (2, 4, 8) get compile-time trip
// counts.
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
template <int Q, typename T> void groups_of_q(const T *in, T *out, int64_t n_out, int64_t q, bool nt) {
    using A = acc_t<T>;
    tbb::parallel_for(range(0, n_out, grain), [&](const range &r) {
        T buf[tile_elems];
        for (int64_t j0 = r.begin(); j0 < r.end(); j0 += tile_elems) {
            const int64_t len = std::min(tile_elems, r.end() - j0);
            const T *src = in + j0 * q;
            for (int64_t k = 0; k < len; ++k) {
                if constexpr (Q > 0) {
                    buf[k] = T(tree_sum<Q, A>(src + k * Q));
                } else {
                    A s = 0;
                    for (int64_t m = 0; m < q; ++m) s += A(src[k * q + m]);
                    buf[k] = T(s);
                }
            }
            store_tile(out + j0, buf, len, nt);
        }
        end_task(nt);
    });
}

// n_out = p * n_in (downsampling's backward): the group of output j is
// nonempty only for j = i*p + p-1, where it is {in[i]}.
template <int P, typename T> void spread_p(const T *in, int64_t n_in, T *out, int64_t p, bool nt) {
    const int64_t step = P > 0 ? P : p;
    if (step > tile_elems) nt = false; // a whole tile per input: plain stores
    const int64_t per_tile = std::max<int64_t>(1, tile_elems / step);
    tbb::parallel_for(range(0, n_in, grain / step + 1), [&](const range &r) {
        T buf[tile_elems];
        for (int64_t i0 = r.begin(); i0 < r.end(); i0 += per_tile) {
            const int64_t i1 = std::min(r.end(), i0 + per_tile);
            if (!nt) {
                for (int64_t i = i0; i < i1; ++i) {
                    T *o = out + i * step;
                    for (int64_t k = 0; k + 1 < step; ++k) o[k] = T(0);
                    o[step - 1] = in[i];
                }
                continue;
            }
            for (int64_t i = i0; i < i1; ++i) {
                T *o = buf + (i - i0) * step;
                for (int64_t k = 0; k + 1 < step; ++k) o[k] = T(0);
                o[step - 1] = in[i];
            }
            store_tile(out + i0 * step, buf, (i1 - i0) * step, true);
        }
        end_task(nt);
    });
}

// n_in < n_out, any ratio: each group holds at most one input, so walk the
// inputs (not the far more numerous outputs). Input i is the group of output
// j(i) = ceil((i+1) * n_out / n_in) - 1; the outputs between two such j get 0.
// Plain stores only (the outputs of an input are a run of varying length).
template <typename T> void spread_any(const T *in, int64_t n_in, T *out, int64_t n_out) {
    const int64_t p = n_out / n_in, step = n_out % n_in;
    const auto ceil_div = [&](u128 t) { return int64_t((t + uint64_t(n_in) - 1) / uint64_t(n_in)); };
    tbb::parallel_for(range(0, n_in, grain / (p + 1) + 1), [&](const range &r) {
        // c = ceil(t / n_in) for t = (i+1) * n_out, with slack = c*n_in - t.
        const u128 t = u128(uint64_t(r.begin()) + 1) * uint64_t(n_out);
        int64_t c = ceil_div(t);
        int64_t slack = int64_t(u128(uint64_t(c)) * uint64_t(n_in) - t);
        int64_t j = r.begin() == 0 ? -1 : ceil_div(u128(uint64_t(r.begin())) * uint64_t(n_out)) - 1;
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

// Any other ratio above 1: output j sums in[floor(j*n_in/n_out),
// floor((j+1)*n_in/n_out)), q or q+1 elements. The start is walked with an
// integer remainder (Bresenham) so the loop has no division.
template <int Q, typename T> void groups_any(const T *in, int64_t n_in, T *out, int64_t n_out, bool nt) {
    using A = acc_t<T>;
    const int64_t q = n_in / n_out, step = n_in % n_out;
    tbb::parallel_for(range(0, n_out, grain), [&](const range &r) {
        const u128 first = u128(uint64_t(r.begin())) * uint64_t(n_in);
        int64_t i = int64_t(first / uint64_t(n_out));
        int64_t rem = int64_t(first % uint64_t(n_out));
        T buf[tile_elems];
        for (int64_t j0 = r.begin(); j0 < r.end(); j0 += tile_elems) {
            const int64_t len = std::min(tile_elems, r.end() - j0);
            for (int64_t k = 0; k < len; ++k) {
                rem += step;
                const bool longer = rem >= n_out;
                rem -= longer ? n_out : 0;
                A s = 0;
                if constexpr (Q > 0) {
                    s = tree_sum<Q, A>(in + i);
                } else {
                    for (int64_t m = 0; m < q; ++m) s += A(in[i + m]);
                }
                if (longer) s += A(in[i + q]);
                buf[k] = T(s);
                i += q + (longer ? 1 : 0);
            }
            store_tile(out + j0, buf, len, nt);
        }
        end_task(nt);
    });
}

template <typename T> double reduce_groups(const T *in, int64_t n_in, T *out, int64_t n_out, bool nt) {
    if (n_in % n_out == 0) {
        const int64_t q = n_in / n_out;
        with_small(q, [&](auto Q) { groups_of_q<decltype(Q)::value>(in, out, n_out, q, nt); });
    } else if (n_out % n_in == 0) {
        const int64_t p = n_out / n_in;
        with_small(p, [&](auto P) { spread_p<decltype(P)::value>(in, n_in, out, p, nt); });
    } else if (n_in < n_out) {
        spread_any(in, n_in, out, n_out);
    } else {
        with_small(n_in / n_out, [&](auto Q) { groups_any<decltype(Q)::value>(in, n_in, out, n_out, nt); });
    }
    return checksum(out, n_out);
}

} // namespace

double stream_reduce(data_type dt, const void *in, int64_t n_in, void *out, int64_t n_out, bool nontemporal) {
    if (n_out == 0) return 0;
    return for_dtype(dt, [&](auto zero) {
        using T = decltype(zero);
        return reduce_groups(static_cast<const T *>(in), n_in, static_cast<T *>(out), n_out, nontemporal);
    });
}

} // namespace bpg::bench
