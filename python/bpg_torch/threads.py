"""bpg_torch's own thread setting; torch's and OpenMP's settings are never changed."""
import collections
import operator

import torch

CacheInfo = collections.namedtuple("CacheInfo", ["hits", "misses", "size", "capacity"])


def set_num_threads(n):
    """Threads for bpg's kernels in later calls; 0 follows torch.get_num_threads() per call.

    Changes bpg_torch's setting only: torch.get_num_threads() and the OpenMP
    setting of every thread stay as they are.
    """
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"bpg_torch.set_num_threads: n must be >= 0, got {n}")
    torch.ops.bpg.set_num_threads(n)


def get_num_threads():
    """Threads the next bpg call uses."""
    return int(torch.ops.bpg.get_num_threads())


def cache_info():
    """Compiled-partition cache counters: CacheInfo(hits, misses, size, capacity)."""
    return CacheInfo(*(int(v) for v in torch.ops.bpg.cache_info()))
