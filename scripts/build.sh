#!/usr/bin/env bash
# Configures and builds everything (library, tools, examples, tests) in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Ninja for a new build directory (one that exists keeps its generator): a
# target's sources compile while the libraries it links are still building.
export CMAKE_GENERATOR="${CMAKE_GENERATOR:-Ninja}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$(nproc)"
