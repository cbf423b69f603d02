#include "bpg/version.hpp"

namespace bpg {

version_info version() {
    return {BPG_VERSION_MAJOR, BPG_VERSION_MINOR, BPG_VERSION_PATCH, BPG_VERSION_STRING};
}

} // namespace bpg
