// Whole files in and out, with errors that name the path and the system's
// reason (bpg::error(invalid_argument), never a std::filesystem or iostream
// exception).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bpg::io {

// "PATH: cannot open the file for reading: No such file or directory",
// "PATH: is a folder, not a file", "PATH: read error: ...".
std::vector<uint8_t> read_file_bytes(const std::string &path);
// Creates or truncates the file. "PATH: cannot open the file for writing:
// ...", "PATH: write error: File too large" (a partly written file is left).
void write_file_bytes(const std::string &path, const std::vector<uint8_t> &bytes);

} // namespace bpg::io
