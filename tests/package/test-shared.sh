#!/usr/bin/env bash
# Builds bpg as a shared library (BUILD_SHARED_LIBS=ON) in build-shared/ and
# runs the whole suite there: the in-tree tests link the same objects as
# bpg_static, the examples and package.consumer use the installed libbpg.so.
# Extra arguments go to cmake's configure step. docs/packaging.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cmake -S . -B build-shared -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON "$@"
cmake --build build-shared -j"$(nproc)"
ctest --test-dir build-shared --output-on-failure -j"$(nproc)" --timeout 600
