#include <limits>
#include <string>

#include "bpg/tensor.hpp"
#include "core/tensor_desc.hpp"

namespace bpg {

const char *to_string(data_type dt) {
    switch (dt) {
        case data_type::undef: return "undef";
        case data_type::f32: return "f32";
        case data_type::bf16: return "bf16";
        case data_type::f16: return "f16";
        case data_type::s32: return "s32";
        case data_type::s8: return "s8";
        case data_type::u8: return "u8";
        case data_type::boolean: return "boolean";
        case data_type::f8_e5m2: return "f8_e5m2";
        case data_type::f8_e4m3: return "f8_e4m3";
    }
    return "unknown";
}

size_t size_of(data_type dt) {
    switch (dt) {
        case data_type::f32:
        case data_type::s32: return 4;
        case data_type::bf16:
        case data_type::f16: return 2;
        case data_type::s8:
        case data_type::u8:
        case data_type::boolean:
        case data_type::f8_e5m2:
        case data_type::f8_e4m3: return 1;
        default: return 0;
    }
}

bool is_floating(data_type dt) {
    return dt == data_type::f32 || dt == data_type::bf16 || dt == data_type::f16;
}

const char *to_string(layout_type lt) {
    switch (lt) {
        case layout_type::undef: return "undef";
        case layout_type::any: return "any";
        case layout_type::strided: return "strided";
        case layout_type::opaque: return "opaque";
    }
    return "unknown";
}

const char *to_string(property_type pt) {
    switch (pt) {
        case property_type::undef: return "undef";
        case property_type::variable: return "variable";
        case property_type::constant: return "constant";
        case property_type::host_scalar: return "host_scalar";
    }
    return "unknown";
}

dims dense_strides(const dims &shape) {
    dims s(shape.size(), 1);
    int64_t acc = 1;
    for (int a = int(shape.size()) - 1; a >= 0; --a) {
        s[a] = acc;
        // Zero-size axes keep the strides of size 1, as NumPy does. A shape
        // whose strides overflow int64 has no dense layout; its strides
        // saturate (never wrap), and element_count / get_mem_size, which every
        // path runs before using a layout, report the overflow.
        if (shape[a] > 1 && __builtin_mul_overflow(acc, shape[a], &acc))
            acc = std::numeric_limits<int64_t>::max();
    }
    return s;
}

namespace {
bool all_known(const dims &d) {
    for (dim x : d)
        if (x < 0) return false;
    return true;
}
} // namespace

logical_tensor::logical_tensor(size_t id, data_type dt, layout_type lt)
    : id_(id), dt_(dt), rank_known_(false), layout_(lt) {}

int64_t logical_tensor::rank_checked(size_t id, int64_t ndims) {
    if (ndims < unknown_rank || ndims > 12)
        throw error(status::invalid_shape,
                "logical tensor " + std::to_string(id) + ": ndims " + std::to_string(ndims)
                        + " is not a rank (-1: unknown, 0: scalar, at most 12)");
    return ndims;
}

logical_tensor::logical_tensor(size_t id, data_type dt, int64_t ndims, layout_type lt, property_type pt, int)
    : id_(id), dt_(dt), rank_known_(ndims >= 0), dims_(size_t(ndims >= 0 ? ndims : 0), unknown_dim),
      layout_(lt), property_(pt) {}

logical_tensor::logical_tensor(
        size_t id, data_type dt, dims shape, layout_type lt, property_type pt)
    : id_(id), dt_(dt), rank_known_(true), dims_(std::move(shape)), layout_(lt), property_(pt) {
    if (lt == layout_type::strided && all_known(dims_)) strides_ = dense_strides(dims_);
}

logical_tensor::logical_tensor(
        size_t id, data_type dt, dims shape, dims strides, property_type pt)
    : id_(id), dt_(dt), rank_known_(true), dims_(std::move(shape)),
      strides_(std::move(strides)), layout_(layout_type::strided), property_(pt) {}

bool logical_tensor::has_known_shape() const { return rank_known_ && all_known(dims_); }

int64_t logical_tensor::element_count() const {
    if (!has_known_shape())
        throw error(status::invalid_shape,
                "logical tensor " + std::to_string(id_) + ": shape is not known");
    int64_t n = 1;
    for (dim d : dims_) {
        if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
            throw error(status::invalid_shape,
                    "logical tensor " + std::to_string(id_)
                            + ": element count overflows int64");
        n *= d;
    }
    return n;
}

size_t logical_tensor::get_mem_size() const {
    if (!has_known_shape() || layout_ != layout_type::strided || strides_.size() != dims_.size())
        throw error(status::invalid_shape,
                "logical tensor " + std::to_string(id_)
                        + ": memory size needs a known shape and strided layout");
    if (element_count() == 0) return 0;
    // Last element offset + 1, in elements, then bytes; checked for overflow.
    unsigned __int128 span = 1;
    for (size_t a = 0; a < dims_.size(); ++a) {
        if (strides_[a] < 0)
            throw error(status::invalid_shape,
                    "logical tensor " + std::to_string(id_) + ": negative stride");
        span += (unsigned __int128)(dims_[a] - 1) * (unsigned __int128)strides_[a];
    }
    span *= size_of(dt_);
    if (span > (unsigned __int128)std::numeric_limits<int64_t>::max())
        throw error(status::invalid_shape,
                "logical tensor " + std::to_string(id_) + ": memory size overflows");
    return size_t(span);
}

bool logical_tensor::operator==(const logical_tensor &o) const {
    return id_ == o.id_ && dt_ == o.dt_ && rank_known_ == o.rank_known_ && dims_ == o.dims_
            && strides_ == o.strides_ && layout_ == o.layout_ && property_ == o.property_;
}

namespace core {
tensor_desc desc_of(const logical_tensor &lt) {
    tensor_desc d;
    d.id = lt.get_id();
    d.dt = lt.get_data_type();
    d.shape = lt.get_dims();
    d.strides = lt.get_strides();
    return d;
}
} // namespace core

} // namespace bpg
