// .npy reading/writing and the mapping of arrays onto strided buffers:
// round trips, versions 1-3, dtype conversion with ties, and every class of
// malformed file (status plus the file name in the message).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

#include <gtest/gtest.h>

#include "support/expect_error.hpp"

#include "io/npy.hpp"
#include "kernels/dtype_convert.hpp"

namespace {

using namespace bpg;
using namespace bpg::io;

using test::expect_error;

template <typename T> std::vector<uint8_t> bytes_of(const std::vector<T> &v) {
    std::vector<uint8_t> b(v.size() * sizeof(T));
    if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

template <typename T> std::vector<T> values_of(const std::vector<uint8_t> &b) {
    std::vector<T> v(b.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
    return v;
}

// A raw .npy file with any header text, version and data, for malformed cases.
std::vector<uint8_t> raw_npy(const std::string &header, const std::vector<uint8_t> &data,
        int major = 1) {
    std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
    const size_t n = header.size();
    out.push_back(uint8_t(n & 0xff));
    out.push_back(uint8_t((n >> 8) & 0xff));
    if (major >= 2) {
        out.push_back(uint8_t((n >> 16) & 0xff));
        out.push_back(uint8_t((n >> 24) & 0xff));
    }
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

std::string dict(const std::string &descr, const std::string &shape, bool fortran = false) {
    return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False")
            + ", 'shape': " + shape + ", }\n";
}

npy_array make(const std::string &descr, std::vector<int64_t> shape, std::vector<uint8_t> data) {
    npy_array a;
    a.descr = descr;
    a.shape = std::move(shape);
    a.data = std::move(data);
    return a;
}

void expect_same(const npy_array &a, const npy_array &b) {
    EXPECT_EQ(a.descr, b.descr);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.data, b.data);
}

// ---- round trips ----------------------------------------------------------

TEST(Npy, RoundTripsEveryDescrAndShape) {
    const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3}, {0, 3}, {1, 2, 1, 3}};
    for (const char *descr : {"<f4", "<f2", "<i4", "<f8"}) {
        const size_t item = std::string(descr) == "<f2" ? 2 : std::string(descr) == "<f8" ? 8 : 4;
        for (const auto &shape : shapes) {
            int64_t n = 1;
            for (int64_t d : shape) n *= d;
            std::vector<uint8_t> data(size_t(n) * item);
            for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 37 + 11);
            const npy_array a = make(descr, shape, data);
            const std::vector<uint8_t> file = serialize_npy(a);
            SCOPED_TRACE(std::string(descr) + " rank " + std::to_string(shape.size()));
            // Version 1.0, data on a 64-byte boundary, header ends in '\n'.
            EXPECT_EQ(file[6], 1);
            EXPECT_EQ(file[7], 0);
            const size_t data_start = 10 + size_t(file[8] | (file[9] << 8));
            EXPECT_EQ(data_start % 64, 0u);
            EXPECT_EQ(file[data_start - 1], '\n');
            expect_same(a, parse_npy(file, "mem.npy"));
        }
    }
}

TEST(Npy, HeaderTextMatchesNumpy) {
    const std::vector<uint8_t> file = serialize_npy(make("<f4", {3}, std::vector<uint8_t>(12)));
    const std::string header(file.begin() + 10, file.begin() + 10 + (file[8] | (file[9] << 8)));
    EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0), 0u) << header;
    const std::vector<uint8_t> scalar = serialize_npy(make("<i4", {}, std::vector<uint8_t>(4)));
    EXPECT_NE(std::string(scalar.begin(), scalar.end()).find("'shape': (), }"), std::string::npos);
}

TEST(Npy, FileRoundTrip) {
    const std::string path = ::testing::TempDir() + "bpg_test_npy_roundtrip.npy";
    const npy_array a = make("<f4", {2, 2}, bytes_of(std::vector<float> {1.f, -2.f, 3.5f, 0.f}));
    write_npy(path, a);
    expect_same(a, read_npy(path));
    std::remove(path.c_str());
}

TEST(Npy, ReadsVersions2And3AndOldStyleHeaders) {
    const std::vector<uint8_t> data = bytes_of(std::vector<int32_t> {1, 2, 3, 4, 5, 6});
    for (int major : {2, 3}) {
        const npy_array a = parse_npy(raw_npy(dict("<i4", "(2, 3)"), data, major), "v.npy");
        EXPECT_EQ(a.shape, (std::vector<int64_t> {2, 3}));
        EXPECT_EQ(a.data, data);
    }
    // Python 2 NumPy: long suffixes; keys in another order, double quotes, no trailing comma.
    const npy_array b = parse_npy(
            raw_npy("{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"<i4\"}   \n", data),
            "old.npy");
    EXPECT_EQ(b.shape, (std::vector<int64_t> {2, 3}));
}

// ---- mapping onto strided buffers ------------------------------------------

TEST(Npy, StridedChannelsLastMapping) {
    // A 2x3x4 (N, C, W) array into a buffer with channels-last strides.
    std::vector<float> values(24);
    for (int i = 0; i < 24; ++i) values[size_t(i)] = float(i);
    const npy_array a = make("<f4", {2, 3, 4}, bytes_of(values));
    const logical_tensor lt(9, data_type::f32, {2, 3, 4}, {12, 1, 3});
    std::vector<float> buffer(24, -1.f);
    npy_to_buffer(a, lt, buffer.data(), "x.npy");
    for (int n = 0; n < 2; ++n)
        for (int c = 0; c < 3; ++c)
            for (int w = 0; w < 4; ++w)
                EXPECT_EQ(buffer[size_t(n * 12 + c * 1 + w * 3)], float(n * 12 + c * 4 + w));
    expect_same(a, buffer_to_npy(lt, buffer.data()));
}

TEST(Npy, PaddedStridesLeaveGapsUntouched) {
    const npy_array a = make("<i4", {2, 2}, bytes_of(std::vector<int32_t> {1, 2, 3, 4}));
    const logical_tensor lt(1, data_type::s32, {2, 2}, {3, 1});
    std::vector<int32_t> buffer(6, 99);
    npy_to_buffer(a, lt, buffer.data(), "p.npy");
    EXPECT_EQ(buffer, (std::vector<int32_t> {1, 2, 99, 3, 4, 99}));
    expect_same(a, buffer_to_npy(lt, buffer.data()));
}

TEST(Npy, RoundsToBf16AndF16NearestEven) {
    // Ties: 1 + 2^-8 lies halfway between bf16 1.0 and the next value, so it
    // rounds to the even 1.0; 1 + 3*2^-8 rounds up to the even 1 + 2^-6.
    // Same for f16 with 2^-11.
    const std::vector<float> v = {1.f + 0x1p-8f, 1.f + 3 * 0x1p-8f, 1.f + 0x1p-11f, 1.f + 3 * 0x1p-11f};
    const npy_array a = make("<f4", {4}, bytes_of(v));
    std::vector<uint16_t> bf(4), hf(4);
    npy_to_buffer(a, logical_tensor(0, data_type::bf16, {4}), bf.data(), "t.npy");
    npy_to_buffer(a, logical_tensor(0, data_type::f16, {4}), hf.data(), "t.npy");
    EXPECT_EQ(bf[0], 0x3f80);
    EXPECT_EQ(bf[1], 0x3f82);
    EXPECT_EQ(hf[2], 0x3c00);
    EXPECT_EQ(hf[3], 0x3c02);
    // bf16 widens back exactly, as "<f4".
    const npy_array back = buffer_to_npy(logical_tensor(0, data_type::bf16, {4}), bf.data());
    EXPECT_EQ(back.descr, "<f4");
    EXPECT_EQ(values_of<float>(back.data)[1], 1.f + 0x1p-6f);
    // f16 comes back bit for bit, as "<f2".
    const npy_array h = buffer_to_npy(logical_tensor(0, data_type::f16, {4}), hf.data());
    EXPECT_EQ(h.descr, "<f2");
    EXPECT_EQ(values_of<uint16_t>(h.data), hf);
}

TEST(Npy, AcceptedDescrDtypePairs) {
    // "<f8" into f32 rounds once; into bf16 via f32.
    const npy_array d = make("<f8", {2}, bytes_of(std::vector<double> {0.1, -3.0}));
    std::vector<float> f(2);
    npy_to_buffer(d, logical_tensor(0, data_type::f32, {2}), f.data(), "d.npy");
    EXPECT_EQ(f, (std::vector<float> {0.1f, -3.f}));
    std::vector<uint16_t> bf(2);
    npy_to_buffer(d, logical_tensor(0, data_type::bf16, {2}), bf.data(), "d.npy");
    EXPECT_EQ(bf[1], kernels::f32_to_bf16(-3.f));
    // "<f2" into f16 copies the bits.
    const std::vector<uint16_t> halves = {0x3c00, 0x7bff, 0x0001};
    std::vector<uint16_t> hf(3);
    npy_to_buffer(make("<f2", {3}, bytes_of(halves)), logical_tensor(0, data_type::f16, {3}), hf.data(), "h.npy");
    EXPECT_EQ(hf, halves);
    // Zero-size arrays need no buffer.
    npy_to_buffer(make("<f4", {0, 4}, {}), logical_tensor(0, data_type::f32, {0, 4}), nullptr, "z.npy");
    EXPECT_TRUE(buffer_to_npy(logical_tensor(0, data_type::f32, {0, 4}), nullptr).data.empty());
}

TEST(Npy, RejectsMismatchedDtypes) {
    std::vector<float> buf(4);
    const npy_array f2 = make("<f2", {2}, std::vector<uint8_t>(4));
    expect_error([&] { npy_to_buffer(f2, logical_tensor(3, data_type::f32, {2}), buf.data(), "h.npy"); },
            status::invalid_data_type, {"h.npy", "<f2", "f32"});
    const npy_array i4 = make("<i4", {2}, std::vector<uint8_t>(8));
    expect_error([&] { npy_to_buffer(i4, logical_tensor(3, data_type::bf16, {2}), buf.data(), "i.npy"); },
            status::invalid_data_type, {"i.npy", "<i4", "bf16"});
    const npy_array f4 = make("<f4", {2}, std::vector<uint8_t>(8));
    expect_error([&] { npy_to_buffer(f4, logical_tensor(3, data_type::s32, {2}), buf.data(), "f.npy"); },
            status::invalid_data_type, {"f.npy", "<f4", "s32"});
}

TEST(Npy, RejectsShapeMismatchAndNonConcreteTensors) {
    std::vector<float> buf(6);
    const npy_array a = make("<f4", {2, 3}, std::vector<uint8_t>(24));
    expect_error([&] { npy_to_buffer(a, logical_tensor(3, data_type::f32, {3, 2}), buf.data(), "s.npy"); },
            status::invalid_shape, {"s.npy", "(2, 3)", "(3, 2)"});
    expect_error([&] { npy_to_buffer(a, logical_tensor(3, data_type::f32, {2, -1}), buf.data(), "s.npy"); },
            status::invalid_shape, {"s.npy", "logical tensor 3"});
    expect_error([&] { npy_to_buffer(a, logical_tensor(3, data_type::f32, {2, 3}), nullptr, "s.npy"); },
            status::invalid_argument, {"s.npy", "null"});
}

// ---- malformed files --------------------------------------------------------

std::vector<uint8_t> good_file() {
    return serialize_npy(make("<f4", {2, 3}, std::vector<uint8_t>(24)));
}

TEST(NpyErrors, Truncated) {
    std::vector<uint8_t> f = good_file();
    for (size_t keep : {size_t(0), size_t(4), size_t(7), size_t(9)}) {
        const std::vector<uint8_t> cut(f.begin(), f.begin() + std::ptrdiff_t(keep));
        expect_error([&] { parse_npy(cut, "cut.npy"); }, status::invalid_argument, {"cut.npy", "truncated"});
    }
}

TEST(NpyErrors, BadMagic) {
    std::vector<uint8_t> f = good_file();
    f[5] = 'X';
    expect_error([&] { parse_npy(f, "magic.npy"); }, status::invalid_argument, {"magic.npy", "magic"});
}

TEST(NpyErrors, HeaderLengthPastEnd) {
    std::vector<uint8_t> f = good_file();
    f[8] = 0x60; // 60000 bytes of header in a ~100-byte file
    f[9] = 0xea;
    expect_error([&] { parse_npy(f, "long.npy"); }, status::invalid_argument, {"long.npy", "header length 60000"});
    // Version 2 with a 4 GB header length.
    const std::vector<uint8_t> v2 = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0xff, '{'};
    expect_error([&] { parse_npy(v2, "long2.npy"); }, status::invalid_argument, {"long2.npy", "header length"});
}

TEST(NpyErrors, ShapeProductOverflow) {
    expect_error([] { parse_npy(raw_npy(dict("<f4", "(4294967296, 4294967296)"), {}), "big.npy"); },
            status::invalid_argument, {"big.npy", "overflow"});
    // Fits as a count, overflows as bytes.
    expect_error([] { parse_npy(raw_npy(dict("<f8", "(4611686018427387904,)"), {}), "big.npy"); },
            status::invalid_argument, {"big.npy", "overflow"});
    expect_error([] { parse_npy(raw_npy(dict("<f4", "(99999999999999999999,)"), {}), "big.npy"); },
            status::invalid_argument, {"big.npy", "int64"});
    expect_error([] { parse_npy(raw_npy(dict("<f4", "(-1, 3)"), {}), "neg.npy"); },
            status::invalid_argument, {"neg.npy", "negative"});
}

TEST(NpyErrors, DataTooShortOrTooLong) {
    std::vector<uint8_t> f = good_file();
    f.pop_back();
    expect_error([&] { parse_npy(f, "short.npy"); }, status::invalid_argument,
            {"short.npy", "too short", "24", "23"});
    f.push_back(0);
    f.push_back(0);
    expect_error([&] { parse_npy(f, "long.npy"); }, status::invalid_argument,
            {"long.npy", "too long", "24", "25"});
}

TEST(NpyErrors, FortranOrder) {
    expect_error([] { parse_npy(raw_npy(dict("<f4", "(2, 2)", true), std::vector<uint8_t>(16)), "f.npy"); },
            status::unimplemented, {"f.npy", "fortran_order", "np.ascontiguousarray"});
}

TEST(NpyErrors, BigEndian) {
    expect_error([] { parse_npy(raw_npy(dict(">f4", "(2,)"), std::vector<uint8_t>(8)), "be.npy"); },
            status::unimplemented, {"be.npy", "big-endian", ">f4"});
}

TEST(NpyErrors, UnsupportedDescrAndVersion) {
    expect_error([] { parse_npy(raw_npy(dict("<i8", "(2,)"), std::vector<uint8_t>(16)), "i8.npy"); },
            status::unimplemented, {"i8.npy", "<i8"});
    expect_error([] { parse_npy(raw_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n", std::vector<uint8_t>(4)), "rec.npy"); },
            status::unimplemented, {"rec.npy", "structured"});
    std::vector<uint8_t> f = good_file();
    f[6] = 4;
    expect_error([&] { parse_npy(f, "v4.npy"); }, status::unimplemented, {"v4.npy", "4.0"});
}

TEST(NpyErrors, MalformedDict) {
    const std::vector<uint8_t> d(8);
    for (const char *header : {
                 "{'descr': '<f4', 'shape': (2,), }\n",                              // missing key
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", // extra key
                 "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\n",
                 "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}\n",
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (2,}\n",
                 "{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}\n",
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk\n",
                 "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}\n",
                 "not a dict\n",
                 ""}) {
        SCOPED_TRACE(header);
        expect_error([&] { parse_npy(raw_npy(header, d), "dict.npy"); }, status::invalid_argument,
                {"dict.npy", "malformed .npy header"});
    }
}

// Corrupted and cut files only ever raise bpg::error (run under ASan to see
// that no read strays out of bounds).
TEST(NpyErrors, CorruptionsOnlyRaiseBpgErrors) {
    const std::vector<uint8_t> good = serialize_npy(make("<f2", {3, 5}, std::vector<uint8_t>(30)));
    uint32_t state = 12345;
    auto next = [&] { return state = state * 1664525u + 1013904223u; };
    for (int trial = 0; trial < 2000; ++trial) {
        std::vector<uint8_t> f = good;
        for (int k = 0; k < 1 + trial % 4; ++k) f[next() % 80] = uint8_t(next() >> 24);
        if (trial % 3 == 0) f.resize(next() % f.size());
        try {
            parse_npy(f, "fuzz.npy");
        } catch (const error &) {
        }
    }
}

TEST(NpyErrors, FileErrorsNameThePath) {
    const std::string missing = ::testing::TempDir() + "bpg_no_such_array.npy";
    expect_error([&] { read_npy(missing); }, status::invalid_argument, {missing});
    const std::string bad = ::testing::TempDir() + "bpg_bad_array.npy";
    std::ofstream(bad) << "hello";
    expect_error([&] { read_npy(bad); }, status::invalid_argument, {bad, "magic"});
    std::remove(bad.c_str());
}

TEST(NpyErrors, WriterChecksItsInput) {
    expect_error([] { serialize_npy(make("<f4", {2, 3}, std::vector<uint8_t>(20))); },
            status::invalid_argument, {"24", "20"});
    expect_error([] { serialize_npy(make("<u1", {2}, std::vector<uint8_t>(2))); },
            status::invalid_argument, {"<u1"});
}

} // namespace
