"""Drop-in torch.nn modules whose backward runs through bpg.

Each class subclasses its torch.nn counterpart: same constructor arguments,
parameters, buffers and state dict; only forward differs.
"""
import torch.nn as nn

from .functional import _batch_norm, interpolate


def running_stats_factor(module):
    """The running statistics' update factor of a _BatchNorm's training step
    (counting the step); momentum None is a cumulative average."""
    factor = 0.0 if module.momentum is None else module.momentum
    if module.training and module.track_running_stats and module.num_batches_tracked is not None:
        module.num_batches_tracked.add_(1)
        if module.momentum is None:
            factor = 1.0 / float(module.num_batches_tracked)
    return factor


class _BpgBatchNormMixin:
    """forward of torch.nn's _BatchNorm, calling bpg's batch_norm."""

    _fuse_relu = False

    def forward(self, input):
        self._check_input_dim(input)
        factor = running_stats_factor(self)
        # Batch statistics in training, and in evaluation when there are no buffers.
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        # Buffers are passed only when they are read or are to be updated.
        pass_buffers = not self.training or self.track_running_stats
        return _batch_norm(
            input,
            self.running_mean if pass_buffers else None,
            self.running_var if pass_buffers else None,
            self.weight, self.bias, use_batch_stats, factor, self.eps, self._fuse_relu)


class BatchNorm1d(_BpgBatchNormMixin, nn.BatchNorm1d):
    """torch.nn.BatchNorm1d with bpg's backward."""


class BatchNorm2d(_BpgBatchNormMixin, nn.BatchNorm2d):
    """torch.nn.BatchNorm2d with bpg's backward."""


class BatchNorm3d(_BpgBatchNormMixin, nn.BatchNorm3d):
    """torch.nn.BatchNorm3d with bpg's backward."""


class BatchNormReLU1d(_BpgBatchNormMixin, nn.BatchNorm1d):
    """relu(BatchNorm1d(x)) with bpg's fused ReLU + BatchNorm backward.

    Parameters and state dict are those of torch.nn.BatchNorm1d.
    """
    _fuse_relu = True


class BatchNormReLU2d(_BpgBatchNormMixin, nn.BatchNorm2d):
    """relu(BatchNorm2d(x)) with bpg's fused ReLU + BatchNorm backward.

    Parameters and state dict are those of torch.nn.BatchNorm2d.
    """
    _fuse_relu = True


class BatchNormReLU3d(_BpgBatchNormMixin, nn.BatchNorm3d):
    """relu(BatchNorm3d(x)) with bpg's fused ReLU + BatchNorm backward.

    Parameters and state dict are those of torch.nn.BatchNorm3d.
    """
    _fuse_relu = True


class Upsample(nn.Upsample):
    """torch.nn.Upsample with bpg's interpolate backward."""

    def forward(self, input):
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)
