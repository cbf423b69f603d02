#!/usr/bin/env bash
# Runs one bpg-bench suite N times and prints, per case, the median of tbb's
# "x stream" over the runs with its range (and, for a fused ReLU+BN case, of
# the fusion gain over the ops run apart): on a shared machine one run's ratio
# moves by up to ~1.5x, so a target is judged on several.
#   bash scripts/bench-medians.sh [N=5] [suite=interpolate] [bpg-bench binary]
set -euo pipefail
n="${1:-5}"
suite="${2:-interpolate}"
bench="${3:-build/bin/bpg-bench}"
for _ in $(seq "$n"); do
  "$bench" --suite "$suite" --backend tbb --json 2>/dev/null
done | python3 -c '
import json, statistics, sys
ratios, gains = {}, {}
decoder = json.JSONDecoder()
text, at = sys.stdin.read(), 0
while at < len(text):
    while at < len(text) and text[at].isspace():
        at += 1
    if at >= len(text):
        break
    run, at = decoder.raw_decode(text, at)
    for case in run["cases"]:
        for r in case["results"]:
            if r["backend"] != "tbb" or r["status"] != "ok":
                continue
            if r.get("apart"):
                gains.setdefault(case["description"], []).append(r["fusion_gain"])
            else:
                ratios.setdefault(case["description"], []).append(r["x_stream"])
for name, v in ratios.items():
    line = f"{name:66s} x stream median {statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f}, {len(v)} runs)"
    g = gains.get(name)
    if g:
        line += f"; fused vs apart median {statistics.median(g):.2f} ({min(g):.2f}-{max(g):.2f})"
    print(line)
'
