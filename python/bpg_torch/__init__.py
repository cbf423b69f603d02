"""bpg_torch: bpg's backward kernels for PyTorch's interpolate and BatchNorm.

Importing the package loads the op library libbpg_torch.so that the build puts
next to this file; its ops appear as torch.ops.bpg.*. The functions and
modules here keep torch.nn's signatures, so a training script switches with
`model = bpg_torch.convert(model)` or by using the functions directly.
"""
import os as _os

import torch as _torch


def _load_op_library():
    path = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "libbpg_torch.so")
    if not _os.path.exists(path):
        raise ImportError(
            f"bpg_torch: the op library {path} is missing; build the project with "
            "-DBPG_TORCH=ON and put <build dir>/python on PYTHONPATH")
    _torch.ops.load_library(path)


_load_op_library()

from .functional import batch_norm, explain, explain_batch_norm, interpolate  # noqa: E402
from .modules import (  # noqa: E402
    BatchNorm1d, BatchNorm2d, BatchNorm3d,
    BatchNormReLU1d, BatchNormReLU2d, BatchNormReLU3d, Upsample)
from .sync_batchnorm import SyncBatchNorm  # noqa: E402
from .convert import convert  # noqa: E402
from .threads import cache_info, get_num_threads, set_num_threads  # noqa: E402

__all__ = [
    "interpolate", "batch_norm", "explain", "explain_batch_norm",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "BatchNormReLU1d", "BatchNormReLU2d", "BatchNormReLU3d", "Upsample", "SyncBatchNorm",
    "convert", "set_num_threads", "get_num_threads", "cache_info",
]
