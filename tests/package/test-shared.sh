#!/usr/bin/env bash
# Builds bpg as a shared library (BUILD_SHARED_LIBS=ON) in build-shared/ and
# runs the whole suite there: the in-tree tests and tools link bpg_static (the
# same objects), the examples link libbpg.so, package.consumer installs it.
# Extra arguments go to cmake's configure step. docs/packaging.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cmake -S . -B build-shared -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DBPG_BUILD_TESTS=ON -DBPG_BUILD_TOOLS=ON -DBPG_BUILD_EXAMPLES=ON "$@"
cmake --build build-shared -j"$(nproc)"
ctest --test-dir build-shared --no-tests=error --output-on-failure -j"$(nproc)" --timeout 600
