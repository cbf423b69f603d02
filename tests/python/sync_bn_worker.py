"""One rank of test_sync_batchnorm: bpg_torch.SyncBatchNorm on this rank's
slice of a batch (gloo on 127.0.0.1), every case of the test in one process
group; the results go to a file for the test to compare with one process.
"""
import datetime
import os

import torch
import torch.distributed as dist


def case_tensors(case):
    """The whole batch, the upstream gradient and the module's parameters of a case."""
    generator = torch.Generator().manual_seed(case["seed"])
    shape = [sum(case["counts"]), case["channels"]] + case["spatial"]
    x = torch.randn(shape, generator=generator) * 1.5 + 0.7
    grad = torch.randn(shape, generator=generator)
    weight = torch.rand(case["channels"], generator=generator) + 0.5
    bias = torch.randn(case["channels"], generator=generator)
    return x, grad, weight, bias


def memory_format(case):
    if not case["channels_last"]:
        return torch.contiguous_format
    return torch.channels_last if len(case["spatial"]) == 2 else torch.channels_last_3d


def run_case(case, rank):
    import bpg_torch
    x, grad, weight, bias = case_tensors(case)
    start = sum(case["counts"][:rank])
    local = slice(start, start + case["counts"][rank])
    fmt = memory_format(case)
    module = bpg_torch.SyncBatchNorm(case["channels"], momentum=0.3)
    with torch.no_grad():
        module.weight.copy_(weight)
        module.bias.copy_(bias)
    inputs = x[local].contiguous(memory_format=fmt).requires_grad_()
    results = {}
    for step in range(2):  # twice: the running statistics move, the shift with them
        module.zero_grad()
        inputs.grad = None
        output = module(inputs)
        output.backward(grad[local].contiguous(memory_format=fmt))
        results[step] = dict(output=output.detach().clone(), grad_input=inputs.grad.clone(),
                             grad_weight=module.weight.grad.clone(), grad_bias=module.bias.grad.clone())
    results["running_mean"] = module.running_mean.clone()
    results["running_var"] = module.running_var.clone()
    module.eval()
    results["eval_output"] = module(inputs).detach().clone()
    return results


def init_group(rank, world_size, port):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size, timeout=datetime.timedelta(seconds=60))


def run_rank(rank, world_size, port, cases, result_path):
    init_group(rank, world_size, port)
    try:
        torch.save([run_case(case, rank) for case in cases], result_path)
    finally:
        dist.destroy_process_group()


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.Conv2d(8, 4, 1))


def make_batches(steps, batch):
    generator = torch.Generator().manual_seed(5)
    return [(torch.randn(batch, 3, 6, 6, generator=generator) * 2 + 1, torch.randn(batch, 4, 6, 6, generator=generator))
            for _ in range(steps)]


def train(model, batches, local=slice(None)):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for x, target in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x[local]), target[local])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def run_ddp_rank(rank, world_size, port, steps, result_path):
    """10 steps of DistributedDataParallel with bpg_torch.convert(model, sync=True)."""
    import bpg_torch
    from torch.nn.parallel import DistributedDataParallel
    init_group(rank, world_size, port)
    try:
        model = bpg_torch.convert(make_model(3), sync=True)
        assert isinstance(model[1], bpg_torch.SyncBatchNorm)
        per_rank = 2
        losses = train(DistributedDataParallel(model), make_batches(steps, per_rank * world_size),
                       slice(rank * per_rank, (rank + 1) * per_rank))
        torch.save(dict(losses=losses, state={k: v.clone() for k, v in model.state_dict().items()}), result_path)
    finally:
        dist.destroy_process_group()
