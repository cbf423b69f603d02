"""What bpg has no kernel for runs torch's own op: same results, and explain() says so."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import bpg_torch
from bpg_test_util import make_input

# (input shape, dtype, layout, interpolate kwargs, words the explanation must contain)
CASES = [
    ([2, 3, 5, 6], torch.float32, torch.contiguous_format,
     dict(scale_factor=2, mode="bicubic"), ["bicubic"]),
    ([2, 3, 5, 6], torch.float32, torch.channels_last,
     dict(scale_factor=1.5, mode="bicubic", align_corners=True), ["bicubic"]),
    ([2, 3, 8, 6], torch.float32, torch.contiguous_format,
     dict(size=[3, 4], mode="area"), ["area"]),
    ([2, 3, 7], torch.float32, torch.contiguous_format,
     dict(scale_factor=0.5, mode="area"), ["area"]),
    ([2, 3, 8, 6], torch.float32, torch.contiguous_format,
     dict(size=[3, 4], mode="bilinear", antialias=True), ["antialias"]),
    ([2, 3, 5, 6], torch.float32, torch.contiguous_format,
     dict(scale_factor=1.7, mode="nearest-exact"), ["nearest-exact"]),
    ([2, 3, 3, 4, 5], torch.float32, torch.channels_last_3d,
     dict(scale_factor=2, mode="nearest-exact"), ["nearest-exact"]),
    ([2, 3, 5, 6], torch.float64, torch.contiguous_format,
     dict(scale_factor=2, mode="bilinear"), ["float64"]),
    ([2, 3, 7], torch.float64, torch.contiguous_format,
     dict(scale_factor=1.5, mode="nearest"), ["float64"]),
]


def forward_and_grad(fn, x, **kwargs):
    leaf = x.detach().clone().requires_grad_()
    y = fn(leaf, **kwargs)
    g = torch.empty_like(y).copy_(make_input(y.shape, dtype=y.dtype, seed=1))
    (grad,) = torch.autograd.grad(y, leaf, g)
    return y, grad


@pytest.mark.parametrize("shape,dtype,memory_format,kwargs,words", CASES, ids=str)
def test_fallback_equals_torch_and_is_explained(shape, dtype, memory_format, kwargs, words):
    x = make_input(shape, memory_format, dtype)
    y_t, grad_t = forward_and_grad(F.interpolate, x, **kwargs)
    y_b, grad_b = forward_and_grad(bpg_torch.interpolate, x, **kwargs)
    # torch's own op on both sides: bit for bit, same layout.
    assert torch.equal(y_b, y_t) and y_b.stride() == y_t.stride()
    assert torch.equal(grad_b, grad_t) and grad_b.stride() == grad_t.stride()
    path = bpg_torch.explain(x, **kwargs)
    assert path.startswith("torch: "), path
    for word in words:
        assert word in path, path


def test_batch_norm_float64_falls_back():
    x = make_input([2, 3, 4, 4], dtype=torch.float64)
    mean, var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    leaf_t, leaf_b = x.clone().requires_grad_(), x.clone().requires_grad_()
    y_t = F.batch_norm(leaf_t, mean.clone(), var.clone(), training=True)
    y_b = bpg_torch.batch_norm(leaf_b, mean.clone(), var.clone(), training=True)
    y_t.sum().backward()
    y_b.sum().backward()
    assert torch.equal(y_b, y_t) and torch.equal(leaf_b.grad, leaf_t.grad)
    path = bpg_torch.explain_batch_norm(x, mean, var, training=True)
    assert path.startswith("torch: ") and "float64" in path, path


def test_batch_norm_mixed_dtypes_fall_back():
    x = make_input([2, 3, 4, 4], dtype=torch.bfloat16)
    weight = torch.ones(3)
    path = bpg_torch.explain_batch_norm(x, None, None, weight, training=True)
    assert path.startswith("torch: ") and "weight" in path, path


def test_verbose_log_names_the_fallback():
    # A child process, so the environment variable is set before anything reads it.
    code = ("import torch, bpg_torch; "
            "bpg_torch.interpolate(torch.randn(1, 2, 4, 4), scale_factor=2, mode='bicubic')")
    env = dict(os.environ, BPG_TORCH_VERBOSE="1")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "torch: mode 'bicubic' has no bpg kernel" in result.stderr


def test_float16_follows_torch_and_is_explained():
    # The forward is torch's own op: where torch has no CPU float16 kernel, the
    # call raises torch's error and explain() says why; otherwise bpg runs.
    x = make_input([1, 2, 4, 4], dtype=torch.float16)
    for name, run, explain in (
            ("interpolate", lambda t: F.interpolate(t, scale_factor=2, mode="bilinear"),
             lambda t: bpg_torch.explain(t, scale_factor=2, mode="bilinear")),
            ("batch_norm", lambda t: F.batch_norm(t, None, None, training=True),
             lambda t: bpg_torch.explain_batch_norm(t, training=True))):
        try:
            run(x)
        except RuntimeError:
            path = explain(x)
            assert path.startswith("torch: ") and "float16" in path and name in path, path
            with pytest.raises(RuntimeError):
                (bpg_torch.interpolate(x, scale_factor=2, mode="bilinear")
                 if name == "interpolate" else bpg_torch.batch_norm(x, None, None, training=True))
        else:
            assert explain(x).startswith("bpg"), explain(x)
