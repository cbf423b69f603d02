#include "support/conformance.hpp"

namespace bpg::test {

const char *conformance_dir_setting() { return BPG_CONFORMANCE_DIR; }

} // namespace bpg::test
