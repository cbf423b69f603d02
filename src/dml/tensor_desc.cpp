// DML_BUFFER_TENSOR_DESC: its rules (DirectML's DML_BUFFER_TENSOR_DESC and
// DMLCalcBufferTensorSize documents) and the operator-level tensor
// constraints shared by every entry point.
#include <string>

#include "core/layout_checks.hpp"
#include "dml/dml_internal.hpp"

namespace bpg::dml {

const char *to_string(tensor_data_type t) {
    static const char *const names[] = {"UNKNOWN", "FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8",
            "INT32", "INT16", "INT8", "FLOAT64", "UINT64", "INT64"};
    const auto i = static_cast<uint32_t>(t);
    return i < sizeof names / sizeof names[0] ? names[i] : "(not a DML_TENSOR_DATA_TYPE)";
}

namespace {

uint64_t element_bytes(tensor_data_type t) {
    switch (t) {
        case tensor_data_type::float32: case tensor_data_type::uint32: case tensor_data_type::int32: return 4;
        case tensor_data_type::float16: case tensor_data_type::uint16: case tensor_data_type::int16: return 2;
        case tensor_data_type::uint8: case tensor_data_type::int8: return 1;
        case tensor_data_type::float64: case tensor_data_type::uint64: case tensor_data_type::int64: return 8;
        case tensor_data_type::unknown: break;
    }
    return 0;
}

std::string field_of(const std::string &field, const char *member) { return field + "." + member; }

} // namespace

uint64_t calc_buffer_tensor_size(tensor_data_type type, uint32_t dimension_count, const uint32_t *sizes,
        const uint32_t *strides) {
    const uint64_t bytes = element_bytes(type);
    if (bytes == 0 || !sizes) return 0;
    uint64_t last = 0; // index of the last element: dot(Sizes - 1, Strides)
    uint64_t packed = 1;
    for (uint32_t i = dimension_count; i-- > 0;) {
        if (sizes[i] == 0) return 0;
        const uint64_t stride = strides ? strides[i] : packed;
        last += uint64_t(sizes[i] - 1) * stride;
        packed *= sizes[i];
    }
    return ((last + 1) * bytes + 3) / 4 * 4;
}

void fail(const char *op, status s, const std::string &what) { throw error(s, std::string(op) + ": " + what); }

std::string sizes_text(const dims &d) {
    std::string s = "{";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "}";
}

checked_tensor check_tensor(const char *op, const char *field, const buffer_tensor_desc *d,
        uint32_t min_dims, uint32_t max_dims, bool is_output) {
    checked_tensor t;
    t.field = field;
    if (!d) fail(op, status::invalid_argument, t.field + " is null; this operator requires it");
    if (d->Flags == tensor_flags::owned_by_dml)
        fail(op, status::unimplemented,
                field_of(t.field, "Flags") + " = DML_TENSOR_FLAG_OWNED_BY_DML: DirectML-owned (initializer) "
                        "tensors have no meaning in bpg, which binds every buffer at execute");
    if (d->Flags != tensor_flags::none)
        fail(op, status::invalid_argument,
                field_of(t.field, "Flags") + " = " + std::to_string(uint32_t(d->Flags))
                        + " is not a DML_TENSOR_FLAGS value (NONE = 0, OWNED_BY_DML = 1)");
    if (d->DimensionCount < min_dims || d->DimensionCount > max_dims)
        fail(op, status::invalid_shape,
                field_of(t.field, "DimensionCount") + " = " + std::to_string(d->DimensionCount)
                        + "; this operator supports " + std::to_string(min_dims) + " to "
                        + std::to_string(max_dims) + " dimensions (Tensor support)");
    if (!d->Sizes)
        fail(op, status::invalid_argument,
                field_of(t.field, "Sizes") + " is null; it must point to DimensionCount ("
                        + std::to_string(d->DimensionCount) + ") values");
    for (uint32_t i = 0; i < d->DimensionCount; ++i) {
        t.sizes.push_back(d->Sizes[i]);
        if (d->Sizes[i] == 0)
            fail(op, status::invalid_shape,
                    field_of(t.field, "Sizes") + "[" + std::to_string(i) + "] = 0; a size of zero in "
                            "any dimension is invalid (DML_BUFFER_TENSOR_DESC)");
    }
    t.strides = dense_strides(t.sizes);
    if (d->Strides)
        for (uint32_t i = 0; i < d->DimensionCount; ++i) t.strides[i] = d->Strides[i];
    t.dml_type = d->DataType;
    if (d->DataType == tensor_data_type::float32) t.dt = data_type::f32;
    else if (d->DataType == tensor_data_type::float16) t.dt = data_type::f16;
    else
        fail(op, status::invalid_data_type,
                field_of(t.field, "DataType") + " = " + to_string(d->DataType)
                        + "; this operator supports FLOAT32 and FLOAT16 (Tensor support)");
    const uint64_t need = calc_buffer_tensor_size(d->DataType, d->DimensionCount, d->Sizes, d->Strides);
    if (d->TotalTensorSizeInBytes < need || d->TotalTensorSizeInBytes % 4 != 0)
        fail(op, status::invalid_argument,
                field_of(t.field, "TotalTensorSizeInBytes") + " = " + std::to_string(d->TotalTensorSizeInBytes)
                        + "; it must be a multiple of 4 and at least DMLCalcBufferTensorSize = "
                        + std::to_string(need) + " for sizes " + sizes_text(t.sizes) + " and strides "
                        + sizes_text(t.strides));
    if (is_output && !core::is_non_overlapping(t.sizes, t.strides))
        fail(op, status::invalid_shape,
                field_of(t.field, "Strides") + " = " + sizes_text(t.strides) + " make elements of sizes "
                        + sizes_text(t.sizes) + " share memory; an output's elements must not overlap");
    return t;
}

void check_same_type_and_rank(const char *op, const checked_tensor &a, const checked_tensor &b) {
    if (a.dml_type != b.dml_type)
        fail(op, status::invalid_data_type,
                b.field + ".DataType = " + to_string(b.dml_type) + " but " + a.field + ".DataType = "
                        + to_string(a.dml_type) + "; they must have the same DataType (Tensor constraints)");
    if (a.sizes.size() != b.sizes.size())
        fail(op, status::invalid_shape,
                b.field + ".DimensionCount = " + std::to_string(b.sizes.size()) + " but " + a.field
                        + ".DimensionCount = " + std::to_string(a.sizes.size())
                        + "; they must have the same DimensionCount (Tensor constraints)");
}

void check_same_sizes(const char *op, const checked_tensor &a, const checked_tensor &b) {
    if (a.sizes != b.sizes)
        fail(op, status::invalid_shape,
                b.field + ".Sizes = " + sizes_text(b.sizes) + " but " + a.field + ".Sizes = "
                        + sizes_text(a.sizes) + "; they must have the same Sizes (Tensor constraints)");
}

} // namespace bpg::dml
