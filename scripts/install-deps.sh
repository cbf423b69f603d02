#!/usr/bin/env bash
# Installs the Debian packages backprop-graph needs, only those missing.
set -euo pipefail
# ocl-icd-opencl-dev: Debian's oneDNN is built with the OpenCL GPU runtime, so
# its CMake package (dnnl-config.cmake) requires OpenCL's headers and loader;
# libdnnl-dev only recommends them, and recommends are not installed here.
packages=(cmake make ninja-build g++ libdnnl-dev ocl-icd-opencl-dev libtbb-dev nlohmann-json3-dev libcli11-dev libbenchmark-dev libgtest-dev)
# The PyTorch extension (BPG_TORCH) and its python tests: Debian's torch.
packages+=(python3-torch libtorch-dev python3-pytest python3-numpy python3-dev)
# The MPI example of SyncBatchNorm (ctest runs it on 2 and 3 processes).
packages+=(libopenmpi-dev openmpi-bin)
# `install-deps.sh fuzz`: also clang and its libFuzzer and sanitizer runtimes (scripts/fuzz.sh);
# `install-deps.sh ccache`: the compiler cache .ci/run builds with.
for extra in "$@"; do
  case "$extra" in
    fuzz) packages+=(clang libclang-rt-14-dev) ;;
    ccache) packages+=(ccache) ;;
    *) echo "install-deps: unknown extra '$extra' (fuzz, ccache)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
