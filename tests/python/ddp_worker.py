"""One rank of test_ddp: the UNet trained under DistributedDataParallel, twice.

Run in a spawned process: first with torch's own modules, then with
bpg_torch.convert, in the same gloo process group; the results go to a file.
"""
import copy
import datetime
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import torch_unet  # noqa: E402


def train_ddp(model, batches):
    ddp = DistributedDataParallel(model)
    losses = torch_unet.train(ddp, batches)
    return losses, {k: v.clone() for k, v in model.state_dict().items()}


def run_rank(rank, world_size, port, steps, result_path):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    import bpg_torch
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size, timeout=datetime.timedelta(seconds=60))
    try:
        batches = torch_unet.make_batches(steps, batch=2, seed=100 + rank)
        reference = torch_unet.make_model()
        converted = bpg_torch.convert(copy.deepcopy(reference))
        losses_t, state_t = train_ddp(reference, batches)
        losses_b, state_b = train_ddp(converted, batches)
        path = bpg_torch.explain(batches[0][0], scale_factor=2, mode="bilinear")
        torch.save(dict(losses_t=losses_t, losses_b=losses_b, state_t=state_t,
                        state_b=state_b, path=path), result_path)
    finally:
        dist.destroy_process_group()
