"""Smoke test of the torch.ops.bpg ops themselves (the op library, not the
python package): gradients against torch's autograd, memory formats, a
fallback and its reason, the compiled-partition cache and thread settings."""
import math

import pytest
import torch
import torch.nn.functional as F

import bpg_torch  # noqa: F401  (loads libbpg_torch.so)

ops = torch.ops.bpg


def close(a, b, rtol=1e-5):
    scale = max(b.abs().max().item(), 1e-30)
    return (a.float() - b.float()).abs().max().item() <= rtol * scale


def interp_args(shape, size, scale_factor):
    """output_size and scales as F.interpolate passes them to the upsample op."""
    nsp = len(shape) - 2
    if size is not None:
        return list(size), None
    return [math.floor(shape[2 + k] * scale_factor) for k in range(nsp)], [float(scale_factor)] * nsp


INTERP_CASES = [
    # shape, mode, align_corners, size, scale_factor, memory format
    ((2, 3, 5, 5), "linear", False, (10, 10), None, torch.contiguous_format),
    ((2, 3, 5, 5), "linear", False, None, 2.0, torch.channels_last),
    ((2, 3, 6, 4), "linear", True, (11, 9), None, torch.contiguous_format),
    ((1, 2, 5, 5), "linear", False, None, 1.5, torch.contiguous_format),
    ((1, 2, 10, 10), "linear", False, None, 0.7, torch.channels_last),
    ((2, 3, 4, 4), "nearest", None, None, 2.0, torch.contiguous_format),
    ((2, 3, 5, 5), "nearest", None, None, 1.3, torch.channels_last),
    ((2, 4, 7), "linear", False, (13,), None, torch.contiguous_format),
    ((1, 2, 3, 4, 5), "linear", False, None, 2.0, torch.channels_last_3d),
    ((1, 2, 3, 4, 5), "nearest", None, (5, 7, 9), None, torch.contiguous_format),
    ((1, 1, 4, 4), "linear", False, (1, 1), None, torch.contiguous_format),
]


@pytest.mark.parametrize("shape,mode,align,size,sf,fmt", INTERP_CASES)
def test_interpolate_matches_torch_autograd(shape, mode, align, size, sf, fmt):
    torch.manual_seed(0)
    x = torch.randn(shape).contiguous(memory_format=fmt)
    out_size, scales = interp_args(shape, size, sf)
    torch_mode = mode if mode == "nearest" else {3: "linear", 4: "bilinear", 5: "trilinear"}[len(shape)]
    a = x.clone().requires_grad_()
    b = x.clone().requires_grad_()
    ya = ops.interpolate(a, out_size, mode, bool(align), scales)
    yb = F.interpolate(b, size=size, scale_factor=sf, mode=torch_mode, align_corners=align)
    assert torch.equal(ya, yb)
    go = torch.randn_like(yb)
    ya.backward(go)
    yb.backward(go)
    assert close(a.grad, b.grad)
    assert a.grad.stride() == b.grad.stride()
    path = ops.interpolate_path(go, list(shape), mode, bool(align), scales)
    assert path.startswith("bpg "), path


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
def test_interpolate_backward_op_keeps_grad_output_format(fmt):
    go = torch.randn(2, 5, 8, 8).contiguous(memory_format=fmt)
    g = ops.interpolate_backward(go, [2, 5, 4, 4], "linear", False, None)
    ref = torch.ops.aten.upsample_bilinear2d_backward(go, [8, 8], [2, 5, 4, 4], False, None, None)
    assert close(g, ref)
    assert g.is_contiguous(memory_format=fmt)


def test_bf16_interpolate_backward_is_no_farther_than_torch():
    torch.manual_seed(1)
    go = torch.randn(2, 3, 12, 12)
    ref = torch.ops.aten.upsample_bilinear2d_backward(go.double(), [12, 12], [2, 3, 6, 6], False, None, None)
    ours = ops.interpolate_backward(go.bfloat16(), [2, 3, 6, 6], "linear", False, None)
    theirs = torch.ops.aten.upsample_bilinear2d_backward(go.bfloat16(), [12, 12], [2, 3, 6, 6], False, None, None)
    assert (ours.double() - ref).abs().max() <= (theirs.double() - ref).abs().max() + 1e-12


def test_fallback_is_correct_and_names_the_first_differing_index():
    # torch's float ratio 299/699 moves weights by > 1e-6 from the exact ones.
    go = torch.randn(1, 2, 700)
    path = ops.interpolate_path(go, [1, 2, 300], "linear", True, None)
    assert path.startswith("torch: ") and "output 113" in path, path
    g = ops.interpolate_backward(go, [1, 2, 300], "linear", True, None)
    ref = torch.ops.aten.upsample_linear1d_backward(go, [700], [1, 2, 300], True, None)
    assert torch.equal(g, ref)
    path64 = ops.interpolate_path(go.double(), [1, 2, 300], "linear", False, None)
    assert path64.startswith("torch: ") and "Double" in path64


def test_bad_interpolate_arguments_are_clear_errors():
    go = torch.randn(1, 2, 8, 8)
    with pytest.raises(RuntimeError, match="mode must be"):
        ops.interpolate_backward(go, [1, 2, 4, 4], "bicubic", False, None)
    with pytest.raises(RuntimeError, match="input_size"):
        ops.interpolate_backward(go, [1, 2, 4], "linear", False, None)
    with pytest.raises(RuntimeError, match="scales"):
        ops.interpolate_backward(go, [1, 2, 4, 4], "linear", False, [2.0])


BN_CASES = [
    # shape, memory format, training, affine, fuse_relu
    ((4, 3, 5, 5), torch.contiguous_format, True, True, False),
    ((4, 3, 5, 5), torch.channels_last, True, True, False),
    ((4, 3, 5, 5), torch.contiguous_format, False, True, False),
    ((4, 3, 5, 5), torch.channels_last, False, False, False),
    ((6, 5), torch.contiguous_format, True, False, False),
    ((3, 4, 9), torch.contiguous_format, True, True, False),
    ((2, 3, 3, 4, 5), torch.channels_last_3d, True, True, False),
    ((4, 3, 5, 5), torch.contiguous_format, True, True, True),
    ((4, 3, 5, 5), torch.channels_last, False, True, True),
]


@pytest.mark.parametrize("shape,fmt,training,affine,fuse", BN_CASES)
def test_batch_norm_matches_torch_autograd(shape, fmt, training, affine, fuse):
    torch.manual_seed(2)
    C = shape[1]
    x = (torch.randn(shape) * 2 + 0.5).contiguous(memory_format=fmt)
    w = torch.rand(C) + 0.5 if affine else None
    bias = torch.randn(C) if affine else None
    rm, rv = torch.randn(C) * 0.1, torch.rand(C) + 0.5
    rm2, rv2 = rm.clone(), rv.clone()
    leaves_a = [x.clone().requires_grad_()] + ([w.clone().requires_grad_(), bias.clone().requires_grad_()] if affine else [])
    leaves_b = [x.clone().requires_grad_()] + ([w.clone().requires_grad_(), bias.clone().requires_grad_()] if affine else [])
    wa, ba = (leaves_a[1], leaves_a[2]) if affine else (None, None)
    wb, bb = (leaves_b[1], leaves_b[2]) if affine else (None, None)
    ya = ops.batch_norm(leaves_a[0], wa, ba, rm, rv, training, 0.1, 1e-5, fuse)
    yb = F.batch_norm(leaves_b[0], rm2, rv2, wb, bb, training, 0.1, 1e-5)
    if fuse:
        yb = F.relu(yb)
    assert torch.equal(ya, yb)
    assert torch.equal(rm, rm2) and torch.equal(rv, rv2)
    go = torch.randn_like(yb)
    ya.backward(go)
    yb.backward(go)
    for a, b in zip(leaves_a, leaves_b):
        assert close(a.grad, b.grad, 1e-4), (a.grad - b.grad).abs().max()
    path = ops.batch_norm_path(x, training, fuse)
    assert path.startswith("bpg "), path


def test_batch_norm_backward_op_returns_weight_grads_without_weight():
    torch.manual_seed(3)
    x, go = torch.randn(4, 3, 6, 6), torch.randn(4, 3, 6, 6)
    mean, var = x.mean((0, 2, 3)), x.var((0, 2, 3), unbiased=False)
    invstd = (var + 1e-5).rsqrt()
    gi, gw, gb = ops.batch_norm_backward(go, x, mean, invstd, None, True, 1e-5)
    rgi, rgw, rgb = torch.ops.aten.native_batch_norm_backward(
        go, x, torch.ones(3), None, None, mean, invstd, True, 1e-5, [True, True, True])
    assert close(gi, rgi, 1e-4) and close(gw, rgw, 1e-4) and close(gb, rgb, 1e-4)


def test_cache_hits_on_repeated_calls():
    go = torch.randn(1, 3, 14, 14)
    ops.interpolate_backward(go, [1, 3, 7, 7], "linear", False, None)
    hits, misses, size, capacity = ops.cache_info()
    for _ in range(5):
        ops.interpolate_backward(go, [1, 3, 7, 7], "linear", False, None)
    hits2, misses2, size2, capacity2 = ops.cache_info()
    assert hits2 == hits + 5 and misses2 == misses
    assert 1 <= size2 <= capacity2


def test_thread_settings():
    before = torch.get_num_threads()
    ops.set_num_threads(3)
    assert ops.get_num_threads() == 3
    ops.interpolate_backward(torch.randn(1, 3, 8, 8), [1, 3, 4, 4], "nearest", False, None)
    ops.set_num_threads(0)
    assert ops.get_num_threads() == torch.get_num_threads() == before
    with pytest.raises(RuntimeError, match="set_num_threads"):
        ops.set_num_threads(-1)


def test_concurrent_calls_share_the_cache_safely():
    import threading
    shapes = [(1, 3, 4, 4), (2, 2, 5, 5), (1, 3, 4, 4), (2, 2, 5, 5)]
    errors = []

    def work(shape):
        try:
            go = torch.randn(shape[0], shape[1], shape[2] * 2, shape[3] * 2)
            ref = torch.ops.aten.upsample_bilinear2d_backward(go, list(go.shape[2:]), list(shape), False, None, None)
            for _ in range(200):
                g = ops.interpolate_backward(go, list(shape), "linear", False, None)
                if not close(g, ref):
                    errors.append(shape)
                    return
        except Exception as e:  # reported below, on the main thread
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(s,)) for s in shapes]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors


def run_fresh_python(code, **env):
    """Runs code in a new interpreter (the op library reads its settings once)."""
    import os
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def test_verbose_prints_one_line_per_call():
    code = (
        "import torch, bpg_torch\n"
        "go = torch.randn(1, 2, 8, 8)\n"
        "torch.ops.bpg.interpolate_backward(go, [1, 2, 4, 4], 'linear', False, None)\n"
        "torch.ops.bpg.interpolate_backward(go.double(), [1, 2, 4, 4], 'linear', False, None)\n"
        "x = torch.randn(2, 3, 4, 4)\n"
        "torch.ops.bpg.batch_norm_backward(x, x, x.mean((0, 2, 3)), torch.ones(3), None, True, 1e-5)\n"
    )
    r = run_fresh_python(code, BPG_TORCH_VERBOSE="1")
    lines = [l for l in r.stderr.splitlines() if l.startswith("bpg_torch,")]
    assert len(lines) == 3, r.stderr
    assert lines[0].startswith("bpg_torch,interpolate_backward,bpg ") and "cache=miss" in lines[0]
    assert lines[1].startswith("bpg_torch,interpolate_backward,torch: ")
    assert lines[2].startswith("bpg_torch,batch_norm_backward,bpg ")


def test_cache_is_bounded_and_least_recently_used_goes_first():
    code = (
        "import torch, bpg_torch\n"
        "ops = torch.ops.bpg\n"
        "def call(n): ops.interpolate_backward(torch.randn(1, 1, 2 * n, 2 * n), [1, 1, n, n], 'linear', False, None)\n"
        "call(3); call(4); call(3); call(5)\n"  # 4 is the least recently used when 5 arrives
        "print(*ops.cache_info())\n"
        "call(3); h, m, _, _ = ops.cache_info(); print(h, m)\n"
        "call(4); h, m, _, _ = ops.cache_info(); print(h, m)\n"
    )
    r = run_fresh_python(code, BPG_TORCH_CACHE_CAPACITY="2")
    info, after3, after4 = r.stdout.split("\n")[:3]
    assert info == "1 3 2 2"  # hits misses size capacity
    assert after3 == "2 3"    # 3 was kept
    assert after4 == "2 4"    # 4 was dropped


@pytest.mark.parametrize("policy, runtime_env, runtime", [
    ("", "", "openmp"), ("passive", "", "tbb_arena"), ("active", "", "openmp"), ("passive", "openmp", "openmp")])
def test_runtime_default_follows_the_openmp_wait_policy(policy, runtime_env, runtime):
    code = ("import torch, bpg_torch\n"
            "torch.ops.bpg.interpolate_backward(torch.randn(1, 1, 4, 4), [1, 1, 2, 2], 'linear', False, None)\n")
    env = {"BPG_TORCH_VERBOSE": "1", "OMP_WAIT_POLICY": policy, "BPG_TORCH_RUNTIME": runtime_env}
    r = run_fresh_python(code, **env)
    assert f"runtime={runtime}," in r.stderr, r.stderr
