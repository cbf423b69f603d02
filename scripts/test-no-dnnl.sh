#!/usr/bin/env bash
# Builds build-nodnnl/ without oneDNN (BPG_WITH_DNNL=OFF: backends tbb and
# ref) and runs the whole suite; tests of dnnl alone report "skipped".
# It is also the suite's shared-library build (BUILD_SHARED_LIBS=ON): there
# package.consumer checks libbpg.so's SONAME, its exports and a consumer that
# has only oneTBB (docs/packaging.md).
# The python label is left to scripts/test.sh; BPG_TORCH is off here.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cmake -S . -B build-nodnnl -DCMAKE_BUILD_TYPE=Release -DBPG_WITH_DNNL=OFF -DBUILD_SHARED_LIBS=ON -DBPG_TORCH=OFF "$@"
cmake --build build-nodnnl -j"$(nproc)"
if ldd build-nodnnl/bin/bpg-run | grep -q libdnnl; then
  echo "test-no-dnnl.sh: bpg-run links oneDNN although BPG_WITH_DNNL=OFF" >&2
  exit 1
fi
# The huge label (HugeShapes: 64-bit offsets of the oneTBB kernels, ~13 GiB and minutes
# of page faults) is left to scripts/test.sh too: it runs the same kernels there.
ctest --test-dir build-nodnnl --output-on-failure -j"$(nproc)" --timeout 600 -LE 'python|huge|large'
