"""Elementwise grids' vector variant on the cuda target without a GPU
(docs/cuda.md, "Vector grids"): four consecutive elements per thread with
vector loads and stores when the innermost extent is a multiple of 4 and
every vectorised buffer is aligned, one element per thread otherwise,
chosen per call. Run through target cuda-emulated (the grids executed on
the CPU) against eager PyTorch; disc.stats() counts the choice."""
import pytest
import torch

from conftest import compiled_stat_counts


def _run(fn, calls, monkeypatch, vectorize="1"):
    """Runs `fn` compiled once on each argument tuple of `calls`; returns
    the (vector, scalar) grid-call counts of each call."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CUDA_VECTORIZE", vectorize)
    monkeypatch.setenv("DISC_CACHE", "0")
    return compiled_stat_counts(
        fn, calls, ("vector_grids", "scalar_grids"),
        lambda want: 1e-2 if want.dtype in (torch.bfloat16, torch.float16) else 1e-5)


def _bias_gelu(x, b):
    return torch.nn.functional.gelu(x + b) * 2


def _misaligned(*shape, dtype=torch.float32):
    """A contiguous tensor whose data starts one element past an aligned
    address (a view at storage offset 1)."""
    n = 1
    for d in shape:
        n *= d
    return torch.randn(n + 1).to(dtype)[1:].view(*shape)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_vector_variant_runs_when_extent_and_alignment_allow(dtype, monkeypatch):
    g = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=g).to(dtype)

    calls = [(rand(2, 3, 8), rand(8)),       # innermost 8: vector
             (rand(2, 5, 12), rand(12)),     # innermost 12: vector
             (rand(2, 4, 6), rand(6)),       # innermost 6: scalar
             (rand(5, 3, 7), rand(7)),       # innermost 7: scalar
             (_misaligned(2, 3, 8, dtype=dtype), rand(8)),  # misaligned input: scalar
             (rand(4, 16, 256), rand(256))]  # vector, several blocks
    counts = _run(_bias_gelu, calls, monkeypatch)
    vector, scalar = [c[0] for c in counts], [c[1] for c in counts]
    assert all(v > 0 for v in vector[:2]) and scalar[:2] == [0, 0], counts
    assert vector[2:5] == [0, 0, 0] and all(s > 0 for s in scalar[2:5]), counts
    assert vector[5] > 0 and scalar[5] == 0, counts


def test_integer_and_transposed_accesses(monkeypatch):
    """int8 and int32 buffers (4- and 16-byte vectors); a transposed read
    stays four scalar loads inside the vector variant; the result is right
    either way."""
    g = torch.Generator().manual_seed(1)

    def fn(a, b, t):
        return (a.to(torch.int32) * 3 + b) + t.t()

    calls = [(torch.randint(-100, 100, (4, 8), generator=g, dtype=torch.int8),
              torch.randint(-100, 100, (4, 8), generator=g, dtype=torch.int32),
              torch.randint(-100, 100, (8, 4), generator=g, dtype=torch.int32)),
             (torch.randint(-100, 100, (6, 5), generator=g, dtype=torch.int8),
              torch.randint(-100, 100, (6, 5), generator=g, dtype=torch.int32),
              torch.randint(-100, 100, (5, 6), generator=g, dtype=torch.int32)),
             (torch.randint(-100, 100, (3, 16), generator=g, dtype=torch.int8),
              torch.randint(-100, 100, (3, 16), generator=g, dtype=torch.int32),
              torch.randint(-100, 100, (16, 3), generator=g, dtype=torch.int32))]
    counts = _run(fn, calls, monkeypatch)
    assert counts[0][0] > 0 and counts[2][0] > 0 and counts[1][0] == 0, counts


def test_vectorize_off_counts_nothing(monkeypatch):
    """DISC_CUDA_VECTORIZE=0: no vector variant, so no grid call is counted."""
    g = torch.Generator().manual_seed(2)
    calls = [(torch.randn(3, 8, generator=g), torch.randn(8, generator=g)),
             (torch.randn(4, 6, generator=g), torch.randn(6, generator=g))]
    assert _run(_bias_gelu, calls, monkeypatch, vectorize="0") == [(0, 0), (0, 0)]
