"""Sort on the cuda target without a GPU (docs/cuda.md, "Sort"): a bitonic
sort per line, one block per line (disc-cuda-sort-loops), run through
target cuda-emulated (the block's thread loops as CPU loops, one after the
other) against eager PyTorch's stable sort: values and indices exactly, at
line lengths below, at and above a power of two and above twice the
largest block's 256 threads, with ties (the stable order), NaN, infinities
and signed zeros; and compiled for target cuda (ptxas accepts the kernel
for sm_80 and sm_90). GPU runs: test_cuda_gpu.py's test_sort_on_the_gpu."""
from __future__ import annotations

import pytest
import torch

import disc
from conftest import compilations

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64,
          torch.int64, torch.int32, torch.int8, torch.bool]


def _line_values(shape, dtype, generator):
    """Values with many ties; floats also NaN, +-inf and -0.0 / 0.0."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    x = torch.randint(-6, 6, shape, generator=generator)
    if not dtype.is_floating_point:
        return x.to(dtype)
    x = x.to(dtype) * 0.5
    flat = x.view(-1)
    n = flat.numel()
    for position, value in zip((0, n // 3, n // 2, n - 1, 2 * n // 3),
                               (float("nan"), float("inf"), -0.0,
                                float("-inf"), float("nan"))):
        if n:
            flat[position] = value
    return x


def _check(fn, calls):
    """torch.compile(fn, backend="disc", dynamic=True) on each argument
    tuple against eager, exactly (NaNs equal), one compilation."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    before = compilations()
    for args in calls:
        got, want = compiled(*args), fn(*args)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.shape, w.shape)
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)
    assert compilations() == before + 1, "one compilation for every shape"


@pytest.fixture
def emulated(monkeypatch):
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_STRICT", "1")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_eagers_stable_sort(dtype, descending, emulated):
    """Along the last dim of a strided input: lines of 7, 16 (a power of
    two), 33 and 2500 elements (P / 2 = 2048 compare-exchanges a step:
    eight per thread of 256), a few lines each."""
    g = torch.Generator().manual_seed(5)

    def fn(x):
        values, indices = torch.sort(x, dim=-1, descending=descending,
                                     stable=True)
        return values, indices

    calls = []
    for rows, n in ((4, 7), (2, 16), (5, 33), (3, 2500)):
        x = _line_values((n, rows), dtype, g).t()  # strided
        calls.append((x,))
    _check(fn, calls)


@pytest.mark.parametrize("dim", [0, 1])
def test_sort_along_an_outer_dim_and_argsort(dim, emulated):
    """A line along an outer dim of a 3-d tensor (its elements apart by the
    inner dims' product), and argsort descending, at three shapes."""
    g = torch.Generator().manual_seed(6)

    def fn(x):
        values, indices = torch.sort(x, dim=dim, stable=True)
        return values, indices, torch.argsort(x, dim=-1, descending=True,
                                              stable=True)

    _check(fn, [(_line_values(s, torch.float32, g),)
                for s in ((3, 5, 4), (9, 2, 3), (40, 33, 2))])


SORT_PROGRAM = """
func.func @main(%x: tensor<?x?x{t}>) -> (tensor<?x?x{t}>, tensor<?x?xi64>) {{
  %v, %i = disc.sort %x, dim = {dim} {{descending = true}} : (tensor<?x?x{t}>) -> (tensor<?x?x{t}>, tensor<?x?xi64>)
  return %v, %i : tensor<?x?x{t}>, tensor<?x?xi64>
}}
"""


def test_sort_program_at_lines_of_one_and_two():
    """disc.sort compiled once (compile_mlir: no specialisation of sizes 0
    and 1) along dim 1 descending, at lines of 1 and 2 elements (no stage;
    one), 3 and 0, and no line, against eager's stable sort; the library
    call is gone."""
    exe = disc.compile_mlir(SORT_PROGRAM.format(t="f32", dim=1),
                            target="cuda-emulated")
    before = compilations()
    g = torch.Generator().manual_seed(7)
    for shape in ((5, 1), (3, 2), (1, 3), (4, 2), (2, 0), (0, 3)):
        x = _line_values(shape, torch.float32, g)
        got = exe(x)
        want = torch.sort(x, dim=1, descending=True, stable=True)
        for a, b in zip(got, want, strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)
    assert compilations() == before
    assert exe.kernel_counts["library_calls"] == 0
    assert exe.kernel_counts["loops"] >= 1


@pytest.mark.skipif(not disc._compiler().cuda_toolkit_path(),
                    reason="no CUDA toolkit (ptxas): set DISC_CUDA_TOOLKIT")
@pytest.mark.parametrize("element,dim", [("f32", 1), ("bf16", 0), ("i1", 1),
                                         ("i64", 0)])
def test_sort_compiles_for_the_gpu(element, dim, tmp_path):
    """Compiled for target cuda: one kernel with block barriers inside its
    stage loops, accepted by ptxas for sm_80 and sm_90; no library call
    left."""
    exe = disc.compile_mlir(SORT_PROGRAM.format(t=element, dim=dim),
                            target="cuda", dump_dir=str(tmp_path),
                            _exact_dump_dir=True)
    assert exe.target == "cuda"
    assert sorted(p.name.split(".")[1] for p in tmp_path.glob("*.fatbin")) \
        == ["sm_80", "sm_90"]
    rows = "".join(p.read_text() for p in tmp_path.glob("*disc-row-blocks-to-gpu.mlir"))
    assert "gpu.barrier" in rows and "disc_ral_sort" not in rows
