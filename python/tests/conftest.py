"""Shared helpers for the DISC op tests.

Every test compiles one MLIR program (asserting that exactly one compilation
happened) and runs it at several shapes against PyTorch on random data
(asserting that no further compilation happened).
"""
from __future__ import annotations

import os
import sys

import pytest
import torch

# Tests assert compile counts: the compile cache (on by default for users)
# would serve repeated programs without compiling. The cache tests turn it
# on explicitly, with a directory of their own.
os.environ.setdefault("DISC_CACHE", "0")

import disc  # noqa: E402

# Dynamo measures each new guard set's latency after a flush of the CPU
# caches (torch._dynamo.guards.profile_guard_manager, for a compile metric
# only): 17-22% of a small test compile on this 2-core machine, thousands
# of times a run. The tests compile with that measurement skipped; nothing
# they check reads it.
try:
    import torch._dynamo.guards as _dynamo_guards

    if hasattr(_dynamo_guards, "profile_guard_manager"):
        _dynamo_guards.profile_guard_manager = lambda *args, **kwargs: 0.0
except ImportError:
    pass

# pytest attaches its log-capture handlers to every logger that does not
# propagate, and torch's structured trace log (tlparse, TORCH_TRACE) is
# one: with a handler attached, every trace event of every compile builds
# its payload (graph printouts, guard dumps) for pytest to store. Without
# TORCH_TRACE that log has no handler of its own after its first event, so
# letting it propagate keeps pytest's handlers off it and the payloads
# unbuilt: 5-10% of an OpInfo test.
if not os.environ.get("TORCH_TRACE"):
    try:
        import torch._logging._internal as _torch_logging

        _torch_logging.trace_log.propagate = True
    except (ImportError, AttributeError):
        pass


def _test_fn_of_the_stack():
    """torch.testing's extract_test_fn (the unittest test method on the
    call stack, for OpInfo's tracked inputs and per-sample skips) without
    inspect.stack(), which reads every frame's source lines: a tenth of an
    OpInfo test's time under pytest's deep stacks. Same answer, frames
    walked directly."""
    import unittest

    frame = sys._getframe(1)
    while frame is not None:
        self_val = frame.f_locals.get("self")
        if isinstance(self_val, unittest.TestCase):
            try:
                *_, cls_name, test_name = self_val.id().rsplit(".", 2)
                if cls_name == type(self_val).__name__ and test_name.startswith("test"):
                    return getattr(self_val, test_name).__func__
            except Exception:
                return None
        frame = frame.f_back
    return None


try:
    import torch.testing._internal.common_utils as _common_utils
    import torch.testing._internal.opinfo.core as _opinfo_core

    for _module in (_common_utils, _opinfo_core):
        if hasattr(_module, "extract_test_fn"):
            _module.extract_test_fn = _test_fn_of_the_stack
except ImportError:
    pass

sys.path.insert(0, os.path.dirname(__file__))

# torch dtype -> MLIR element type
from disc.frontend.emitter import MLIR_TYPE  # noqa: E402
FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
INT_DTYPES = [torch.int8, torch.int32, torch.int64]
ALL_DTYPES = FLOAT_DTYPES + [torch.float64] + INT_DTYPES + [torch.bool]

# (rtol, atol) per dtype for results computed in one rounding step from the
# inputs; tests of longer computations (reductions, matmul) widen them.
TOLERANCE = {
    torch.float64: (1e-12, 1e-12),
    torch.float32: (1e-5, 1e-6),
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (8e-3, 8e-3),
}


def dtype_id(dtype: torch.dtype) -> str:
    return MLIR_TYPE[dtype]


def tensor_type(dims, dtype: torch.dtype) -> str:
    """tensor<?x4xf32> for dims (None, 4); None is a dynamic dim."""
    parts = ["?" if d is None else str(d) for d in dims]
    return "tensor<" + "".join(p + "x" for p in parts) + MLIR_TYPE[dtype] + ">"


def compilations() -> int:
    return disc.stats()["compilations"]


# What the cuda target rejects on purpose, with a CompileError naming the op
# (docs/cuda.md): library calls (not yet) and shapes read from tensor data.
CUDA_UNSUPPORTED = ("which the cuda target does not support",)


def _skip_if_cuda_unsupported(error: disc.CompileError, target: str):
    message = str(error)
    if any(m in message for m in CUDA_UNSUPPORTED):
        lines = [l for l in message.splitlines() if "error: " in l]
        pytest.skip(f"target {target}: {lines[0].split('error: ', 1)[1] if lines else message}")


def compile_once(text: str) -> disc.Executable:
    """Compiles `text` for disc.default_target() (DISC_TARGET: cpu or
    cuda-emulated), asserting one compilation. With DISC_TEST_CUDA_COMPILE=1
    the program is first compiled for target cuda as well (ptxas must
    accept every kernel for sm_80 and sm_90; no GPU needed). A program
    the cuda target rejects on purpose (docs/cuda.md) still runs."""
    target = disc.default_target()
    if os.environ.get("DISC_TEST_CUDA_COMPILE") == "1" and disc._compiler().cuda_toolkit_path():
        try:
            assert disc.compile_mlir(text, target="cuda").target == "cuda"
        except disc.CompileError as e:
            if not any(m in str(e) for m in CUDA_UNSUPPORTED):
                raise
    before = compilations()
    try:
        exe = disc.compile_mlir(text)
    except disc.CompileError as e:
        if target != "cpu":
            _skip_if_cuda_unsupported(e, target)
        raise
    assert compilations() == before + 1, "compile_mlir must compile exactly once"
    return exe


def rand(shape, dtype, *, low=None, high=None, generator=None):
    """Random data of a dtype: normal floats (or uniform in [low, high)),
    integers in [low, high) (default [-50, 50)), random bools."""
    g = generator
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        if low is None:
            return torch.randn(shape, generator=g, dtype=torch.float32).to(dtype)
        x = torch.rand(shape, generator=g, dtype=torch.float32) * (high - low) + low
        return x.to(dtype)
    lo = -50 if low is None else low
    hi = 50 if high is None else high
    return torch.randint(lo, hi, shape, generator=g, dtype=torch.int64).to(dtype)


def assert_matches(actual, expected, *, rtol=None, atol=None, what=""):
    """Same dtype, shape and values (NaN positions included)."""
    assert isinstance(actual, torch.Tensor), f"{what}: result is {type(actual)}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    if expected.dtype.is_floating_point:
        default_rtol, default_atol = TOLERANCE[expected.dtype]
        torch.testing.assert_close(
            actual, expected,
            rtol=default_rtol if rtol is None else rtol,
            atol=default_atol if atol is None else atol,
            equal_nan=True, msg=lambda m: f"{what}: {m}")
    else:
        assert torch.equal(actual, expected), (
            f"{what}: values differ at {int((actual != expected).sum())} positions\n"
            f"actual={actual}\nexpected={expected}")


def compiled_stat_counts(fn, calls, keys, tolerance=lambda expected: 1e-5):
    """Runs torch.compile(fn, backend="disc", dynamic=True) on each argument
    tuple of `calls` against eager `fn` (rtol = atol = tolerance(expected),
    NaNs equal), under no_grad, asserting one compilation for them all;
    returns per call the increase of each disc.stats() counter in `keys`."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    before = compilations()
    counts = []
    with torch.no_grad():
        for args in calls:
            stats = disc.stats()
            got, want = compiled(*args), fn(*args)
            if not isinstance(want, tuple):
                got, want = (got,), (want,)
            for g, w in zip(got, want, strict=True):
                assert g.dtype == w.dtype and g.shape == w.shape
                tol = tolerance(w)
                torch.testing.assert_close(g, w, rtol=tol, atol=tol,
                                           equal_nan=True)
            after = disc.stats()
            counts.append(tuple(after[k] - stats[k] for k in keys))
    assert compilations() == before + 1, "one compilation for every shape"
    return counts


def run_shapes(exe, make_inputs, reference, shapes, **tolerance):
    """Runs `exe` at every shape in `shapes` (at least 3), comparing each
    result with `reference(*inputs)`; asserts nothing is recompiled."""
    assert len(shapes) >= 3, "each compiled artifact runs at 3 or more shapes"
    before = compilations()
    for shape in shapes:
        inputs = make_inputs(shape)
        if not isinstance(inputs, tuple):
            inputs = (inputs,)
        results = exe(*inputs)
        expected = reference(*inputs)
        if not isinstance(expected, tuple):
            expected = (expected,)
        assert isinstance(results, tuple)
        assert len(results) == len(expected)
        for i, (r, e) in enumerate(zip(results, expected)):
            assert_matches(r, e, what=f"shape {shape} result {i}", **tolerance)
    assert compilations() == before, "running at a new shape must not recompile"


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


# The longest tests first (CI time), for `--dist worksteal` (the
# Makefile's): a worker that runs out takes half of the other's queue, so
# the run ends on short tests. Collected last (training/ sorts after every
# test_*.py), the long tests kept one worker busy after the other had
# finished. Under xdist's default `--dist load` this order is worse: the
# first chunk of consecutive tests, every long one, goes to one worker.
# Stable: the order within each group is unchanged.
LONG_TESTS_FIRST = (
    "graphnet/test_graphnet_devset.py",
    "training/test_training.py",
    "reliability/test_fuzz.py",
    "deploy/test_cache.py",
    "graphnet/test_harness.py",
)


def pytest_collection_modifyitems(config, items):
    def group(item):
        for rank, path in enumerate(LONG_TESTS_FIRST):
            if path in item.nodeid:
                return rank
        return len(LONG_TESTS_FIRST)

    items.sort(key=group)
