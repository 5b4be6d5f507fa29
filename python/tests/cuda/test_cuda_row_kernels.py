"""Row kernels on the cuda target without a GPU: the three variants (one row
per thread, per warp, per block; docs/cuda.md, "Row kernels") run through
target cuda-emulated (the block, warp and thread loops executed on the CPU,
the reductions as ordinary reductions) against eager PyTorch, and compile
for target cuda (ptxas accepts the warp and block variants' shuffles and
barriers). `DISC_CUDA_ROW_VARIANT` forces a variant; `auto` picks per call
from the row length and the number of rows, which disc.stats() counts."""
import re

import pytest
import torch

import disc
from conftest import compilations


class RowOps(torch.nn.Module):
    """Row reductions and stitch kernels over the last dim."""

    def __init__(self, width):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x, ids):
        return (torch.softmax(x, -1), torch.log_softmax(x * 3, -1), self.norm(x),
                x.sum(-1), x.amax(-1), x.amin(-1), (x > 1).any(-1), (x > -3).all(-1),
                x.var(-1), ids.sum(-1), ids.amax(-1))


def _compile_and_check(width, shapes, monkeypatch, variant):
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CUDA_ROW_VARIANT", variant)
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()
    model = RowOps(width).eval()
    compiled = torch.compile(model, backend="disc", dynamic=True)
    before, stats = compilations(), disc.stats()
    g = torch.Generator().manual_seed(width)
    with torch.no_grad():
        for rows in shapes:
            x = torch.randn(*rows, width, generator=g)
            if x.numel():
                x.view(-1)[::7] = x.view(-1)[::7] * 4
                x.view(-1)[3] = float("nan")
            ids = torch.randint(-1000, 1000, (*rows, width), generator=g)
            for got, want in zip(compiled(x, ids), model(x, ids)):
                assert got.dtype == want.dtype and got.shape == want.shape
                torch.testing.assert_close(got, want, rtol=2e-5, atol=2e-5,
                                           equal_nan=True)
    assert compilations() == before + 1, "one compilation for every shape"
    after = disc.stats()
    return tuple(after[k] - stats[k] for k in ("rows_per_thread", "rows_per_block",
                                               "rows_per_warp"))


SHAPES = [(2, 3), (5, 7), (4, 2)]


@pytest.mark.parametrize("width", [8, 33, 300, 1100])
def test_rows_one_per_block(width, monkeypatch):
    per_thread, per_block, per_warp = _compile_and_check(width, SHAPES, monkeypatch, "block")
    assert per_thread == 0 and per_warp == 0 and per_block > 0


@pytest.mark.parametrize("width", [8, 33, 300, 1100])
def test_rows_one_per_warp(width, monkeypatch):
    """8 rows per block: row counts that leave a block part-full (6, 35)
    or fill it (8), rows shorter and longer than the warp's 32 lanes."""
    per_thread, per_block, per_warp = _compile_and_check(
        width, [(2, 3), (5, 7), (4, 2)], monkeypatch, "warp")
    assert per_thread == 0 and per_block == 0 and per_warp > 0


@pytest.mark.parametrize("unroll,width", [("1", 300), ("3", 1100), ("8", 33), ("16", 2500)])
def test_rows_one_per_block_at_every_unroll_factor(unroll, width, monkeypatch):
    """DISC_CUDA_ROW_UNROLL: each thread's loop over its part of a row
    unrolled by the factor, a remainder loop after it (widths that leave
    one: 1100 = 256 threads x 4 + 76)."""
    monkeypatch.setenv("DISC_CUDA_ROW_UNROLL", unroll)
    for variant in ("block", "warp"):
        counts = _compile_and_check(width, SHAPES, monkeypatch, variant)
        assert counts[0] == 0 and counts[1 if variant == "block" else 2] > 0


@pytest.mark.parametrize("value", ["0", "17", "four", "-1"])
def test_bad_unroll_factor_is_a_clear_error(value, monkeypatch):
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CUDA_ROW_UNROLL", value)
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()
    with pytest.raises(Exception, match="DISC_CUDA_ROW_UNROLL must be an integer from 1 to 16"):
        torch.compile(lambda x: torch.softmax(x, -1), backend="disc", dynamic=True)(
            torch.randn(4, 64))


@pytest.mark.parametrize("width", [8, 300])
def test_rows_one_per_thread(width, monkeypatch):
    per_thread, per_block, per_warp = _compile_and_check(width, SHAPES, monkeypatch, "thread")
    assert per_block == 0 and per_warp == 0 and per_thread > 0


def test_auto_picks_per_call_from_the_row_length(monkeypatch):
    """Rows shorter than 32 elements run one per thread, rows of 32 to 128
    one per warp, longer rows one per block, and rows of up to 1024 one per
    warp again when there are 2048 rows or more: all three variants in one
    compilation."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CUDA_ROW_VARIANT", "auto")
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()

    def rows(x):
        return torch.softmax(x, -1), x.sum(-1), x.amax(-1)

    compiled = torch.compile(rows, backend="disc", dynamic=True)
    before = compilations()
    g = torch.Generator().manual_seed(0)
    cases = [(6, 4, "thread"), (6, 31, "thread"), (6, 32, "warp"), (6, 128, "warp"),
             (6, 129, "block"), (6, 500, "block"), (2047, 300, "block"),
             (2048, 300, "warp"), (2048, 1024, "warp"), (2048, 1025, "block"),
             (3, 3, "thread"), (6, 64, "warp")]
    counts = []
    with torch.no_grad():
        for n, width, _ in cases:
            stats = disc.stats()
            x = torch.randn(n, width, generator=g)
            for got, want in zip(compiled(x), rows(x)):
                torch.testing.assert_close(got, want, rtol=2e-5, atol=2e-5)
            after = disc.stats()
            counts.append(tuple(after[f"rows_per_{v}"] - stats[f"rows_per_{v}"]
                                for v in ("thread", "warp", "block")))
    assert compilations() == before + 1
    kernels = counts[0][0]
    assert kernels > 0
    expected = [tuple(kernels if v == variant else 0 for v in ("thread", "warp", "block"))
                for _, _, variant in cases]
    assert counts == expected


PROGRAM = """
func.func @main(%x: tensor<?x?xf32>, %b: tensor<?x?xi1>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xi1>) {
  %s = disc.reduce %x, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  %m = disc.reduce %x, dims = [1], kind = max : (tensor<?x?xf32>) -> tensor<?xf32>
  %a = disc.reduce %b, dims = [1], kind = or : (tensor<?x?xi1>) -> tensor<?xi1>
  return %s, %m, %a : tensor<?xf32>, tensor<?xf32>, tensor<?xi1>
}"""


@pytest.mark.parametrize("variant", ["auto", "thread", "warp", "block"])
def test_edge_shapes_of_every_variant(variant, monkeypatch):
    """No rows, empty rows, one row, one element, rows longer than the
    block's 256 threads, lengths around the 32-element switch, and row
    counts around the warp variant's 8 rows per block."""
    monkeypatch.setenv("DISC_CUDA_ROW_VARIANT", variant)
    monkeypatch.setenv("DISC_CACHE", "0")
    before = compilations()
    exe = disc.compile_mlir(PROGRAM, target="cuda-emulated")
    assert compilations() == before + 1
    g = torch.Generator().manual_seed(1)
    for shape in [(0, 5), (3, 0), (1, 1), (6, 1), (1, 31), (2, 32), (4, 257), (3, 1025), (7, 4),
                  (9, 40), (16, 33), (17, 129)]:
        x = torch.randn(shape, generator=g)
        b = torch.rand(shape, generator=g) > 0.9
        s, m, a = exe(x, b)
        torch.testing.assert_close(s, x.sum(1), rtol=1e-5, atol=1e-5)
        if shape[1]:
            torch.testing.assert_close(m, x.amax(1))
        assert torch.equal(a, b.any(1))


def test_block_and_warp_variants_compile_for_cuda(tmp_path):
    """ptxas accepts the block-per-row kernels (warp shuffles, shared
    memory, barriers) and the warp-per-row ones (blocks of 32 x 8 threads,
    xor shuffles) for sm_80 and sm_90; their gpu.all_reduce is lowered."""
    if not disc._compiler().cuda_toolkit_path():
        pytest.skip("no CUDA toolkit (ptxas) on this machine")
    exe = disc.compile_mlir(PROGRAM, target="cuda", dump_dir=str(tmp_path))
    assert exe.target == "cuda"
    (dump,) = list(tmp_path.iterdir())
    launched = (dump / "999-llvm.mlir").read_text()
    assert "disc_ral_note_variant" in launched
    nvvm = "".join(p.read_text() for p in sorted(dump.glob("*convert-gpu-to-nvvm.mlir")))
    assert "nvvm.shfl.sync" in nvvm and "nvvm.barrier" in nvvm
    (outlined,) = dump.glob("*gpu-kernel-outlining.mlir")
    assert re.search(r"threads in \(%c32\w*, %c8\w*, %c1\w*\)", outlined.read_text())
    (merged,) = dump.glob("*disc-merge-gpu-modules.mlir")
    assert len(re.findall(r"gpu\.func @\w+\([^)]*\) kernel\b", merged.read_text())) >= 3
    assert len(list(dump.glob("*.sm_90.fatbin"))) == 1  # one module for all
