"""bpg_torch.interpolate against torch.nn.functional.interpolate over the issue's grid."""
import pytest
import torch
import torch.nn.functional as F

import bpg_torch
from bpg_test_util import (
    FORMATS, LOW_PRECISION, assert_close_f32, check_low_precision_run, format_flags, make_input,
    run_or_error)

SPATIAL = {1: [7], 2: [5, 6], 3: [3, 4, 5]}
LINEAR_MODE = {1: "linear", 2: "bilinear", 3: "trilinear"}

# (name, kwargs builder from the input's spatial sizes)
SPECS = [
    ("scale_2", lambda s: dict(scale_factor=2)),
    ("scale_3_float", lambda s: dict(scale_factor=3.0)),
    ("scale_1.7", lambda s: dict(scale_factor=1.7)),
    ("scale_0.5", lambda s: dict(scale_factor=0.5)),
    ("scale_0.6", lambda s: dict(scale_factor=0.6)),
    ("scale_1.7_recompute", lambda s: dict(scale_factor=1.7, recompute_scale_factor=True)),
    ("scale_0.6_recompute", lambda s: dict(scale_factor=0.6, recompute_scale_factor=True)),
    ("scale_2_recompute_false", lambda s: dict(scale_factor=2.0, recompute_scale_factor=False)),
    ("scale_per_axis", lambda s: dict(scale_factor=tuple([2, 0.5, 1.5][:len(s)]))),
    ("size_up_2x", lambda s: dict(size=[2 * n for n in s])),
    ("size_up_odd", lambda s: dict(size=[n + 3 for n in s])),
    ("size_down", lambda s: dict(size=[max(1, n // 2 - 1) for n in s])),
    ("size_int_1", lambda s: dict(size=1)),
    ("size_mixed", lambda s: dict(size=[1, 9, 2][:len(s)])),
]


def grid():
    for dims in (1, 2, 3):
        for mode, align in [("nearest", None), (LINEAR_MODE[dims], False),
                            (LINEAR_MODE[dims], True)]:
            for spec_name, spec in SPECS:
                for memory_format in FORMATS[dims]:
                    for batch in (1, 3):
                        fmt = str(memory_format).replace("torch.", "")
                        yield pytest.param(
                            dims, mode, align, spec, memory_format, batch,
                            id=f"{dims}d-{mode}-ac{align}-{spec_name}-{fmt}-n{batch}")


def kwargs_for(dims, mode, align, spec):
    kwargs = dict(spec(SPATIAL[dims]), mode=mode)
    if align is not None:
        kwargs["align_corners"] = align
    return kwargs


def forward_and_grad(fn, x, grad_output_maker, **kwargs):
    leaf = x.detach().clone().requires_grad_()
    y = fn(leaf, **kwargs)
    g = grad_output_maker(y)
    (grad,) = torch.autograd.grad(y, leaf, g)
    return y.detach(), g, grad


def assert_layout_as_input(grad, torch_grad, x, mode):
    """The gradient comes back in the input's memory format (the issue's rule).

    torch's own gradient has that layout too, except where torch 1.13 has no
    kernel for it: nearest 3-D backward always returns a contiguous gradient.
    (x.grad ends up in the input's layout either way; test_gradient_layout_*.)
    """
    assert format_flags(grad) == format_flags(x)
    if not (mode == "nearest" and x.dim() == 5):
        assert format_flags(torch_grad) == format_flags(x)


def random_like(y):
    # Same layout as the forward output, the layout autograd's gradients arrive in.
    return torch.empty_like(y).copy_(make_input(y.shape, dtype=y.dtype, seed=1))


@pytest.mark.parametrize("dims,mode,align,spec,memory_format,batch", grid())
def test_float32_matches_torch(dims, mode, align, spec, memory_format, batch):
    x = make_input([batch, 4] + SPATIAL[dims], memory_format)
    kwargs = kwargs_for(dims, mode, align, spec)
    y_t, g, grad_t = forward_and_grad(F.interpolate, x, random_like, **kwargs)
    y_b, _, grad_b = forward_and_grad(bpg_torch.interpolate, x, lambda y: g, **kwargs)
    assert torch.equal(y_b, y_t)
    assert format_flags(y_b) == format_flags(y_t)
    assert_layout_as_input(grad_b, grad_t, x, mode)
    assert_close_f32(grad_b, grad_t)


@pytest.mark.parametrize("dtype", LOW_PRECISION, ids=str)
@pytest.mark.parametrize("dims,mode,align,spec,memory_format,batch", grid())
def test_low_precision_no_farther_than_torch(dims, mode, align, spec, memory_format, batch,
                                             dtype):
    x = make_input([batch, 4] + SPATIAL[dims], memory_format, dtype)
    kwargs = kwargs_for(dims, mode, align, spec)
    y_64, g_64, reference = forward_and_grad(
        F.interpolate, x.double(), lambda y: random_like(y.to(dtype)).double(), **kwargs)
    g = g_64.to(dtype)
    torch_run = run_or_error(forward_and_grad, F.interpolate, x, lambda y: g, **kwargs)
    bpg_run = run_or_error(forward_and_grad, bpg_torch.interpolate, x, lambda y: g, **kwargs)
    check_low_precision_run(bpg_run, torch_run, y_64, reference)
    if not isinstance(bpg_run, Exception):
        assert format_flags(bpg_run[2]) == format_flags(x)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_gradient_layout_for_contiguous_grad_output(dims, mode):
    # A channels-last input whose gradient arrives contiguous (as from y.sum()):
    # bpg's gradient keeps the input's layout (torch's follows grad_output), and
    # x.grad, which AccumulateGrad lays out like x, has torch's layout.
    x = make_input([2, 4] + SPATIAL[dims], FORMATS[dims][1])
    mode = LINEAR_MODE[dims] if mode == "linear" else mode
    contiguous = lambda y: make_input(y.shape, seed=2)  # noqa: E731
    _, g, grad_t = forward_and_grad(F.interpolate, x, contiguous, scale_factor=2, mode=mode)
    _, _, grad_b = forward_and_grad(bpg_torch.interpolate, x, lambda y: g,
                                    scale_factor=2, mode=mode)
    assert format_flags(grad_b) == format_flags(x)
    assert_close_f32(grad_b, grad_t)
    accumulated = []
    for fn in (F.interpolate, bpg_torch.interpolate):
        leaf = x.clone().requires_grad_()
        fn(leaf, scale_factor=2, mode=mode).backward(g)
        accumulated.append(leaf.grad)
    assert format_flags(accumulated[1]) == format_flags(accumulated[0])
    assert accumulated[1].stride() == accumulated[0].stride()
    assert_close_f32(accumulated[1], accumulated[0])


def test_accumulated_grad_and_strided_input():
    base = make_input([2, 3, 8, 12])
    for make_view in (lambda t: t[:, :, 1:7, ::2], lambda t: t.transpose(2, 3)):
        grads = []
        for fn in (F.interpolate, bpg_torch.interpolate):
            leaf = base.clone().requires_grad_()
            fn(make_view(leaf), scale_factor=1.5, mode="bilinear").sum().backward()
            grads.append(leaf.grad)
        assert_close_f32(grads[1], grads[0])


def test_spatial_size_one_input():
    x = make_input([2, 3, 1, 1])
    for mode in ("nearest", "bilinear"):
        y_t, g, grad_t = forward_and_grad(F.interpolate, x, random_like, size=[3, 4], mode=mode)
        y_b, _, grad_b = forward_and_grad(bpg_torch.interpolate, x, lambda y: g,
                                          size=[3, 4], mode=mode)
        assert torch.equal(y_b, y_t)
        assert_close_f32(grad_b, grad_t)


def test_no_grad_forward():
    x = make_input([1, 2, 4, 4])
    with torch.no_grad():
        y = bpg_torch.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
    assert torch.equal(y, F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True))


@pytest.mark.parametrize("shape,memory_format,kwargs", [
    ([1, 2, 4, 4], torch.contiguous_format, dict(scale_factor=2, mode="bilinear")),
    ([1, 2, 4, 4], torch.channels_last, dict(scale_factor=1.5, mode="nearest")),
    ([1, 2, 3, 4, 4], torch.channels_last_3d, dict(size=[5, 7, 2], mode="trilinear")),
    ([2, 3, 6], torch.contiguous_format, dict(scale_factor=0.5, mode="linear",
                                              align_corners=True)),
], ids=str)
def test_explain_bpg_path(shape, memory_format, kwargs):
    x = make_input(shape, memory_format)
    path = bpg_torch.explain(x, **kwargs)
    assert path.startswith("bpg"), path
    # explain checks the arguments as interpolate does.
    with pytest.raises(ValueError):
        bpg_torch.explain(x, **dict(kwargs, size=4, scale_factor=2))


BAD_ARGUMENTS = [
    ([1, 2, 4, 4], dict(size=4, scale_factor=2)),
    ([1, 2, 4, 4], dict()),
    ([1, 2, 4, 4], dict(size=[4, 4, 4])),
    ([1, 2, 4, 4], dict(scale_factor=[2])),
    ([1, 2, 4, 4], dict(size=8, recompute_scale_factor=True)),
    ([1, 2, 4, 4], dict(size=8, align_corners=True)),
    ([1, 2, 4, 4], dict(size=8, mode="linear")),
    ([1, 2, 4, 4], dict(size=8, mode="trilinear")),
    ([1, 2, 4], dict(size=8, mode="bilinear")),
    ([2, 4], dict(size=8)),
    ([1, 2, 4, 4], dict(size=8, mode="nearest", antialias=True)),
    ([1, 2, 4, 4], dict(size=[0, 4])),
    ([1, 2, 4, 4], dict(scale_factor=0.1)),
    ([1, 2, 4, 4], dict(scale_factor=-2.0)),
    ([1, 2, 4, 4], dict(scale_factor=[2, None], recompute_scale_factor=True)),
]


def outcome(fn, shape, kwargs):
    try:
        fn(make_input(shape), **kwargs)
    except Exception as error:  # the comparison is the point: any exception type
        return type(error), str(error).split("\n")[0]
    return None, None


@pytest.mark.parametrize("shape,kwargs", BAD_ARGUMENTS, ids=str)
def test_bad_arguments_raise_as_torch(shape, kwargs):
    expected_type, expected_message = outcome(F.interpolate, shape, kwargs)
    assert expected_type is not None
    actual_type, actual_message = outcome(bpg_torch.interpolate, shape, kwargs)
    assert actual_type is expected_type, (actual_type, actual_message, expected_message)
    if expected_type in (ValueError, NotImplementedError):
        assert actual_message == expected_message


@pytest.mark.parametrize("make", [
    lambda: (torch.nn.Upsample(scale_factor=2, mode="nearest"), {}),
    lambda: (torch.nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=False), {}),
    lambda: (torch.nn.Upsample(size=(7, 9), mode="bilinear", align_corners=True), {}),
    lambda: (torch.nn.UpsamplingBilinear2d(scale_factor=2), {}),
    lambda: (torch.nn.UpsamplingNearest2d(size=5), {}),
])
def test_upsample_modules_match_torch(make):
    module, _ = make()
    converted = bpg_torch.convert(make()[0])
    assert isinstance(converted, bpg_torch.Upsample)
    x = make_input([2, 3, 4, 6], torch.channels_last)
    y_t, g, grad_t = forward_and_grad(lambda t: module(t), x, random_like)
    y_b, _, grad_b = forward_and_grad(lambda t: converted(t), x, lambda y: g)
    assert torch.equal(y_b, y_t)
    assert_close_f32(grad_b, grad_t)


MEDIUM_CASES = [
    ([3, 19, 13, 17], dict(scale_factor=2, mode="bilinear")),
    ([3, 19, 13, 17], dict(scale_factor=1.3, mode="bilinear", align_corners=True)),
    ([2, 33, 16, 20], dict(scale_factor=0.5, mode="bilinear")),
    ([3, 19, 13, 17], dict(scale_factor=2, mode="nearest")),
    ([2, 33, 16, 20], dict(size=[7, 31], mode="nearest")),
    ([2, 17, 5, 9, 11], dict(scale_factor=2, mode="trilinear")),
    ([2, 17, 5, 9, 11], dict(scale_factor=(1.5, 0.5, 2.5), mode="nearest")),
    ([4, 35, 41], dict(scale_factor=2.5, mode="linear")),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("channels_last", [False, True], ids=["contiguous", "channels_last"])
@pytest.mark.parametrize("shape,kwargs", MEDIUM_CASES, ids=str)
def test_medium_shapes(shape, kwargs, channels_last, dtype):
    # Channel counts and rows past one vector's lanes, with remainders.
    dims = len(shape) - 2
    layout = FORMATS[dims][-1] if channels_last else torch.contiguous_format
    x = make_input(shape, layout, dtype)
    y_t, g, grad_t = forward_and_grad(F.interpolate, x, random_like, **kwargs)
    y_b, _, grad_b = forward_and_grad(bpg_torch.interpolate, x, lambda y: g, **kwargs)
    assert torch.equal(y_b, y_t)
    assert format_flags(grad_b) == format_flags(x)
    if dtype == torch.float32:
        assert_close_f32(grad_b, grad_t)
    else:
        _, _, reference = forward_and_grad(F.interpolate, x.double(), lambda y: g.double(),
                                           **kwargs)
        check_low_precision_run((y_b, g, grad_b), (y_t, g, grad_t), y_t.double(), reference)
