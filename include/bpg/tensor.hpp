// Logical tensors, engines, streams and tensors (logical tensor + user buffer),
// in the style of dnnl::graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "bpg/status.hpp"

#pragma GCC visibility push(default)
namespace bpg {

// bpg's kernels take f32, bf16, f16 (and s32 for a runtime `sizes`); the
// other oneDNN types exist for ops bpg leaves to the framework (Wildcard, ...).
enum class data_type { undef, f32, bf16, f16, s32, s8, u8, boolean, f8_e5m2, f8_e4m3 };
const char *to_string(data_type dt);
size_t size_of(data_type dt); // bytes per element; 0 for undef
bool is_floating(data_type dt);

enum class layout_type {
    undef,   // nothing known yet
    any,     // the library chooses at compile (diff_dst's axis order for a diff_src, else dense)
    strided, // explicit strides, in elements
    opaque,  // oneDNN's library-specific layout: bpg never produces one
};
const char *to_string(layout_type lt);

enum class property_type { undef, variable, constant, host_scalar };
const char *to_string(property_type pt);

using dim = int64_t;
using dims = std::vector<dim>;
constexpr dim unknown_dim = -1;
constexpr int unknown_rank = -1;

// Dense row-major strides of a shape (the innermost axis has stride 1).
dims dense_strides(const dims &shape);

class logical_tensor {
public:
    // The nested names of dnnl::graph::logical_tensor (same types as bpg's).
    using data_type = bpg::data_type;
    using layout_type = bpg::layout_type;
    using property_type = bpg::property_type;
    using dim = bpg::dim;
    using dims = bpg::dims;

    logical_tensor() = default;
    // Unknown rank and shape.
    logical_tensor(size_t id, data_type dt, layout_type lt = layout_type::any);
    // Known rank ndims (-1: unknown, 0: scalar), every dim unknown, as
    // oneDNN's (id, dtype, ndims, ltype). A template so that a braced shape
    // such as {4} still picks the dims constructor below.
    template <typename Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
    logical_tensor(size_t id, data_type dt, Int ndims, layout_type lt,
            property_type pt = property_type::undef)
        : logical_tensor(id, dt, rank_checked(id, int64_t(ndims)), lt, pt, 0) {}
    // Known rank; dims may be unknown_dim. A strided layout gets dense
    // row-major strides (when every dim is known).
    logical_tensor(size_t id, data_type dt, dims shape,
            layout_type lt = layout_type::strided,
            property_type pt = property_type::undef);
    // Explicit strides, in elements (must have the rank of shape).
    logical_tensor(size_t id, data_type dt, dims shape, dims strides,
            property_type pt = property_type::undef);

    size_t get_id() const { return id_; }
    data_type get_data_type() const { return dt_; }
    layout_type get_layout_type() const { return layout_; }
    property_type get_property_type() const { return property_; }
    int ndims() const { return rank_known_ ? static_cast<int>(dims_.size()) : unknown_rank; }
    const dims &get_dims() const { return dims_; }
    const dims &get_strides() const { return strides_; }

    bool has_known_shape() const; // rank known and no unknown_dim
    // Number of elements; throws invalid_shape if the shape is unknown or the
    // count overflows int64.
    int64_t element_count() const;
    // Bytes spanned by the strided layout (0 for an empty tensor); throws
    // when the layout is not concrete or the size overflows.
    size_t get_mem_size() const;

    bool operator==(const logical_tensor &o) const;
    bool is_equal(const logical_tensor &o) const { return *this == o; }
    bool operator!=(const logical_tensor &o) const { return !(*this == o); }

private:
    // Throws unless -1 <= ndims <= 12 (oneDNN's DNNL_MAX_NDIMS).
    static int64_t rank_checked(size_t id, int64_t ndims);
    logical_tensor(size_t id, data_type dt, int64_t ndims, layout_type lt, property_type pt, int);

    size_t id_ = static_cast<size_t>(-1);
    data_type dt_ = data_type::undef;
    bool rank_known_ = false;
    dims dims_;
    dims strides_;
    layout_type layout_ = layout_type::undef;
    property_type property_ = property_type::undef;
};

class engine {
public:
    enum class kind { cpu };
    explicit engine(kind k = kind::cpu, size_t index = 0) : kind_(k), index_(index) {}
    kind get_kind() const { return kind_; }
    size_t get_index() const { return index_; }

private:
    kind kind_;
    size_t index_;
};

// Execution on CPU is synchronous: execute() returns when results are written.
class stream {
public:
    explicit stream(const engine &e) : engine_(e) {}
    const engine &get_engine() const { return engine_; }
    void wait() const {}

private:
    engine engine_;
};

class tensor {
public:
    tensor() = default;
    tensor(const logical_tensor &lt, const engine &e, void *handle)
        : lt_(lt), engine_(e), handle_(handle) {}
    void *get_data_handle() const { return handle_; }
    void set_data_handle(void *handle) { handle_ = handle; }
    const logical_tensor &get_logical_tensor() const { return lt_; }
    const engine &get_engine() const { return engine_; }

private:
    logical_tensor lt_;
    engine engine_;
    void *handle_ = nullptr;
};

} // namespace bpg
#pragma GCC visibility pop
