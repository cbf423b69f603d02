#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in build-fuzz/ and
# runs each for SECONDS seconds (default 60) on a seed corpus taken from
# examples/graphs, oneDNN's conformance JSON graphs when present
# (BPG_CONFORMANCE_DIR, default ../shared/conformance/onednn-graph-json
# beside the source tree) and generated .npy files.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]     targets: fuzz_json_graph fuzz_npy
# Findings (crash-*, leak-*, timeout-*) are written to build-fuzz/findings/;
# the script exits non-zero if a target found anything.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_json_graph fuzz_npy)

bash scripts/install-deps.sh fuzz
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
jobs="${BPG_JOBS:-$(nproc)}"
# RelWithDebInfo (-O2): -O1 builds the slowest kernels no faster (bench/NOTES.md "CI time").
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBPG_BUILD_FUZZERS=ON -DBPG_SANITIZE=address,undefined \
  -DBPG_BUILD_TESTS=OFF -DBPG_BUILD_TOOLS=OFF -DBPG_BUILD_EXAMPLES=OFF -DBPG_TORCH=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target "${targets[@]}" make_npy_seeds

# Seeds are copied into a working corpus the fuzzer may add to; the seed
# directories themselves stay as given.
corpus=build-fuzz/corpus
mkdir -p "$corpus/seed_json" "$corpus/fuzz_json_graph" "$corpus/seed_npy" "$corpus/fuzz_npy" build-fuzz/findings
cp examples/graphs/*.json "$corpus/seed_json/"
conformance="${BPG_CONFORMANCE_DIR-../shared/conformance/onednn-graph-json}"
if [ -n "$conformance" ] && [ -d "$conformance" ]; then cp "$conformance"/*.json "$corpus/seed_json/"; fi
# Recipes of fuzz/json_generator.hpp (first byte < 0x10), so deep, long and
# duplicate-key documents are in the corpus from the start.
cp fuzz/seeds/json/* "$corpus/seed_json/" # recipes of json_generator.hpp
build-fuzz/bin/make_npy_seeds "$corpus/seed_npy" >/dev/null

# Inputs are tiny: one OpenMP thread (the targets limit oneTBB to one too).
export OMP_NUM_THREADS=1
# Each target runs in its own process at the same time (one core each).
run_target() {
  local t="$1" seeds dict=()
  case "$t" in
    fuzz_json_graph) seeds="$corpus/seed_json"; dict=(-dict=fuzz/json.dict) ;;
    fuzz_npy) seeds="$corpus/seed_npy" ;;
    *) echo "fuzz.sh: unknown target $t" >&2; return 2 ;;
  esac
  build-fuzz/bin/"$t" "$corpus/$t" "$seeds" "${dict[@]}" -max_total_time="$seconds" \
    -max_len=8192 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/findings/"$t"- >build-fuzz/"$t".log 2>&1
}
echo "fuzz.sh: ${targets[*]} for ${seconds}s each, in parallel"
pids=()
for t in "${targets[@]}"; do
  run_target "$t" &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  t="${targets[$i]}"
  rc=0
  wait "${pids[$i]}" || rc=$?
  echo "fuzz.sh: $t: $(grep -E '^stat::number_of_executed_units' build-fuzz/"$t".log | awk '{print $2}') executions," \
    "$(grep -E '^stat::average_exec_per_sec' build-fuzz/"$t".log | awk '{print $2}') per second"
  if [ $rc -ne 0 ]; then
    grep -E 'SUMMARY|ERROR|what\(\)' build-fuzz/"$t".log | head -5 >&2 || true
    echo "fuzz.sh: $t FOUND A PROBLEM (exit $rc), see build-fuzz/$t.log and build-fuzz/findings/" >&2
    status=1
  fi
done
exit $status
