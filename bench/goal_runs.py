"""Issue 25's "done when": how many of several consecutive runs met each case's goal.

    /usr/bin/python3 bench/goal_runs.py OUT1 OUT2 ... [--need K]

Each OUT is the prefix bench/run_suite.sh wrote (OUT.bpg.json, OUT.torch.json);
the goals are those of bench/merge_suite.py. A case passes when tbb met its
goal in at least K runs (default: 4 of 5, that is all but one). Exit status 0
when every case passes, 1 otherwise.
"""
import argparse
import sys

from merge_suite import evaluate, load_runs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="prefixes of run_suite.sh runs, in the order they ran")
    parser.add_argument("--need", type=int, help="runs in which a case must meet its goal (default: all but one)")
    args = parser.parse_args()
    need = args.need if args.need is not None else max(1, len(args.runs) - 1)
    met = {}  # description -> [class, runs met, runs where tbb ran]
    for prefix in args.runs:
        bpg, _, torch_cases, others = load_runs(prefix + ".bpg.json", prefix + ".torch.json")
        for c in bpg["cases"]:
            e = evaluate(c, torch_cases[c["description"]], others)
            m = met.setdefault(c["description"], [c["class"], 0, 0])
            if e["met"] is not None:
                m[1] += e["met"]
                m[2] += 1
    failing = [(d, m) for d, m in met.items() if m[2] and m[1] < need]
    print(f"# goals met in {len(args.runs)} runs ({', '.join(args.runs)}); a case needs {need}\n")
    print("| class | case | runs met | pass |")
    print("|---|---|---|---|")
    for description, (cls, runs_met, ran) in met.items():
        verdict = "-" if not ran else "yes" if runs_met >= need else "**no**"
        print(f"| {cls} | {description} | {runs_met}/{ran} | {verdict} |")
    print(f"\n{len(failing)} of {sum(1 for m in met.values() if m[2])} cases fail.")
    sys.exit(1 if failing else 0)


if __name__ == "__main__":
    main()
