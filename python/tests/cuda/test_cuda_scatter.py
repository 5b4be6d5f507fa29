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


# One update scattered into a constant and into an argument of any length:
# the loop over one update folds away and leaves a host-level scf.if that
# yields the updated copy or the operand, a buffer the host would choose by
# an index read from device memory (cummax's gradient of a length-1 line
# fell back to eager on the cuda target for this).
ONE_UPDATE = """
func.func @main(%x: tensor<?xf32>, %i: tensor<1xi64>, %u: tensor<1xf32>) -> (tensor<3xf32>, tensor<?xf32>) {
  %zero = disc.constant dense<0.0> : tensor<f32>
  %z = disc.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %idx = disc.reshape %i : (tensor<1xi64>) -> tensor<1x1xi64>
  %a = disc.scatter %z[%idx], %u, kind = add, update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : (tensor<3xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<3xf32>
  %b = disc.scatter %x[%idx], %u, kind = add, update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : (tensor<?xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<?xf32>
  return %a, %b : tensor<3xf32>, tensor<?xf32>
}"""


def test_one_update_into_a_constant_or_an_argument(monkeypatch):
    """Each result a buffer both branches write: right for an index inside
    both operands, inside one, and past both (the update is dropped), and
    the operand itself is left as it was."""
    monkeypatch.setenv("DISC_CACHE", "0")
    exe = disc.compile_mlir(ONE_UPDATE, target="cuda-emulated")
    for n, i in ((3, 2), (5, 0), (8, 7), (4, 9)):
        x, u = torch.randn(n), torch.randn(1)
        before = x.clone()
        a, b = exe(x, torch.tensor([i]), u)
        want_a, want_b = torch.zeros(3), x.clone()
        if i < 3:
            want_a[i] += u[0]
        if i < n:
            want_b[i] += u[0]
        assert torch.equal(a, want_a) and torch.equal(b, want_b), (n, i)
        assert torch.equal(x, before)


def test_cummax_gradient_of_a_length_one_line(monkeypatch):
    """The training graph that met it (a line of length 1: Dynamo makes
    the size static, and the backward's scatter has one update): nothing
    runs in eager. Two calls, new values."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: torch.cummax(x, 0)[0] * 3,
                             backend="disc", dynamic=True)
    before = disc.stats()
    for _ in range(2):
        x = torch.randn(1, requires_grad=True)
        x_eager = x.detach().clone().requires_grad_()
        compiled(x).sum().backward()
        (torch.cummax(x_eager, 0)[0] * 3).sum().backward()
        torch.testing.assert_close(x.grad, x_eager.grad)
    after = disc.stats()
    assert after["fallback_nodes"] == before["fallback_nodes"]
    # The forward graph and the backward graph, once each.
    assert after["compilations"] - before["compilations"] == 2


@pytest.mark.skipif(not disc._compiler().cuda_toolkit_path(),
                    reason="no CUDA toolkit (ptxas) on this machine")
def test_one_update_compiles_for_cuda():
    assert disc.compile_mlir(ONE_UPDATE, target="cuda").target == "cuda"
