// The fused channels-last run kernel of run_sum_gather.hpp as templates over
// its source rows and diff_src type, shared by the entry of each
// (run_sum_gather.cpp: f32; run_sum_gather_bf16.cpp, _f32_to_bf16.cpp and
// _f16.cpp: 16-bit): a few instantiations a translation unit, so that a
// build spreads them over its cores. Include only from those files.
#pragma once

#include <algorithm>
#include <type_traits>

#include "backends/tbb/run_sum_gather.hpp"
#include "backends/tbb/tap_fold_simd.hpp"

namespace bpg::tbb_backend::run_sum_kernel {

constexpr int64_t chunk_floats = 64; // channels per walk: four vectors of each of four columns in registers

template <bool NT> __attribute__((target("avx512f"), always_inline)) inline void store(float *p, __m512 v) {
    if (NT) _mm512_stream_ps(p, v);
    else _mm512_storeu_ps(p, v);
}
// 16-bit diff_src: narrowed in the register (never streamed: the plan keeps
// 16-bit stores cached).
template <bool NT, typename D> __attribute__((target("avx512f"), always_inline)) inline void store(D *p, __m512 v) {
    static_assert(!NT, "16-bit runs are stored cached");
    convert16::store16(p, v);
}

// The rows of an input of a that the previous input did not read (those
// stream from memory; the others are in cache): prefetched `ahead` bytes
// past the columns being summed, into L2.
template <typename S> struct fresh_rows {
    const S *row[4];
    int n = 0;
    int64_t ahead = 0; // bytes
};

// What one chunk of channels [c, c + 16 V) of one input of a needs: its
// column sums (Rows: a tap_fold source over a's rows; column x of them at
// x * run), the rows to prefetch and where diff_src goes.
template <typename Rows, typename S, typename D> struct columns {
    const Rows &rows;
    const fresh_rows<S> &fresh;
    int64_t run, c;
    D *dst;
    int64_t dst_stride;
    __attribute__((target("avx512f"), always_inline)) inline __m512 at(int64_t x, int v) const {
        return rows.full(x * run + c + 16 * v);
    }
    template <int V> __attribute__((target("avx512f"), always_inline)) inline void prefetch(int64_t x) const {
        if (fresh.ahead <= 0) return;
        for (int r = 0; r < fresh.n; ++r)
            for (int v = 0; v < V; ++v) prefetch_l2_ahead(fresh.row[r] + x * run + c + 16 * v, fresh.ahead);
    }
};

// The prefetch of the fresh rows, with two of them (2x linear or nearest
// axis a) from addresses kept in registers: the general loop of
// columns::prefetch rebuilt each line's address from memory (the stores
// may alias it), about 50 instructions per two columns.
struct fresh_two {
    bool two;
    const char *f0, *f1; // the two rows at channel c, plus `ahead` bytes
};

template <typename Rows, typename S, typename D>
__attribute__((always_inline)) inline fresh_two fresh_two_of(const columns<Rows, S, D> &cs) {
    const bool two = cs.fresh.ahead > 0 && cs.fresh.n == 2;
    if (!two) return {false, nullptr, nullptr};
    return {true, reinterpret_cast<const char *>(cs.fresh.row[0] + cs.c) + cs.fresh.ahead,
            reinterpret_cast<const char *>(cs.fresh.row[1] + cs.c) + cs.fresh.ahead};
}

// Column x (V vectors) of the fresh rows, `ahead` bytes on.
template <int V, typename Rows, typename S, typename D>
__attribute__((target("avx512f"), always_inline)) inline void prefetch_column(const columns<Rows, S, D> &cs,
        const fresh_two &f, int64_t x) {
    if (!f.two) return cs.template prefetch<V>(x);
    const int64_t at = x * cs.run * int64_t(sizeof(S)), vec = 16 * int64_t(sizeof(S));
    for (int v = 0; v < V; ++v) {
        _mm_prefetch(f.f0 + at + vec * v, _MM_HINT_T1);
        _mm_prefetch(f.f1 + at + vec * v, _MM_HINT_T1);
    }
}

// A grouped_axis's arrays as plain pointers, for a copy in the chunk's own
// locals: read through the vectors (or a reference to anything), each was
// loaded again after every store of diff_src, as vector stores may alias.
struct axis_view {
    const int64_t *begin, *output;
    const float *weight;
    const uint32_t *starts;
    const uint8_t *ones, *sym4;
    int64_t inputs;
    float sym4_wa, sym4_wb;
    explicit axis_view(const grouped_axis &b)
        : begin(b.begin.data()), output(b.output.data()), weight(b.weight.data()), starts(b.starts.data()),
          ones(b.ones.data()), sym4(b.sym4.data()), inputs(int64_t(b.begin.size()) - 1), sym4_wa(b.sym4_wa),
          sym4_wb(b.sym4_wb) {}
};

// Inputs [j0, j1) of b, every one sym4: columns 2j - 1 .. 2j + 2 in registers,
// two new ones per input (the fold of tap_columns.cpp's walk, in the same
// order).
template <int V, bool NT, typename Rows, typename S, typename D>
__attribute__((target("avx512f"), always_inline)) inline void walk(const columns<Rows, S, D> &cs, const fresh_two &f,
        const axis_view &b, int64_t j0, int64_t j1) {
    const __m512 wa = _mm512_set1_ps(b.sym4_wa), wb = _mm512_set1_ps(b.sym4_wb);
    __m512 t0[V], t1[V], t2[V], t3[V];
    for (int v = 0; v < V; ++v) {
        t0[v] = cs.at(2 * j0 - 1, v);
        t1[v] = cs.at(2 * j0, v);
        t2[v] = cs.at(2 * j0 + 1, v);
        t3[v] = cs.at(2 * j0 + 2, v);
    }
    for (int64_t j = j0; j < j1; ++j) {
        prefetch_column<V>(cs, f, 2 * j + 3);
        prefetch_column<V>(cs, f, 2 * j + 4);
        D *o = cs.dst + j * cs.dst_stride + cs.c;
        for (int v = 0; v < V; ++v)
            store<NT>(o + 16 * v, _mm512_add_ps(_mm512_mul_ps(wa, _mm512_add_ps(t0[v], t3[v])),
                                          _mm512_mul_ps(wb, _mm512_add_ps(t1[v], t2[v]))));
        if (j + 1 == j1) break;
        for (int v = 0; v < V; ++v) {
            t0[v] = t2[v];
            t1[v] = t3[v];
            t2[v] = cs.at(2 * j + 3, v);
            t3[v] = cs.at(2 * j + 4, v);
        }
    }
}

// Input j of b has one to four taps, on columns [x0, x1) at most eight wide
// (in summation order, not necessarily ascending).
inline bool near_columns(const axis_view &b, int64_t j, int64_t &x0, int64_t &x1) {
    const int64_t t0 = b.begin[j], k = b.begin[j + 1] - t0;
    if (k < 1 || k > 4) return false;
    x0 = x1 = b.output[t0];
    for (int64_t t = 1; t < k; ++t) {
        x0 = std::min(x0, b.output[t0 + t]);
        x1 = std::max(x1, b.output[t0 + t]);
    }
    return ++x1 - x0 <= 8;
}

// Whether input j (columns [x0, x1)) takes its columns from the ring: it
// shares one with the ring's [lo, hi) or with input j + 1. Not for inputs
// sharing none (2x nearest): the ring's stores would only add work.
inline bool ring_takes(const axis_view &b, int64_t j, int64_t x0, int64_t x1, int64_t lo, int64_t hi) {
    if (x0 >= lo && x0 < hi) return true;
    int64_t n0 = 0, n1 = 0;
    return j + 1 < b.inputs && !b.sym4[j + 1] && near_columns(b, j + 1, n0, n1) && n0 < x1;
}

// The columns inputs of other forms read, each summed once: consecutive
// inputs share columns (align_corners, other scales, the gradient of
// downsampling), and an input summing its own copy of each cost as much as
// the two levels apart. Columns [lo, hi), column x in slot x % 8.
template <int V> struct column_ring {
    __m512 col[8][V];
    int64_t lo = 0, hi = 0;
};

// Input j's taps are columns [x0, x1) (near_columns), which the ring holds
// after this; the new ones are summed (and prefetched ahead).
template <int V, typename Rows, typename S, typename D>
__attribute__((target("avx512f"), always_inline)) inline bool ring_columns(const columns<Rows, S, D> &cs,
        const fresh_two &f, const axis_view &b, int64_t j, column_ring<V> &ring) {
    int64_t x0 = 0, x1 = 0;
    if (!near_columns(b, j, x0, x1) || !ring_takes(b, j, x0, x1, ring.lo, ring.hi)) return false;
    if (x0 < ring.lo || x0 > ring.hi) ring.lo = ring.hi = x0;
    for (; ring.hi < x1; ++ring.hi) {
        prefetch_column<V>(cs, f, ring.hi);
        __m512 *slot = ring.col[ring.hi & 7];
        for (int v = 0; v < V; ++v) slot[v] = cs.at(ring.hi, v);
    }
    ring.lo = std::max(ring.lo, ring.hi - 8);
    return true;
}

template <int V, typename Rows, typename S, typename D>
__attribute__((target("avx512f"), always_inline)) inline __m512 tap_column(const columns<Rows, S, D> &cs,
        const column_ring<V> &ring, bool ringed, int64_t x, int v) {
    return ringed ? ring.col[x & 7][v] : cs.at(x, v);
}

// Input j of b of another form: the fold of sum_taps over the columns its
// taps read, from the ring where they lie within eight columns and are
// shared (ring_takes), else each summed in registers.
template <int V, bool NT, typename Rows, typename S, typename D>
__attribute__((target("avx512f"), always_inline)) inline void other_input(const columns<Rows, S, D> &cs,
        const fresh_two &f, const axis_view &b, int64_t j, column_ring<V> &ring) {
    const int64_t t0 = b.begin[j], k = b.begin[j + 1] - t0;
    const uint32_t starts = b.starts[j];
    const bool ones = b.ones[j] != 0;
    D *o = cs.dst + j * cs.dst_stride + cs.c;
    const bool ringed = ring_columns<V>(cs, f, b, j, ring);
    if (!ringed)
        for (int64_t t = 0; t < k; ++t) prefetch_column<V>(cs, f, b.output[t0 + t]);
    for (int v = 0; v < V; ++v) {
        __m512 acc = _mm512_setzero_ps(), s = k > 0 ? tap_column(cs, ring, ringed, b.output[t0], v) : acc;
        bool first = true;
        for (int64_t t = 1; t <= k; ++t) {
            if (t == k || (starts >> t & 1u)) { // the group ending at t - 1 is complete
                const __m512 term = ones ? s : _mm512_mul_ps(_mm512_set1_ps(b.weight[t0 + t - 1]), s);
                acc = first ? term : _mm512_add_ps(acc, term);
                first = false;
                if (t < k) s = tap_column(cs, ring, ringed, b.output[t0 + t], v);
            } else {
                s = _mm512_add_ps(s, tap_column(cs, ring, ringed, b.output[t0 + t], v));
            }
        }
        store<NT>(o + 16 * v, acc);
    }
}

// Input j of b: four taps of their own weights on columns x0 .. x0 + 3, in
// that order (align_corners and other scales near 2x).
inline bool weighted4_at(const axis_view &b, int64_t j, int64_t &x0) {
    const int64_t t0 = b.begin[j];
    if (b.begin[j + 1] - t0 != 4 || b.sym4[j] || b.ones[j] || b.starts[j] != 0xfu) return false;
    x0 = b.output[t0];
    return b.output[t0 + 1] == x0 + 1 && b.output[t0 + 2] == x0 + 2 && b.output[t0 + 3] == x0 + 3;
}

// The end of the inputs from j on that weighted_walk takes (j: none): each
// weighted4_at, its columns two on from the previous input's, at least two
// of them; x0: input j's first column.
inline int64_t weighted_walk_end(const axis_view &b, int64_t j, int64_t &x0) {
    int64_t e = j, x = 0, prev = 0;
    for (; e < b.inputs && weighted4_at(b, e, x) && (e == j || x == prev + 2); ++e) {
        if (e == j) x0 = x;
        prev = x;
    }
    return e - j >= 2 ? e : j;
}

// Inputs [j0, j1) of weighted_walk_end, input j0 on columns x0 .. x0 + 3: the
// four columns in registers, two new ones per input, as walk slides sym4's;
// each input's taps folded as other_input folds them (w0 c0 + w1 c1 + w2 c2
// + w3 c3, left to right), so the same bits, without the ring's stores and
// loads and its loop over the taps' groups. The first columns come from the
// ring where it holds them, and the last four go back to it: the inputs
// around the walk sum each column once, as with the ring alone.
template <int V, bool NT, typename Rows, typename S, typename D>
__attribute__((target("avx512f"), always_inline)) inline void weighted_walk(const columns<Rows, S, D> &cs,
        const fresh_two &f, const axis_view &b, int64_t j0, int64_t j1, int64_t x0, column_ring<V> &ring) {
    __m512 t0[V], t1[V], t2[V], t3[V];
    const auto first = [&](int64_t x, int v) __attribute__((target("avx512f"), always_inline)) {
        return x >= ring.lo && x < ring.hi ? ring.col[x & 7][v] : cs.at(x, v);
    };
    for (int v = 0; v < V; ++v) {
        t0[v] = first(x0, v);
        t1[v] = first(x0 + 1, v);
        t2[v] = first(x0 + 2, v);
        t3[v] = first(x0 + 3, v);
    }
    for (int64_t j = j0; j < j1; ++j, x0 += 2) {
        prefetch_column<V>(cs, f, x0 + 4);
        prefetch_column<V>(cs, f, x0 + 5);
        const float *w = b.weight + b.begin[j];
        const __m512 w0 = _mm512_set1_ps(w[0]), w1 = _mm512_set1_ps(w[1]), w2 = _mm512_set1_ps(w[2]),
                     w3 = _mm512_set1_ps(w[3]);
        D *o = cs.dst + j * cs.dst_stride + cs.c;
        for (int v = 0; v < V; ++v) {
            __m512 acc = _mm512_add_ps(_mm512_mul_ps(w0, t0[v]), _mm512_mul_ps(w1, t1[v]));
            acc = _mm512_add_ps(acc, _mm512_mul_ps(w2, t2[v]));
            store<NT>(o + 16 * v, _mm512_add_ps(acc, _mm512_mul_ps(w3, t3[v])));
        }
        if (j + 1 == j1) break;
        for (int v = 0; v < V; ++v) {
            t0[v] = t2[v];
            t1[v] = t3[v];
            t2[v] = cs.at(x0 + 4, v);
            t3[v] = cs.at(x0 + 5, v);
        }
    }
    for (int v = 0; v < V; ++v) {
        ring.col[x0 & 7][v] = t0[v];
        ring.col[(x0 + 1) & 7][v] = t1[v];
        ring.col[(x0 + 2) & 7][v] = t2[v];
        ring.col[(x0 + 3) & 7][v] = t3[v];
    }
    ring.lo = x0;
    ring.hi = x0 + 4;
}

// (The rows, the prefetch's rows, the columns and the axis copied into
// locals first: see axis_view.)
template <int V, bool NT, typename Rows, typename S, typename D>
__attribute__((target("avx512f"))) void chunk(const columns<Rows, S, D> &given, const grouped_axis &axis) {
    const Rows rows = given.rows;
    const fresh_rows<S> fresh = given.fresh;
    const columns<Rows, S, D> cs {rows, fresh, given.run, given.c, given.dst, given.dst_stride};
    const axis_view b(axis);
    const int64_t in = b.inputs;
    const fresh_two f = fresh_two_of(cs);
    column_ring<V> ring;
    for (int64_t j = 0; j < in;) {
        if (!b.sym4[j]) {
            int64_t x0 = 0;
            const int64_t e = weighted_walk_end(b, j, x0);
            if (e > j) {
                weighted_walk<V, NT>(cs, f, b, j, e, x0, ring);
                j = e;
            } else {
                other_input<V, NT>(cs, f, b, j++, ring);
            }
            continue;
        }
        int64_t e = j + 1;
        while (e < in && b.sym4[e]) ++e;
        walk<V, NT>(cs, f, b, j, e);
        j = e;
    }
}

template <typename S, typename D> struct gather_runs {
    const grouped_axis &b;
    int64_t run;
    D *dst;
    int64_t dst_stride;
    bool nontemporal;
    const fresh_rows<S> &fresh;
    template <typename Rows> __attribute__((target("avx512f"))) void operator()(const Rows &rows) const {
        for (int64_t c = 0; c < run; c += chunk_floats) {
            const columns<Rows, S, D> cs {rows, fresh, run, c, dst, dst_stride};
            const int v = int(std::min(run - c, chunk_floats) / 16);
            if constexpr (!std::is_same_v<D, float>) {
                if (v == 1) chunk<1, false>(cs, b);
                else if (v == 2) chunk<2, false>(cs, b);
                else if (v == 3) chunk<3, false>(cs, b);
                else chunk<4, false>(cs, b);
            } else if (nontemporal) {
                if (v == 1) chunk<1, true>(cs, b);
                else if (v == 2) chunk<2, true>(cs, b);
                else if (v == 3) chunk<3, true>(cs, b);
                else chunk<4, true>(cs, b);
            } else {
                if (v == 1) chunk<1, false>(cs, b);
                else if (v == 2) chunk<2, false>(cs, b);
                else if (v == 3) chunk<3, false>(cs, b);
                else chunk<4, false>(cs, b);
            }
        }
        if (nontemporal) _mm_sfence(); // the streamed lines are visible before the task ends
    }
};

template <typename Src, typename D>
__attribute__((target("avx512f"))) void sum_gather(const grouped_axis &a, int64_t i, const Src &src,
        const grouped_axis &b, int64_t run, D *dst, int64_t dst_stride, bool nontemporal, int64_t prefetch_bytes) {
    using S = std::remove_cv_t<std::remove_pointer_t<decltype(src.row(0))>>;
    fresh_rows<S> fresh;
    if (prefetch_bytes > 0) {
        int64_t seen = -1; // the highest row the previous input read
        for (int64_t t = i > 0 ? a.begin[size_t(i) - 1] : 0; t < a.begin[size_t(i)]; ++t)
            seen = std::max(seen, a.output[size_t(t)]);
        for (int64_t t = a.begin[size_t(i)]; t < a.begin[size_t(i) + 1] && fresh.n < 4; ++t)
            if (a.output[size_t(t)] > seen) fresh.row[fresh.n++] = src.row(a.output[size_t(t)]);
        fresh.ahead = prefetch_bytes;
    }
    tap_fold::visit(a, i, src, gather_runs<S, D> {b, run, dst, dst_stride, nontemporal, fresh});
}

} // namespace bpg::tbb_backend::run_sum_kernel
