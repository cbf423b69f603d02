"""Helpers shared by the bpg_torch tests: inputs, memory formats, error bounds,
processes of a torch.distributed group on 127.0.0.1."""
import socket
import time

import torch
import torch.multiprocessing as mp

FORMATS = {
    1: [torch.contiguous_format],
    2: [torch.contiguous_format, torch.channels_last],
    3: [torch.contiguous_format, torch.channels_last_3d],
}
LOW_PRECISION = [torch.bfloat16, torch.float16]


def make_input(shape, memory_format=torch.contiguous_format, dtype=torch.float32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, generator=generator, dtype=torch.float64)
    return values.to(dtype).contiguous(memory_format=memory_format)


def format_flags(t):
    """Which memory formats t is laid out in, as torch reports them."""
    flags = [t.is_contiguous()]
    if t.dim() == 4:
        flags.append(t.is_contiguous(memory_format=torch.channels_last))
    if t.dim() == 5:
        flags.append(t.is_contiguous(memory_format=torch.channels_last_3d))
    return tuple(flags)


def assert_close_f32(actual, expected, rel=1e-5):
    """Each element within rel of the reference, relative to its largest magnitude."""
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    scale = max(expected.abs().max().item(), 1e-30) if expected.numel() else 1.0
    torch.testing.assert_close(actual, expected, rtol=rel, atol=rel * scale)


def max_error(t, reference):
    return (t.double() - reference).abs().max().item() if t.numel() else 0.0


def half_ulp(dtype, magnitude):
    """Half the spacing of dtype's values at magnitude: the final rounding's bound."""
    return torch.finfo(dtype).eps * max(magnitude, torch.finfo(dtype).tiny) / 2


# A low-precision result may sit farther from the f64 reference than torch's own
# by at most this factor plus the half ulp of the final rounding: bpg accumulates
# in float32 and rounds once, torch may round at different points, so on a
# single tensor either can be the luckier one by up to a rounding step.
LOW_PRECISION_SLACK = 1.0


def assert_low_precision_ok(actual, torch_result, reference):
    assert actual.shape == torch_result.shape and actual.dtype == torch_result.dtype
    ours = max_error(actual, reference)
    theirs = max_error(torch_result, reference)
    magnitude = reference.abs().max().item() if reference.numel() else 0.0
    bound = LOW_PRECISION_SLACK * theirs + half_ulp(actual.dtype, magnitude)
    assert ours <= bound, (
        f"{actual.dtype}: bpg error {ours:.3g} > bound {bound:.3g} "
        f"(torch's own error {theirs:.3g}, |ref| max {magnitude:.3g})")


def run_or_error(fn, *args, **kwargs):
    """fn's result, or the exception it raised (torch 1.13 has no CPU float16 kernels)."""
    try:
        return fn(*args, **kwargs)
    except RuntimeError as error:
        return error


def assert_within_one_ulp(actual, reference):
    # Computed in float32 and rounded once: within one ulp of each element.
    assert actual.shape == reference.shape
    bound = torch.finfo(actual.dtype).eps * reference.abs() + torch.finfo(actual.dtype).tiny
    excess = (actual.double() - reference).abs() - bound
    assert excess.numel() == 0 or excess.max().item() <= 0, (
        f"{actual.dtype}: {int((excess > 0).sum())} elements farther than one ulp")


def check_low_precision_run(bpg_run, torch_run, forward_reference, grad_reference):
    """bpg's (forward, grad_output, grad) in bf16/f16 against torch's and an f64 run.

    Where torch has a result, bpg's forward equals it and bpg's gradient is no
    farther from the f64 gradient than torch's (assert_low_precision_ok). Where
    torch has no kernel for the dtype, bpg raises the same kind of error or its
    forward and gradient are within one ulp of the f64 results.
    """
    if isinstance(torch_run, Exception):
        if isinstance(bpg_run, Exception):
            return
        y, _, grad = bpg_run
        assert_within_one_ulp(y, forward_reference)
        magnitude = grad_reference.abs().max().item() if grad_reference.numel() else 0.0
        error = max_error(grad, grad_reference)
        assert error <= 2 * half_ulp(grad.dtype, magnitude), (grad.dtype, error, magnitude)
        return
    if isinstance(bpg_run, Exception):
        raise bpg_run
    y_t, _, grad_t = torch_run
    y_b, _, grad_b = bpg_run
    assert torch.equal(y_b, y_t)
    assert_low_precision_ok(grad_b, grad_t, grad_reference)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_ranks(tmp_path, world_size, target, args, timeout_seconds=240):
    """target(rank, world_size, port, *args, result_path) in world_size spawned
    processes; their result files, loaded. Fails on a hang or a non-zero exit."""
    context = mp.get_context("spawn")
    port = free_port()
    paths = [tmp_path / f"rank{rank}.pt" for rank in range(world_size)]
    processes = [context.Process(target=target, args=(rank, world_size, port, *args, str(paths[rank])))
                 for rank in range(world_size)]
    for process in processes:
        process.start()
    deadline = time.monotonic() + timeout_seconds
    try:
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        hung = [rank for rank, p in enumerate(processes) if p.is_alive()]
        assert not hung, f"ranks {hung} still running after {timeout_seconds} s"
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join(10)
    codes = [p.exitcode for p in processes]
    assert codes == [0] * world_size, f"rank exit codes {codes}"
    return [torch.load(path) for path in paths]
