#!/usr/bin/env python3
"""Prints the README's performance table from a `bpg-bench --json` file.

  python3 scripts/bench-table.py bench/results/DATE-COMMIT.json
"""
import json
import sys


def ms(r):
    return f"{r['median_ms']:.2f}" if r and r["status"] == "ok" else "n/a"


def main(path):
    run = json.load(open(path))
    print(f"<!-- {run['date']}, {run['machine']}, {run['threads']} threads, {run['repeat']} runs -->")
    print("| case | tbb | dnnl | stream | x stream | x dnnl |")
    print("|---|---|---|---|---|---|")
    for case in run["cases"]:
        by = {}
        for r in case["results"]:
            by[(r["backend"], bool(r.get("apart")))] = r
        dnnl = by.get(("dnnl", False))
        for apart in (False, True):
            tbb = by.get(("tbb", apart))
            if not tbb or tbb["status"] != "ok":
                continue
            name = case["description"]
            if apart:
                name = name.replace(" fused", " apart") + f" (same rounds; fused {tbb['fusion_gain']:.2f}x faster)"
            x_dnnl = f"{tbb['x_dnnl']:.2f}" if tbb.get("x_dnnl") and not apart else "-"
            print(f"| {name} | {ms(tbb)} | {ms(dnnl) if not apart else 'n/a'} | {case['stream_ms']:.2f} "
                  f"| {tbb['x_stream']:.2f} | {x_dnnl} |")


if __name__ == "__main__":
    main(sys.argv[1])
