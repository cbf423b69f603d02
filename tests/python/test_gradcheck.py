"""torch.autograd.gradcheck on bpg's backward, in float32 (the dtype bpg runs).

Interpolation is linear, so central differences are exact up to float32
rounding: about 1e-7 * |f| / eps, 1e-5 with eps = 1e-2. BatchNorm is not
linear; eps = 1e-3 keeps the truncation error near 1e-6 and the rounding error
near 1e-4, under atol = 5e-3.
"""
import pytest
import torch

import bpg_torch
from bpg_test_util import make_input
from bpg_torch.functional import batch_norm_relu

# gradcheck warns for float32 inputs; float32 is deliberate here.
pytestmark = pytest.mark.filterwarnings("ignore:Input #")

INTERPOLATE_CASES = [
    ([2, 3, 5], torch.contiguous_format, dict(scale_factor=2, mode="nearest")),
    ([1, 2, 4, 5], torch.contiguous_format, dict(scale_factor=1.5, mode="nearest")),
    ([2, 3, 3, 4, 3], torch.channels_last_3d, dict(size=[5, 6, 2], mode="nearest")),
    ([2, 3, 6], torch.contiguous_format, dict(scale_factor=0.7, mode="linear")),
    ([2, 3, 4, 5], torch.contiguous_format, dict(scale_factor=2, mode="bilinear")),
    ([2, 3, 4, 5], torch.channels_last, dict(size=[7, 3], mode="bilinear",
                                              align_corners=True)),
    ([1, 4, 5, 4], torch.channels_last, dict(scale_factor=1.3, mode="bilinear",
                                              recompute_scale_factor=True)),
    ([1, 2, 3, 4, 3], torch.contiguous_format, dict(scale_factor=2, mode="trilinear")),
    ([2, 3, 3, 3, 4], torch.channels_last_3d, dict(scale_factor=1.5, mode="trilinear",
                                                   align_corners=True)),
]


@pytest.mark.parametrize("shape,memory_format,kwargs", INTERPOLATE_CASES, ids=str)
def test_interpolate_gradcheck(shape, memory_format, kwargs):
    x = make_input(shape, memory_format).requires_grad_()
    assert bpg_torch.explain(x, **kwargs).startswith("bpg"), "would not test bpg"
    assert torch.autograd.gradcheck(
        lambda t: bpg_torch.interpolate(t, **kwargs), (x,), eps=1e-2, atol=1e-3, rtol=1e-2)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("shape,memory_format", [
    ([4, 3], torch.contiguous_format),
    ([2, 3, 5], torch.contiguous_format),
    ([2, 3, 3, 4], torch.channels_last),
    ([2, 2, 2, 3, 2], torch.contiguous_format),
], ids=str)
def test_batch_norm_gradcheck(shape, memory_format, training, relu):
    channels = shape[1]
    # Fixed seeds: torch's own ops pass the same check, so no ReLU input lies
    # within eps of the kink at zero.
    x = make_input(shape, memory_format, seed=20).requires_grad_()
    weight = (make_input([channels], seed=21).abs() + 0.5).requires_grad_()
    bias = make_input([channels], seed=22).requires_grad_()
    mean = make_input([channels], seed=23)
    var = make_input([channels], seed=24).abs() + 0.5
    fn = batch_norm_relu if relu else bpg_torch.batch_norm
    path = bpg_torch.explain_batch_norm(x, mean, var, weight, bias, training=training,
                                        fuse_relu=relu)
    assert path.startswith("bpg"), path

    def function(t, w, b):
        # Fresh copies: running statistics are updated in place in training.
        return fn(t, mean.clone(), var.clone(), w, b, training, 0.1, 1e-5)

    assert torch.autograd.gradcheck(function, (x, weight, bias), eps=1e-3, atol=5e-3,
                                    rtol=1e-2)
