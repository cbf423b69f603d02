"""bpg_torch.batch_norm and the BatchNorm modules against torch's."""
import copy

import pytest
import torch
import torch.nn.functional as F

import bpg_torch
from bpg_test_util import (
    FORMATS, LOW_PRECISION, assert_close_f32, check_low_precision_run, format_flags, make_input,
    run_or_error)

SHAPES = {"0d": [6, 5], 1: [3, 5, 7], 2: [2, 5, 4, 6], 3: [2, 5, 3, 4, 5]}


def layouts():
    yield "0d", torch.contiguous_format
    for dims in (1, 2, 3):
        for memory_format in FORMATS[dims]:
            yield dims, memory_format


def grid():
    for dims, memory_format in layouts():
        for training in (True, False):
            for affine in (True, False):
                for stats in (True, False):
                    if not training and not stats:
                        continue  # torch requires running statistics in evaluation
                    for relu in (False, True):
                        fmt = str(memory_format).replace("torch.", "")
                        yield pytest.param(
                            dims, memory_format, training, affine, stats, relu,
                            id=f"{dims}-{fmt}-train{training}-affine{affine}-stats{stats}"
                               f"-relu{relu}")


def parameters(channels, dtype, affine, stats):
    weight = make_input([channels], dtype=dtype, seed=3) if affine else None
    bias = make_input([channels], dtype=dtype, seed=4) if affine else None
    mean = make_input([channels], dtype=dtype, seed=5) if stats else None
    var = (make_input([channels], dtype=dtype, seed=6).abs() + 0.5).to(dtype) if stats else None
    return weight, bias, mean, var


def run(fn, x, weight, bias, mean, var, training, relu, grad_output=None, momentum=0.1):
    """Forward, gradients of (input, weight, bias) and the updated running stats."""
    leaves = [t.detach().clone().requires_grad_() if t is not None else None
              for t in (x, weight, bias)]
    mean = mean.clone() if mean is not None else None
    var = var.clone() if var is not None else None
    y = fn(leaves[0], mean, var, leaves[1], leaves[2], training, momentum, 1e-5)
    if relu and fn is F.batch_norm:
        y = F.relu(y)
    if grad_output is None:
        grad_output = torch.empty_like(y).copy_(make_input(y.shape, dtype=y.dtype, seed=7))
    wanted = [t for t in leaves if t is not None]
    grads = torch.autograd.grad(y, wanted, grad_output)
    return y.detach(), grad_output, list(grads), mean, var


def bpg_fn(relu):
    if not relu:
        return bpg_torch.batch_norm
    from bpg_torch.functional import batch_norm_relu
    return batch_norm_relu


@pytest.mark.parametrize("dims,memory_format,training,affine,stats,relu", grid())
def test_float32_matches_torch(dims, memory_format, training, affine, stats, relu):
    x = make_input(SHAPES[dims], memory_format)
    params = parameters(x.size(1), torch.float32, affine, stats)
    y_t, g, grads_t, mean_t, var_t = run(F.batch_norm, x, *params, training, relu)
    y_b, _, grads_b, mean_b, var_b = run(bpg_fn(relu), x, *params, training, relu, g)
    assert torch.equal(y_b, y_t)
    if stats:
        assert torch.equal(mean_b, mean_t) and torch.equal(var_b, var_t)
    assert format_flags(grads_b[0]) == format_flags(grads_t[0])
    for ours, theirs in zip(grads_b, grads_t):
        assert_close_f32(ours, theirs)


@pytest.mark.parametrize("dtype", LOW_PRECISION, ids=str)
@pytest.mark.parametrize("dims,memory_format", list(layouts()), ids=str)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("relu", [False, True])
def test_low_precision_no_farther_than_torch(dims, memory_format, training, relu, dtype):
    x = make_input(SHAPES[dims], memory_format, dtype)
    params = parameters(x.size(1), dtype, True, True)
    y_64, g_64, grads_64, _, _ = run(F.batch_norm, x.double(),
                                     *[p.double() for p in params], training, relu)
    g = g_64.to(dtype)
    torch_run = run_or_error(run, F.batch_norm, x, *params, training, relu, g)
    bpg_run = run_or_error(run, bpg_fn(relu), x, *params, training, relu, g)
    check_low_precision_run(
        bpg_run if isinstance(bpg_run, Exception) else (bpg_run[0], g, bpg_run[2][0]),
        torch_run if isinstance(torch_run, Exception) else (torch_run[0], g, torch_run[2][0]),
        y_64, grads_64[0])


MODULE_ARGS = [
    dict(),
    dict(affine=False),
    dict(track_running_stats=False),
    dict(momentum=None),
    dict(momentum=0.3, eps=1e-3),
]


def module_pair(torch_class, bpg_class, kwargs):
    torch.manual_seed(0)
    reference = torch_class(5, **kwargs)
    if reference.affine:
        with torch.no_grad():
            reference.weight.uniform_(0.5, 1.5)
            reference.bias.uniform_(-0.5, 0.5)
    ours = bpg_class(5, **kwargs)
    ours.load_state_dict(reference.state_dict())
    return reference, ours


def train_steps(module, inputs, relu):
    outputs, grads = [], []
    for step, x in enumerate(inputs):
        module.train(step < 3)
        leaf = x.clone().requires_grad_()
        y = module(leaf)
        if relu:
            y = F.relu(y)
        (y * torch.arange(y.numel()).reshape(y.shape).sin()).sum().backward()
        outputs.append(y.detach())
        grads.append([leaf.grad] + [p.grad.clone() for p in module.parameters()])
    return outputs, grads


@pytest.mark.parametrize("kwargs", MODULE_ARGS, ids=str)
@pytest.mark.parametrize("torch_class,bpg_class,dims,relu", [
    (torch.nn.BatchNorm1d, bpg_torch.BatchNorm1d, "0d", False),
    (torch.nn.BatchNorm1d, bpg_torch.BatchNorm1d, 1, False),
    (torch.nn.BatchNorm2d, bpg_torch.BatchNorm2d, 2, False),
    (torch.nn.BatchNorm3d, bpg_torch.BatchNorm3d, 3, False),
    (torch.nn.BatchNorm2d, bpg_torch.BatchNormReLU2d, 2, True),
    (torch.nn.BatchNorm1d, bpg_torch.BatchNormReLU1d, 1, True),
    (torch.nn.BatchNorm3d, bpg_torch.BatchNormReLU3d, 3, True),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_module_matches_torch(torch_class, bpg_class, dims, relu, kwargs):
    reference, ours = module_pair(torch_class, bpg_class, kwargs)
    inputs = [make_input(SHAPES[dims], seed=10 + step) for step in range(5)]
    outputs_t, grads_t = train_steps(reference, inputs, relu)
    outputs_b, grads_b = train_steps(ours, inputs, False)
    for y_b, y_t in zip(outputs_b, outputs_t):
        assert_close_f32(y_b, y_t)
    for step_b, step_t in zip(grads_b, grads_t):
        for ours_grad, theirs in zip(step_b, step_t):
            assert_close_f32(ours_grad, theirs)
    state_t, state_b = reference.state_dict(), ours.state_dict()
    assert list(state_b) == list(state_t)
    for key in state_t:
        assert torch.equal(state_b[key], state_t[key]), key


def test_module_rejects_wrong_rank_like_torch():
    for torch_class, bpg_class in ((torch.nn.BatchNorm2d, bpg_torch.BatchNorm2d),
                                   (torch.nn.BatchNorm1d, bpg_torch.BatchNormReLU1d)):
        x = make_input([2, 5, 3, 3, 3])
        with pytest.raises(ValueError) as expected:
            torch_class(5)(x)
        with pytest.raises(ValueError) as actual:
            bpg_class(5)(x)
        assert str(actual.value) == str(expected.value)


BAD_ARGUMENTS = [
    ([1, 5], dict(training=True)),                              # one value per channel
    ([2, 5, 3], dict(weight=torch.ones(4))),
    ([2, 5, 3], dict(running_mean=torch.zeros(4), running_var=torch.ones(5))),
    ([2, 5, 3], dict(running_mean=None, running_var=None, training=False)),
    ([2, 5, 3], dict(momentum=None, training=True)),
]


def outcome(fn, shape, kwargs):
    arguments = dict(running_mean=torch.zeros(shape[1]), running_var=torch.ones(shape[1]))
    arguments.update(kwargs)
    try:
        fn(make_input(shape), **arguments)
    except Exception as error:  # the comparison is the point: any exception type
        return type(error), str(error).split("\n")[0]
    return None, None


@pytest.mark.parametrize("shape,kwargs", BAD_ARGUMENTS, ids=str)
def test_bad_arguments_raise_as_torch(shape, kwargs):
    expected = outcome(F.batch_norm, shape, kwargs)
    assert expected[0] is not None
    assert outcome(bpg_torch.batch_norm, shape, kwargs) == expected


def test_explain_batch_norm():
    x = make_input([2, 5, 4, 4])
    assert bpg_torch.explain_batch_norm(x, training=True).startswith("bpg")
    assert bpg_torch.explain_batch_norm(x, training=True, fuse_relu=True).startswith("bpg")
    assert bpg_torch.explain_batch_norm(x.double(), training=True).startswith("torch:")


def test_deepcopy_and_state_dict_load_into_torch():
    ours = bpg_torch.BatchNormReLU2d(5)
    ours(make_input([2, 5, 3, 3]))
    reference = torch.nn.BatchNorm2d(5)
    reference.load_state_dict(copy.deepcopy(ours).state_dict())
    for key, value in ours.state_dict().items():
        assert torch.equal(reference.state_dict()[key], value)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape,memory_format", [
    ([4, 37, 9, 11], torch.contiguous_format),
    ([4, 37, 9, 11], torch.channels_last),
    ([3, 21, 5, 6, 7], torch.channels_last_3d),
    ([64, 35], torch.contiguous_format),
    ([5, 19, 301], torch.contiguous_format),
], ids=str)
def test_medium_shapes(shape, memory_format, training, relu, dtype):
    # Channel counts and rows past one vector's lanes, with remainders.
    x = make_input(shape, memory_format, dtype)
    params = parameters(x.size(1), dtype, True, True)
    y_t, g, grads_t, mean_t, var_t = run(F.batch_norm, x, *params, training, relu)
    y_b, _, grads_b, mean_b, var_b = run(bpg_fn(relu), x, *params, training, relu, g)
    assert torch.equal(y_b, y_t)
    assert torch.equal(mean_b, mean_t) and torch.equal(var_b, var_t)
    if dtype == torch.float32:
        for ours, theirs in zip(grads_b, grads_t):
            assert_close_f32(ours, theirs)
    else:
        _, _, grads_64, _, _ = run(F.batch_norm, x.double(), *[p.double() for p in params],
                                   training, relu, g.double())
        check_low_precision_run((y_b, g, grads_b[0]), (y_t, g, grads_t[0]), y_t.double(),
                                grads_64[0])


@pytest.mark.parametrize("memory_format", [torch.contiguous_format, torch.channels_last], ids=str)
def test_gradient_of_32_mb_and_more(memory_format):
    # Gradients this large come from the op library's huge-page allocator
    # (bindings/torch/ops/output_memory.h): same values, an ordinary tensor.
    shape = [2, 8, 1024, 520]  # 34 MB of f32, past the allocator's 32 MB
    x = make_input(shape, memory_format)
    grad = make_input(shape, memory_format, seed=1)
    weight = make_input([8], seed=3)
    _, mean, invstd = torch.ops.aten.native_batch_norm(x, weight, None, None, None, True, 0.1, 1e-5)
    ours = torch.ops.bpg.batch_norm_backward(grad, x, mean, invstd, weight, True, 1e-5)
    # Against f64: torch's f32 channels_last sums over 10^6 elements are off by 4e-5.
    reference = torch.ops.aten.native_batch_norm_backward(
        grad.double(), x.double(), weight.double(), None, None, mean.double(), invstd.double(),
        True, 1e-5, [True, True, True])
    for a, b in zip(ours, reference):
        assert_close_f32(a, b.float())
    assert ours[0].is_contiguous(memory_format=memory_format)
    gi = ours[0]
    gi.resize_(gi.numel() + 1000)  # the storage grows as torch's own does
    assert gi.numel() == x.numel() + 1000
