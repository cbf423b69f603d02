#include "ops/interpolate_maps.h"

#include <ATen/native/UpSample.h>
#include <c10/util/Exception.h>

#include <array>
#include <cmath>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace bpg_torch {

namespace {

constexpr double weight_tolerance = 1e-6;

// Up to two taps of one output on one axis, duplicates merged.
struct taps {
    int n = 0;
    int64_t index[2] {};
    double weight[2] {};
    void add(int64_t i, double w) {
        for (int k = 0; k < n; ++k)
            if (index[k] == i) {
                weight[k] += w;
                return;
            }
        index[n] = i;
        weight[n] = w;
        ++n;
    }
    double weight_of(int64_t i) const {
        for (int k = 0; k < n; ++k)
            if (index[k] == i) return weight[k];
        return 0.0;
    }
    std::string text() const {
        std::string s;
        for (int k = 0; k < n; ++k) {
            if (weight[k] == 0.0) continue;
            if (!s.empty()) s += " + ";
            char w[32];
            std::snprintf(w, sizeof w, "%.9g", weight[k]);
            s += std::to_string(index[k]) + " (w " + w + ")";
        }
        return s.empty() ? "nothing" : s;
    }
};

// torch 1.13's CPU kernels: nearest through nearest_idx; linear through
// area_pixel_compute_scale and compute_source_index_and_lambda in float
// (the f32 and opmath type), exactly as upsample_*_backward calls them.
taps torch_taps(int64_t in, int64_t out, int64_t o, bool nearest, bool align_corners,
        c10::optional<double> scale) {
    taps t;
    if (nearest) {
        t.add(at::native::nearest_idx(o, in, out, scale), 1.0);
        return t;
    }
    const float ratio = at::native::area_pixel_compute_scale<float>(in, out, align_corners, scale);
    int64_t i0 = 0, i1 = 0;
    float l0 = 0.f, l1 = 0.f;
    at::native::compute_source_index_and_lambda<float>(i0, i1, l0, l1, ratio, o, in, out, align_corners);
    t.add(i0, l0);
    t.add(i1, l1);
    return t;
}

bool same(const taps &a, const taps &b, bool nearest) {
    if (nearest) return a.index[0] == b.index[0];
    for (const taps *side : {&a, &b})
        for (int k = 0; k < side->n; ++k) {
            const int64_t i = side->index[k];
            if (std::fabs(a.weight_of(i) - b.weight_of(i)) > weight_tolerance) return false;
        }
    return true;
}

// Empty when bpg's maps (attrs) equal torch's on every axis; else the first
// differing output index.
std::string compare(int nsp, const int64_t *in, const int64_t *out, bool nearest, bool align_corners,
        c10::optional<at::ArrayRef<double>> scales, const bpg_capi_interp_attrs &attrs) {
    for (int k = 0; k < nsp; ++k) {
        const size_t n = size_t(out[k]);
        std::vector<int64_t> i0(n), i1(n);
        std::vector<double> w0(n), w1(n);
        char message[512] = "";
        const int rc = bpg_capi_interp_axis_map(&attrs, k, in[k], out[k], i0.data(), w0.data(), i1.data(),
                w1.data(), message, sizeof message);
        if (rc != BPG_CAPI_OK) return std::string("bpg cannot map axis ") + std::to_string(k) + ": " + message;
        c10::optional<double> scale;
        if (scales) scale = (*scales)[size_t(k)];
        for (int64_t o = 0; o < out[k]; ++o) {
            const taps t = torch_taps(in[k], out[k], o, nearest, align_corners, scale);
            taps b;
            b.add(i0[size_t(o)], w0[size_t(o)]);
            if (!nearest) b.add(i1[size_t(o)], w1[size_t(o)]);
            if (!same(t, b, nearest))
                return "spatial axis " + std::to_string(k) + " (" + std::to_string(in[k]) + " -> "
                        + std::to_string(out[k]) + ") output " + std::to_string(o) + ": torch reads " + t.text()
                        + ", bpg reads " + b.text();
        }
    }
    return {};
}

std::shared_ptr<const interp_decision> make_decision(int nsp, const int64_t *in, const int64_t *out,
        bool nearest, bool align_corners, c10::optional<at::ArrayRef<double>> scales) {
    auto d = std::make_shared<interp_decision>();
    bpg_capi_interp_attrs a {};
    a.nearest = nearest;
    a.spatial_rank = nsp;
    // 1. Coordinates from the shapes, as torch derives them without scales.
    a.coord_mode = nearest ? BPG_CAPI_ASYMMETRIC : (align_corners ? BPG_CAPI_ALIGN_CORNERS : BPG_CAPI_HALF_PIXEL);
    a.nearest_mode = BPG_CAPI_FLOOR;
    const char *shape_mode = nearest ? "asymmetric/floor" : (align_corners ? "align_corners" : "half_pixel");
    const std::string first = compare(nsp, in, out, nearest, align_corners, scales, a);
    if (first.empty()) {
        d->use_bpg = true;
        d->attrs = a;
        d->why = std::string("torch's index/weight maps equal bpg's ") + shape_mode + " maps on every axis";
        return d;
    }
    // 2. torch's own scales (it uses 1/scale when given): bpg scales plus
    // pixel offsets; linear align_corners ignores scales in torch.
    std::string second = "no scales given";
    if (scales && !(align_corners && !nearest)) {
        a.coord_mode = BPG_CAPI_PIXEL_OFFSETS;
        second.clear();
        for (int k = 0; k < nsp && second.empty(); ++k) {
            const double s = (*scales)[size_t(k)];
            a.scales[k] = float(s);
            a.input_offsets[k] = nearest ? 0.f : 0.5f;
            a.output_offsets[k] = nearest ? 0.f : -0.5f;
            if (!(s > 0.0) || bpg_capi_output_size_from_scale(in[k], a.scales[k]) != out[k])
                second = "bpg's output size floor(" + std::to_string(in[k]) + " * " + std::to_string(a.scales[k])
                        + ") is not torch's " + std::to_string(out[k]);
        }
        if (second.empty()) second = compare(nsp, in, out, nearest, align_corners, scales, a);
        if (second.empty()) {
            d->use_bpg = true;
            d->attrs = a;
            d->why = "torch's index/weight maps equal bpg's scales + pixel offsets maps on every axis";
            return d;
        }
    }
    d->why = std::string("torch's maps differ from bpg's ") + shape_mode + " maps at " + first
            + "; with scales + pixel offsets: " + second;
    return d;
}

// The decision cache: a key of plain integers, bounded (cleared when full).
struct decision_key {
    std::array<int64_t, 16> w {};
    bool operator==(const decision_key &o) const { return w == o.w; }
};
struct decision_key_hash {
    size_t operator()(const decision_key &k) const {
        uint64_t h = 1469598103934665603ull;
        for (int64_t v : k.w) {
            h ^= uint64_t(v);
            h *= 1099511628211ull;
        }
        return size_t(h);
    }
};

} // namespace

std::shared_ptr<const interp_decision> decide_interpolate(int nsp, const int64_t *in, const int64_t *out,
        bool nearest, bool align_corners, c10::optional<at::ArrayRef<double>> scales) {
    decision_key key;
    key.w[0] = nsp;
    key.w[1] = (nearest ? 1 : 0) | (align_corners ? 2 : 0) | (scales ? 4 : 0);
    TORCH_CHECK(nsp >= 1 && nsp <= 3, "bpg_torch: 1 to 3 spatial axes, got ", nsp);
    for (int k = 0; k < nsp && k < 3; ++k) {
        key.w[size_t(2 + 4 * k)] = in[k];
        key.w[size_t(3 + 4 * k)] = out[k];
        if (scales) std::memcpy(&key.w[size_t(4 + 4 * k)], &(*scales)[size_t(k)], sizeof(double));
    }
    static std::mutex mutex;
    static std::unordered_map<decision_key, std::shared_ptr<const interp_decision>, decision_key_hash> cache;
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = cache.find(key);
        if (it != cache.end()) return it->second;
    }
    auto d = make_decision(nsp, in, out, nearest, align_corners, scales);
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() >= 4096) cache.clear();
    cache.emplace(key, d);
    return d;
}

} // namespace bpg_torch
