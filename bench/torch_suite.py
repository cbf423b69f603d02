"""torch's own CPU backward on the cases of a bpg-bench run (issue 25's suite).

    /usr/bin/python3 bench/torch_suite.py --cases FILE [--json OUT] [--repeat N] [--warmup N] [--threads N]

FILE is `bpg-bench --json` output (a run) or `bpg-bench --list --json` output
(the cases alone); repeat, warm-up runs and threads default to the run's. For
each case torch can express, the aten backward op that autograd runs for it
(upsample_*_backward for F.interpolate, native_batch_norm_backward, and
threshold_backward in front for a fused ReLU) is timed on tensors of the
case's shape, dtype and memory format; the forward that would produce the
saved tensors runs untimed. Cases torch cannot express (a coordinate mode it
lacks, f16 kernels it does not have, a 1-D channels-last layout) are n/a with
the reason. Times follow bpg-bench's kinds: throughput (one call per run),
overhead (blocks of calls, time per call) and first_call (the first call of
that shape in this process, then the steady runs). bench/merge_suite.py puts
them beside bpg's rows.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from machine_info import commit, cpu_model

aten = torch.ops.aten
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


class NotExpressible(Exception):
    """A case torch's backward ops do not offer; the message says why."""


def to_ncx(shape, case_format):
    """bpg-bench gives shapes in the case's format: NXC moves C back to axis 1."""
    return list(shape) if case_format == "NCX" else [shape[0], shape[-1], *shape[1:-1]]


def memory_format(rank, case_format):
    if case_format == "NCX":
        return torch.contiguous_format
    if rank == 4:
        return torch.channels_last
    if rank == 5:
        return torch.channels_last_3d
    if rank == 2:  # [N, C]: C is the contiguous axis in both formats
        return torch.contiguous_format
    raise NotExpressible(f"torch has no channels-last memory format for rank {rank}")


def tensor(shape, dtype, fmt, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator).to(dtype).contiguous(memory_format=fmt)


def interpolate_backward(case):
    """The aten op F.interpolate's autograd node calls, bound to the case's tensors."""
    src, dst = to_ncx(case["src"], case["format"]), to_ncx(case["dst"], case["format"])
    spatial = len(src) - 2
    fmt = memory_format(len(src), case["format"])
    grad = tensor(dst, DTYPES[case["dtype"]], fmt, 1)
    coord, nearest_mode = case["coord"], case.get("nearest_mode")
    suffix = {1: "1d", 2: "2d", 3: "3d"}.get(spatial)
    if suffix is None:
        raise NotExpressible(f"torch interpolates 1 to 3 spatial axes, not {spatial}")
    scales = [None] * spatial  # None: from the sizes, as bpg's sizes attribute
    if case["mode"] == "nearest":
        # bpg's nearest: half_pixel with round_prefer_ceil is torch's
        # nearest-exact; asymmetric with floor is torch's nearest.
        if coord == "half_pixel" and nearest_mode in (None, "round_prefer_ceil"):
            op = getattr(aten, f"_upsample_nearest_exact{suffix}_backward")
        elif coord == "asymmetric" and nearest_mode == "floor":
            op = getattr(aten, f"upsample_nearest{suffix}_backward")
        else:
            raise NotExpressible(f"torch has no nearest with {coord} and {nearest_mode or 'round_prefer_ceil'}")
        return lambda: op(grad, dst[2:], src, *scales)
    if coord not in ("half_pixel", "align_corners"):
        raise NotExpressible(f"torch's linear modes have no coordinate_transformation_mode {coord}")
    name = {1: "upsample_linear1d_backward", 2: "upsample_bilinear2d_backward",
            3: "upsample_trilinear3d_backward"}[spatial]
    op = getattr(aten, name)
    align = coord == "align_corners"
    return lambda: op(grad, dst[2:], src, align, *scales)


def batchnorm_backward(case):
    shape = to_ncx(case["shape"], case["format"])
    dtype, fmt = DTYPES[case["dtype"]], memory_format(len(shape), case["format"])
    channels = shape[1]
    x, grad = tensor(shape, dtype, fmt, 0), tensor(shape, dtype, fmt, 1)
    weight = torch.ones(channels) if case["gamma"] else None
    mean, var = torch.zeros(channels), torch.ones(channels)
    training = not case["global_stats"]
    out, save_mean, save_invstd = aten.native_batch_norm(x, weight, None, mean, var, training, 0.1, 1e-5)
    if not training:
        save_mean = save_invstd = None  # use_global_stats: the running statistics are used
    mask = [True, case["outputs"] == 3, case["outputs"] == 3]
    relu_out = out.relu()

    def backward():
        g = aten.threshold_backward(grad, relu_out, 0) if case.get("relu") else grad
        return aten.native_batch_norm_backward(g, x, weight, mean, var, save_mean, save_invstd, training,
                                               1e-5, mask)
    return backward


def prepare(case):
    return (interpolate_backward if case["op"] == "interpolate" else batchnorm_backward)(case)


def reduced(case):
    """The case with N and C at most 2 (spatial sizes kept), in f32."""
    small = dict(case, dtype="f32")
    channel_axis = 1 if case["format"] == "NCX" else -1
    for key in ("src", "dst", "shape"):
        if key in case:
            dims = list(case[key])
            dims[0], dims[channel_axis] = min(dims[0], 2), min(dims[channel_axis], 2)
            small[key] = dims
    return small


def autograd_reference(case):
    """The gradient(s) autograd computes through torch.nn.functional for the case."""
    if case["op"] == "interpolate":
        src, dst = to_ncx(case["src"], case["format"]), to_ncx(case["dst"], case["format"])
        fmt = memory_format(len(src), case["format"])
        x = tensor(src, torch.float32, fmt, 0).requires_grad_()
        if case["mode"] == "nearest":
            mode = "nearest-exact" if case["coord"] == "half_pixel" else "nearest"
            y = F.interpolate(x, size=dst[2:], mode=mode)
        else:
            mode = {1: "linear", 2: "bilinear", 3: "trilinear"}[len(src) - 2]
            y = F.interpolate(x, size=dst[2:], mode=mode, align_corners=case["coord"] == "align_corners")
        return torch.autograd.grad(y, x, tensor(dst, torch.float32, fmt, 1))
    shape = to_ncx(case["shape"], case["format"])
    fmt = memory_format(len(shape), case["format"])
    x = tensor(shape, torch.float32, fmt, 0).requires_grad_()
    channels = shape[1]
    weight = torch.ones(channels, requires_grad=True)
    y = F.batch_norm(x, torch.zeros(channels), torch.ones(channels), weight if case["gamma"] else None, None,
                     training=not case["global_stats"], eps=1e-5)
    y = F.relu(y) if case.get("relu") else y
    wanted = [x, weight] if case["gamma"] and case["outputs"] == 3 else [x]
    return torch.autograd.grad(y, wanted, tensor(shape, torch.float32, fmt, 1))


def check(case):
    """None when the aten op timed for the case gives autograd's gradient on
    a reduced copy of it (the mapping of modes and arguments is right), or
    else what differs."""
    small = reduced(case)
    try:
        got = prepare(small)()
    except NotExpressible:
        return None
    got = [got] if isinstance(got, torch.Tensor) else list(got)
    for i, want in enumerate(autograd_reference(small)):
        if got[i].shape != want.shape or not torch.allclose(got[i], want, atol=1e-5, rtol=1e-4):
            return f"output {i} differs from autograd's by {(got[i] - want).abs().max().item():g}"
    return None


def ms_of(fn, calls=1):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) * 1e3 / calls


def measure(case, repeat, warmup):
    result = {"description": case["description"], "class": case["class"], "kind": case["kind"]}
    try:
        fn = prepare(case)
        first = ms_of(fn)  # nothing of this shape ran before in this process
    except NotExpressible as e:
        return {**result, "status": "n/a", "reason": str(e)}
    except RuntimeError as e:  # an aten kernel missing for the dtype
        return {**result, "status": "n/a", "reason": "torch: " + str(e).splitlines()[0]}
    calls = case.get("calls_per_run", 100 if case["kind"] == "overhead" else 1)
    runs = repeat * (10 if case["kind"] == "overhead" else 1)
    for _ in range(warmup):
        ms_of(fn, calls)
    times = [ms_of(fn, calls) for _ in range(runs)]
    result.update(status="ok", reason=None, median_ms=statistics.median(times), min_ms=min(times),
                  runs_ms=times, calls_per_run=calls)
    if case["kind"] == "first_call":
        result["first_ms"] = first
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", required=True, help="bpg-bench --json or --list --json output")
    parser.add_argument("--json", help="write the results here (default: stdout)")
    parser.add_argument("--repeat", type=int, help="timed runs per case (default: the bpg-bench run's, or 10)")
    parser.add_argument("--warmup", type=int, help="untimed runs first (default: the run's, or 2)")
    parser.add_argument("--threads", type=int, help="torch.set_num_threads (default: the run's, or 2)")
    parser.add_argument("--class", dest="classes", default="", help="only these classes (names joined by ',')")
    parser.add_argument("--check", action="store_true",
                        help="time nothing: check each timed op against autograd on a reduced copy of the case")
    args = parser.parse_args()
    try:
        with open(args.cases) as f:
            doc = json.load(f)
        cases = doc["cases"]
    except (OSError, ValueError, KeyError) as e:
        parser.error(f"--cases {args.cases}: not a bpg-bench JSON document ({e})")
    repeat = args.repeat if args.repeat is not None else doc.get("repeat", 10)
    warmup = args.warmup if args.warmup is not None else doc.get("warmup", 2)
    threads = args.threads if args.threads is not None else doc.get("threads", 2)
    if repeat < 1 or warmup < 0 or threads < 1:
        parser.error("--repeat and --threads must be at least 1, --warmup at least 0")
    if args.classes:
        wanted = set(args.classes.split(","))
        cases = [c for c in cases if c["class"] in wanted]
    torch.set_num_threads(threads)
    if args.check:
        failed = [(c["description"], why) for c in cases for why in [check(c)] if why]
        for description, why in failed:
            print(f"torch_suite: {description}: {why}", file=sys.stderr)
        print(f"torch_suite: {len(cases) - len(failed)} of {len(cases)} cases match autograd (or are n/a)")
        sys.exit(1 if failed else 0)
    out = {
        "tool": "torch_suite", "torch": torch.__version__, "threads": torch.get_num_threads(),
        "repeat": repeat, "warmup": warmup, "commit": commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count()},
        "cases": [],
    }
    for case in cases:
        out["cases"].append(measure(case, repeat, warmup))
        r = out["cases"][-1]
        shown = f"{r['median_ms']:.3f} ms" if r["status"] == "ok" else "n/a: " + r["reason"]
        print(f"torch {r['description']}: {shown}", file=sys.stderr, flush=True)
    text = json.dumps(out, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
