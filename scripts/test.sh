#!/usr/bin/env bash
# Builds and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
