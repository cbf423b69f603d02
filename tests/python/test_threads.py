"""bpg_torch's thread setting leaves torch's and OpenMP's alone; results never depend on it."""
import ctypes
import os
import subprocess
import sys
import threading

import pytest
import torch

import bpg_torch
from bpg_test_util import make_input
from bpg_torch.functional import batch_norm_relu

THREAD_SETTINGS = [1, 2, 3, 0]


def loaded_libgomp():
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libgomp" in line}
    assert paths, "torch's OpenMP runtime (libgomp) is not loaded in this process"
    # RTLD_NOLOAD: a handle on the copy torch already loaded, never a second one.
    library = ctypes.CDLL(sorted(paths)[0], mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    library.omp_get_max_threads.restype = ctypes.c_int
    return library


def backward_results():
    """Gradients of interpolate (both layouts) and BatchNorm (plain and fused ReLU)."""
    results = []
    for layout in (torch.contiguous_format, torch.channels_last):
        x = make_input([2, 16, 24, 20], layout).requires_grad_()
        for kwargs in (dict(scale_factor=2, mode="bilinear"),
                       dict(scale_factor=1.5, mode="nearest")):
            y = bpg_torch.interpolate(x, **kwargs)
            results.append(torch.autograd.grad(y, x, make_input(y.shape, seed=1))[0])
        weight = torch.ones(16, requires_grad=True)
        bias = torch.zeros(16, requires_grad=True)
        for fn in (bpg_torch.batch_norm, batch_norm_relu):
            y = fn(x, torch.zeros(16), torch.ones(16), weight, bias, True, 0.1, 1e-5)
            results.extend(torch.autograd.grad(y, (x, weight, bias), make_input(y.shape, seed=2)))
    return results


@pytest.fixture(autouse=True)
def restore_default_threads():
    yield
    bpg_torch.set_num_threads(0)


def test_host_thread_settings_unchanged():
    gomp = loaded_libgomp()
    torch_threads, omp_threads = torch.get_num_threads(), gomp.omp_get_max_threads()
    for n in THREAD_SETTINGS:
        bpg_torch.set_num_threads(n)
        assert bpg_torch.get_num_threads() == (n or torch.get_num_threads())
        backward_results()
        assert torch.get_num_threads() == torch_threads, f"after set_num_threads({n})"
        assert gomp.omp_get_max_threads() == omp_threads, f"after set_num_threads({n})"


def test_other_thread_settings_unchanged():
    # OpenMP's thread count is per thread: a call from a worker thread changes neither.
    gomp = loaded_libgomp()
    main_before = gomp.omp_get_max_threads()
    seen = {}

    def worker():
        # torch sets a new thread's OpenMP count at its first parallel op; let it first.
        x = make_input([2, 16, 24, 20]).requires_grad_()
        torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear").sum().backward()
        before = gomp.omp_get_max_threads()
        bpg_torch.set_num_threads(3)
        backward_results()
        seen["worker"] = (before, gomp.omp_get_max_threads())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(120)
    assert not thread.is_alive()
    assert seen["worker"][0] == seen["worker"][1]
    assert gomp.omp_get_max_threads() == main_before


def test_zero_follows_torch_per_call():
    torch_threads = torch.get_num_threads()
    bpg_torch.set_num_threads(0)
    try:
        torch.set_num_threads(torch_threads + 1)
        assert bpg_torch.get_num_threads() == torch_threads + 1
    finally:
        torch.set_num_threads(torch_threads)
    assert bpg_torch.get_num_threads() == torch_threads


def test_results_identical_across_thread_settings():
    bpg_torch.set_num_threads(1)
    reference = backward_results()
    for n in THREAD_SETTINGS[1:]:
        bpg_torch.set_num_threads(n)
        for index, (ours, expected) in enumerate(zip(backward_results(), reference)):
            assert torch.equal(ours, expected), f"result {index} with {n} threads"


@pytest.mark.parametrize("runtime", ["tbb_arena", "openmp"])
def test_results_identical_across_runtimes(runtime, tmp_path):
    # BPG_TORCH_RUNTIME is read by the op library, so each runtime gets a process.
    path = tmp_path / "results.pt"
    code = ("import sys, torch, bpg_torch, test_threads; bpg_torch.set_num_threads(2); "
            "torch.save(test_threads.backward_results(), sys.argv[1])")
    env = dict(os.environ, BPG_TORCH_RUNTIME=runtime,
               PYTHONPATH=os.pathsep.join([os.path.dirname(__file__)] + sys.path))
    result = subprocess.run([sys.executable, "-c", code, str(path)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    bpg_torch.set_num_threads(1)
    for index, (theirs, ours) in enumerate(zip(torch.load(path), backward_results())):
        assert torch.equal(theirs, ours), f"result {index} under {runtime}"


def test_bad_thread_counts():
    with pytest.raises(ValueError):
        bpg_torch.set_num_threads(-1)
    with pytest.raises(TypeError):
        bpg_torch.set_num_threads(1.5)


def test_cache_serves_steady_state_calls():
    x = make_input([1, 3, 6, 7]).requires_grad_()

    def call():
        y = bpg_torch.interpolate(x, scale_factor=1.5, mode="bilinear")
        torch.autograd.grad(y, x, torch.ones_like(y))

    call()
    before = bpg_torch.cache_info()
    for _ in range(5):
        call()
    after = bpg_torch.cache_info()
    assert after.misses == before.misses, (before, after)
    assert after.hits >= before.hits + 5, (before, after)
    assert 0 < after.size <= after.capacity
