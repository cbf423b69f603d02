"""bpg_torch.convert on a small UNet: structure, state, and 20 training steps."""
import copy
import os
import sys

import pytest
import torch
import torch.nn as nn

import bpg_torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import torch_unet  # noqa: E402


def assert_relative(actual, expected, rel=1e-4, what=""):
    scale = max(expected.abs().max().item(), 1e-30)
    difference = (actual - expected).abs().max().item()
    assert difference <= rel * scale, f"{what}: {difference:.3g} > {rel} * {scale:.3g}"


def test_convert_replaces_modules_and_keeps_state():
    model = torch_unet.make_model()
    parameters = dict(model.named_parameters())
    state = copy.deepcopy(model.state_dict())
    converted = bpg_torch.convert(model)
    assert converted is model
    assert type(model.enc1[1]) is bpg_torch.BatchNormReLU2d
    assert type(model.enc1[2]) is nn.Identity
    assert type(model.dec1[1]) is bpg_torch.BatchNorm2d  # no ReLU after it
    assert type(model.up2) is bpg_torch.Upsample and type(model.up1) is bpg_torch.Upsample
    assert model.up2.mode == "bilinear" and model.up1.mode == "nearest"
    assert not any(type(m) in (nn.BatchNorm2d, nn.ReLU, nn.Upsample) for m in model.modules())
    # Same parameter objects (an optimizer made before convert keeps working), same state.
    for name, parameter in model.named_parameters():
        assert parameter is parameters[name]
    assert list(model.state_dict()) == list(state)
    for key, value in state.items():
        assert torch.equal(model.state_dict()[key], value)


def test_convert_keeps_training_flag_and_subclasses():
    class MyNorm(nn.BatchNorm2d):
        pass

    model = nn.Sequential(MyNorm(3), nn.ReLU(), nn.BatchNorm1d(4)).eval()
    bpg_torch.convert(model)
    assert type(model[0]) is MyNorm and type(model[1]) is nn.ReLU
    assert type(model[2]) is bpg_torch.BatchNorm1d and not model[2].training
    assert type(bpg_torch.convert(nn.BatchNorm3d(2))) is bpg_torch.BatchNorm3d
    with pytest.raises(TypeError):
        bpg_torch.convert("not a module")


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
def test_twenty_steps_agree_with_torch(channels_last):
    batches = torch_unet.make_batches(20, channels_last=channels_last)
    reference = torch_unet.make_model(channels_last=channels_last)
    converted = copy.deepcopy(reference)
    # Optimizer made before convert, as in an existing training script.
    optimizer = torch_unet.make_optimizer(converted)
    bpg_torch.convert(converted)
    losses_t = torch_unet.train(reference, batches)
    losses_b = torch_unet.train(converted, batches, optimizer)
    assert_relative(torch.tensor(losses_b), torch.tensor(losses_t), what="losses")
    state_t, state_b = reference.state_dict(), converted.state_dict()
    assert list(state_b) == list(state_t)
    for key in state_t:
        if state_t[key].is_floating_point():
            assert_relative(state_b[key], state_t[key], what=key)
        else:
            assert torch.equal(state_b[key], state_t[key]), key
    # The step really ran bpg's kernels.
    x = batches[0][0]
    assert bpg_torch.explain(x, scale_factor=2, mode="bilinear").startswith("bpg")
