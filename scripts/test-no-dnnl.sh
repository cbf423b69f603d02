#!/usr/bin/env bash
# Builds build-nodnnl/ without oneDNN (BPG_WITH_DNNL=OFF: backends tbb and
# ref) and runs the whole suite; tests of dnnl alone report "skipped".
# The python label is left to scripts/test.sh; BPG_TORCH is off here.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cmake -S . -B build-nodnnl -DCMAKE_BUILD_TYPE=Release -DBPG_WITH_DNNL=OFF -DBPG_TORCH=OFF "$@"
cmake --build build-nodnnl -j"$(nproc)"
if ldd build-nodnnl/bin/bpg-run | grep -q libdnnl; then
  echo "test-no-dnnl.sh: bpg-run links oneDNN although BPG_WITH_DNNL=OFF" >&2
  exit 1
fi
ctest --test-dir build-nodnnl --output-on-failure -j"$(nproc)" --timeout 600 -LE python
