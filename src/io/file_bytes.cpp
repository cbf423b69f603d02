#include "io/file_bytes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sys/stat.h>

#include "bpg/status.hpp"

namespace bpg::io {
namespace {

[[noreturn]] void fail(const std::string &path, const std::string &what, int err) {
    throw error(status::invalid_argument, path + ": " + what + (err ? std::string(": ") + std::strerror(err) : ""));
}

struct closer {
    void operator()(std::FILE *f) const { std::fclose(f); }
};

} // namespace

std::vector<uint8_t> read_file_bytes(const std::string &path) {
    std::unique_ptr<std::FILE, closer> f(std::fopen(path.c_str(), "rb"));
    if (!f) fail(path, "cannot open the file for reading", errno);
    // Opening a folder for reading succeeds on Linux; reading it fails.
    struct stat st;
    if (fstat(fileno(f.get()), &st) == 0 && S_ISDIR(st.st_mode)) fail(path, "is a folder, not a file", 0);
    std::vector<uint8_t> bytes;
    uint8_t chunk[1 << 16];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, f.get())) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
    if (std::ferror(f.get())) fail(path, "read error", errno);
    return bytes;
}

void write_file_bytes(const std::string &path, const std::vector<uint8_t> &bytes) {
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f) fail(path, "cannot open the file for writing", errno);
    errno = 0;
    const bool wrote = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    const int write_errno = errno;
    // fclose flushes: a full disk may show only here.
    const bool closed = std::fclose(f) == 0;
    if (!wrote) fail(path, "write error", write_errno);
    if (!closed) fail(path, "write error", errno);
}

} // namespace bpg::io
