// NumPy .npy files (format 1.0 to 3.0, little-endian, C order) and their
// mapping onto strided tensors of a logical tensor's dtype.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bpg/tensor.hpp"

namespace bpg::io {

struct npy_array {
    std::string descr;          // "<f4", "<f2", "<i4", "<f8" (read only)
    std::vector<int64_t> shape; // C order
    std::vector<uint8_t> data;  // element_count * item size bytes
};

// Throws bpg::error naming the file and the problem: invalid_argument for a
// malformed file (missing, truncated, bad magic or header, data size that does
// not match the header), unimplemented for legal .npy features not supported
// (fortran_order, big-endian, other dtypes, format version 4+).
npy_array read_npy(const std::string &path);
npy_array parse_npy(const std::vector<uint8_t> &bytes, const std::string &name);
void write_npy(const std::string &path, const npy_array &a);
std::vector<uint8_t> serialize_npy(const npy_array &a);

// Copies an array into a buffer laid out as lt (concrete, strided) says.
// The array's shape must equal lt's shape. Accepted: "<f4" for any floating
// dtype (rounded to nearest even), "<f2" for f16, "<i4" for s32.
void npy_to_buffer(const npy_array &a, const logical_tensor &lt, void *buffer,
        const std::string &name);
// Reads a tensor laid out as lt into an array in C order: f32 and bf16 as
// "<f4", f16 as "<f2", s32 as "<i4".
npy_array buffer_to_npy(const logical_tensor &lt, const void *buffer);

} // namespace bpg::io
