"""interpolate and batch_norm with torch.nn.functional's signatures.

Arguments are processed exactly as torch 1.13's torch.nn.functional does, then
the call goes to torch.ops.bpg.* (forward by torch's own op, backward by bpg)
or, for what bpg has no kernel for, to torch.nn.functional itself. explain()
and explain_batch_norm() say which path a call takes and why.
"""
import math
import operator
import os
import sys

import torch
import torch.nn.functional as F
from torch.overrides import (
    handle_torch_function, has_torch_function_unary, has_torch_function_variadic)

# bpg's interpolate kernels: torch mode and input rank -> the op's mode name.
_INTERPOLATE_MODES = {
    ("nearest", 3): "nearest", ("nearest", 4): "nearest", ("nearest", 5): "nearest",
    ("linear", 3): "linear", ("bilinear", 4): "linear", ("trilinear", 5): "linear",
}
_BPG_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
_bpg_interpolate = torch.ops.bpg.interpolate


# Read once, as the op library reads it.
_VERBOSE = os.environ.get("BPG_TORCH_VERBOSE", "0") not in ("", "0")


def _log_fallback(op, reason):
    # The op library logs the calls it runs; calls that never reach it are logged here.
    if _VERBOSE:
        print(f"bpg_torch,{op},{reason}", file=sys.stderr)


_torch_has_forward = {}


def _torch_forward_runs(op, dtype):
    """Whether torch's CPU forward of op exists for dtype (torch 1.13 has no float16 one).

    Probed once on a tiny tensor: the forward is always torch's own op.
    """
    key = (op, dtype)
    if key not in _torch_has_forward:
        probe = torch.zeros(2, 1, 2, 2, dtype=dtype)
        try:
            if op == "interpolate":
                torch._C._nn.upsample_nearest2d(probe, [4, 4], None, None)
            else:
                torch.batch_norm(probe, None, None, None, None, True, 0.1, 1e-5, False)
            _torch_has_forward[key] = True
        except RuntimeError:
            _torch_has_forward[key] = False
    return _torch_has_forward[key]


def _tensor_reason(input, op):
    if not input.is_cpu:
        return f"torch: {input.device.type} tensor; bpg runs on CPU tensors only"
    if input.dtype not in _BPG_DTYPES:
        return f"torch: {input.dtype} has no bpg kernel (bpg has float32, bfloat16, float16)"
    if not _torch_forward_runs(op, input.dtype):
        return (f"torch: torch {torch.__version__} has no CPU {input.dtype} {op} forward "
                "(torch reports it)")
    return None


def _interpolate_torch_reason(input, mode, antialias):
    """Why a call goes to torch.nn.functional.interpolate, or None for bpg.

    Invalid mode/rank pairs go to torch too, so its own error is raised.
    """
    if mode not in ("nearest", "linear", "bilinear", "trilinear"):
        return f"torch: mode '{mode}' has no bpg kernel"
    if (mode, input.dim()) not in _INTERPOLATE_MODES:
        return f"torch: mode '{mode}' does not take a {input.dim()}-D input (torch reports it)"
    if antialias:
        return "torch: antialias has no bpg kernel"
    if not torch.jit.is_scripting() and torch._C._get_tracing_state():
        return "torch: a jit trace records torch's own op"
    reason = _tensor_reason(input, "interpolate")
    if reason is None:
        _fast_dtypes.add(input.dtype)
    return reason


# dtypes of CPU tensors that _tensor_reason accepted for interpolate.
_fast_dtypes = set()
_TRACING = torch._C._get_tracing_state


def _as_size(value):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"interpolate: size entries must be integers, got {value!r} "
            f"({type(value).__name__})") from None


def _size_from_scale(input_size, scale):
    # torch's C++ upsample ops: output = int64(double(input) * scale), overflow checked.
    odim = float(input_size) * float(scale)
    if not math.isfinite(odim) or odim >= 2.0 ** 63 or odim < -2.0 ** 63:
        raise RuntimeError(
            f"interpolate: output size {input_size} * {scale} cannot be converted to "
            "int64_t without overflow")
    return int(odim)


def _interpolate_args(input, size, scale_factor, mode, align_corners, recompute_scale_factor):
    """torch 1.13 F.interpolate's checks -> (output_size, align_corners, scales)."""
    if mode == "nearest":
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the "
                "interpolating modes: linear | bilinear | bicubic | trilinear")
        align_corners = False
    elif align_corners is None:
        align_corners = False

    spatial = input.shape[2:]
    dim = len(spatial)
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(spatial)} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            output_size = list(size)
        else:
            output_size = [size] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(spatial)} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = list(scale_factor)
        else:
            scales = [scale_factor] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")

    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor is not None and recompute_scale_factor:
        # torch floors in python and lets the op derive its scales from the sizes.
        output_size = [int(math.floor(float(spatial[i]) * scales[i])) for i in range(dim)]
        scales = None

    if scales is None:
        output_size = [_as_size(s) for s in output_size]
    else:
        scales = [float(s) for s in scales]
        output_size = [_size_from_scale(spatial[i], scales[i]) for i in range(dim)]
    return output_size, bool(align_corners), scales


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """torch.nn.functional.interpolate with bpg's backward where bpg has the mode.

    Same signature, argument checks and forward result as torch 1.13's. nearest,
    linear, bilinear and trilinear on CPU float32/bfloat16 tensors (and float16
    where torch has a CPU forward for it) go through torch.ops.bpg.interpolate;
    everything else is torch's own call.
    """
    if has_torch_function_unary(input):
        return handle_torch_function(
            interpolate, (input,), input, size=size, scale_factor=scale_factor, mode=mode,
            align_corners=align_corners, recompute_scale_factor=recompute_scale_factor,
            antialias=antialias)
    # The common call (one number as scale_factor, a CPU dtype seen before) in
    # few steps: per-call time matters on small tensors. The same checks and
    # results as the general path below, which handles everything else.
    if (size is None and not antialias and not recompute_scale_factor
            and type(scale_factor) in (float, int) and input.is_cpu
            and input.dtype in _fast_dtypes and (align_corners is None or mode != "nearest")
            and not _TRACING()):
        shape = input.shape
        op_mode = _INTERPOLATE_MODES.get((mode, len(shape)))
        scale = float(scale_factor)
        if op_mode is not None and 0.0 <= scale <= 1e6:  # else _size_from_scale's checks
            return _bpg_interpolate(input, [int(n * scale) for n in shape[2:]], op_mode,
                                    bool(align_corners), [scale] * (len(shape) - 2))
    reason = _interpolate_torch_reason(input, mode, antialias)
    if reason is not None:
        _log_fallback("interpolate", reason)
        return F.interpolate(input, size, scale_factor, mode, align_corners,
                             recompute_scale_factor, antialias)
    output_size, align_corners, scales = _interpolate_args(
        input, size, scale_factor, mode, align_corners, recompute_scale_factor)
    return _bpg_interpolate(
        input, output_size, _INTERPOLATE_MODES[(mode, input.dim())], align_corners, scales)


def _memory_format_of(t):
    # The format torch's kernels give their results for a tensor like t.
    channels_last = {4: torch.channels_last, 5: torch.channels_last_3d}.get(t.dim())
    if channels_last and not t.is_contiguous() and t.is_contiguous(memory_format=channels_last):
        return channels_last
    return torch.contiguous_format


def explain(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
            recompute_scale_factor=None, antialias=False):
    """The path interpolate's backward takes for these arguments, as a string.

    "bpg <backend>: <why>" or "torch: <reason>". The gradient is assumed to
    arrive in the forward output's memory format (the input's).
    """
    reason = _interpolate_torch_reason(input, mode, antialias)
    if reason is not None:
        return reason
    output_size, align_corners, scales = _interpolate_args(
        input, size, scale_factor, mode, align_corners, recompute_scale_factor)
    grad_output = torch.empty(list(input.shape[:2]) + output_size, dtype=input.dtype,
                              memory_format=_memory_format_of(input))
    return torch.ops.bpg.interpolate_path(
        grad_output, list(input.shape), _INTERPOLATE_MODES[(mode, input.dim())],
        align_corners, scales)


def _verify_batch_size(size):
    values = size[0]
    for extent in size[2:]:
        values *= extent
    if values == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}")


def _batch_norm_torch_reason(input, running_mean, running_var, weight, bias, training,
                             momentum):
    """Why a batch_norm call goes to torch, or None for bpg.

    Invalid arguments go to torch, so its own error is raised.
    """
    if input.dim() < 2:
        return f"torch: a {input.dim()}-D input has no channel axis (torch reports it)"
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        return f"torch: momentum {momentum!r} is not a number (torch reports it)"
    if input.numel() == 0:
        return "torch: empty input"
    if not training and (running_mean is None or running_var is None):
        return "torch: evaluation mode needs running statistics (torch reports it)"
    channels = input.size(1)
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is None:
            continue
        if t.numel() != channels:
            return (f"torch: {name} has {t.numel()} elements for {channels} channels "
                    "(torch reports it)")
        if t.device != input.device or t.dtype != input.dtype:
            return (f"torch: {name} is {t.dtype} on {t.device}, input is {input.dtype} "
                    f"on {input.device}")
    return _tensor_reason(input, "batch_norm")


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps,
                fuse_relu):
    if training:
        _verify_batch_size(input.size())
    reason = _batch_norm_torch_reason(input, running_mean, running_var, weight, bias,
                                      training, momentum)
    if reason is not None:
        _log_fallback("batch_norm", reason)
        out = F.batch_norm(input, running_mean, running_var, weight, bias, training,
                           momentum, eps)
        return F.relu(out) if fuse_relu else out
    return torch.ops.bpg.batch_norm(input, weight, bias, running_mean, running_var,
                                    bool(training), float(momentum), float(eps), fuse_relu)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm with bpg's backward.

    Same signature and semantics: running statistics are updated as torch does,
    evaluation mode normalizes with them and differentiates through them.
    """
    if has_torch_function_variadic(input, running_mean, running_var, weight, bias):
        return handle_torch_function(
            batch_norm, (input, running_mean, running_var, weight, bias), input,
            running_mean, running_var, weight=weight, bias=bias, training=training,
            momentum=momentum, eps=eps)
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                       eps, fuse_relu=False)


def batch_norm_relu(input, running_mean, running_var, weight=None, bias=None, training=False,
                    momentum=0.1, eps=1e-5):
    """relu(batch_norm(...)) with bpg's fused ReLU + BatchNorm backward."""
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                       eps, fuse_relu=True)


def explain_batch_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                       training=False, momentum=0.1, eps=1e-5, fuse_relu=False):
    """The path batch_norm's (or, with fuse_relu, batch_norm_relu's) backward takes."""
    reason = _batch_norm_torch_reason(input, running_mean, running_var, weight, bias,
                                      training, momentum)
    if reason is not None:
        return reason
    return torch.ops.bpg.batch_norm_path(input, bool(training), bool(fuse_relu))
