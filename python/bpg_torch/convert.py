"""convert(model): swap torch.nn BatchNorm, BatchNorm+ReLU and Upsample for bpg's."""
import torch.nn as nn

from . import modules

# Exact types only: a user's subclass may override forward, so it is left alone.
_REPLACEMENTS = {
    nn.BatchNorm1d: modules.BatchNorm1d,
    nn.BatchNorm2d: modules.BatchNorm2d,
    nn.BatchNorm3d: modules.BatchNorm3d,
    nn.Upsample: modules.Upsample,
    nn.UpsamplingNearest2d: modules.Upsample,
    nn.UpsamplingBilinear2d: modules.Upsample,
}
_FUSED = {
    nn.BatchNorm1d: modules.BatchNormReLU1d,
    nn.BatchNorm2d: modules.BatchNormReLU2d,
    nn.BatchNorm3d: modules.BatchNormReLU3d,
}


def _rebuilt_as(module, cls):
    # The new module shares the old one's attribute dict, so parameters, buffers,
    # hooks and the training flag stay the same objects: an optimizer made
    # before convert() keeps updating the model's parameters.
    replacement = cls.__new__(cls)
    replacement.__dict__ = module.__dict__
    return replacement


def _convert_children(parent):
    names = list(parent._modules)
    for position, name in enumerate(names):
        child = parent._modules[name]
        if child is None:
            continue
        following = (parent._modules[names[position + 1]]
                     if position + 1 < len(names) else None)
        if (isinstance(parent, nn.Sequential) and type(child) in _FUSED
                and type(following) is nn.ReLU):
            parent._modules[name] = _rebuilt_as(child, _FUSED[type(child)])
            parent._modules[names[position + 1]] = nn.Identity()
        elif type(child) in _REPLACEMENTS:
            parent._modules[name] = _rebuilt_as(child, _REPLACEMENTS[type(child)])
        else:
            _convert_children(child)


def convert(model, sync=False, process_group=None):
    """model with bpg_torch modules in place of torch.nn's; returns model.

    sync=True: every BatchNorm becomes bpg_torch.SyncBatchNorm over
    process_group (the default group when None) first, unfused.

    Every nn.BatchNorm1d/2d/3d becomes bpg_torch's; a BatchNorm directly
    followed by an nn.ReLU inside an nn.Sequential becomes one BatchNormReLU
    module (the ReLU an nn.Identity, so the state dict keys stay); nn.Upsample
    (and UpsamplingNearest2d/UpsamplingBilinear2d) becomes bpg_torch.Upsample.
    The model is changed in place; parameters and buffers are the same tensors.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"bpg_torch.convert: expected a torch.nn.Module, got {type(model).__name__}")
    if sync:
        from .sync_batchnorm import SyncBatchNorm
        model = SyncBatchNorm.convert_sync_batchnorm(model, process_group)
    if type(model) in _REPLACEMENTS:
        return _rebuilt_as(model, _REPLACEMENTS[type(model)])
    _convert_children(model)
    return model
