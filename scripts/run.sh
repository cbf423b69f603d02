#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs an example graph
# (InterpolateBackprop -> ReLUBackprop -> BatchNormTrainingBackprop) end to end,
# once built through the C++ API and once from its JSON file with bpg-run,
# printing which backend ran each partition, its time and its error against
# the reference backend.
set -euo pipefail
cd "$(dirname "$0")/.."
# oneDNN's OpenMP workers must not spin while oneTBB kernels run (README).
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
bash scripts/build.sh
echo "== C++ API: examples/decoder_block_bwd.cpp"
build/bin/bpg-example-decoder_block_bwd
echo "== JSON: bpg-run examples/graphs/decoder_block_bwd.json"
build/bin/bpg-run examples/graphs/decoder_block_bwd.json --repeat 5
