// The verbose channel (see include/bpg/verbose.hpp): the level, and one
// writer so that lines of concurrent calls never interleave.
#pragma once

#include <string>

#include "bpg/verbose.hpp"

namespace bpg::core {

// Writes "bpg_verbose,<line>\n" to stderr as one write.
void verbose_print(const std::string &line);
// Milliseconds of a steady clock, for the timings of the lines.
double verbose_now_ms();

} // namespace bpg::core
