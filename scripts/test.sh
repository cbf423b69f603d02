#!/usr/bin/env bash
# Builds and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
# oneDNN's OpenMP workers must not spin while oneTBB kernels run (README).
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
bash scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
