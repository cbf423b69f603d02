"""SyncBatchNorm on CPU: batch statistics over every process of a group.

torch.nn.SyncBatchNorm runs on GPUs only in PyTorch 1.13. bpg_torch.SyncBatchNorm
is its drop-in on CPU: same constructor (process_group included), parameters,
buffers and state dict. Per layer and step it makes one all_reduce in the
forward (the per-channel sums of src - shift and their squares, and the batch
size) and one in the backward (the sums of grad and grad * (x - mean)), through
the process group (gloo, MPI); bpg computes the sums and the input gradient
(BatchNormForwardSums, BatchNormTrainingBackpropSums,
BatchNormTrainingBackpropFromSums). As torch's SyncBatchNorm, each process's
weight and bias gradients are its own batch's share, so their sum over the
processes is the gradient of the whole batch.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from .modules import running_stats_factor


def _world(process_group):
    if not (dist.is_available() and dist.is_initialized()):
        return None
    group = process_group if process_group is not None else dist.group.WORLD
    return group if dist.get_world_size(group) > 1 else None


def _all_reduce(tensor, group):
    if group is not None:
        dist.all_reduce(tensor, group=group)
    return tensor


class _SyncBatchNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, shift, eps, group):
        channels = input.size(1)
        local_count = input.numel() // channels if channels else 0
        sum_src, sum_squares = torch.ops.bpg.batch_norm_forward_sums(input, shift)
        # One all_reduce: both sums and the count, in f64 (the count exactly).
        packed = torch.cat([sum_src.double(), sum_squares.double(),
                            torch.tensor([float(local_count)], dtype=torch.float64)])
        _all_reduce(packed, group)
        count = int(packed[-1].item())
        if count < 1:
            raise ValueError("bpg_torch.SyncBatchNorm: no element in the batch of any process")
        mean_shifted = packed[:channels] / count
        mean = (shift.double() + mean_shifted).float()
        var = (packed[channels:2 * channels] / count - mean_shifted * mean_shifted).clamp_min(0).float()
        output = F.batch_norm(input, mean, var, weight, bias, False, 0.0, eps)
        ctx.save_for_backward(input, weight, mean, var)
        ctx.mark_non_differentiable(mean, var)
        ctx.eps, ctx.group, ctx.count = eps, group, count
        return output, mean, var, count

    @staticmethod
    def backward(ctx, grad_output, _grad_mean, _grad_var, _count):
        input, weight, mean, var = ctx.saved_tensors
        channels = input.size(1)
        sum_dy, sum_dy_xmu = torch.ops.bpg.batch_norm_backward_sums(grad_output, input, mean)
        invstd = (var.double() + ctx.eps).rsqrt().float()
        # Each process's share of the weight and bias gradients (as torch's SyncBatchNorm).
        grad_weight = (sum_dy_xmu * invstd).to(weight.dtype) if weight is not None else None
        grad_bias = sum_dy.to(weight.dtype) if weight is not None else None
        packed = _all_reduce(torch.cat([sum_dy, sum_dy_xmu]), ctx.group)
        grad_input = None
        if ctx.needs_input_grad[0]:
            grad_input = torch.ops.bpg.batch_norm_backward_from_sums(
                grad_output, input, mean, var, weight, packed[:channels], packed[channels:],
                ctx.count, ctx.eps)
        return grad_input, grad_weight, grad_bias, None, None, None


class SyncBatchNorm(nn.modules.batchnorm._BatchNorm):
    """torch.nn.SyncBatchNorm on CPU with bpg's sums and backward.

    Training mode reduces the batch statistics over `process_group` (the
    default group when None; a single process or no initialized
    torch.distributed gives plain BatchNorm); evaluation mode is BatchNorm
    with the running statistics. Constructor, parameters, buffers and state
    dict are torch.nn.SyncBatchNorm's; it is not a subclass of it, which
    DistributedDataParallel refuses on CPU.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"bpg_torch.SyncBatchNorm: expected at least 2D input, got {input.dim()}D")

    def forward(self, input):
        self._check_input_dim(input)
        factor = running_stats_factor(self)
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        if not use_batch_stats:
            return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                                False, 0.0, self.eps)
        # The shift of the sums: the running mean, near the batch mean, keeps them exact.
        shift = (self.running_mean.detach().float() if self.running_mean is not None
                 else torch.zeros(input.size(1), dtype=torch.float32))
        output, mean, var, count = _SyncBatchNormFunction.apply(
            input, self.weight, self.bias, shift, self.eps, _world(self.process_group))
        if self.training and self.track_running_stats:
            n = int(count)
            unbiased = var * (n / (n - 1)) if n > 1 else var
            with torch.no_grad():
                self.running_mean.mul_(1 - factor).add_(mean.to(self.running_mean.dtype), alpha=factor)
                self.running_var.mul_(1 - factor).add_(unbiased.to(self.running_var.dtype), alpha=factor)
        return output

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*D (torch's or bpg_torch's) as bpg_torch.SyncBatchNorm."""
        converted = module
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group)
            if module.affine:
                with torch.no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return converted
