#!/usr/bin/env bash
# Builds build-onednn3/ against the prebuilt oneDNN 3.x tree (scripts/onednn3.sh)
# and runs the whole suite on it; skips (exit 0) when the tree is absent.
# The python label (the PyTorch extension, built against Debian's oneDNN
# 2.6 by torch) is left to scripts/test.sh; BPG_TORCH is off here.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
rc=0
dnnl_dir="$(bash scripts/onednn3.sh)" || rc=$?
if [ "$rc" = 3 ]; then
  echo "skipped: no oneDNN 3.x tree (set BPG_ONEDNN3_TARBALL to its tarball)"
  exit 0
elif [ "$rc" != 0 ]; then
  exit "$rc"
fi
lib_dir="$(cd "$dnnl_dir/../.." && pwd)"
version="$(sed -n 's/^set(PACKAGE_VERSION "\([0-9.]*\)")$/\1/p' "$dnnl_dir/dnnl-config-version.cmake")"
echo "oneDNN $version in $lib_dir"
cmake -S . -B build-onednn3 -DCMAKE_BUILD_TYPE=Release -DBPG_WITH_DNNL=ON -Ddnnl_DIR="$dnnl_dir" -DBPG_ONEDNN3_DIR="$dnnl_dir" -DBPG_TORCH=OFF "$@"
cmake --build build-onednn3 -j"$(nproc)"
# The build tree's RPATH names the 3.x library; LD_LIBRARY_PATH serves the
# installed copies of the package test. DnnlVersion.* checks that the loaded
# library is $version (BPG_EXPECT_ONEDNN).
export LD_LIBRARY_PATH="$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The package test's consumer finds oneDNN through bpgConfig.cmake's
# find_dependency: this prefix before the system's 2.6.
export CMAKE_PREFIX_PATH="$(dirname "$lib_dir")${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export BPG_EXPECT_ONEDNN="$version"
# The huge label (HugeShapes: 64-bit offsets of the oneTBB kernels, ~13 GiB and minutes
# of page faults) is left to scripts/test.sh too: it runs the same kernels there.
ctest --test-dir build-onednn3 --output-on-failure -j"$(nproc)" --timeout 600 -LE 'python|huge|large'
