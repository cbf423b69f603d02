"""One table from a bpg-bench run and a torch_suite.py run on the same cases.

    /usr/bin/python3 bench/merge_suite.py BPG_JSON TORCH_JSON [--commit C] > TABLE.md

Per case: bpg's tbb row, oneDNN (dnnl, and onednn_graph when the run has
it), torch's backward and the streaming kernel, with tbb's ratio to each and
issue 25's goal (tbb within 1.3x of the streaming kernel for f32, 1.5x for
bf16/f16, and faster than every oneDNN row and torch). Then the worst ratio
of each class, the per call cases in microseconds and the first call cases.
Ratios are tbb's median over the other's median: below 1, tbb is faster.
"""
import argparse
import json
import sys

OVERHEAD_GOAL_US = 3
FIRST_CALL_GOAL_MS = 1


def stream_goal(dtype):
    return 1.3 if dtype == "f32" else 1.5


def row_of(case, backend):
    for r in case["results"]:
        if r["backend"] == backend and not r.get("apart") and r["status"] == "ok":
            return r
    return None


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def worse(current, candidate, case):
    """The larger of (ratio, case) pairs, ignoring missing ratios."""
    if candidate is None or (current and current[0] >= candidate):
        return current
    return (candidate, case)


def load_runs(bpg_path, torch_path):
    """(bpg run, torch run, torch's cases by description, the rows tbb is compared with)."""
    with open(bpg_path) as f:
        bpg = json.load(f)
    with open(torch_path) as f:
        torch_doc = json.load(f)
    torch_cases = {c["description"]: c for c in torch_doc["cases"]}
    missing = [c["description"] for c in bpg["cases"] if c["description"] not in torch_cases]
    if missing:
        sys.exit(f"{torch_path} lacks {len(missing)} case(s) of {bpg_path}, e.g. {missing[0]}")
    has_graph = any(r["backend"] == "onednn_graph" for c in bpg["cases"] for r in c["results"])
    return bpg, torch_doc, torch_cases, ["dnnl"] + (["onednn_graph"] if has_graph else []) + ["torch"]


def field_of(c, torch_case, others, field):
    """field of each other row (torch's from its run), None where it did not run."""
    values = {o: (row_of(c, o) or {}).get(field) for o in others if o != "torch"}
    values["torch"] = torch_case.get(field) if torch_case["status"] == "ok" else None
    return values


def evaluate(c, torch_case, others):
    """tbb's numbers for one case and whether it meets its goal (None: tbb did not run)."""
    tbb = row_of(c, "tbb")
    e = {"case": c, "tbb": tbb, "met": None}
    if c["kind"] == "overhead":
        e["others"] = field_of(c, torch_case, others, "median_ms")
        if tbb:
            e["met"] = tbb["overhead_us"] < OVERHEAD_GOAL_US
    elif c["kind"] == "first_call":
        e["others"] = field_of(c, torch_case, others, "first_ms")
        if tbb:
            e["met"] = max(tbb["first_ms"], tbb.get("fresh_first_ms") or 0) < FIRST_CALL_GOAL_MS
    else:
        e["others"] = field_of(c, torch_case, others, "median_ms")
        tbb_ms = tbb["median_ms"] if tbb else None
        e["x"] = {"stream": ratio(tbb_ms, c["stream_ms"])}
        e["x"].update({o: ratio(tbb_ms, e["others"][o]) for o in others})
        if tbb:
            e["met"] = e["x"]["stream"] <= stream_goal(c["dtype"]) and \
                all(e["x"][o] < 1 for o in others if e["x"][o] is not None)
    return e


def mark(met):
    return "-" if met is None else "ok" if met else "**miss**"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bpg", help="bpg-bench --json output")
    parser.add_argument("torch", help="bench/torch_suite.py --json output on the same cases")
    parser.add_argument("--commit", help="the commit measured (default: torch_suite's)")
    args = parser.parse_args()
    bpg, torch_doc, torch_cases, others = load_runs(args.bpg, args.torch)
    results = [evaluate(c, torch_cases[c["description"]], others) for c in bpg["cases"]]

    m = bpg["machine"]
    print(f"# bpg-bench suite beside torch: {bpg['date']}, commit {args.commit or torch_doc['commit']}\n")
    print(f"{m['cpu']}, {m['cores']} cores; bpg-bench {bpg['version']}, {bpg['threads']} threads, "
          f"OMP_WAIT_POLICY={bpg['omp_wait_policy']}, medians of {bpg['repeat']} runs after {bpg['warmup']} "
          f"warm-up runs; torch {torch_doc['torch']} ({torch_doc['date']}, right after), "
          f"{torch_doc['threads']} threads, medians of {torch_doc['repeat']} runs. "
          "x = tbb's median / the other's (below 1: tbb is faster).\n")

    head = ["class", "case", "tbb ms"] + [f"{o} ms" for o in others] + ["stream ms", "x stream"] + \
        [f"x {o}" for o in others] + ["goal"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    worst = {}  # class -> {column: (ratio, case)}
    goals = {}  # class -> [met, cases]
    for e in results:
        c, tbb, x = e["case"], e["tbb"], e.get("x")
        if x is None:
            continue
        if e["met"] is not None:
            g = goals.setdefault(c["class"], [0, 0])
            g[0] += e["met"]
            g[1] += 1
        w = worst.setdefault(c["class"], {})
        for column, value in x.items():
            w[column] = worse(w.get(column), value, c["description"])
        cells = [c["class"], c["description"], fmt(tbb and tbb["median_ms"])] + \
            [fmt(e["others"][o]) for o in others] + [fmt(c["stream_ms"]), fmt(x["stream"], 2)] + \
            [fmt(x[o], 2) for o in others] + [mark(e["met"])]
        print("| " + " | ".join(cells) + " |")

    print("\n## Worst ratio per class (tbb)\n")
    columns = ["stream"] + others
    print("| class | " + " | ".join(f"worst x {o}" for o in columns) + " | goal met |")
    print("|" + "---|" * (len(columns) + 2))
    for cls, w in worst.items():
        cells = [f"{w[o][0]:.2f} ({w[o][1]})" if w.get(o) else "-" for o in columns]
        met, n = goals.get(cls, [0, 0])
        print(f"| {cls} | " + " | ".join(cells) + f" | {met}/{n} |")

    overhead = [e for e in results if e["case"]["kind"] == "overhead"]
    first_calls = [e for e in results if e["case"]["kind"] == "first_call"]
    if overhead:
        print_overhead(overhead, others)
    if first_calls:
        print_first_calls(first_calls, others)


def print_overhead(results, others):
    print(f"\n## Per call: a tiny partition, us per call (goal: tbb < {OVERHEAD_GOAL_US} us over the streaming "
          "kernel's)\n")
    print("| case | tbb | tbb over the stream | " + " | ".join(others) + " | stream | goal |")
    print("|" + "---|" * (len(others) + 5))
    for e in results:
        c, tbb, us = e["case"], e["tbb"], e["others"]
        cells = [fmt(tbb and tbb["median_ms"] * 1e3, 2), fmt(tbb and tbb["overhead_us"], 2)] + \
            [fmt(us[o] and us[o] * 1e3, 2) for o in others] + [fmt(c["stream_ms"] * 1e3, 2), mark(e["met"])]
        print(f"| {c['description']} | " + " | ".join(cells) + " |")


def print_first_calls(results, others):
    print(f"\n## First call: ms of the first execute of a fresh partition (goal: tbb < {FIRST_CALL_GOAL_MS} ms)\n")
    print("tbb and oneDNN: compiled and run after a partition of another shape ran (`in process`), and alone in "
          "fresh processes (median); torch: its first call of the shape in its process.\n")
    print("| case | tbb in process | tbb fresh process | " + " | ".join(f"{o} in process" for o in others)
          + " | goal |")
    print("|" + "---|" * (len(others) + 4))
    for e in results:
        c, tbb = e["case"], e["tbb"]
        cells = [fmt(tbb and tbb["first_ms"]), fmt(tbb and tbb.get("fresh_first_ms"))] + \
            [fmt(e["others"][o]) for o in others] + [mark(e["met"])]
        print(f"| {c['description']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
