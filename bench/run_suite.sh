#!/usr/bin/env bash
# bpg-bench's suite, then torch's own backward on the same cases, one after
# the other on this machine, and the merged table (bench/README.md, "The
# broadened suite beside torch").
#
#   bash bench/run_suite.sh [bpg-bench options, e.g. --class short_rows --repeat 5]
#
# BUILD (default build) holds bin/bpg-bench; OUT (default
# bench/results/suite-DATE-COMMIT) is the prefix of the four files written:
# OUT.bpg.txt (bpg-bench's table), OUT.bpg.json, OUT.torch.json, OUT.md (the
# merged table).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD:-build}"
commit="$(git describe --always --dirty --abbrev=7 2>/dev/null || echo unknown)"
out="${OUT:-bench/results/suite-$(date -u +%Y-%m-%d)-${commit}}"
mkdir -p "$(dirname "$out")"
# oneDNN's OpenMP workers must not spin while oneTBB runs (bpg-bench also
# sets this for itself); torch runs in its own process afterwards.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
"$build/bin/bpg-bench" --json "$out.bpg.json" "$@" | tee "$out.bpg.txt"
# The same cases, repeat count, warm-up and threads as the bpg-bench run.
/usr/bin/python3 bench/torch_suite.py --cases "$out.bpg.json" --json "$out.torch.json"
/usr/bin/python3 bench/merge_suite.py "$out.bpg.json" "$out.torch.json" --commit "$commit" > "$out.md"
echo "run_suite: $out.md"
