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


def _prelu_scale(x, w, g):
    """convtasnet's shape of work: a per-channel PReLU and scale of
    [batch, channels, time] with an odd time length; the per-channel
    operands index no row, so the vector variant's lanes are linear
    iterations of the nest."""
    return torch.nn.functional.prelu(x, w) * g[:, None] + 1


def _linear_counts(fn, calls, monkeypatch):
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    return compiled_stat_counts(
        fn, calls, ("linear_vector_grids", "vector_grids", "scalar_grids"))


def test_linear_lanes_vectorise_rows_of_any_length(monkeypatch):
    """Rows of 4001, 7 and 12 elements: a thread's four elements may cross
    rows (and channels), and the result is right at every such crossing;
    a total not a multiple of 4, or a misaligned input, takes the scalar
    grid. Every linear-lane call is also a vector-grid call."""
    g = torch.Generator().manual_seed(3)

    def rand(*shape):
        return torch.randn(*shape, generator=g)

    calls = [(rand(2, 8, 4001), rand(8), rand(8)),    # 64016: linear
             (rand(2, 6, 7), rand(6), rand(6)),       # 84: linear
             (rand(2, 3, 5), rand(3), rand(3)),       # 30: scalar
             (_misaligned(2, 4, 7), rand(4), rand(4)),  # misaligned: scalar
             (rand(3, 5, 12), rand(5), rand(5))]      # 180: linear
    counts = _linear_counts(_prelu_scale, calls, monkeypatch)
    linear = [c[0] for c in counts]
    assert all(c[0] == c[1] for c in counts), counts
    assert all(n > 0 for n in linear[:2]) and linear[4] > 0, counts
    assert linear[2:4] == [0, 0], counts
    assert all(c[2] > 0 for c in counts[2:4]), counts
    assert all(c[2] == 0 for c in counts[:2]), counts


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.int8])
def test_linear_lanes_of_narrow_types(dtype, monkeypatch):
    """16- and 8-bit elements (8- and 4-byte vectors) in linear lanes, a
    broadcast column read per lane."""
    g = torch.Generator().manual_seed(4)

    def rand(*shape):
        if dtype.is_floating_point:
            return torch.randn(*shape, generator=g).to(dtype)
        return torch.randint(-50, 50, shape, generator=g, dtype=dtype)

    def fn(x, c):
        return x * 2 + c

    calls = [(rand(5, 9), rand(5, 1)), (rand(4, 3), rand(4, 1)),
             (rand(7, 11), rand(7, 1))]   # 45, 12, 77 elements
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    counts = compiled_stat_counts(
        fn, calls, ("linear_vector_grids", "scalar_grids"),
        lambda want: 1e-2 if want.dtype == torch.bfloat16 else 0)
    assert counts[1][0] > 0 and counts[1][1] == 0, counts
    assert counts[0][0] == 0 and counts[2][0] == 0, counts


def test_linear_lanes_read_a_slice_per_lane(monkeypatch):
    """A slice's first columns (a strided view, so not vectorised) read in
    linear lanes at each lane's own indices, carried across rows of the
    nest that are shorter than the slice's buffer's: right values, every
    call with linear lanes. (A read of a wider buffer with the identity
    layout, which the host must send to the scalar grid, is not what
    PyTorch graphs produce: vector-grids.mlir checks that condition.)"""
    g = torch.Generator().manual_seed(5)

    def fn(x, y):
        return x[:, :y.shape[1]] * 3 + y

    calls = [(torch.randn(4, 12, generator=g), torch.randn(4, 7, generator=g)),
             (torch.randn(6, 9, generator=g), torch.randn(6, 6, generator=g)),
             (torch.randn(8, 10, generator=g), torch.randn(8, 3, generator=g))]
    counts = _linear_counts(fn, calls, monkeypatch)
    assert all(c[0] > 0 and c[2] == 0 for c in counts), counts
