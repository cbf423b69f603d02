"""bpg_torch.SyncBatchNorm over torch.distributed (gloo, 2 and 3 processes on
127.0.0.1) against torch.nn.BatchNorm in one process on the whole batch:
outputs, input gradients, the sum over ranks of the weight and bias
gradients, running statistics and evaluation output, for 1d ([N, C] and
[N, C, L]), 2d and 3d, contiguous and channels-last, uneven batches and an
empty rank; and 10 steps of DistributedDataParallel.
"""
import torch

from bpg_test_util import run_ranks
import sync_bn_worker


def assert_relative(actual, expected, what, rel=1e-5):
    scale = max(expected.abs().max().item(), 1e-30)
    difference = (actual - expected).abs().max().item()
    assert difference <= rel * scale, f"{what}: {difference:.3g} > {rel} * {scale:.3g}"


def cases_for(counts):
    cases = []
    for spatial in ([], [9], [5, 6], [3, 4, 5]):
        for channels_last in ((False, True) if len(spatial) >= 2 else (False,)):
            cases.append(dict(counts=counts, channels=7, spatial=spatial, channels_last=channels_last,
                              seed=len(cases) + 10 * len(counts)))
    return cases


def reference(case):
    """torch.nn.BatchNorm on the whole batch, one process, the same two steps."""
    x, grad, weight, bias = sync_bn_worker.case_tensors(case)
    cls = {0: torch.nn.BatchNorm1d, 1: torch.nn.BatchNorm1d, 2: torch.nn.BatchNorm2d, 3: torch.nn.BatchNorm3d}[
        len(case["spatial"])]
    module = cls(case["channels"], momentum=0.3)
    with torch.no_grad():
        module.weight.copy_(weight)
        module.bias.copy_(bias)
    inputs = x.clone().requires_grad_()
    results = {}
    for step in range(2):
        module.zero_grad()
        inputs.grad = None
        output = module(inputs)
        output.backward(grad)
        results[step] = dict(output=output.detach(), grad_input=inputs.grad.clone(),
                             grad_weight=module.weight.grad.clone(), grad_bias=module.bias.grad.clone())
    results["running_mean"] = module.running_mean.clone()
    results["running_var"] = module.running_var.clone()
    module.eval()
    results["eval_output"] = module(inputs).detach()
    return results


def check_world(tmp_path, counts):
    cases = cases_for(counts)
    ranks = run_ranks(tmp_path, len(counts), sync_bn_worker.run_rank, (cases,))
    for index, case in enumerate(cases):
        want = reference(case)
        got = [rank_results[index] for rank_results in ranks]
        name = f"{len(counts)} ranks {counts} spatial {case['spatial']} channels_last {case['channels_last']}"
        for step in range(2):
            for key in ("output", "grad_input"):
                assert_relative(torch.cat([g[step][key] for g in got]), want[step][key], f"{name} step {step} {key}")
            for key in ("grad_weight", "grad_bias"):
                assert_relative(sum(g[step][key] for g in got), want[step][key], f"{name} step {step} sum of {key}")
        for rank, g in enumerate(got):
            for key in ("running_mean", "running_var"):
                assert_relative(g[key], want[key], f"{name} rank {rank} {key}")
        assert_relative(torch.cat([g["eval_output"] for g in got]), want["eval_output"], f"{name} eval output")


def test_two_processes_uneven_batches(tmp_path):
    check_world(tmp_path, [3, 2])


def test_three_processes_with_an_empty_rank(tmp_path):
    check_world(tmp_path, [2, 0, 3])


def test_ddp_training_with_sync_batchnorm_equals_one_process(tmp_path):
    steps = 10
    ranks = run_ranks(tmp_path, 2, sync_bn_worker.run_ddp_rank, (steps,))
    model = sync_bn_worker.make_model(3)
    losses = sync_bn_worker.train(model, sync_bn_worker.make_batches(steps, 4))
    # Each rank's loss is its half's mean: their mean is the whole batch's.
    assert_relative(torch.tensor([sum(r["losses"][i] for r in ranks) / 2 for i in range(steps)]),
                    torch.tensor(losses), "losses", rel=1e-4)
    for key, expected in model.state_dict().items():
        for rank, result in enumerate(ranks):
            actual = result["state"][key]
            if expected.is_floating_point():
                assert_relative(actual, expected, f"rank {rank} {key}", rel=1e-4)
            else:
                assert torch.equal(actual, expected), f"rank {rank} {key}"
