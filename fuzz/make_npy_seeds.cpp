// Writes the .npy seed corpus of fuzz_npy into the directory given: every
// supported dtype, ranks 0 to 4, an empty array, and format versions 1.0,
// 2.0 and 3.0 (the fuzzer mutates from there).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "io/npy.hpp"

namespace {

bpg::io::npy_array array_of(const std::string &descr, std::vector<int64_t> shape, size_t item) {
    bpg::io::npy_array a;
    a.descr = descr;
    a.shape = std::move(shape);
    size_t n = 1;
    for (int64_t d : a.shape) n *= size_t(d);
    a.data.resize(n * item);
    for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = uint8_t(i * 37 + 11);
    return a;
}

// Version 2.0/3.0 files differ from 1.0 in the version bytes and a 4-byte
// header length.
std::vector<uint8_t> as_version(std::vector<uint8_t> v1, uint8_t major) {
    const size_t header_len = v1[8] | (size_t(v1[9]) << 8);
    std::vector<uint8_t> out(v1.begin(), v1.begin() + 8);
    out[6] = major;
    for (int i = 0; i < 4; ++i) out.push_back(uint8_t(header_len >> (8 * i)));
    out.insert(out.end(), v1.begin() + 10, v1.end());
    return out;
}

void save(const std::string &path, const std::vector<uint8_t> &bytes) {
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
        std::perror(path.c_str());
        std::exit(1);
    }
    std::fclose(f);
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_npy_seeds DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    std::filesystem::create_directories(dir);
    const std::vector<bpg::io::npy_array> arrays = {
            array_of("<f4", {2, 3}, 4), array_of("<f4", {}, 4), array_of("<f2", {1, 2, 2, 3}, 2),
            array_of("<i4", {5}, 4), array_of("<f8", {2, 1, 2}, 8), array_of("<f4", {0, 3}, 4)};
    int n = 0;
    for (const auto &a : arrays) {
        const std::vector<uint8_t> v1 = bpg::io::serialize_npy(a);
        save(dir + "/seed" + std::to_string(n++) + ".npy", v1);
        save(dir + "/seed" + std::to_string(n++) + ".npy", as_version(v1, 2));
    }
    save(dir + "/seed" + std::to_string(n++) + ".npy", as_version(bpg::io::serialize_npy(arrays[0]), 3));
    std::printf("make_npy_seeds: %d files in %s\n", n, dir.c_str());
    return 0;
}
