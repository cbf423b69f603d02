// External conformance data: oneDNN's own benchdnn graph cases (JSON files
// and harness lines), not part of this repository. CMake's
// BPG_CONFORMANCE_DIR names their folder; it defaults to
// ../shared/conformance/onednn-graph-json beside the source tree when that
// exists, else it is empty and the tests that read the data skip.
//
// Every test that reads it has "Conformance" in its suite name (ctest gives
// those the label "conformance", tests/CMakeLists.txt) and starts with
// BPG_REQUIRE_CONFORMANCE().
#pragma once

#include <string>

#include <gtest/gtest.h>

namespace bpg::test {

// The configured folder, empty when there is none (support/conformance.cpp,
// the one file compiled with the setting, so changing it rebuilds no test).
const char *conformance_dir_setting();

inline bool have_conformance() { return conformance_dir_setting()[0] != '\0'; }

// Path of one file of the conformance folder.
inline std::string conformance(const std::string &file) { return std::string(conformance_dir_setting()) + "/" + file; }

} // namespace bpg::test

// Skips the current test (ctest reports it as not run) without the data.
#define BPG_REQUIRE_CONFORMANCE()                                                                              \
    if (!::bpg::test::have_conformance())                                                                      \
    GTEST_SKIP() << "no conformance data: configure with -DBPG_CONFORMANCE_DIR=<folder of oneDNN's graph "    \
                    "JSON cases> (default: ../shared/conformance/onednn-graph-json beside the source tree)"
