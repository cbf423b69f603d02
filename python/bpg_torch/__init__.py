"""bpg_torch: bpg's backward kernels as PyTorch ops (minimal loader; the full package is python/bpg_torch)."""
import os

import torch

torch.ops.load_library(os.path.join(os.path.dirname(__file__), "libbpg_torch.so"))
