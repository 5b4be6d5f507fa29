"""Scatters on the cuda target without a GPU (docs/cuda.md, "Scatters"):
the loop over the updates runs as a grid, each combining write an atomic,
through target cuda-emulated (the grid's threads are CPU threads, the
atomics real) against eager PyTorch, with repeated indices, at several
shapes with one compilation."""
import pytest
import torch

import disc
from conftest import compilations


def _run(fn, make, sizes, monkeypatch, tol=1e-5):
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    before = compilations()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for n in sizes:
            args = make(n, g)
            got, want = compiled(*args), fn(*args)
            torch.testing.assert_close(got, want, rtol=tol, atol=tol)
    assert compilations() == before + 1, "one compilation for every shape"


def _graph(n, g, features=16):
    """n nodes, 5n edges (every node receives several updates): the edges'
    features, their target nodes, and the nodes' features."""
    x = torch.randn(5 * n, features, generator=g)
    index = torch.randint(0, n, (5 * n,), generator=g)
    return x, index, torch.randn(n, features, generator=g)


@pytest.mark.parametrize("reduce", ["amax", "amin", "sum", "mean"])
@pytest.mark.parametrize("include_self", [False, True])
def test_scatter_reduce_with_repeated_indices(reduce, include_self, monkeypatch):
    def fn(x, index, base):
        return base.scatter_reduce(0, index[:, None].expand_as(x), x, reduce,
                                   include_self=include_self)

    _run(fn, _graph, [7, 20, 33], monkeypatch, tol=1e-4)


def test_index_add_and_index_put_accumulate(monkeypatch):
    def fn(x, index, base):
        a = base.index_add(0, index, x)
        b = torch.zeros_like(base).index_put((index,), x, accumulate=True)
        return a + b * 2

    _run(fn, _graph, [7, 20, 33], monkeypatch, tol=1e-4)


def test_integer_index_add(monkeypatch):
    def fn(x, index, base):
        return base.index_add(0, index, x)

    def make(n, g):
        x = torch.randint(-50, 50, (5 * n, 4), generator=g, dtype=torch.int32)
        index = torch.randint(0, n, (5 * n,), generator=g)
        return x, index, torch.randint(-50, 50, (n, 4), generator=g, dtype=torch.int32)

    _run(fn, make, [6, 19], monkeypatch, tol=0)


def test_plain_scatter_with_distinct_indices(monkeypatch):
    """A plain scatter (no combine): with distinct indices every order
    gives eager's result."""
    def fn(x, perm, base):
        return base.index_copy(0, perm, x)

    def make(n, g):
        return (torch.randn(n, 8, generator=g), torch.randperm(n, generator=g),
                torch.randn(n, 8, generator=g))

    _run(fn, make, [5, 17, 40], monkeypatch)
