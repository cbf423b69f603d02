"""torch's own CPU backward against bpg_torch's, for the cases of issue 21.

    PYTHONPATH=build/python python3 bench/torch_bench.py [--quick] [--repeats N]

For each case: the backward op alone (torch's aten backward op against
torch.ops.bpg's), and a training step of that layer (forward + backward through
autograd, torch.nn.functional against bpg_torch); then the UNet training step
of examples/torch_unet.py and the per-call time of a tiny backward (op alone,
step, and the backward alone through autograd). Times are
medians of interleaved repeated runs; "x" is torch's time over bpg_torch's.
"""
import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import bpg_torch
from bpg_torch.functional import batch_norm_relu
from machine_info import commit, cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import torch_unet  # noqa: E402

aten = torch.ops.aten
bpg = torch.ops.bpg


def timed_ms(pairs, repeats, warmup):
    """ms of each run of each named callable; runs interleaved so drift hits all alike."""
    times = {name: [] for name, _ in pairs}
    for round_index in range(warmup + repeats):
        for name, fn in pairs:
            start = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - start
            if round_index >= warmup:
                times[name].append(elapsed * 1e3)
    return times


def median_ms(pairs, repeats, warmup):
    return {name: statistics.median(v) for name, v in timed_ms(pairs, repeats, warmup).items()}


def randn(shape, layout=torch.contiguous_format, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator).contiguous(memory_format=layout)


def interpolate_case(shape, layout, mode, torch_backward):
    """(backward pair, step pair) for a 2x interpolation of an input of shape."""
    dims = len(shape) - 2
    x = randn(shape, layout)
    out_size = [2 * n for n in shape[2:]]
    scales = [2.0] * dims
    align = None if mode == "nearest" else False
    y = F.interpolate(x, scale_factor=2, mode=mode, align_corners=align)
    grad = randn(y.shape, layout, seed=1)
    bpg_mode = "nearest" if mode == "nearest" else "linear"
    extra = [] if mode == "nearest" else [False]
    backward = [
        ("torch", lambda: torch_backward(grad, out_size, list(shape), *extra, *scales)),
        ("bpg", lambda: bpg.interpolate_backward(grad, list(shape), bpg_mode, bool(align),
                                                 scales)),
    ]
    leaf = x.clone().requires_grad_()

    def step(fn):
        leaf.grad = None
        fn(leaf, scale_factor=2, mode=mode, align_corners=align).backward(grad)

    steps = [("torch", lambda: step(F.interpolate)),
             ("bpg", lambda: step(bpg_torch.interpolate))]
    return backward, steps


def batch_norm_case(shape, layout, relu):
    x = randn(shape, layout)
    channels = shape[1]
    weight, bias = torch.ones(channels), torch.zeros(channels)
    mean, var = torch.zeros(channels), torch.ones(channels)
    out, save_mean, save_invstd = aten.native_batch_norm(x, weight, bias, mean, var, True,
                                                         0.1, 1e-5)
    activated = out.relu()
    grad = randn(shape, layout, seed=1)
    mask = [True, True, True]

    def torch_backward():
        g = aten.threshold_backward(grad, activated, 0) if relu else grad
        return aten.native_batch_norm_backward(g, x, weight, mean, var, save_mean,
                                               save_invstd, True, 1e-5, mask)

    if relu:
        def bpg_backward():
            return bpg.batch_norm_relu_backward(grad, activated, x, save_mean, save_invstd,
                                                weight, True, 1e-5)
    else:
        def bpg_backward():
            return bpg.batch_norm_backward(grad, x, save_mean, save_invstd, weight, True, 1e-5)

    leaf = x.clone().requires_grad_()
    w, b = weight.clone().requires_grad_(), bias.clone().requires_grad_()

    def torch_step():
        leaf.grad = w.grad = b.grad = None
        y = F.batch_norm(leaf, mean, var, w, b, True)
        (F.relu(y) if relu else y).backward(grad)

    def bpg_step():
        leaf.grad = w.grad = b.grad = None
        fn = batch_norm_relu if relu else bpg_torch.batch_norm
        fn(leaf, mean, var, w, b, True).backward(grad)

    return ([("torch", torch_backward), ("bpg", bpg_backward)],
            [("torch", torch_step), ("bpg", bpg_step)])


CASES = [
    ("bilinear 2x NCHW 16x64x56x56", lambda: interpolate_case(
        [16, 64, 56, 56], torch.contiguous_format, "bilinear", aten.upsample_bilinear2d_backward)),
    ("bilinear 2x channels_last 16x64x56x56", lambda: interpolate_case(
        [16, 64, 56, 56], torch.channels_last, "bilinear", aten.upsample_bilinear2d_backward)),
    ("nearest 2x NCHW 16x64x56x56", lambda: interpolate_case(
        [16, 64, 56, 56], torch.contiguous_format, "nearest", aten.upsample_nearest2d_backward)),
    ("nearest 2x channels_last 16x64x56x56", lambda: interpolate_case(
        [16, 64, 56, 56], torch.channels_last, "nearest", aten.upsample_nearest2d_backward)),
    ("trilinear 2x NCDHW 4x32x16x28x28", lambda: interpolate_case(
        [4, 32, 16, 28, 28], torch.contiguous_format, "trilinear",
        aten.upsample_trilinear3d_backward)),
    ("trilinear 2x channels_last_3d 4x32x16x28x28", lambda: interpolate_case(
        [4, 32, 16, 28, 28], torch.channels_last_3d, "trilinear",
        aten.upsample_trilinear3d_backward)),
    ("BatchNorm2d training NCHW 16x64x112x112", lambda: batch_norm_case(
        [16, 64, 112, 112], torch.contiguous_format, False)),
    ("BatchNorm2d training channels_last 16x64x112x112", lambda: batch_norm_case(
        [16, 64, 112, 112], torch.channels_last, False)),
    ("BatchNorm2d+ReLU training NCHW 16x64x112x112", lambda: batch_norm_case(
        [16, 64, 112, 112], torch.contiguous_format, True)),
    ("BatchNorm2d+ReLU training channels_last 16x64x112x112", lambda: batch_norm_case(
        [16, 64, 112, 112], torch.channels_last, True)),
]


def unet_step_pairs(channels_last):
    import copy
    plain = torch_unet.make_model(width=16, channels_last=channels_last)
    converted = bpg_torch.convert(copy.deepcopy(plain))
    x, target = torch_unet.make_batches(1, batch=8, size=64, channels_last=channels_last)[0]

    def step(model, optimizer):
        optimizer.zero_grad()
        F.mse_loss(model(x), target).backward()
        optimizer.step()

    optimizers = {id(m): torch.optim.SGD(m.parameters(), lr=0.01) for m in (plain, converted)}
    return [("torch", lambda: step(plain, optimizers[id(plain)])),
            ("bpg", lambda: step(converted, optimizers[id(converted)]))]


TINY_NAME = "tiny 1x1x2x2 bilinear, us (not ms) per call"


def tiny_pairs():
    # Per-call cost: a 1x1x2x2 -> 4x4 bilinear backward, op alone and through autograd.
    x = randn([1, 1, 2, 2])
    grad = randn([1, 1, 4, 4], seed=1)
    leaf = x.clone().requires_grad_()

    def step(fn):
        leaf.grad = None
        fn(leaf, scale_factor=2, mode="bilinear").backward(grad)

    backward = [
        ("torch", lambda: aten.upsample_bilinear2d_backward(grad, [4, 4], [1, 1, 2, 2], False,
                                                           2.0, 2.0)),
        ("bpg", lambda: bpg.interpolate_backward(grad, [1, 1, 2, 2], "linear", False,
                                                 [2.0, 2.0])),
    ]
    steps = [("torch", lambda: step(F.interpolate)), ("bpg", lambda: step(bpg_torch.interpolate))]
    return backward, steps


def tiny_autograd_backward_us(calls):
    """Per-call us of the backward alone through autograd (graph built untimed), medians."""
    leaf = randn([1, 1, 2, 2]).requires_grad_()
    grad = randn([1, 1, 4, 4], seed=1)
    times = {"torch": [], "bpg": []}
    for index in range(calls):
        for name, fn in (("torch", F.interpolate), ("bpg", bpg_torch.interpolate)):
            y = fn(leaf, scale_factor=2, mode="bilinear")
            start = time.perf_counter()
            torch.autograd.grad(y, leaf, grad)
            if index >= calls // 10:  # the first tenth warms up
                times[name].append((time.perf_counter() - start) * 1e6)
    return {name: statistics.median(values) for name, values in times.items()}


def row(name, backward, step):
    def cell(times):
        if times is None:
            return f"{'':>9} {'':>9} {'':>6}"
        return f"{times['torch']:9.3f} {times['bpg']:9.3f} {times['torch'] / times['bpg']:5.2f}x"
    print(f"{name:<54} {cell(backward)}   {cell(step)}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 timed runs, 1 warm-up")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per case")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 15)
    warmup = 1 if args.quick else 3
    if repeats < 1:
        parser.error("--repeats must be at least 1")

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# bpg_torch benchmark, {now}, commit {commit()}")
    print(f"# {cpu_model()}, {os.cpu_count()} logical CPUs, {platform.platform()}")
    print(f"# torch {torch.__version__}, torch threads {torch.get_num_threads()}, "
          f"bpg threads {bpg_torch.get_num_threads()}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"BPG_TORCH_RUNTIME={os.environ.get('BPG_TORCH_RUNTIME', 'unset')}")
    print(f"# medians of {repeats} interleaved runs after {warmup} warm-up; ms; "
          "x = torch / bpg_torch")
    print(f"{'case':<54} {'torch bwd':>9} {'bpg bwd':>9} {'':>6}   "
          f"{'torch stp':>9} {'bpg stp':>9}")
    for name, make in CASES:
        if args.only not in name:
            continue
        backward, steps = make()
        row(name, median_ms(backward, repeats, warmup), median_ms(steps, repeats, warmup))
        del backward, steps
    for layout, channels_last in (("NCHW", False), ("channels_last", True)):
        name = f"UNet step width 16, 8x3x64x64 {layout}"
        if args.only in name:
            row(name, None, median_ms(unet_step_pairs(channels_last), repeats, warmup))
    if args.only not in TINY_NAME:
        return
    # Short blocks, many of them: on a shared machine a block that lost its core
    # to another process is an outlier, so the least disturbed block is shown too.
    backward, steps = tiny_pairs()
    calls = 50
    blocks = {}
    for column, pairs in (("bwd", backward), ("stp", steps)):
        times = timed_ms([(n, lambda f=f: [f() for _ in range(calls)]) for n, f in pairs],
                         10 * repeats, warmup)
        blocks[column] = {n: [t * 1e3 / calls for t in v] for n, v in times.items()}
    for label, pick in (("median", statistics.median), ("min", min)):
        cells = []
        for column in ("bwd", "stp"):
            torch_us, bpg_us = pick(blocks[column]["torch"]), pick(blocks[column]["bpg"])
            cells.append(f"{torch_us:9.2f} {bpg_us:9.2f} {torch_us / bpg_us:5.2f}x")
        print(f"{TINY_NAME + ', ' + label:<54} {cells[0]}   {cells[1]}")
    autograd_us = tiny_autograd_backward_us(200 * repeats)
    print(f"{'tiny, us per backward through autograd, median':<54} {autograd_us['torch']:9.2f} "
          f"{autograd_us['bpg']:9.2f} {autograd_us['torch'] / autograd_us['bpg']:5.2f}x")

if __name__ == "__main__":
    main()
