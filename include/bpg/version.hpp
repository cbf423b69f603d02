#pragma once
#define BPG_VERSION_MAJOR 0
#define BPG_VERSION_MINOR 1
#define BPG_VERSION_PATCH 0
namespace bpg {
struct version_info { int major, minor, patch; };
version_info version();
} // namespace bpg
