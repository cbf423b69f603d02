"""The UNet training under DistributedDataParallel (gloo, 2 processes on 127.0.0.1).

Each rank's bpg_torch run must equal torch's own DDP run on that rank.
"""
import socket
import time

import torch
import torch.multiprocessing as mp

import ddp_worker

WORLD_SIZE = 2
STEPS = 20
TIMEOUT_SECONDS = 240


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def assert_relative(actual, expected, what, rel=1e-4):
    scale = max(expected.abs().max().item(), 1e-30)
    difference = (actual - expected).abs().max().item()
    assert difference <= rel * scale, f"{what}: {difference:.3g} > {rel} * {scale:.3g}"


def run_ranks(tmp_path):
    context = mp.get_context("spawn")
    port = free_port()
    paths = [tmp_path / f"rank{rank}.pt" for rank in range(WORLD_SIZE)]
    processes = [context.Process(target=ddp_worker.run_rank,
                                 args=(rank, WORLD_SIZE, port, STEPS, str(paths[rank])))
                 for rank in range(WORLD_SIZE)]
    for process in processes:
        process.start()
    deadline = time.monotonic() + TIMEOUT_SECONDS
    try:
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        hung = [rank for rank, p in enumerate(processes) if p.is_alive()]
        assert not hung, f"ranks {hung} still running after {TIMEOUT_SECONDS} s"
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join(10)
    codes = [p.exitcode for p in processes]
    assert codes == [0] * WORLD_SIZE, f"rank exit codes {codes}"
    return [torch.load(path) for path in paths]


def test_ddp_training_equals_torch(tmp_path):
    results = run_ranks(tmp_path)
    for rank, result in enumerate(results):
        assert result["path"].startswith("bpg"), result["path"]
        assert_relative(torch.tensor(result["losses_b"]), torch.tensor(result["losses_t"]),
                        f"rank {rank} losses")
        for key, expected in result["state_t"].items():
            actual = result["state_b"][key]
            if expected.is_floating_point():
                assert_relative(actual, expected, f"rank {rank} {key}")
            else:
                assert torch.equal(actual, expected), f"rank {rank} {key}"
    # DDP keeps the parameters of the ranks equal; the data differed per rank.
    assert results[0]["losses_t"] != results[1]["losses_t"]
    for key, value in results[0]["state_b"].items():
        if "running" not in key and "num_batches" not in key:
            assert_relative(results[1]["state_b"][key], value, f"ranks' {key}")
