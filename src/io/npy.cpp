// NumPy .npy reading and writing (src/io/npy.hpp).
//
// The format (numpy/lib/format.py, "NEP 1"): magic "\x93NUMPY", major and
// minor version bytes, the header length (u16 little-endian for 1.0, u32 for
// 2.0 and 3.0), then a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n', then the raw data in C order.
//
// Files come from outside, so parsing trusts nothing: every length is checked
// against the bytes actually present before it is used, the element count is
// computed with overflow checks, and the data must be exactly count * itemsize
// bytes (a short file and trailing garbage are both errors). Malformed files
// are invalid_argument; legal .npy features we do not support (Fortran order,
// big-endian, other dtypes, unknown versions) are unimplemented.
#include <algorithm>
#include <cstring>
#include <limits>

#include "bpg/status.hpp"
#include "core/tensor_desc.hpp"
#include "io/file_bytes.hpp"
#include "io/npy.hpp"

namespace bpg::io {
namespace {

const uint8_t magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t magic_size = sizeof magic;

struct descr_info {
    const char *descr;
    size_t item_size;
};
const descr_info supported_descrs[] = {{"<f4", 4}, {"<f2", 2}, {"<i4", 4}, {"<f8", 8}};

const descr_info *find_descr(const std::string &d) {
    for (const auto &info : supported_descrs)
        if (d == info.descr) return &info;
    return nullptr;
}

// The data bytes are copied as they are, which is right only on a
// little-endian host (every platform this library targets).
void require_little_endian_host() {
    const uint16_t probe = 1;
    uint8_t first;
    std::memcpy(&first, &probe, 1);
    if (first != 1)
        throw error(status::unimplemented, ".npy I/O needs a little-endian host");
}

std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1) s += ",";
    return s + ")";
}

// Element count of a shape, or -1 if a dim is negative or the count times
// item_size does not fit int64.
int64_t checked_count(const std::vector<int64_t> &shape, size_t item_size) {
    const int64_t max = std::numeric_limits<int64_t>::max();
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) return -1;
        if (d != 0 && n > max / d) return -1;
        n *= d;
    }
    if (n > max / int64_t(item_size)) return -1;
    return n;
}

// The fields of a .npy header dict.
struct npy_header {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
};

// A parser for the small Python literal subset .npy headers use: a dict with
// string keys whose values are strings, True/False and tuples of integers.
class header_parser {
public:
    header_parser(const std::string &text, const std::string &name) : s_(text), name_(name) {}

    npy_header parse() {
        npy_header h;
        bool seen_descr = false, seen_fortran = false, seen_shape = false;
        skip_space();
        expect('{');
        while (true) {
            skip_space();
            if (eat('}')) break;
            const std::string key = parse_string();
            skip_space();
            expect(':');
            skip_space();
            if (key == "descr") {
                mark_seen(seen_descr, key);
                if (peek() == '[')
                    fail_unsupported("structured (record) dtypes are not supported");
                h.descr = parse_string();
            } else if (key == "fortran_order") {
                mark_seen(seen_fortran, key);
                h.fortran_order = parse_bool();
            } else if (key == "shape") {
                mark_seen(seen_shape, key);
                h.shape = parse_tuple();
            } else {
                fail("unexpected key '" + key + "'");
            }
            skip_space();
            if (eat(',')) continue;
            expect('}');
            break;
        }
        skip_space();
        if (pos_ != s_.size()) fail("unexpected text after the dict");
        if (!seen_descr || !seen_fortran || !seen_shape)
            fail("the dict needs the keys 'descr', 'fortran_order' and 'shape'");
        return h;
    }

private:
    [[noreturn]] void fail(const std::string &what) const {
        std::string shown = s_.size() > 120 ? s_.substr(0, 117) + "..." : s_;
        while (!shown.empty() && (shown.back() == '\n' || shown.back() == ' ')) shown.pop_back();
        throw error(status::invalid_argument,
                name_ + ": malformed .npy header: " + what + " (at offset "
                        + std::to_string(pos_) + " of \"" + shown + "\")");
    }
    [[noreturn]] void fail_unsupported(const std::string &what) const {
        throw error(status::unimplemented, name_ + ": " + what);
    }
    void mark_seen(bool &seen, const std::string &key) {
        if (seen) fail("duplicate key '" + key + "'");
        seen = true;
    }
    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    bool eat(char c) {
        if (peek() != c || pos_ >= s_.size()) return false;
        ++pos_;
        return true;
    }
    void expect(char c) {
        if (!eat(c)) fail(std::string("expected '") + c + "'");
    }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }
    std::string parse_string() {
        const char quote = peek();
        if (quote != '\'' && quote != '"') fail("expected a quoted string");
        ++pos_;
        const size_t start = pos_;
        while (pos_ < s_.size() && s_[pos_] != quote) {
            // No key or descr we accept needs escapes; refusing them keeps this simple.
            if (s_[pos_] == '\\') fail("escapes in strings are not supported");
            ++pos_;
        }
        if (pos_ >= s_.size()) fail("unterminated string");
        return s_.substr(start, pos_++ - start);
    }
    bool parse_bool() {
        if (s_.compare(pos_, 4, "True") == 0) { pos_ += 4; return true; }
        if (s_.compare(pos_, 5, "False") == 0) { pos_ += 5; return false; }
        fail("expected True or False");
    }
    int64_t parse_dim() {
        if (peek() == '-') fail("negative dimension in shape");
        if (!(peek() >= '0' && peek() <= '9')) fail("expected an integer in shape");
        int64_t v = 0;
        while (peek() >= '0' && peek() <= '9') {
            const int digit = peek() - '0';
            if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
                fail("dimension in shape does not fit int64");
            v = v * 10 + digit;
            ++pos_;
        }
        eat('L'); // Python 2 long suffix, as old NumPy wrote (3L, 4L)
        return v;
    }
    std::vector<int64_t> parse_tuple() {
        std::vector<int64_t> dims;
        expect('(');
        skip_space();
        if (eat(')')) return dims;
        while (true) {
            skip_space();
            dims.push_back(parse_dim());
            skip_space();
            if (eat(',')) {
                skip_space();
                if (eat(')')) break;
                continue;
            }
            expect(')');
            break;
        }
        return dims;
    }

    const std::string &s_;
    const std::string &name_;
    size_t pos_ = 0;
};

uint32_t read_le(const std::vector<uint8_t> &b, size_t at, size_t n) {
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint32_t(b[at + i]) << (8 * i);
    return v;
}

[[noreturn]] void fail(status s, const std::string &name, const std::string &what) {
    throw error(s, name + ": " + what);
}

} // namespace

npy_array parse_npy(const std::vector<uint8_t> &bytes, const std::string &name) {
    require_little_endian_host();
    const size_t size = bytes.size();
    // A file that starts like the magic but stops early is truncated, not alien.
    const size_t magic_seen = std::min(size, magic_size);
    if (!std::equal(bytes.begin(), bytes.begin() + std::ptrdiff_t(magic_seen), magic))
        fail(status::invalid_argument, name, "bad magic: not a .npy file");
    if (size < magic_size)
        fail(status::invalid_argument, name,
                "truncated: " + std::to_string(size) + " bytes, shorter than the .npy magic");
    if (size < 8)
        fail(status::invalid_argument, name, "truncated: the file ends inside the version bytes");
    const int major = bytes[6], minor = bytes[7];
    size_t len_size;
    if (major == 1 && minor == 0) len_size = 2;
    else if ((major == 2 || major == 3) && minor == 0) len_size = 4;
    else
        fail(status::unimplemented, name,
                "unsupported .npy format version " + std::to_string(major) + "."
                        + std::to_string(minor) + " (1.0, 2.0 and 3.0 are supported)");
    const size_t header_start = 8 + len_size;
    if (size < header_start)
        fail(status::invalid_argument, name,
                "truncated: the file ends inside the header length field");
    const size_t header_len = read_le(bytes, 8, len_size);
    if (header_len > size - header_start)
        fail(status::invalid_argument, name,
                "header length " + std::to_string(header_len) + " runs past the end of the file ("
                        + std::to_string(size) + " bytes)");

    const std::string header_text(
            reinterpret_cast<const char *>(bytes.data()) + header_start, header_len);
    const npy_header h = header_parser(header_text, name).parse();

    if (h.fortran_order)
        fail(status::unimplemented, name,
                "fortran_order arrays are not supported; save with np.ascontiguousarray");
    const descr_info *info = find_descr(h.descr);
    if (!info) {
        if (!h.descr.empty() && h.descr[0] == '>')
            fail(status::unimplemented, name,
                    "big-endian data ('" + h.descr + "') is not supported; save with "
                            "arr.astype(arr.dtype.newbyteorder('<'))");
        fail(status::unimplemented, name,
                "unsupported dtype descr '" + h.descr + "'; supported: <f4, <f2, <i4, <f8");
    }
    const int64_t count = checked_count(h.shape, info->item_size);
    if (count < 0)
        fail(status::invalid_argument, name,
                "shape " + shape_text(h.shape) + " has an element count that overflows int64");

    // Both sides are within int64 here, so the comparison is exact.
    const size_t data_start = header_start + header_len;
    const uint64_t expected = uint64_t(count) * info->item_size;
    const uint64_t present = size - data_start;
    if (present != expected)
        fail(status::invalid_argument, name,
                std::string(present < expected ? "data too short" : "data too long") + ": shape "
                        + shape_text(h.shape) + " of '" + h.descr + "' needs "
                        + std::to_string(expected) + " bytes, the file has "
                        + std::to_string(present));

    npy_array a;
    a.descr = h.descr;
    a.shape = h.shape;
    a.data.assign(bytes.begin() + std::ptrdiff_t(data_start), bytes.end());
    return a;
}

npy_array read_npy(const std::string &path) { return parse_npy(read_file_bytes(path), path); }

std::vector<uint8_t> serialize_npy(const npy_array &a) {
    require_little_endian_host();
    const descr_info *info = find_descr(a.descr);
    if (!info)
        throw error(status::invalid_argument,
                "serialize_npy: unsupported descr '" + a.descr + "'; supported: <f4, <f2, <i4, <f8");
    const int64_t count = checked_count(a.shape, info->item_size);
    if (count < 0)
        throw error(status::invalid_argument,
                "serialize_npy: shape " + shape_text(a.shape)
                        + " has a negative dim or an element count that overflows");
    if (uint64_t(a.data.size()) != uint64_t(count) * info->item_size)
        throw error(status::invalid_argument,
                "serialize_npy: shape " + shape_text(a.shape) + " of '" + a.descr + "' needs "
                        + std::to_string(uint64_t(count) * info->item_size) + " bytes, data has "
                        + std::to_string(a.data.size()));

    std::string header = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': "
            + shape_text(a.shape) + ", }";
    // Pad with spaces so the data starts on a 64-byte boundary (what NumPy
    // does, for aligned memory maps); the header ends with '\n'.
    const size_t prefix = magic_size + 2 + 2;
    const size_t unpadded = prefix + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';
    if (header.size() > 0xffff)
        throw error(status::invalid_argument, "serialize_npy: header too long for format 1.0");

    std::vector<uint8_t> out(prefix + header.size() + a.data.size());
    std::memcpy(out.data(), magic, magic_size);
    out[6] = 1; // version 1.0
    out[7] = 0;
    out[8] = uint8_t(header.size() & 0xff);
    out[9] = uint8_t(header.size() >> 8);
    std::memcpy(out.data() + prefix, header.data(), header.size());
    if (!a.data.empty())
        std::memcpy(out.data() + prefix + header.size(), a.data.data(), a.data.size());
    return out;
}

void write_npy(const std::string &path, const npy_array &a) { write_file_bytes(path, serialize_npy(a)); }

namespace {

// Checks that lt describes real memory (known shape, strided, strides of the
// shape's rank, non-negative) and that a non-empty tensor has a buffer.
void check_concrete(const logical_tensor &lt, const void *buffer, const std::string &name) {
    if (!lt.has_known_shape() || lt.get_layout_type() != layout_type::strided
            || lt.get_strides().size() != lt.get_dims().size())
        fail(status::invalid_shape, name,
                "logical tensor " + std::to_string(lt.get_id())
                        + " needs a known shape and a strided layout with strides");
    lt.get_mem_size(); // throws on negative strides or an overflowing size
    if (!buffer && lt.element_count() > 0)
        fail(status::invalid_argument, name,
                "null buffer for logical tensor " + std::to_string(lt.get_id()));
}

} // namespace

void npy_to_buffer(const npy_array &a, const logical_tensor &lt, void *buffer,
        const std::string &name) {
    check_concrete(lt, buffer, name);
    if (a.shape != lt.get_dims())
        fail(status::invalid_shape, name,
                "array shape " + shape_text(a.shape) + " does not match logical tensor "
                        + std::to_string(lt.get_id()) + " shape " + shape_text(lt.get_dims()));
    const data_type dt = lt.get_data_type();
    const descr_info *info = find_descr(a.descr);
    const bool ok = info
            && ((a.descr == "<f4" || a.descr == "<f8") ? is_floating(dt)
                    : a.descr == "<f2"                 ? dt == data_type::f16
                                                       : dt == data_type::s32);
    if (!ok)
        fail(status::invalid_data_type, name,
                "array dtype '" + a.descr + "' cannot fill logical tensor "
                        + std::to_string(lt.get_id()) + " of data type " + to_string(dt)
                        + " (<f4/<f8: f32, bf16, f16; <f2: f16; <i4: s32)");
    const int64_t count = lt.element_count();
    if (uint64_t(a.data.size()) != uint64_t(count) * info->item_size)
        fail(status::invalid_argument, name,
                "array data has " + std::to_string(a.data.size()) + " bytes, its shape needs "
                        + std::to_string(uint64_t(count) * info->item_size));

    const uint8_t *src = a.data.data();
    const size_t item = info->item_size;
    auto *dst = static_cast<uint8_t *>(buffer);
    int64_t i = 0; // C-order element index in the array
    core::for_each_index(lt.get_dims(), lt.get_strides(), [&](const dims &, int64_t off) {
        const uint8_t *from = src + size_t(i++) * item;
        if (a.descr == "<f4" || a.descr == "<f8") {
            // "<f8" goes double -> float -> 16-bit, each step to nearest even.
            // Rounding twice can differ from rounding once by one unit in the
            // rare case where the first step lands exactly on a tie.
            double v;
            if (item == 4) { float f; std::memcpy(&f, from, 4); v = f; }
            else std::memcpy(&v, from, 8);
            core::store_from_double(buffer, dt, off, v);
        } else {
            // "<f2" into f16 and "<i4" into s32: same bits.
            std::memcpy(dst + size_t(off) * item, from, item);
        }
    });
}

npy_array buffer_to_npy(const logical_tensor &lt, const void *buffer) {
    const std::string name = "logical tensor " + std::to_string(lt.get_id());
    check_concrete(lt, buffer, name);
    const data_type dt = lt.get_data_type();
    npy_array a;
    switch (dt) {
        case data_type::f32:
        case data_type::bf16: a.descr = "<f4"; break; // bf16 widens to f32 exactly
        case data_type::f16: a.descr = "<f2"; break;
        case data_type::s32: a.descr = "<i4"; break;
        default:
            fail(status::invalid_data_type, name,
                    std::string("data type ") + to_string(dt) + " cannot be written to .npy");
    }
    a.shape = lt.get_dims();
    const size_t item = find_descr(a.descr)->item_size;
    a.data.resize(size_t(lt.element_count()) * item);
    const auto *src = static_cast<const uint8_t *>(buffer);
    uint8_t *out = a.data.data();
    int64_t i = 0;
    core::for_each_index(lt.get_dims(), lt.get_strides(), [&](const dims &, int64_t off) {
        uint8_t *to = out + size_t(i++) * item;
        if (dt == data_type::bf16) {
            const float f = float(core::load_as_double(buffer, dt, off));
            std::memcpy(to, &f, 4);
        } else {
            std::memcpy(to, src + size_t(off) * size_of(dt), item);
        }
    });
    return a;
}

} // namespace bpg::io
