"""Runs a function through torch.compile(backend="disc", dynamic=True) at
several shapes and checks it against eager PyTorch, the compile count and
the fallback count."""
from __future__ import annotations

import pytest
import torch

import disc

TOL = {
    torch.float32: dict(rtol=1e-4, atol=1e-5),
    torch.float64: dict(rtol=1e-7, atol=1e-9),
    torch.float16: dict(rtol=1e-2, atol=1e-2),
    torch.bfloat16: dict(rtol=2e-2, atol=2e-2),
}


def _flatten(x):
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out += _flatten(v)
        return out
    return [x]


def assert_same(actual, expected, what="", tol=None):
    a, e = _flatten(actual), _flatten(expected)
    assert len(a) == len(e), f"{what}: {len(a)} outputs, expected {len(e)}"
    for i, (x, y) in enumerate(zip(a, e)):
        if not isinstance(y, torch.Tensor):
            assert x == y, f"{what} output {i}: {x} != {y}"
            continue
        assert x.dtype == y.dtype, f"{what} output {i}: dtype {x.dtype} != {y.dtype}"
        assert x.shape == y.shape, f"{what} output {i}: shape {tuple(x.shape)} != {tuple(y.shape)}"
        if y.dtype.is_floating_point:
            t = tol or TOL[y.dtype]
            torch.testing.assert_close(x, y, equal_nan=True, msg=lambda m: f"{what} output {i}: {m}", **t)
        else:
            assert torch.equal(x, y), f"{what} output {i}: values differ\n{x}\n{y}"


def check_compiled(fn, inputs_per_shape, *, tol=None, max_fallback=0, compiles=1, dynamic=True):
    """`inputs_per_shape`: a list of argument tuples, one per shape (3+)."""
    assert len(inputs_per_shape) >= 3, "run each compiled artifact at 3+ shapes"
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=dynamic)
    before = disc.stats()
    with torch.no_grad():
        for i, args in enumerate(inputs_per_shape):
            expected = fn(*args)
            actual = compiled(*args)
            assert_same(actual, expected, what=f"call {i}", tol=tol)
    after = disc.stats()
    compilations = after["compilations"] - before["compilations"]
    fallback = after["fallback_nodes"] - before["fallback_nodes"]
    compiled_nodes = after["compiled_nodes"] - before["compiled_nodes"]
    fallback_ops = {k: v - before["fallback_ops"].get(k, 0) for k, v in after["fallback_ops"].items()
                    if v != before["fallback_ops"].get(k, 0)}
    if fallback > max_fallback and disc.default_target() != "cpu" and all(
            "which the cuda target does not support" in k for k in fallback_ops):
        # DISC_TARGET=cuda-emulated: what the cuda target rejects on purpose
        # (library calls for now) ran in eager; the results were checked.
        pytest.skip(f"target {disc.default_target()}: {sorted(fallback_ops)[0]}")
    assert fallback <= max_fallback, f"{fallback} fallback nodes: {fallback_ops}"
    if compiles is not None:
        assert compilations == compiles, (
            f"{compilations} DISC compilations for {len(inputs_per_shape)} shapes, expected "
            f"{compiles} (graphs: {after['graphs'] - before['graphs']}, fallbacks: {fallback_ops})")
    assert compiled_nodes > 0 or compiles == 0
    return after
