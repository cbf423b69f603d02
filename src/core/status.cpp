#include "bpg/status.hpp"

#include "core/message_text.hpp"

namespace bpg {

error::error(status code, const std::string &message)
    : std::runtime_error(core::printable(message)), code_(code) {}

const char *to_string(status s) {
    switch (s) {
        case status::success: return "success";
        case status::invalid_argument: return "invalid_argument";
        case status::invalid_graph: return "invalid_graph";
        case status::invalid_shape: return "invalid_shape";
        case status::invalid_data_type: return "invalid_data_type";
        case status::unimplemented: return "unimplemented";
        case status::out_of_memory: return "out_of_memory";
        case status::runtime_error: return "runtime_error";
    }
    return "unknown";
}

} // namespace bpg
