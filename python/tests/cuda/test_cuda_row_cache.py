"""Row caches of row kernels on the cuda target without a GPU (docs/cuda.md,
"Row caches in shared memory"): in the warp- and block-per-row variants, a
row the kernel's phases touch more than once (softmax's input and output,
layer norm's input) is read from its buffer once, kept in shared memory,
and written once, taken per call when one block's caches fit in
DISC_CUDA_ROW_CACHE_BYTES (default 40960), else the uncached kernel. Run
through target cuda-emulated (the caches are heap buffers per row there)
against eager PyTorch; disc.stats() counts the choice (cached_rows /
uncached_rows)."""
import re

import pytest
import torch

import disc
from conftest import compiled_stat_counts
from cuda.rows import rand, row_calls, row_settings

KEYS = ("cached_rows", "uncached_rows", "vector_rows", "rows_per_thread")


def _run(fn, calls, monkeypatch, variant="block", cache_bytes=None,
         vectors="1", tol=2e-5):
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    row_settings(monkeypatch, ROW_VARIANT=variant, ROW_VECTORS=vectors,
                 ROW_CACHE_BYTES=cache_bytes)
    return compiled_stat_counts(fn, calls, KEYS, lambda _: tol)


def _stitched(x, w, b):
    """Softmax (its input and output rows cached), log-softmax, layer norm
    (its input row cached), and a sum (one phase: no cache)."""
    return (torch.softmax(x, -1), torch.log_softmax(x * 3, -1),
            torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b),
            x.sum(-1))


@pytest.mark.parametrize("vectors", ["1", "0"])
@pytest.mark.parametrize("variant", ["block", "warp"])
def test_rows_are_read_once_when_they_fit(variant, vectors, monkeypatch):
    """Every kernel with a cache takes it at these lengths (at most 2 x 1.2
    KB a row, 8 rows a warp block), with and without the vector path, at
    row lengths that are and are not multiples of 4."""
    widths = [8, 36, 300, 7, 33, 2]
    counts = _run(_stitched, row_calls(widths), monkeypatch, variant=variant,
                  vectors=vectors)
    kernels = counts[0][0]
    assert kernels >= 3, counts  # softmax, log-softmax, layer norm
    for width, (cached, uncached, vector, per_thread) in zip(widths, counts):
        assert (cached, uncached, per_thread) == (kernels, 0, 0), (width, counts)
        if vectors == "0" or width % 4:
            assert vector == 0, (width, counts)


def test_rows_too_long_for_the_cache_run_uncached(monkeypatch):
    """With DISC_CUDA_ROW_CACHE_BYTES=16, no row of 8 elements or more fits
    (a cache takes 4 bytes an element): the uncached kernels run, right,
    and without a vector path (they are for rows of thousands of elements;
    kernels without a cache keep theirs: the sum)."""
    counts = _run(_stitched, row_calls([8, 300, 33]), monkeypatch, cache_bytes="16")
    kernels = counts[0][1]
    assert kernels >= 3 and all(c[:2] == (0, kernels) for c in counts), counts
    plain = _run(_stitched, row_calls([8, 300, 33]), monkeypatch, cache_bytes="0")
    assert counts[0][2] == plain[0][2] - kernels, (counts, plain)


@pytest.mark.parametrize("variant,fits", [("block", 256), ("warp", 32)])
def test_the_host_picks_per_call_at_the_limit(variant, fits, monkeypatch):
    """Layer norm (one cache of 4 bytes an element, rounded up to 16) with
    DISC_CUDA_ROW_CACHE_BYTES=1024: a block row of 256 elements fits, 257 do
    not; a warp block holds 8 rows, so 32 fit and 33 do not."""
    def norm(x, w, b):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)

    widths = [fits, fits + 1, fits - 4, 2 * fits]
    counts = _run(norm, row_calls(widths), monkeypatch, variant=variant,
                  cache_bytes="1024")
    assert [c[:2] for c in counts] == [(1, 0), (0, 1), (1, 0), (0, 1)], counts


def test_off_and_one_row_per_thread_have_no_cache(monkeypatch):
    calls = row_calls([8, 300])
    for counts in (_run(_stitched, calls, monkeypatch, cache_bytes="0"),
                   _run(_stitched, calls, monkeypatch, variant="thread")):
        assert all(c[:2] == (0, 0) for c in counts), counts


@pytest.mark.parametrize("dtype,tol", [(torch.bfloat16, 2e-2), (torch.float16, 2e-3)])
def test_16_bit_rows(dtype, tol, monkeypatch):
    def rows(x):
        return torch.softmax(x, -1), torch.log_softmax(x, -1)

    calls = [(rand(4, w, seed=w, dtype=dtype),) for w in (8, 300, 301)]
    counts = _run(rows, calls, monkeypatch, tol=tol)
    # bf16/f16 stitch fewer phases together (the f32 intermediates are
    # kernels of their own): at least the max-and-subtract kernel caches.
    assert all(c[0] >= 1 and c[1] == 0 for c in counts), counts


@pytest.mark.parametrize("value", ["45057", "lots", "-1"])
def test_bad_setting_is_a_clear_error(value, monkeypatch):
    monkeypatch.setenv("DISC_CUDA_ROW_CACHE_BYTES", value)
    monkeypatch.setenv("DISC_CACHE", "0")
    with pytest.raises(Exception, match="DISC_CUDA_ROW_CACHE_BYTES must be an "
                                        "integer from 0 to 45056"):
        disc.compile_mlir(PROGRAM, target="cuda-emulated")


# A row sum then a stage over the same row (x / sum(x)): the row is cached.
PROGRAM = """
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = disc.reduce %x, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %shape = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %sb = disc.dynamic_broadcast_in_dim %s, %shape, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  %r = disc.divide %x, %sb : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}"""


def test_row_caches_compile_for_cuda(tmp_path, monkeypatch):
    """ptxas accepts the cached kernels (the compile fails otherwise): the
    launch asks for dynamic shared memory, which the kernel reads through
    the `__dynamic_shmem__` global of address space 3."""
    if not disc._compiler().cuda_toolkit_path():
        pytest.skip("no CUDA toolkit (ptxas) on this machine")
    monkeypatch.setenv("DISC_CUDA_ROW_VARIANT", "block")
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()
    # Through the front end: the stitched row kernel of softmax.
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_DUMP_DIR", str(tmp_path / "import"))
    compiled = torch.compile(lambda x: torch.softmax(x, -1), backend="disc",
                             dynamic=True)
    compiled(rand(3, 8))
    partition = sorted((tmp_path / "import").glob("*/partition-0/000-input.mlir"))[0]
    monkeypatch.delenv("DISC_DUMP_DIR")
    exe = disc.compile_mlir(partition.read_text(), target="cuda",
                            dump_dir=str(tmp_path / "cuda"))
    assert exe.target == "cuda"
    (dump,) = list((tmp_path / "cuda").iterdir())
    launched = "".join(p.read_text() for p in dump.glob("*disc-row-blocks-to-gpu.mlir"))
    assert re.search(r"dynamic_shared_memory_size %", launched)
    (nvvm,) = dump.glob("*convert-gpu-to-nvvm.mlir")
    assert re.search(r"llvm\.mlir\.global \w+ @__dynamic_shmem__\w*\(\) "
                     r"{addr_space = 3 : i32", nvvm.read_text())


def test_the_log_says_what_each_row_kernel_got(monkeypatch, capfd):
    """DISC_LOG=fusion: per row kernel, its loops over the row, how many
    have a vector path and how many rows it keeps in shared memory
    (softmax: max, exp, sum, divide, all vectorised; its input and output
    rows cached, none with the caches off)."""
    monkeypatch.setenv("DISC_LOG", "fusion")
    for cache_bytes, cached in (("40960", 2), ("0", 0)):
        row_settings(monkeypatch, ROW_VARIANT="auto", ROW_VECTORS=None,
                     ROW_CACHE_BYTES=cache_bytes)
        monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
        capfd.readouterr()
        compiled_stat_counts(lambda x: torch.softmax(x, -1),
                             [(rand(3, 8),)], (), lambda _: 1e-5)
        err = capfd.readouterr().err
        assert re.search(r"\[disc\] cuda: row kernel at .*: loops over the "
                         r"row: 4, with a vector path: 4, rows kept in shared "
                         rf"memory: {cached}\n", err), err[-2000:]


def _row_temporary(x, y):
    """A row that both the row's reduction and a later stage read (v, read
    by softmax's max through tril and by the addcmul): a temporary of the
    row's length inside the stitch kernel. The cuda target rejected it
    ("heap allocation per iteration") and the whole graph ran in eager;
    disc-hoist-loop-temporaries gives each row a slice of one buffer."""
    v = torch.atan2(y, x.abs() + 0.1)
    s = torch.softmax(torch.tril(v), -1)
    return torch.addcmul(s, s, v, value=0.5).flatten(0, 1)


@pytest.mark.parametrize("variant,cache_bytes", [
    ("block", None), ("warp", None), ("thread", None), ("block", "16")])
def test_row_temporaries_take_a_slice_of_one_buffer(variant, cache_bytes,
                                                    monkeypatch):
    """Every variant, and rows too long for the caches (16 bytes), at row
    lengths that are and are not multiples of 4: right, and nothing left to
    eager."""
    calls = [(rand(2, 3, w, seed=w), rand(2, 3, w, seed=w + 50))
             for w in (5, 36, 300, 33)]
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    row_settings(monkeypatch, ROW_VARIANT=variant, ROW_VECTORS=None,
                 ROW_CACHE_BYTES=cache_bytes)
    counts = compiled_stat_counts(
        _row_temporary, calls,
        ("fallback_nodes", "rows_per_thread", "cached_rows", "uncached_rows"),
        lambda _: 2e-5)
    assert all(c[0] == 0 for c in counts), counts
    if variant == "thread":
        assert all(c[1] >= 1 and c[2:] == (0, 0) for c in counts), counts
    elif cache_bytes:
        assert all(c[1:3] == (0, 0) and c[3] >= 1 for c in counts), counts
    else:
        assert all(c[1] == 0 and c[2] >= 1 for c in counts), counts


@pytest.mark.skipif(not disc._compiler().cuda_toolkit_path(),
                    reason="no CUDA toolkit (ptxas) on this machine")
def test_row_temporaries_compile_for_cuda(tmp_path, monkeypatch):
    """ptxas accepts the kernel that views its row's slice of the buffer."""
    monkeypatch.setenv("DISC_CACHE", "0")
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_DUMP_DIR", str(tmp_path / "import"))
    torch._dynamo.reset()
    compiled = torch.compile(_row_temporary, backend="disc", dynamic=True)
    compiled(rand(2, 3, 8), rand(2, 3, 8, seed=1))
    monkeypatch.delenv("DISC_DUMP_DIR")
    (partition,) = sorted((tmp_path / "import").glob("*/partition-0/000-input.mlir"))
    exe = disc.compile_mlir(partition.read_text(), target="cuda",
                            dump_dir=str(tmp_path / "cuda"))
    assert exe.target == "cuda"
    (dump,) = list((tmp_path / "cuda").iterdir())
    (hoisted,) = dump.glob("*disc-hoist-loop-temporaries.mlir")
    assert "disc.loop_temporaries" in hoisted.read_text()


def test_row_temporaries_and_rows_seen_through_two_views_are_cached(
        monkeypatch, capfd):
    """The row kernel of _row_temporary keeps four rows in shared memory:
    its two inputs, the row temporary (a slice of loop temporaries) and the
    output, which the phases write through one collapsed view and read
    through another (two rows before 2026-12-01: only the inputs)."""
    monkeypatch.setenv("DISC_LOG", "fusion")
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    row_settings(monkeypatch, ROW_VARIANT="block", ROW_VECTORS=None,
                 ROW_CACHE_BYTES=None)
    capfd.readouterr()
    calls = [(rand(2, 3, w, seed=w), rand(2, 3, w, seed=w + 50))
             for w in (8, 37, 300)]
    counts = compiled_stat_counts(_row_temporary, calls, ("cached_rows",),
                                  lambda _: 2e-5)
    assert all(c == (1,) for c in counts), counts
    err = capfd.readouterr().err
    assert re.search(r"\[disc\] cuda: row kernel at .*rows kept in shared "
                     r"memory: 4\n", err), err[-2000:]
