// Status codes and the one exception type of the public API.
//
// The enum is small and closed on purpose (XNNPACK style): callers branch on
// "my fault" (invalid_*) versus "legal but this library cannot do it yet"
// (unimplemented) versus "the machine failed" (out_of_memory, runtime_error).
#pragma once

#include <stdexcept>
#include <string>

#pragma GCC visibility push(default)
namespace bpg {

enum class status {
    success = 0,
    invalid_argument,   // a bad value: attribute, option, file, pointer, id
    invalid_graph,      // a bad structure: arity, dangling tensor, cycle, id collision
    invalid_shape,      // shapes or strides that break an op's shape rules
    invalid_data_type,  // dtypes that break an op's type rules
    unimplemented,      // legal input this build does not support
    out_of_memory,
    runtime_error,
};

const char *to_string(status s);

// Every failure of the library is reported by throwing bpg::error. The message
// names the op (kind and id), the attribute or tensor, the bad value and the
// rule it breaks. It is one line: control characters a caller put in a name
// or value (a newline, a NUL) are escaped ("\\n", "\\x00").
class error : public std::runtime_error {
public:
    error(status code, const std::string &message);
    status code() const noexcept { return code_; }

private:
    status code_;
};

} // namespace bpg
#pragma GCC visibility pop
