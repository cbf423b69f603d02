#!/usr/bin/python3
"""Runs the dnnl::graph compat program built against bpg and against oneDNN
and compares their outputs: the same lines, numbers within a relative 1e-4
(f32 sums in another order). Lines starting with '#' (the partitioning, where
the libraries may fuse differently) are printed, not compared."""
import subprocess
import sys


def run(exe):
    r = subprocess.run([exe], capture_output=True, text=True)
    print(f"== {exe} (exit {r.returncode})\n{r.stdout}{r.stderr}")
    if r.returncode != 0:
        sys.exit(f"{exe} failed")
    return [l for l in r.stdout.splitlines() if l and not l.startswith("#")]


def same_token(a, b):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return abs(x - y) <= 1e-4 * max(1.0, abs(x), abs(y))


def main():
    bpg, onednn = run(sys.argv[1]), run(sys.argv[2])
    if len(bpg) != len(onednn):
        sys.exit(f"{len(bpg)} lines from bpg, {len(onednn)} from oneDNN")
    bad = 0
    for a, b in zip(bpg, onednn):
        ta, tb = a.split(), b.split()
        if len(ta) != len(tb) or not all(same_token(x, y) for x, y in zip(ta, tb)):
            print(f"differ:\n  bpg:    {a}\n  oneDNN: {b}")
            bad += 1
    if bad:
        sys.exit(f"{bad} line(s) differ")
    print(f"{len(bpg)} lines agree")


if __name__ == "__main__":
    main()
