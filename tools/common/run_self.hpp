// The timing tools measure a first call in a fresh process by running
// themselves again (bpg-bench --first-call-child, bpg-overhead --fresh) and
// reading what the child prints.
#pragma once

#include <cstdio>
#include <string>

#include <unistd.h>

namespace bpg::tools {

// This program's own executable, for running it again ("" if unreadable).
inline std::string self_executable() {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

// Runs cmd through the shell and returns its whole stdout; status gets
// pclose's status (-1 when the command could not be started).
inline std::string command_output(const std::string &cmd, int &status) {
    FILE *p = ::popen(cmd.c_str(), "r");
    if (!p) {
        status = -1;
        return "";
    }
    std::string out;
    char buf[512];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    status = ::pclose(p);
    return out;
}

} // namespace bpg::tools
