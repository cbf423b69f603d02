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
# merged table). With RUNS=N (N > 1) it runs N times in a row, to OUT-1 ...
# OUT-N, and writes OUT.goals.md: how many runs met each case's goal
# (bench/goal_runs.py; issue 25 asks for 4 of 5).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD:-build}"
runs="${RUNS:-1}"
commit="$(git describe --always --dirty --abbrev=7 2>/dev/null || echo unknown)"
out="${OUT:-bench/results/suite-$(date -u +%Y-%m-%d)-${commit}}"
mkdir -p "$(dirname "$out")"
# oneDNN's OpenMP workers must not spin while oneTBB runs (bpg-bench also
# sets this for itself); torch runs in its own process afterwards.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

one_run() { # $1: the prefix of this run's files
  "$build/bin/bpg-bench" --json "$1.bpg.json" "${@:2}" | tee "$1.bpg.txt"
  # The same cases, repeat count, warm-up and threads as the bpg-bench run.
  /usr/bin/python3 bench/torch_suite.py --cases "$1.bpg.json" --json "$1.torch.json"
  /usr/bin/python3 bench/merge_suite.py "$1.bpg.json" "$1.torch.json" --commit "$commit" > "$1.md"
  echo "run_suite: $1.md"
}

if [ "$runs" -le 1 ]; then
  one_run "$out" "$@"
  exit 0
fi
prefixes=()
for i in $(seq "$runs"); do
  one_run "$out-$i" "$@"
  prefixes+=("$out-$i")
done
# goal_runs.py exits 1 when a case misses its goal in too many runs: the
# table is the result either way.
/usr/bin/python3 bench/goal_runs.py "${prefixes[@]}" > "$out.goals.md" || true
echo "run_suite: $out.goals.md"
