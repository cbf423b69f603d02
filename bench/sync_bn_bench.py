"""SyncBatchNorm's cost: bpg_torch.SyncBatchNorm on 2 processes (gloo on
127.0.0.1, one thread each) against BatchNorm with the same per-process batch
on 1 process (bpg_torch's and torch's) and on the same 2 processes without
synchronization (the memory bandwidth shared alike), forward + backward of one
layer, and the two all_reduce calls of a SyncBatchNorm step alone.

    PYTHONPATH=build/python python3 bench/sync_bn_bench.py [--repeats N]

Medians in ms; "all_reduce" is two all_reduce calls of the sizes a layer sends
(2C + 1 doubles forward, 2C floats backward).
"""
import argparse
import datetime
import os
import socket
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from torch_bench import commit, cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [((8, 64, 56, 56), torch.contiguous_format), ((8, 64, 56, 56), torch.channels_last),
         ((2, 32, 16, 32, 32), torch.contiguous_format)]


def step_ms(module, x, grad, repeats, barrier=None):
    """Median ms of the forward + backward step and of its backward alone."""
    steps, backwards = [], []
    for i in range(repeats + 3):
        if barrier:
            barrier()
        start = time.perf_counter()
        x.grad = None
        y = module(x)
        middle = time.perf_counter()
        y.backward(grad)
        end = time.perf_counter()
        if i >= 3:
            steps.append((end - start) * 1e3)
            backwards.append((end - middle) * 1e3)
    return statistics.median(steps), statistics.median(backwards)


def inputs(shape, fmt):
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(shape, generator=generator).contiguous(memory_format=fmt).requires_grad_()
    grad = torch.randn(shape, generator=generator).contiguous(memory_format=fmt)
    return x, grad


def rank_main(rank, port, repeats, queue):
    import bpg_torch
    torch.set_num_threads(1)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=120))
    rows = []
    for shape, fmt in CASES:
        x, grad = inputs(shape, fmt)
        sync = bpg_torch.SyncBatchNorm(shape[1])
        sync_ms = step_ms(sync, x, grad, repeats, dist.barrier)
        plain = (bpg_torch.BatchNorm2d if len(shape) == 4 else bpg_torch.BatchNorm3d)(shape[1])
        plain_ms = step_ms(plain, x, grad, repeats, dist.barrier)
        c = shape[1]
        forward, backward = torch.zeros(2 * c + 1, dtype=torch.float64), torch.zeros(2 * c)
        reduce_times = []
        for i in range(repeats + 3):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(forward)
            dist.all_reduce(backward)
            if i >= 3:
                reduce_times.append((time.perf_counter() - start) * 1e3)
        rows.append((sync_ms, statistics.median(reduce_times), plain_ms))
    queue.put((rank, rows))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    import bpg_torch
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    context = mp.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=rank_main, args=(rank, port, args.repeats, queue)) for rank in range(2)]
    for p in processes:
        p.start()
    results = dict(queue.get(timeout=600) for _ in processes)
    for p in processes:
        p.join(60)
    torch.set_num_threads(1)
    print(f"sync_bn_bench: {datetime.datetime.utcnow():%Y-%m-%dT%H:%MZ}, commit {commit()}, "
          f"{cpu_model()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{args.repeats} steps; one thread per process")
    print("step (forward + backward) / backward alone, ms:")
    print("| batch per process | layout | SyncBN, 2 processes | bpg BN, 2 processes unsynced | bpg BN, 1 process "
          "| torch BN, 1 process | all_reduce x2 | SyncBN / unsynced |")
    print("|---|---|---|---|---|---|---|---|")
    for index, (shape, fmt) in enumerate(CASES):
        x, grad = inputs(shape, fmt)
        dims = len(shape) - 2
        bpg_bn = (bpg_torch.BatchNorm2d if dims == 2 else bpg_torch.BatchNorm3d)(shape[1])
        torch_bn = (torch.nn.BatchNorm2d if dims == 2 else torch.nn.BatchNorm3d)(shape[1])
        bpg_ms, torch_ms = step_ms(bpg_bn, x, grad, args.repeats), step_ms(torch_bn, x, grad, args.repeats)
        sync_ms = max((results[r][index][0] for r in results), key=lambda t: t[0])
        reduce_ms = max(results[r][index][1] for r in results)
        unsynced_ms = max((results[r][index][2] for r in results), key=lambda t: t[0])
        layout = "channels_last" if fmt != torch.contiguous_format else "contiguous"
        pair = lambda t: f"{t[0]:.2f} / {t[1]:.2f}"  # noqa: E731
        print(f"| {'x'.join(map(str, shape))} | {layout} | {pair(sync_ms)} | {pair(unsynced_ms)} | {pair(bpg_ms)} "
              f"| {pair(torch_ms)} | {reduce_ms:.3f} | {sync_ms[0] / unsynced_ms[0]:.2f} / "
              f"{sync_ms[1] / unsynced_ms[1]:.2f} |")


if __name__ == "__main__":
    main()
