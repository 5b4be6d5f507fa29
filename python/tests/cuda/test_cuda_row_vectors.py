"""Vector phases of row kernels on the cuda target without a GPU
(docs/cuda.md, "Vector loads in row kernels"): in the warp- and
block-per-row variants, each loop over a row whose accesses allow it gets a
vector path (four consecutive elements per thread and step, vector loads
and stores), taken per call when every row length is a multiple of 4 and
every buffer is aligned for the vector, else the scalar path. Run through
target cuda-emulated (the thread loops and their vector accesses executed
on the CPU) against eager PyTorch; disc.stats() counts the choice
(vector_rows / scalar_rows); DISC_CUDA_ROW_VECTORS=0 turns it off."""
import re

import pytest
import torch

import disc
from conftest import compiled_stat_counts
from cuda.rows import rand, row_calls, row_settings

KEYS = ("vector_rows", "scalar_rows", "rows_per_thread")


def _run(fn, calls, monkeypatch, variant="block", vectors=None, tol=2e-5):
    """Runs `fn` compiled once on each argument tuple of `calls`, checking
    it against eager; returns per call the counts of KEYS."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    # Row caches off: the vector path of the plain kernels (the cached
    # ones have it too: test_cuda_row_cache.py).
    row_settings(monkeypatch, ROW_VARIANT=variant, ROW_VECTORS=vectors,
                 ROW_CACHE_BYTES="0")
    return compiled_stat_counts(fn, calls, KEYS, lambda _: tol)


def _stitched(x, w, b):
    """Softmax (max, exp stage, sum, in-place divide), layer norm (its
    weight and bias rank-1 buffers), a sum and a max: every loop over the
    row has a vector path."""
    return (torch.softmax(x, -1),
            torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b),
            x.sum(-1), x.amax(-1))


@pytest.mark.parametrize("variant", ["block", "warp"])
def test_rows_of_a_multiple_of_4_run_the_vector_path(variant, monkeypatch):
    """Row lengths that are multiples of 4 take the vector path, others the
    scalar one, in one compilation: rows shorter than a thread's first
    vector (4), rows that leave threads without work, rows longer than
    the block's 256 threads x 4 elements (several steps per thread)."""
    widths = [4, 8, 36, 300, 1100, 2052, 7, 33, 301, 2]
    counts = _run(_stitched, row_calls(widths), monkeypatch, variant=variant)
    kernels = counts[0][0]
    assert kernels >= 2, counts  # softmax and layer norm at least
    for width, (vector, scalar, per_thread) in zip(widths, counts):
        assert per_thread == 0, (width, counts)
        if width % 4 == 0:
            assert (vector, scalar) == (kernels, 0), (width, counts)
        else:
            assert (vector, scalar) == (0, kernels), (width, counts)


def test_a_row_not_aligned_for_the_vector_runs_the_scalar_path(monkeypatch):
    """An input whose data starts 4 bytes past an aligned address (a
    storage offset of 5 elements): its rows' vectors would be misaligned,
    so the host picks the scalar path for every kernel that reads it."""
    def rows(x):
        return torch.softmax(x, -1), x.sum(-1)

    # Storage offsets of 4, 5 and 8 elements (0 and 1 would each be a
    # specialisation of their own).
    base = rand(1, 6 * 64 + 8)[0]
    assert base.data_ptr() % 16 == 0
    aligned = base[4:4 + 6 * 64].view(6, 64)
    offset = base[5:5 + 6 * 64].view(6, 64)
    assert offset.data_ptr() % 16 != 0
    aligned2 = base[8:8 + 6 * 64].view(6, 64)
    counts = _run(rows, [(aligned,), (offset,), (aligned2,)], monkeypatch)
    kernels = counts[0][0]
    assert kernels >= 1 and counts[0] == (kernels, 0, 0), counts
    assert counts[1] == (0, kernels, 0), counts
    assert counts[2] == counts[0], counts


def test_switched_off_and_one_row_per_thread_have_no_vector_path(monkeypatch):
    """DISC_CUDA_ROW_VECTORS=0: no vector path, nothing counted; the rows
    still right. One row per thread never has one."""
    calls = row_calls([8, 300])
    for counts in (_run(_stitched, calls, monkeypatch, vectors="0"),
                   _run(_stitched, calls, monkeypatch, variant="thread")):
        assert all(c[:2] == (0, 0) for c in counts), counts


@pytest.mark.parametrize("dtype,tol", [(torch.bfloat16, 2e-2), (torch.float16, 2e-3)])
def test_16_bit_rows(dtype, tol, monkeypatch):
    """bf16 and f16 rows: four elements are an 8-byte vector."""
    def rows(x):
        return torch.softmax(x, -1), x.sum(-1, dtype=torch.float32), x.amax(-1)

    calls = [(rand(4, w, seed=w, dtype=dtype),) for w in (8, 300, 301)]
    counts = _run(rows, calls, monkeypatch, tol=tol)
    assert counts[0][0] >= 1 and counts[0][1] == 0, counts
    assert counts[1][0] >= 1 and counts[1][1] == 0, counts
    assert counts[2][0] == 0 and counts[2][1] >= 1, counts


def test_integer_and_boolean_rows(monkeypatch):
    """i32 sums and maxima, and any/all over a comparison (boolean loops of
    float loads): vectorised with the rest, exact."""
    def rows(x, ids):
        return ids.sum(-1, dtype=torch.int32), ids.amax(-1), (x > 1).any(-1), (x > -3).all(-1)

    calls = []
    for i, width in enumerate((12, 300, 30)):
        g = torch.Generator().manual_seed(i)
        calls.append((rand(5, width, seed=i),
                      torch.randint(-1000, 1000, (5, width), generator=g, dtype=torch.int32)))
    counts = _run(rows, calls, monkeypatch, tol=0)
    assert counts[0][0] >= 1 and counts[0][1] == 0, counts
    assert counts[2][0] == 0 and counts[2][1] >= 1, counts


@pytest.mark.parametrize("value", ["2", "yes", "-1"])
def test_bad_setting_is_a_clear_error(value, monkeypatch):
    monkeypatch.setenv("DISC_CUDA_ROW_VECTORS", value)
    monkeypatch.setenv("DISC_CACHE", "0")
    with pytest.raises(Exception, match="DISC_CUDA_ROW_VECTORS must be an integer from 0 to 1"):
        disc.compile_mlir(PROGRAM, target="cuda-emulated")


PROGRAM = """
func.func @main(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %s = disc.reduce %x, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  return %s : tensor<?xf32>
}"""


def test_vector_rows_compile_for_cuda(tmp_path, monkeypatch):
    """ptxas accepts the vector path (the compile fails otherwise): the row
    kernel loads 4 floats at once, 16-byte aligned, beside its scalar
    loads (the scalar path)."""
    if not disc._compiler().cuda_toolkit_path():
        pytest.skip("no CUDA toolkit (ptxas) on this machine")
    monkeypatch.setenv("DISC_CUDA_ROW_VARIANT", "block")
    monkeypatch.setenv("DISC_CACHE", "0")
    exe = disc.compile_mlir(PROGRAM, target="cuda", dump_dir=str(tmp_path))
    assert exe.target == "cuda"
    (dump,) = list(tmp_path.iterdir())
    (nvvm,) = dump.glob("*convert-gpu-to-nvvm.mlir")
    loads = re.findall(r"llvm\.load .*", nvvm.read_text())
    assert any("{alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>" in l
               for l in loads), loads
    assert any(l.endswith("!llvm.ptr -> f32") for l in loads), loads
    assert len(list(dump.glob("*.sm_90.fatbin"))) == 1
