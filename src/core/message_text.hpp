// Text of user-supplied strings (op names, attribute values, JSON keys, file
// names) as it may appear in an error message or a log line: control
// characters are escaped, so a message is one line and not cut at a NUL.
#pragma once

#include <string>

namespace bpg::core {

// "\n" -> "\\n", NUL -> "\\x00", DEL -> "\\x7f"; other bytes (UTF-8 too) unchanged.
std::string printable(const std::string &s);

} // namespace bpg::core
