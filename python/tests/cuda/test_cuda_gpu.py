"""The cuda target on a GPU (`pytest -m cuda`; skipped without one):
programs and torch.compile graphs against PyTorch on the device at several
shapes with one compilation each, the caller's stream, device buffers
returned to the pool, and errors.

scripts/gpu-check.sh runs these on the GPU machine."""
from __future__ import annotations

import copy
import os

import pytest
import torch

import disc
from conftest import compilations, compiled_stat_counts

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU"),
]

SHAPES = [(1, 1), (3, 5), (64, 130), (257, 1000), (1024, 4096), (0, 7)]

PROGRAMS = {
    # row softmax: a stitch kernel (max, exp-sum, divide per row)
    "softmax": ("""
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = disc.reduce %x, dims = [1], kind = max : (tensor<?x?xf32>) -> tensor<?xf32>
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %s = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %mb = disc.dynamic_broadcast_in_dim %m, %s, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  %y = disc.subtract %x, %mb : tensor<?x?xf32>
  %e = disc.exponential %y : tensor<?x?xf32>
  %t = disc.reduce %e, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  %tb = disc.dynamic_broadcast_in_dim %t, %s, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  %r = disc.divide %e, %tb : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}""", lambda x: torch.softmax(x, -1), 1e-5),
    # elementwise chain with a transcendental (erf through libdevice)
    "gelu": ("""
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %half = disc.constant dense<0.5> : tensor<f32>
  %one = disc.constant dense<1.0> : tensor<f32>
  %k = disc.constant dense<0.707106769> : tensor<f32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %s = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %hb = disc.dynamic_broadcast_in_dim %half, %s, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x?xf32>
  %ob = disc.dynamic_broadcast_in_dim %one, %s, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x?xf32>
  %kb = disc.dynamic_broadcast_in_dim %k, %s, dims = [] : (tensor<f32>, tensor<2xindex>) -> tensor<?x?xf32>
  %a = disc.multiply %x, %kb : tensor<?x?xf32>
  %e = disc.erf %a : tensor<?x?xf32>
  %p = disc.add %e, %ob : tensor<?x?xf32>
  %h = disc.multiply %x, %hb : tensor<?x?xf32>
  %r = disc.multiply %h, %p : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}""", lambda x: torch.nn.functional.gelu(x), 1e-5),
    # whole-tensor sum (strided parts, atomics into slots, the slots summed)
    "sum": ("""
func.func @main(%x: tensor<?x?xf32>) -> tensor<f32> {
  %t = disc.reduce %x, dims = [0, 1], kind = sum : (tensor<?x?xf32>) -> tensor<f32>
  return %t : tensor<f32>
}""", lambda x: x.sum(), 1e-3),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_on_gpu_matches_pytorch(name):
    text, reference, tol = PROGRAMS[name]
    exe = disc.compile_mlir(text, target="cuda")
    before = compilations()
    for shape in SHAPES:
        x = torch.randn(shape, device="cuda")
        if name == "softmax" and x.numel() == 0:
            continue
        (got,) = exe(x)
        assert got.device == x.device
        torch.testing.assert_close(got, reference(x), rtol=tol, atol=tol)
    assert compilations() == before


def test_whole_sums_are_the_same_on_every_call_on_the_gpu(monkeypatch):
    """Whole-range sums in parts (a block per part, then one kernel over
    the slots and the rest; no atomics): the same bits on every call, at
    sizes with no part, one part and a rest, many parts, and parts longer
    than 4096 (more than 4096 * 4096 elements); against eager in f64. With
    DISC_CUDA_REDUCTION_SLOTS=0 (atomics) the values are right too."""
    monkeypatch.setenv("DISC_CACHE", "0")
    text, _, _ = PROGRAMS["sum"]
    g = torch.Generator(device="cuda").manual_seed(21)
    for slots in ("4096", "0"):
        monkeypatch.setenv("DISC_CUDA_REDUCTION_SLOTS", slots)
        exe = disc.compile_mlir(text, target="cuda")
        for rows, cols in ((3, 1000), (3, 1500), (512, 4001), (4100, 4097)):
            x = torch.randn(rows, cols, device="cuda", generator=g)
            want = x.double().sum().float()
            results = [exe(x)[0] for _ in range(4)]
            for got in results:
                torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-3)
            if slots != "0":
                assert all(torch.equal(r, results[0]) for r in results), (rows, cols)


@pytest.mark.parametrize("variant", ["thread", "warp", "block", "auto"])
def test_row_kernel_variants_on_gpu(variant, monkeypatch):
    """Row reductions and the softmax stitch kernel in each variant
    (docs/cuda.md, "Row kernels"): block-wide gpu.all_reduce and barriers,
    warp shuffles and warp barriers with 8 rows per block (row counts that
    leave the last block part-full), and the host's per-call choice counted
    in disc.stats()."""
    from cuda.test_cuda_row_kernels import PROGRAM as ROWS

    monkeypatch.setenv("DISC_CUDA_ROW_VARIANT", variant)
    monkeypatch.setenv("DISC_CACHE", "0")
    # The variants' own mechanics; their vector path and row caches have
    # tests (and canaries in gpu-check.sh) of their own.
    monkeypatch.setenv("DISC_CUDA_ROW_VECTORS", "0")
    monkeypatch.setenv("DISC_CUDA_ROW_CACHE_BYTES", "0")
    softmax = disc.compile_mlir(PROGRAMS["softmax"][0], target="cuda")
    rows = disc.compile_mlir(ROWS, target="cuda")
    before = disc.stats()
    for shape in [(3, 5), (1, 1), (64, 130), (257, 1000), (16 * 128, 3072), (5, 31), (5, 32),
                  (9, 64), (4099, 300), (2048, 1025)]:
        x = torch.randn(shape, device="cuda")
        b = torch.rand(shape, device="cuda") > 0.99
        (got,) = softmax(x)
        torch.testing.assert_close(got, torch.softmax(x, -1), rtol=1e-5, atol=1e-5)
        s, m, a = rows(x, b)
        torch.testing.assert_close(s, x.sum(1), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(m, x.amax(1))
        assert torch.equal(a, b.any(1))
    after = disc.stats()
    counts = {v: after[f"rows_per_{v}"] - before[f"rows_per_{v}"]
              for v in ("thread", "warp", "block")}
    if variant == "auto":
        assert all(counts.values()), counts
    else:
        assert counts[variant] > 0 and sum(counts.values()) == counts[variant], counts


def _stitched_rows(x, w, b):
    return (torch.softmax(x, -1), torch.log_softmax(x * 3, -1),
            torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b),
            x.sum(-1), x.amax(-1))


@pytest.mark.parametrize("variant", ["warp", "block"])
def test_row_vectors_on_gpu(variant, monkeypatch):
    """Row kernels' vector path (docs/cuda.md, "Vector loads in row
    kernels"): softmax, log-softmax, layer norm, a sum and a max over rows
    whose length is a multiple of 4 (16-byte vector loads and stores) and
    over rows whose length is not, and over an input 4 bytes past an
    aligned address (the scalar path), against PyTorch with one
    compilation; the choice counted in disc.stats()."""
    from cuda.rows import offset_row_calls, row_settings

    row_settings(monkeypatch, ROW_VARIANT=variant, ROW_VECTORS=None,
                 ROW_CACHE_BYTES="0")  # the caches have a test of their own
    cases = [(64, 128, 4), (16 * 128, 3072, 4), (5, 36, 4), (300, 1024, 4),
             (7, 130, 4), (9, 301, 4), (64, 128, 5), (33, 8, 4)]
    counts = compiled_stat_counts(_stitched_rows, offset_row_calls(cases, "cuda"),
                                  ("vector_rows", "scalar_rows"), lambda _: 1e-4)
    for (n, length, offset), (vector, scalar) in zip(cases, counts):
        if length % 4 == 0 and offset == 4:
            assert vector > 0 and scalar == 0, (cases, counts)
        else:
            assert vector == 0 and scalar > 0, (cases, counts)


@pytest.mark.parametrize("variant", ["warp", "block"])
def test_row_cache_on_gpu(variant, monkeypatch):
    """Row caches in shared memory (docs/cuda.md, "Row caches in shared
    memory"): softmax (input and output rows cached), log-softmax and layer
    norm (input rows) read each row once where the rows fit, with and
    without the vector path (odd lengths, a misaligned input), against
    PyTorch; rows too long for 40 KiB of shared memory a block (12000
    elements: 48 KiB a cache) run the uncached kernels. One compilation;
    the choice counted."""
    from cuda.rows import offset_row_calls, row_settings

    row_settings(monkeypatch, ROW_VARIANT=variant, ROW_VECTORS=None,
                 ROW_CACHE_BYTES=None)
    cases = [(64, 128, 4), (300, 128, 5), (9, 131, 4), (2048, 128, 4),
             (7, 12000, 4), (33, 100, 4)]
    counts = compiled_stat_counts(_stitched_rows, offset_row_calls(cases, "cuda"),
                                  ("cached_rows", "uncached_rows"), lambda _: 1e-4)
    kernels = counts[0][0]
    assert kernels >= 3, counts
    for (n, length, offset), (cached, uncached) in zip(cases, counts):
        if length == 12000:
            assert (cached, uncached) == (0, kernels), (cases, counts)
        else:
            assert (cached, uncached) == (kernels, 0), (cases, counts)


BROADCAST_TRANSPOSE = """
func.func @main(%x: tensor<?x?x?xf32>, %b: tensor<?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %d2 = tensor.dim %x, %c2 : tensor<?x?x?xf32>
  %s = tensor.from_elements %d0, %d1, %d2 : tensor<3xindex>
  %bb = disc.dynamic_broadcast_in_dim %b, %s, dims = [1] : (tensor<?xf32>, tensor<3xindex>) -> tensor<?x?x?xf32>
  %y = disc.add %x, %bb : tensor<?x?x?xf32>
  %t = disc.transpose %y, dims = [2, 0, 1] : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %y, %t : tensor<?x?x?xf32>, tensor<?x?x?xf32>
}"""


@pytest.mark.parametrize("limit", ["2147483647", "1000"])
def test_index32_grids_on_gpu(limit, monkeypatch):
    """Elementwise grids' 32-bit index variant (docs/cuda.md, "32-bit index
    arithmetic"): a broadcast and a transpose over three dims, vector and
    scalar; with the limit at 1000 the larger shapes take the 64-bit grid,
    so both kernels run, and the choice is counted."""
    monkeypatch.setenv("DISC_CUDA_INDEX32_LIMIT", limit)
    monkeypatch.setenv("DISC_CACHE", "0")
    exe = disc.compile_mlir(BROADCAST_TRANSPOSE, target="cuda")
    before = disc.stats()
    for shape in [(2, 3, 5), (4, 33, 16), (5, 149, 1), (2, 373, 1), (64, 128, 768),
                  (3, 1000, 257)]:
        x = torch.randn(shape, device="cuda")
        b = torch.randn(shape[1], device="cuda")
        y, t = exe(x, b)
        want = x + b[None, :, None]
        torch.testing.assert_close(y, want)
        torch.testing.assert_close(t, want.permute(2, 0, 1))
    after = disc.stats()
    i32 = after["index32_grids"] - before["index32_grids"]
    i64 = after["index64_grids"] - before["index64_grids"]
    assert i32 > 0, (i32, i64)
    assert (i64 > 0) == (limit == "1000"), (i32, i64)


def test_torch_compile_on_cuda_tensors_compiles_once_for_all_shapes():
    def f(x, w, b):
        y = torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)
        return torch.nn.functional.gelu(y) * torch.sigmoid(x)

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="disc", dynamic=True)
    before = disc.stats()
    for rows, cols in ((4, 32), (33, 32), (512, 32)):
        x = torch.randn(rows, cols, device="cuda")
        w, b = torch.randn(cols, device="cuda"), torch.randn(cols, device="cuda")
        torch.testing.assert_close(compiled(x, w, b), f(x, w, b), rtol=1e-4, atol=1e-4)
    after = disc.stats()
    assert after["compilations"] - before["compilations"] == 1
    assert after["fallback_nodes"] == before["fallback_nodes"]


def test_work_runs_on_the_callers_stream():
    text, reference, tol = PROGRAMS["gelu"]
    exe = disc.compile_mlir(text, target="cuda")
    side = torch.cuda.Stream()
    x = torch.randn(2048, 2048, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        (got,) = exe(x)
    side.synchronize()
    torch.testing.assert_close(got, reference(x), rtol=tol, atol=tol)


def test_cpu_tensor_to_a_cuda_executable_is_an_invocation_error():
    exe = disc.compile_mlir(PROGRAMS["gelu"][0], target="cuda")
    with pytest.raises(disc.InvocationError, match="not on the executable's CUDA device"):
        exe(torch.randn(3, 3))


def test_repeated_calls_reuse_device_memory():
    exe = disc.compile_mlir(PROGRAMS["softmax"][0], target="cuda")
    x = torch.randn(1024, 1024, device="cuda")
    for _ in range(3):
        exe(x)
    torch.cuda.synchronize()
    free_before = torch.cuda.mem_get_info()[0]
    for _ in range(50):
        exe(x)
    torch.cuda.synchronize()
    # The stream-ordered pool reuses blocks: 50 calls do not take 50 x 4 MB.
    assert torch.cuda.mem_get_info()[0] > free_before - 64 * 2**20


def test_device_memory_comes_from_pytorchs_caching_allocator():
    """A call's buffers and results come from PyTorch's caching allocator
    (unless DISC_CUDA_ALLOCATOR=pool): a result counts in
    torch.cuda.memory_allocated() while it lives, every other buffer is
    back when the call returns, and repeated calls reuse the cached blocks."""
    if os.environ.get("DISC_CUDA_ALLOCATOR") == "pool":
        pytest.skip("DISC_CUDA_ALLOCATOR=pool")
    text, reference, tol = PROGRAMS["softmax"]
    exe = disc.compile_mlir(text, target="cuda")
    allocator = disc._cuda_allocator(torch)
    assert isinstance(allocator, disc._runtime.DeviceAllocator)
    x = torch.randn(1024, 1000, device="cuda")
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    allocations, frees = allocator.allocations, allocator.frees
    (y,) = exe(x)
    assert torch.cuda.memory_allocated() >= before + y.numel() * 4
    assert allocator.allocations > allocations
    assert allocator.allocations - allocations == allocator.frees - frees + 1
    torch.testing.assert_close(y, reference(x), rtol=tol, atol=tol)
    del y
    assert torch.cuda.memory_allocated() == before
    results = [exe(x)[0] for _ in range(20)]
    del results
    torch.cuda.synchronize()
    reserved = torch.cuda.memory_reserved()
    for _ in range(50):  # the blocks those results held serve these
        exe(x)
    torch.cuda.synchronize()
    assert torch.cuda.memory_reserved() == reserved
    assert torch.cuda.memory_allocated() == before


def test_constants_on_gpu():
    """Constants live in host memory: kernels read them from copies in
    their modules, and a returned constant is a device buffer."""
    from cuda.test_cuda_target import CONSTANTS

    exe = disc.compile_mlir(CONSTANTS, target="cuda")
    table = torch.tensor([1.0, -2.0, 3.5, 4.0], device="cuda")
    for rows in (1, 5, 3000):
        x = torch.randn(rows, 4, device="cuda")
        y, k, t = exe(x)
        assert y.device == k.device == t.device == x.device
        torch.testing.assert_close(y, x * table)
        assert k.item() == 7.0
        torch.testing.assert_close(t, table)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_elementwise_vector_variant_on_the_gpu(dtype):
    """Elementwise grids run four elements per thread with 128-bit (f32) or
    64-bit (bf16) accesses when the innermost extent is a multiple of 4 and
    the buffers are aligned, one element per thread otherwise (a misaligned
    view, an odd row): right either way, one compilation."""
    def f(x, b):
        return torch.nn.functional.gelu(x + b) * 2

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="disc", dynamic=True)
    before = compilations()

    def misaligned(*shape):
        n = 1
        for d in shape:
            n *= d
        return torch.randn(n + 1, device="cuda").to(dtype)[1:].view(*shape)

    cases = [(torch.randn(16, 128, 3072, device="cuda").to(dtype), True),
             (torch.randn(2, 3, 8, device="cuda").to(dtype), True),
             (torch.randn(2, 5, 7, device="cuda").to(dtype), False),
             (misaligned(2, 3, 8), False)]
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    for x, vector in cases:
        b = torch.randn(x.shape[-1], device="cuda").to(dtype)
        stats = disc.stats()
        got = compiled(x, b)
        torch.testing.assert_close(got, f(x, b), rtol=tol, atol=tol)
        after = disc.stats()
        ran = (after["vector_grids"] - stats["vector_grids"],
               after["scalar_grids"] - stats["scalar_grids"])
        assert (ran[0] > 0 and ran[1] == 0) if vector else (ran[0] == 0 and ran[1] > 0), ran
    assert compilations() == before + 1


@pytest.mark.parametrize("lanes", ["1", "0"])
def test_linear_lanes_on_the_gpu(lanes, monkeypatch):
    """Vector grids whose lanes are linear iterations of the nest (docs/cuda.md,
    "Vector grids"): convtasnet's per-channel PReLU and scale over rows of
    4001, rows of 7, a total not a multiple of 4 and a misaligned input,
    against PyTorch with one compilation; DISC_CUDA_LINEAR_LANES=0 runs the
    scalar grid for all of them."""
    monkeypatch.setenv("DISC_CUDA_LINEAR_LANES", lanes)
    monkeypatch.setenv("DISC_CACHE", "0")

    def f(x, w, g):
        return torch.nn.functional.prelu(x, w) * g[:, None] + 1

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="disc", dynamic=True)
    before = compilations()
    gen = torch.Generator(device="cuda").manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, device="cuda", generator=gen)

    misaligned = rand(1 * 64 * 7 + 1)[1:].view(1, 64, 7)
    for x, linear in [(rand(1, 512, 4001), True), (rand(8, 96, 7), True),
                      (rand(1, 3, 5), False), (misaligned, False),
                      (rand(2, 512, 4001), True)]:
        c = x.shape[1]
        w, g = rand(c), rand(c)
        stats = disc.stats()
        got = compiled(x, w, g)
        torch.testing.assert_close(got, f(x, w, g), rtol=1e-5, atol=1e-5)
        after = disc.stats()
        ran = after["linear_vector_grids"] - stats["linear_vector_grids"]
        assert (ran > 0) == (linear and lanes == "1"), (x.shape, ran)
    assert compilations() == before + 1


@pytest.mark.parametrize("threads", ["65536", "0"])
def test_column_reductions_on_the_gpu(threads, monkeypatch):
    """Column reductions (docs/cuda.md, "Column reductions"): tall columns
    split their rows between threads, wide ones run a thread per column,
    chosen per call; DISC_CUDA_COLUMN_THREADS=0 never splits. Bias-gradient
    shapes, a NaN in one part, integer sums, at several shapes with one
    compilation."""
    monkeypatch.setenv("DISC_CUDA_COLUMN_THREADS", threads)
    monkeypatch.setenv("DISC_CACHE", "0")

    def f(x, ids):
        return x.sum(0), x.amax(0), ids.sum(0), x.mean(1), torch.var_mean(x, 0)

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="disc", dynamic=True)
    before = compilations()
    g = torch.Generator(device="cuda").manual_seed(0)
    for shape, split in [((4096, 3, 256), True), ((8192, 2, 768), True),
                         ((20, 3, 5), False), ((3, 2, 70000), False)]:
        x = torch.randn(shape, device="cuda", generator=g)
        x.view(-1)[7] = float("nan")
        ids = torch.randint(-1000, 1000, shape, device="cuda", generator=g,
                            dtype=torch.int32)
        stats = disc.stats()
        for a, b in zip(compiled(x, ids), f(x, ids)):
            for got, want in zip(a if isinstance(a, tuple) else (a,),
                                 b if isinstance(b, tuple) else (b,)):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4,
                                           equal_nan=True)
        after = disc.stats()
        splits = after["column_splits"] - stats["column_splits"]
        assert splits > 0 if (split and threads != "0") else splits == 0
    assert compilations() == before + 1


def test_channel_reductions_and_whole_maxima_on_the_gpu():
    """Sums over N and H*W keeping C (batch norm's statistics) as a block
    per channel, and whole-tensor float max/min over per-thread slots
    (docs/cuda.md, "Column reductions" and "Pipeline"): NaN propagation,
    several shapes, one compilation; once one GPU thread each."""
    def f(x):
        mean, var = torch.var_mean(x, (0, 2, 3), correction=0)
        return mean, var, x.sum((0, 2)), x.amax(), x.amin(), x.double().amax()

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="disc", dynamic=True)
    before, stats = compilations(), disc.stats()
    g = torch.Generator(device="cuda").manual_seed(1)
    for shape, nan in [((32, 64, 56, 48), None), ((8, 256, 14, 12), 5),
                       ((3, 5, 7, 2), None)]:
        x = torch.randn(shape, device="cuda", generator=g)
        if nan is not None:
            x.view(-1)[nan] = float("nan")
        for got, want in zip(compiled(x), f(x)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4,
                                       equal_nan=True)
    assert compilations() == before + 1
    assert disc.stats()["rows_per_block"] > stats["rows_per_block"]


@pytest.mark.parametrize("reduce", ["amax", "sum", "mean"])
def test_scatter_grids_on_the_gpu(reduce):
    """Scatters run as grids over the updates with atomic
    read-modify-writes (docs/cuda.md, "Scatters"): repeated indices, as in a
    graph network's aggregation, at three shapes with one compilation."""
    def f(x, index, base, ints, int_base):
        out = base.scatter_reduce(0, index[:, None].expand_as(x), x, reduce,
                                  include_self=False)
        added = base.index_add(0, index, x) + torch.zeros_like(base).index_put(
            (index,), x, accumulate=True)
        return out, added, int_base.index_add(0, index, ints)

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="disc", dynamic=True)
    before = compilations()
    g = torch.Generator(device="cuda").manual_seed(0)
    for nodes in (7, 100, 1000):
        edges = 10 * nodes
        args = (torch.randn(edges, 64, device="cuda", generator=g),
                torch.randint(0, nodes, (edges,), device="cuda", generator=g),
                torch.randn(nodes, 64, device="cuda", generator=g),
                torch.randint(-50, 50, (edges, 8), device="cuda", generator=g,
                              dtype=torch.int32),
                torch.randint(-50, 50, (nodes, 8), device="cuda", generator=g,
                              dtype=torch.int32))
        for got, want in zip(compiled(*args), f(*args)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert compilations() == before + 1


def test_results_written_into_arguments_on_the_gpu():
    """`disc.result_into` on device memory: the update lands in the
    argument's own buffer, and the call returns nothing for it."""
    exe = disc.compile_mlir("""
func.func @main(%w: tensor<?xf32> {disc.result_into = 0 : i64}, %g: tensor<?xf32>)
    -> (tensor<?xf32>, tensor<?xf32>) {
  %w2 = disc.subtract %w, %g : tensor<?xf32>
  %gg = disc.multiply %g, %g : tensor<?xf32>
  return %w2, %gg : tensor<?xf32>, tensor<?xf32>
}""", target="cuda")
    for n in (1, 1000, 1 << 20):
        w, g = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        w0, ptr = w.clone(), w.data_ptr()
        new_w, gg = exe(w, g, results_into={0: 0})
        assert new_w is None and w.data_ptr() == ptr
        torch.testing.assert_close(w, w0 - g)
        torch.testing.assert_close(gg, g * g)


@pytest.mark.parametrize("kind", ["sgd", "adamw"])
def test_optimizer_step_on_the_gpu_updates_parameters_in_place(kind):
    """A compiled optimizer step on cuda parameters: the same parameters and
    states as eager's after several steps, every update written by the
    kernels (no copy after the call)."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(),
                                torch.nn.Linear(32, 4)).cuda()
    ref = copy.deepcopy(model)
    make = {"sgd": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, foreach=True),
            "adamw": lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1, foreach=True)}
    opt, opt_ref = make[kind](model.parameters()), make[kind](ref.parameters())

    @torch.compile(backend="disc")
    def step():
        opt.step()

    written = disc.stats()["inputs_written_by_kernels"]
    addresses = [p.data_ptr() for p in model.parameters()]
    for _ in range(4):
        x = torch.randn(8, 16, device="cuda")
        for m, o, st in ((model, opt, step), (ref, opt_ref, opt_ref.step)):
            o.zero_grad()
            m(x).pow(2).mean().backward()
            st()
    assert disc.stats()["inputs_written_by_kernels"] > written
    assert [p.data_ptr() for p in model.parameters()] == addresses
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["generated", "cudnn"])
def test_depthwise_block_on_the_gpu(mode, monkeypatch):
    """MobileNet's depthwise convolution + batch norm + hardswish on cuda
    tensors: a generated kernel (the default) or cuDNN
    (DISC_CUDA_DEPTHWISE=cudnn), against eager at three sizes with one
    compilation (the weights passed as inputs, as GraphNet passes them)."""
    monkeypatch.setenv("DISC_CUDA_DEPTHWISE", mode)
    monkeypatch.setenv("DISC_CACHE", "0")

    def block(x, w, mean, var, gamma, beta):
        y = torch.nn.functional.conv2d(x, w, stride=2, padding=2, groups=48)
        y = torch.nn.functional.batch_norm(y, mean, var, gamma, beta, False, 0.1, 1e-5)
        return torch.nn.functional.hardswish(y)

    torch._dynamo.reset()
    compiled = torch.compile(block, backend="disc", dynamic=True)
    before = disc.stats()
    g = torch.Generator(device="cuda").manual_seed(0)
    params = (torch.randn(48, 1, 5, 5, device="cuda", generator=g),
              torch.randn(48, device="cuda", generator=g),
              torch.rand(48, device="cuda", generator=g) + 0.5,
              torch.randn(48, device="cuda", generator=g),
              torch.randn(48, device="cuda", generator=g))
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False), torch.no_grad():
        for shape in ((2, 48, 56, 60), (4, 48, 28, 33), (8, 48, 112, 112)):
            x = torch.randn(*shape, device="cuda", generator=g)
            torch.testing.assert_close(compiled(x, *params), block(x, *params),
                                       rtol=1e-4, atol=1e-4)
    after = disc.stats()
    assert after["compilations"] - before["compilations"] == 1
    assert after["fallback_nodes"] == before["fallback_nodes"]


def test_cpu_scalars_and_floats_reach_a_cuda_partition():
    """A 0-dim CPU tensor times a cuda tensor (eager takes it as a scalar)
    and an unspecialised Python float: both are rank-0 inputs of the cuda
    partition, moved to the device per call; nothing stays in eager."""
    def f(x, s, t):
        return torch.relu(x * s) + t

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="disc", dynamic=True)
    before = disc.stats()
    with torch._dynamo.config.patch(specialize_float=False):
        for rows, t in ((3, 0.5), (17, 1.5), (130, -2.0)):
            x = torch.randn(rows, 8, device="cuda")
            s = torch.tensor(rows / 7.0)
            torch.testing.assert_close(compiled(x, s, t), f(x, s, t), rtol=1e-5, atol=1e-5)
    after = disc.stats()
    assert after["compilations"] - before["compilations"] == 1
    assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]


def test_group_norm_of_one_sample_on_the_gpu(monkeypatch):
    """poolformer's group norm (batch 1, one group over C * H * W: whole-range
    reductions whose zero fills the host forwards, with the mean and the
    f64 sum's rounding in the combining kernel) and four groups, against
    eager at three sizes on both sides of the 4096-thread switch to shared
    slots, with one compilation each."""
    monkeypatch.setenv("DISC_CACHE", "0")
    g = torch.Generator(device="cuda").manual_seed(12)
    for groups in (1, 4):
        norm = torch.nn.GroupNorm(groups, 64).cuda()
        with torch.no_grad():
            norm.weight.copy_(torch.randn(64, device="cuda", generator=g))
            norm.bias.copy_(torch.randn(64, device="cuda", generator=g))
        torch._dynamo.reset()
        compiled = torch.compile(norm, backend="disc", dynamic=True)
        before = disc.stats()
        with torch.no_grad():
            for size in (7, 56, 80):  # 3136, 200704, 409600 elements
                x = torch.randn(1, 64, size, size, device="cuda", generator=g) * 3 + 1
                torch.testing.assert_close(compiled(x), norm(x), rtol=1e-4, atol=1e-4)
        after = disc.stats()
        assert after["compilations"] - before["compilations"] == 1, groups
        assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]


def test_freed_blocks_serve_later_requests_on_the_gpu(monkeypatch):
    """A residual block of convolutions, batch norms and ReLUs (many
    intermediates of one size), with DISC_CUDA_REUSE_BLOCKS on (the
    default), then off: right at three sizes with one compilation each,
    every block but the result's back in PyTorch's allocator when a call
    returns, and with reuse on, requests served by blocks the call had
    freed and fewer allocator round trips than with it off."""
    monkeypatch.setenv("DISC_CACHE", "0")
    torch.manual_seed(13)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = torch.nn.ModuleList(
                torch.nn.Conv2d(16, 16, 3, padding=1, bias=False) for _ in range(4))
            self.norms = torch.nn.ModuleList(torch.nn.BatchNorm2d(16) for _ in range(4))

        def forward(self, x):
            for i in range(0, 4, 2):
                y = self.norms[i](self.convs[i](x)).relu()
                x = (self.norms[i + 1](self.convs[i + 1](y)) + x).relu()
            return x

    block = Block().cuda().eval()
    counts = {}
    for reuse in ("1", "0"):
        monkeypatch.setenv("DISC_CUDA_REUSE_BLOCKS", reuse)
        torch._dynamo.reset()
        compiled = torch.compile(block, backend="disc", dynamic=True)
        before = disc.stats()
        with torch.no_grad(), torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            for batch, size in ((1, 20), (2, 9), (3, 33)):
                x = torch.randn(batch, 16, size, size, device="cuda")
                torch.cuda.synchronize()
                allocated = torch.cuda.memory_allocated()
                y = compiled(x)
                torch.testing.assert_close(y, block(x), rtol=1e-4, atol=1e-4)
                result = -(-y.untyped_storage().nbytes() // 512) * 512
                assert torch.cuda.memory_allocated() == allocated + result, reuse
                del y
        after = disc.stats()
        assert after["compilations"] - before["compilations"] == 1
        assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]
        counts[reuse] = (after["device_allocations"] - before["device_allocations"],
                         after["device_blocks_reused"] - before["device_blocks_reused"])
    assert counts["0"][1] == 0, counts
    assert counts["1"][1] >= 3, counts  # at least one per call
    assert counts["1"][0] < counts["0"][0], counts


def test_linear_bias_in_cublaslts_epilogue_on_the_gpu(monkeypatch):
    """A linear layer's bias added by cuBLASLt's BIAS epilogue
    (DISC_LIBRARY_EPILOGUES=1, the default), then as a kernel of its own
    (0), in f32 and bf16 (the epilogue adds in f32 and rounds once): right
    against eager at three sizes with one compilation each, with one kernel
    fewer when the epilogue is on. A gpu-check canary: if it fails, the
    rest of the run sets DISC_LIBRARY_EPILOGUES=0."""
    monkeypatch.setenv("DISC_CACHE", "0")
    torch.manual_seed(17)
    for dtype, tol in ((torch.float32, 1e-4), (torch.bfloat16, 2e-2)):
        linear = torch.nn.Linear(24, 40).cuda().to(dtype)
        kernels = {}
        with _no_tf32():
            for epilogues in ("1", "0"):
                monkeypatch.setenv("DISC_LIBRARY_EPILOGUES", epilogues)
                torch._dynamo.reset()
                compiled = torch.compile(linear, backend="disc", dynamic=True)
                before = disc.stats()
                with torch.no_grad():
                    for rows in (3, 7, 300):
                        x = torch.randn(rows, 24, device="cuda").to(dtype)
                        torch.testing.assert_close(compiled(x), linear(x), rtol=tol, atol=tol)
                after = disc.stats()
                assert after["compilations"] - before["compilations"] == 1, (dtype, epilogues)
                assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]
                kernels[epilogues] = after["kernels"] - before["kernels"]
        assert kernels["1"] == kernels["0"] - 1, (dtype, kernels)


def test_products_of_views_that_start_mid_buffer_on_the_gpu(monkeypatch):
    """Products whose operand is a view one or two floats into its buffer
    (4- and 8-byte aligned): cuBLASLt's heuristic is told each pointer's
    alignment, so the algorithm it picks can read them. Against eager at
    three sizes, one compilation."""
    monkeypatch.setenv("DISC_CACHE", "0")
    torch.manual_seed(19)
    w = torch.randn(8, 21, device="cuda")

    def f(x):
        return x[:, 1:22] @ w.T, x[:, 2:23] @ w.T

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="disc", dynamic=True)
    before = disc.stats()
    with _no_tf32(), torch.no_grad():
        for rows in (3, 7, 300):
            x = torch.randn(rows, 23, device="cuda")
            for got, want in zip(compiled(x), f(x)):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    after = disc.stats()
    assert after["compilations"] - before["compilations"] == 1
    assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]


class _no_tf32:
    """torch.backends.cuda.matmul.allow_tf32 off for a block."""

    def __enter__(self):
        self.saved = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False

    def __exit__(self, *exc):
        torch.backends.cuda.matmul.allow_tf32 = self.saved


@pytest.mark.parametrize("api", ["backend", "legacy"])
def test_convolutions_through_each_cudnn_api_on_the_gpu(api, monkeypatch):
    """Convolutions through cuDNN's graph API (DISC_CUDA_CONV_API=backend,
    the default: plans prepared once per problem) or its legacy descriptor
    API: a strided, dilated, grouped 2-d convolution with a ReLU and a 1-d
    one, in f32 (no TF32) and f16, against eager at three sizes with one
    compilation each and nothing in eager. Backward filter and data:
    test_transposed_convolution_and_strided_input_gradient_on_the_gpu."""
    monkeypatch.setenv("DISC_CUDA_CONV_API", api)
    g = torch.Generator(device="cuda").manual_seed(11)

    def convolutions(x, w, x1, w1):
        y = torch.nn.functional.conv2d(x, w, stride=2, padding=2, dilation=2, groups=2)
        return y.relu(), torch.nn.functional.conv1d(x1, w1, padding=1)

    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        for dtype, tol in ((torch.float32, 1e-4), (torch.float16, 2e-2)):
            torch._dynamo.reset()
            compiled = torch.compile(convolutions, backend="disc", dynamic=True)
            before = disc.stats()
            w = torch.randn(12, 4, 3, 3, device="cuda", generator=g).to(dtype)
            w1 = torch.randn(6, 5, 3, device="cuda", generator=g).to(dtype)
            with torch.no_grad():
                for n, size in ((2, 9), (3, 16), (5, 31)):
                    x = torch.randn(n, 8, size, size + 2, device="cuda", generator=g).to(dtype)
                    x1 = torch.randn(n, 5, 4 * size, device="cuda", generator=g).to(dtype)
                    for got, want in zip(compiled(x, w, x1, w1), convolutions(x, w, x1, w1)):
                        torch.testing.assert_close(got, want, rtol=tol, atol=tol)
            after = disc.stats()
            assert after["compilations"] - before["compilations"] == 1, dtype
            assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]


@pytest.mark.parametrize("api", ["backend", "legacy"])
def test_transposed_convolution_and_strided_input_gradient_on_the_gpu(api, monkeypatch):
    """A strided transposed convolution with output padding (cuDNN's
    backward data), and the input and kernel gradients of a strided
    convolution (backward data and filter in a training graph), with 1 and
    2 groups, through each cuDNN API (DISC_CUDA_CONV_API), against eager at
    three sizes with one compilation each and nothing in eager."""
    monkeypatch.setenv("DISC_CUDA_CONV_API", api)
    g = torch.Generator(device="cuda").manual_seed(3)
    for groups in (1, 2):
        up = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                      groups=groups).cuda()
        down = torch.nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=groups).cuda()
        ref = copy.deepcopy(down)
        with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
            torch._dynamo.reset()
            compiled_up = torch.compile(up, backend="disc", dynamic=True)
            before = disc.stats()
            with torch.no_grad():
                for size in (5, 8, 13):
                    x = torch.randn(2, 4, size, size + 3, device="cuda", generator=g)
                    torch.testing.assert_close(compiled_up(x), up(x), rtol=1e-4, atol=1e-4)
            after = disc.stats()
            assert after["compilations"] - before["compilations"] == 1
            assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]

            torch._dynamo.reset()
            compiled_down = torch.compile(down, backend="disc", dynamic=True)
            before = disc.stats()
            for size in (6, 9, 14):
                x = torch.randn(2, 4, size, size + 1, device="cuda", generator=g)
                x_ref = x.clone().requires_grad_()
                x.requires_grad_()
                compiled_down(x).square().sum().backward()
                ref(x_ref).square().sum().backward()
                torch.testing.assert_close(x.grad, x_ref.grad, rtol=1e-4, atol=1e-4)
                torch.testing.assert_close(down.weight.grad, ref.weight.grad, rtol=1e-4,
                                           atol=1e-3)
            after = disc.stats()
            assert after["compilations"] - before["compilations"] == 2  # forward, backward
            assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]


def test_f32_library_calls_use_tf32_exactly_when_pytorch_allows_it():
    """One compiled program run under each combination of PyTorch's two
    settings (torch.backends.cuda.matmul.allow_tf32 and
    torch.backends.cudnn.allow_tf32, read per call): each library call is
    at full-f32 distance from a float64 reference when its setting is off
    and at TF32 distance (about 1e-4 of the result's RMS; 10 bits of
    mantissa in the products) when it is on, independently of the other."""
    text = """
func.func @main(%x: tensor<?x64x?x?xf32>, %w: tensor<64x64x3x3xf32>, %a: tensor<?x1024xf32>, %b: tensor<1024x1024xf32>) -> (tensor<?x64x?x?xf32>, tensor<?x1024xf32>) {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x64x?x?xf32>, tensor<64x64x3x3xf32>) -> tensor<?x64x?x?xf32>
  %1 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x1024xf32>, tensor<1024x1024xf32>) -> tensor<?x1024xf32>
  return %0, %1 : tensor<?x64x?x?xf32>, tensor<?x1024xf32>
}"""
    exe = disc.compile_mlir(text, target="cuda")
    g = torch.Generator(device="cuda").manual_seed(5)
    x = torch.randn(8, 64, 56, 56, device="cuda", generator=g)
    w = torch.randn(64, 64, 3, 3, device="cuda", generator=g)
    a = torch.randn(1024, 1024, device="cuda", generator=g)
    b = torch.randn(1024, 1024, device="cuda", generator=g)
    conv64 = torch.nn.functional.conv2d(x.double(), w.double(), padding=1)
    mm64 = a.double() @ b.double()

    def relative_rms(got, want):
        return ((got.double() - want).pow(2).mean().sqrt() / want.pow(2).mean().sqrt()).item()

    saved = torch.backends.cuda.matmul.allow_tf32
    try:
        for matmul in (False, True):
            for conv in (False, True):
                torch.backends.cuda.matmul.allow_tf32 = matmul
                with torch.backends.cudnn.flags(enabled=True, allow_tf32=conv):
                    y, p = exe(x, w, a, b)
                for name, on, got, want in (("convolution", conv, y, conv64),
                                            ("matmul", matmul, p, mm64)):
                    error = relative_rms(got, want)
                    where = f"{name} with matmul tf32 {matmul}, convolution tf32 {conv}"
                    if on:
                        assert 2e-5 < error < 5e-3, (where, error)
                    else:
                        assert error < 2e-6, (where, error)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["float32", "float16"])
def test_attention_op_on_the_gpu(dtype):
    """disc.attention compiled for cuda (disc-decompose-attention: two
    cuBLASLt products around a stitch softmax) against SDPA in float64 on
    the device, at three shapes with one compilation, with a padding mask
    and causal masking; a row whose keys are all masked is 0, as the CPU
    target gives. TF32 off: the products are full f32 (f16 for f16)."""
    import math

    t = "tensor<?x?x?x16x" + {torch.float32: "f32", torch.float16: "f16"}[dtype] + ">"
    m = "tensor<?x1x?x?x" + {torch.float32: "f32", torch.float16: "f16"}[dtype] + ">"
    exe = disc.compile_mlir(f"""
func.func @main(%q: {t}, %k: {t}, %v: {t}, %m: {m}) -> {t} {{
  %0 = disc.attention %q, %k, %v mask(%m) causal : ({t}, {t}, {t}, {m}) -> {t}
  return %0 : {t}
}}""", target="cuda")
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    before = compilations()
    torch.manual_seed(5)
    with _no_tf32():
        for b, h, l, n in [(1, 2, 5, 7), (2, 4, 130, 130), (3, 1, 64, 300)]:
            q, k, v = (torch.randn(b, h, s, 16, device="cuda").to(dtype) for s in (l, n, n))
            mask = torch.zeros(b, 1, l, n, device="cuda")
            mask[..., n - 2:] = -math.inf  # padding at the end
            mask[:, :, 1, :] = -math.inf  # row 1: every key masked
            (got,) = exe(q, k, v, mask.to(dtype))
            causal = torch.ones(l, n, dtype=torch.bool, device="cuda").triu(1)
            additive = mask.masked_fill(causal, -math.inf).double()
            additive[:, :, 1, :] = 0.0  # the reference row is replaced below
            want = torch.nn.functional.scaled_dot_product_attention(
                q.double(), k.double(), v.double(), attn_mask=additive)
            want[:, :, 1, :] = 0.0
            assert got.device == q.device and got.dtype == dtype
            torch.testing.assert_close(got.double(), want, rtol=tol, atol=tol)
    assert compilations() == before


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool],
                         ids=str)
def test_sort_on_the_gpu(dtype):
    """torch.sort on cuda tensors (disc-cuda-sort-loops: a bitonic sort,
    one block per line, block barriers between its steps) against PyTorch's
    stable sort on the device, values and indices exactly: ties, NaN, +-inf,
    lines of 7 to 5000 elements (several compare-exchanges per thread),
    ascending along the last dim and descending along an outer one, one
    compilation for all shapes."""
    from cuda.test_cuda_sort import _line_values

    def fn(x):
        a, i = torch.sort(x, dim=-1, stable=True)
        b, j = torch.sort(x, dim=0, descending=True, stable=True)
        return a, i, b, j

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    g = torch.Generator().manual_seed(8)
    before = compilations()
    for shape in ((3, 7), (5, 33), (2, 5000), (700, 3)):
        x = _line_values(shape, dtype, g).cuda()
        for got, want in zip(compiled(x), fn(x), strict=True):
            assert got.device == x.device
            torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    assert compilations() == before + 1
