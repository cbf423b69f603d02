"""The UNet training under DistributedDataParallel (gloo, 2 processes on 127.0.0.1).

Each rank's bpg_torch run must equal torch's own DDP run on that rank.
"""
import torch

import bpg_test_util
import ddp_worker

WORLD_SIZE = 2
STEPS = 20


def assert_relative(actual, expected, what, rel=1e-4):
    scale = max(expected.abs().max().item(), 1e-30)
    difference = (actual - expected).abs().max().item()
    assert difference <= rel * scale, f"{what}: {difference:.3g} > {rel} * {scale:.3g}"


def test_ddp_training_equals_torch(tmp_path):
    results = bpg_test_util.run_ranks(tmp_path, WORLD_SIZE, ddp_worker.run_rank, (STEPS,))
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
