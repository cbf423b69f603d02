// Turns fuzzer bytes into JSON text of shapes byte mutation of a seed
// almost never reaches: 150000 levels of nesting, 131072-element arrays,
// thousands of ops, megabyte strings, duplicate keys. An input whose first
// byte is below 0x10 is a recipe (JSON text never starts with those bytes):
// that byte picks the shape, the next bytes its size, place and content.
// A size is followed by a shift that divides it by a power of two, so most
// mutated recipes are small and fast, and the seeds keep the big ones.
// Any other input is used as the text itself, so real documents in the
// seed corpus are fuzzed as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bpg::fuzz {

class json_generator {
public:
    json_generator(const uint8_t *data, size_t size) : p_(data), end_(data + size) {}

    std::string text() {
        if (p_ == end_ || *p_ >= 0x10) return std::string(p_, end_);
        switch (byte() % 5) {
            case 0: return deep();
            case 1: return long_array();
            case 2: return many_ops();
            case 3: return long_name();
            default: return duplicate_key();
        }
    }

private:
    const uint8_t *p_, *end_;

    uint32_t byte() { return p_ == end_ ? 0 : *p_++; }
    uint32_t u16() { return byte() | byte() << 8; }
    uint32_t u24() { return u16() | byte() << 16; }
    std::string rest() { return std::string(p_, end_); }
    uint32_t size(uint32_t n) { return n >> (byte() % 24); }

    static std::string tensor(size_t id, const std::string &shape = "[2, 3]", const std::string &stride = "[3, 1]") {
        return "{\"id\": " + std::to_string(id) + ", \"dtype\": \"f32\", \"shape\": " + shape + ", \"stride\": " + stride
                + ", \"layout_type\": \"strided\", \"property_type\": \"undef\"}";
    }
    // ReLUBackward op `id`: src, diff_dst -> diff_src (a graph of these runs).
    static std::string relu(size_t id, size_t src, size_t dd, size_t out, const std::string &name = "r",
            const std::string &attrs = "{}", const std::string &src_tensor = "") {
        return "{\"id\": " + std::to_string(id) + ", \"name\": \"" + name + "\", \"kind\": \"ReLUBackward\", \"attrs\": "
                + attrs + ", \"inputs\": [" + (src_tensor.empty() ? tensor(src) : src_tensor) + ", " + tensor(dd)
                + "], \"outputs\": [" + tensor(out) + "]}";
    }
    static std::string document(const std::string &ops, const std::string &extra = "") {
        return "{\"version\": \"3.0.0\", \"engine_kind\": \"cpu\", \"graph\": [" + ops + "]" + extra + "}";
    }

    // Levels of arrays and objects (bits of a pattern byte choose) around
    // the rest of the input, put where a byte says.
    std::string deep() {
        const uint32_t levels = size(u24() % 150000) + 1, pattern = byte(), place = byte() % 4;
        std::string core = rest();
        if (core.empty()) core = "0";
        std::string open, close;
        for (uint32_t i = 0; i < levels; ++i) {
            const bool object = pattern >> (i % 8) & 1;
            open += object ? "{\"k\": " : "[";
            close += object ? "}" : "]";
        }
        const std::string value = open + core + std::string(close.rbegin(), close.rend());
        switch (place) {
            case 0: return document(relu(0, 0, 1, 2), ", \"x\": " + value);
            case 1: return document(relu(0, 0, 1, 2, "r", "{\"scales\": {\"type\": \"f32[]\", \"value\": " + value + "}}"));
            case 2: return document(value);
            default: return value;
        }
    }

    // One array of up to 2^17 elements in one of five places: enough to show
    // quadratic work, small enough that the three parses of a document the
    // harness does (instrumented, ~25 us per element) stay far from the timeout.
    std::string long_array() {
        const uint32_t n = size(u24() % (1u << 17)), place = byte() % 5, kind = byte() % 4;
        const char *const elements[] = {"1", "0.5", "\"s\"", "[]"};
        std::string arr = "[";
        for (uint32_t i = 0; i < n; ++i) arr += (i ? ", " : "") + std::string(elements[kind]);
        arr += "]";
        switch (place) {
            case 0: return document(relu(0, 0, 1, 2), ", \"x\": " + arr);
            case 1: return document(relu(0, 0, 1, 2, "r", "{}", tensor(0, arr, arr)));
            case 2: return document(relu(0, 0, 1, 2, "r", "{\"scales\": {\"type\": \"f32[]\", \"value\": " + arr + "}}"));
            case 3: return document(relu(0, 0, 1, 2), ", \"input_ports\": " + arr);
            default: return arr;
        }
    }

    // A chain of up to 2048 ReLU backward ops, each consuming the last.
    std::string many_ops() {
        const uint32_t n = size(u16() % 2048) + 1;
        std::string ops;
        for (uint32_t k = 0; k < n; ++k)
            ops += (k ? ", " : "") + relu(k, k == 0 ? 0 : 100000 + k - 1, 200000 + k, 100000 + k);
        return document(ops);
    }

    // An op name of up to a megabyte of one byte value (control characters,
    // escaped as JSON requires, included).
    std::string long_name() {
        const uint32_t n = size(u24() % (1u << 20)), c = byte();
        std::string unit;
        if (c < 0x20 || c == '"' || c == '\\') {
            static const char hex[] = "0123456789abcdef";
            unit = std::string("\\u00") + hex[c >> 4] + hex[c & 15];
        } else {
            unit = std::string(1, char(c));
        }
        std::string name;
        for (uint32_t i = 0; i < n; ++i) name += unit;
        return document(relu(0, 0, 1, 2, name, byte() & 1 ? "{}" : "{\"bogus\": 1}"));
    }

    // A valid document with one key written twice in the object a byte picks.
    std::string duplicate_key() {
        switch (byte() % 4) {
            case 0: return document(relu(0, 0, 1, 2), ", \"version\": \"3.0.0\"");
            case 1: {
                std::string op = relu(0, 0, 1, 2);
                return document(op.insert(1, "\"kind\": \"ReLUBackward\", "));
            }
            case 2: return document(relu(0, 0, 1, 2, "r", "{\"use_dst\": {\"type\": \"bool\", \"value\": 0}, "
                                                     "\"use_dst\": {\"type\": \"bool\", \"value\": 1}}"));
            default: {
                std::string t = tensor(0);
                return document(relu(0, 0, 1, 2, "r", "{}", t.insert(1, "\"id\": 9, ")));
            }
        }
    }
};

} // namespace bpg::fuzz
