"""Elementwise grids' 32-bit index arithmetic on the cuda target without
a GPU (docs/cuda.md, "32-bit index arithmetic"): a grid over two or more
dims delinearises in i32 when every thread's linear index fits
(DISC_CUDA_INDEX32_LIMIT, default 2^31 - 1), else in 64 bits, chosen per
call. Run through target
cuda-emulated (the grids executed on the CPU, their i32 arithmetic
included) against eager PyTorch; disc.stats() counts the choice. A small
limit makes small tensors take the 64-bit grid, so both run here."""
import pytest
import torch

import disc
from conftest import compiled_stat_counts

BLOCK = 256  # disc-map-loops-to-gpu's block size


def _run(fn, calls, monkeypatch, limit=None):
    """Runs `fn` compiled once on each argument tuple of `calls`; returns
    per call the (index32, index64, vector, scalar) grid-call counts."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    if limit is None:
        monkeypatch.delenv("DISC_CUDA_INDEX32_LIMIT", raising=False)
    else:
        monkeypatch.setenv("DISC_CUDA_INDEX32_LIMIT", str(limit))
    keys = ("index32_grids", "index64_grids", "vector_grids", "scalar_grids")
    return compiled_stat_counts(fn, calls, keys)


def _broadcast_transpose(x, b):
    """A broadcast along the middle dim and a transposed result: the grid
    divides by both inner extents."""
    return (torch.exp(x) + b[None, :, None]).transpose(0, 2).contiguous()


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def test_32_bit_grids_run_when_every_index_fits(monkeypatch):
    shapes = [(2, 3, 5), (7, 2, 9), (4, 33, 17), (3, 3, 3)]
    counts = _run(_broadcast_transpose,
                  [(_rand(*s), _rand(s[1], seed=1)) for s in shapes], monkeypatch)
    for shape, (i32, i64, _, _) in zip(shapes, counts):
        assert i32 >= 1 and i64 == 0, (shape, counts)


def test_the_64_bit_grid_runs_past_the_limit(monkeypatch):
    """With the limit at 1000, a grid of at most 1000 - 256 + 1 = 745
    elements takes the 32-bit variant (its last block's threads stay
    within the limit), one of 746 or more the 64-bit grid; each is right,
    at the boundary too."""
    def bias_transpose(x, b):
        return (torch.exp(x) + b).t().contiguous()

    limit = 1000
    most = limit - BLOCK + 1
    shapes = [(5, 149), (2, 373), (3, 7), (40, 30), (2, 372)]
    calls = [(_rand(*s), _rand(s[1], seed=1)) for s in shapes]
    counts = _run(bias_transpose, calls, monkeypatch, limit=limit)
    for (rows, cols), (i32, i64, _, _) in zip(shapes, counts):
        if rows * cols <= most:
            assert i32 >= 1 and i64 == 0, ((rows, cols), counts)
        else:
            assert i64 >= 1 and i32 == 0, ((rows, cols), counts)
    assert [c[:2] != (0, 0) for c in counts] == [True] * len(shapes)


def test_vector_and_scalar_grids_each_take_either(monkeypatch):
    """The 32-bit choice is independent of the vector/scalar one: each grid
    branches on it."""
    def bias_exp(x, b):
        return torch.exp(x + b)

    shapes = [(6, 8), (6, 7), (300, 4), (300, 3)]
    calls = [(_rand(*s), _rand(s[1], seed=1)) for s in shapes]
    counts = _run(bias_exp, calls, monkeypatch, limit=1000)
    assert counts == [(1, 0, 1, 0),   # 48 elements, innermost 8: vector
                      (1, 0, 0, 1),   # innermost 7: scalar
                      (0, 1, 1, 0),   # 1200 elements: 64-bit, vector
                      (0, 1, 0, 1)], counts


def test_a_grid_over_one_dim_has_no_32_bit_variant(monkeypatch):
    counts = _run(lambda x: torch.exp(x) * 2, [(_rand(10),), (_rand(1000),)], monkeypatch)
    assert all(c[:2] == (0, 0) for c in counts), counts


@pytest.mark.parametrize("value, message", [
    ("100", "index32-limit must be 0 or in \\[block-size, 2147483647\\], got 100"),
    ("2147483648", "DISC_CUDA_INDEX32_LIMIT must be an integer from 0 to 2147483647"),
])
def test_limits_outside_the_safe_range_are_errors(value, message, monkeypatch):
    monkeypatch.setenv("DISC_CUDA_INDEX32_LIMIT", value)
    monkeypatch.setenv("DISC_CACHE", "0")
    text = """
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %e = disc.exponential %x : tensor<?x?xf32>
  return %e : tensor<?x?xf32>
}"""
    with pytest.raises(Exception, match=message):
        disc.compile_mlir(text, target="cuda-emulated")
