// Catalogue rows: .npy files the reader must refuse (through read_npy, as
// bpg-run reads them) and arrays npy_to_buffer must not copy into a tensor
// (whose buffer is a sentinel output).
#include <cstdio>
#include <fstream>

#include "io/npy.hpp"
#include "support/bad_input.hpp"

namespace bpg::test {
namespace {

// A raw file: magic, version, header length (as given, which may lie), header
// text, data.
std::vector<uint8_t> raw(const std::string &header, size_t data_bytes, int major = 1, long header_len = -1) {
    std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
    const size_t n = header_len >= 0 ? size_t(header_len) : header.size();
    for (int i = 0; i < (major >= 2 ? 4 : 2); ++i) out.push_back(uint8_t(n >> (8 * i)));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), data_bytes, 0x3f);
    return out;
}

std::string dict(const std::string &descr, const std::string &shape, const char *fortran = "False") {
    return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

std::string temp_file(const std::string &name, const std::vector<uint8_t> &bytes) {
    const std::string path = ::testing::TempDir() + "bpg_bad_" + name + ".npy";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    return path;
}

bad_input file_row(std::string name, std::vector<uint8_t> bytes, status code, std::vector<std::string> has) {
    has.insert(has.begin(), "bpg_bad_" + name + ".npy: ");
    return {name,
            [name, bytes](sentinel_buffers &) {
                const std::string path = temp_file(name, bytes);
                struct remove_at_exit { std::string p; ~remove_at_exit() { std::remove(p.c_str()); } } cleanup {path};
                io::read_npy(path);
            },
            code, std::move(has)};
}

// A valid 2x3 "<f4" array copied into a tensor lt whose buffer is a sentinel
// (null when null_buffer).
bad_input copy_row(std::string name, io::npy_array a, logical_tensor lt, bool null_buffer, status code,
        std::vector<std::string> has) {
    return {std::move(name),
            [a, lt, null_buffer](sentinel_buffers &pool) {
                size_t bytes = 64;
                try { bytes = lt.get_mem_size(); } catch (const error &) {}
                void *buffer = pool.get(bytes);
                io::npy_to_buffer(a, lt, null_buffer ? nullptr : buffer, "x.npy");
            },
            code, std::move(has)};
}

io::npy_array array_2x3(const std::string &descr = "<f4") {
    io::npy_array a;
    a.descr = descr;
    a.shape = {2, 3};
    a.data.assign(6 * (descr == "<f2" ? 2 : 4), 0);
    return a;
}

std::vector<bad_input> rows() {
    const status arg = status::invalid_argument, unimpl = status::unimplemented, shape = status::invalid_shape,
                 type = status::invalid_data_type;
    const std::string ok = dict("<f4", "(2, 3)");
    std::vector<uint8_t> bad_magic = raw(ok, 24);
    bad_magic[1] = 'X';
    std::vector<uint8_t> empty;
    const logical_tensor f32_2x3(0, data_type::f32, {2, 3}, layout_type::strided);
    return {
            file_row("npy_empty_file", empty, arg, {"truncated: 0 bytes, shorter than the .npy magic"}),
            file_row("npy_bad_magic", bad_magic, arg, {"bad magic: not a .npy file"}),
            file_row("npy_ends_in_magic", {0x93, 'N', 'U'}, arg, {"truncated: 3 bytes"}),
            file_row("npy_ends_in_header_length", {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 5}, arg,
                    {"the file ends inside the header length field"}),
            file_row("npy_header_length_lies", raw(ok, 24, 1, 4000), arg,
                    {"header length 4000 runs past the end of the file"}),
            file_row("npy_header_length_lies_v2", raw(ok, 24, 2, 0x7fffffff), arg,
                    {"header length 2147483647 runs past the end of the file"}),
            file_row("npy_header_not_a_dict", raw("['descr', '<f4']\n", 24), arg, {"malformed .npy header: expected '{'"}),
            file_row("npy_header_missing_shape", raw("{'descr': '<f4', 'fortran_order': False}\n", 24), arg,
                    {"needs the keys 'descr', 'fortran_order' and 'shape'"}),
            file_row("npy_header_duplicate_key", raw("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}\n", 24),
                    arg, {"duplicate key 'descr'"}),
            file_row("npy_header_unterminated_string", raw("{'descr: <f4\n", 24), arg, {"unterminated string"}),
            file_row("npy_header_unknown_key", raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'strides': (3, 1)}\n", 24),
                    arg, {"unexpected key 'strides'"}),
            file_row("npy_shape_negative", raw(dict("<f4", "(2, -3)"), 24), arg, {"negative dimension in shape"}),
            file_row("npy_shape_dim_beyond_int64", raw(dict("<f4", "(99999999999999999999,)"), 0), arg,
                    {"dimension in shape does not fit int64"}),
            file_row("npy_shape_count_overflows", raw(dict("<f4", "(4294967296, 4294967296)"), 0), arg,
                    {"shape (4294967296, 4294967296) has an element count that overflows int64"}),
            file_row("npy_data_too_short", raw(ok, 20), arg, {"data too short: shape (2, 3) of '<f4' needs 24 bytes, the file has 20"}),
            file_row("npy_data_too_long", raw(ok, 28), arg, {"data too long", "the file has 28"}),
            file_row("npy_fortran_order", raw(dict("<f4", "(2, 3)", "True"), 24), unimpl, {"fortran_order arrays are not supported"}),
            file_row("npy_big_endian", raw(dict(">f4", "(2, 3)"), 24), unimpl, {"big-endian data ('>f4') is not supported"}),
            file_row("npy_dtype_unsupported", raw(dict("<u1", "(2, 3)"), 6), unimpl, {"unsupported dtype descr '<u1'"}),
            file_row("npy_version_4", raw(ok, 24, 4), unimpl, {"unsupported .npy format version 4.0"}),
            {"npy_missing_file", [](sentinel_buffers &) { io::read_npy(::testing::TempDir() + "bpg_no_such_file.npy"); }, arg,
                    {"bpg_no_such_file.npy: cannot open the file for reading: No such file or directory"}},
            // Was an iostream exception ("basic_filebuf::underflow"), not a bpg::error.
            {"npy_folder_given_as_file", [](sentinel_buffers &) { io::read_npy(::testing::TempDir()); }, arg,
                    {"is a folder, not a file"}},
            {"npy_write_into_missing_folder", [](sentinel_buffers &) {
                    io::write_npy(::testing::TempDir() + "bpg_no_such_folder/x.npy", array_2x3()); }, arg,
                    {"bpg_no_such_folder/x.npy: cannot open the file for writing: No such file or directory"}},
            copy_row("npy_copy_shape_differs", array_2x3(), logical_tensor(0, data_type::f32, {3, 2}, layout_type::strided), false,
                    shape, {"x.npy: array shape (2, 3) does not match logical tensor 0 shape (3, 2)"}),
            copy_row("npy_copy_int_into_float", array_2x3("<i4"), f32_2x3, false, type,
                    {"x.npy: array dtype '<i4' cannot fill logical tensor 0 of data type f32"}),
            copy_row("npy_copy_null_buffer", array_2x3(), f32_2x3, true, arg, {"x.npy: null buffer for logical tensor 0"}),
            copy_row("npy_copy_negative_stride", array_2x3(), logical_tensor(0, data_type::f32, {2, 3}, {3, -1}), false, shape,
                    {"logical tensor 0: negative stride"}),
            copy_row("npy_copy_unknown_shape", array_2x3(), logical_tensor(0, data_type::f32, {2, -1}, layout_type::strided), false,
                    shape, {"x.npy: logical tensor 0 needs a known shape and a strided layout"}),
            copy_row("npy_copy_data_shorter_than_shape", [] { io::npy_array a = array_2x3(); a.data.resize(20); return a; }(), f32_2x3,
                    false, arg, {"x.npy: array data has 20 bytes, its shape needs 24"}),
    };
}

INSTANTIATE_TEST_SUITE_P(Npy, BadInput, ::testing::ValuesIn(rows()), row_name);

} // namespace
} // namespace bpg::test
