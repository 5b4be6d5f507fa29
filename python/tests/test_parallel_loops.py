"""Kernel loops run on the runtime's threads (disc-parallelize-loops +
disc_ral_parallel_for). The runtime chooses per launch, from the actual
shapes, between splitting the range across threads and running it on the
calling thread; both variants must give the same results as PyTorch, and
disc.stats() counts which one ran."""
from __future__ import annotations

import os

import torch

import disc
from conftest import compile_once, run_shapes, tensor_type

# Elementwise (2 outer dims + blocked inner dim), a row reduction and a
# column reduction in one program.
T3 = tensor_type((None, None, None), torch.float32)
T2 = tensor_type((None, None), torch.float32)
PROGRAM = f"""
func.func @main(%x: {T3}) -> ({T3}, {T2}, {T2}) {{
  %0 = disc.exponential %x : {T3}
  %1 = disc.tanh %0 : {T3}
  %2 = disc.reduce %x, dims = [2], kind = sum : ({T3}) -> {T2}
  %3 = disc.reduce %x, dims = [1], kind = max : ({T3}) -> {T2}
  return %1, %2, %3 : {T3}, {T2}, {T2}
}}"""


def _reference(x):
    return torch.tanh(torch.exp(x)), x.sum(dim=2), x.amax(dim=1)


def _variant_counts():
    s = disc.stats()
    return s["parallel_launches"], s["serial_runs"]


def _run(exe, shapes):
    before = _variant_counts()
    # Sums of up to 200k f32 values: vectorised partial sums differ from
    # PyTorch's summation order by ~1e-5 relative.
    run_shapes(exe, lambda s: torch.randn(s), _reference, shapes, rtol=1e-5, atol=1e-2)
    after = _variant_counts()
    return after[0] - before[0], after[1] - before[1]


def test_small_shapes_run_on_the_calling_thread():
    exe = compile_once(PROGRAM)
    parallel, serial = _run(exe, [(1, 1, 1), (2, 3, 5), (1, 7, 33)])
    assert parallel == 0, "tiny tensors must not pay for a parallel launch"
    assert serial > 0


def test_large_shapes_split_across_threads():
    assert _openmp_threads() >= 2, "needs 2 OpenMP threads (the CI machine has 2 cores)"
    exe = compile_once(PROGRAM)
    # Uneven unit counts (3 rows, 1025 = one block + 1 element) exercise
    # the remainder handling of the split and of the inner blocks.
    parallel, serial = _run(exe, [(3, 129, 1025), (2, 300, 257), (1, 1, 200_000)])
    assert parallel > 0, "large kernels must be split across threads"


def test_single_row_large_inner_dim_is_split():
    """[1, 1, N]: the inner dim's 1024-element blocks are the units."""
    exe = compile_once(f"""
func.func @main(%x: {T3}) -> {T3} {{
  %0 = disc.exponential %x : {T3}
  return %0 : {T3}
}}""")
    before = _variant_counts()
    run_shapes(exe, lambda s: torch.randn(s), torch.exp, [(1, 1, 100_000), (1, 1, 65_537),
                                                          (1, 1, 300_001)], rtol=4e-6, atol=0)
    assert _variant_counts()[0] - before[0] == 3


def _openmp_threads() -> int:
    """OpenMP's default thread count, which the runtime's launcher uses."""
    return int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))


def test_kernel_counts():
    """Executable.kernel_counts: what one call runs after fusion."""
    t = tensor_type((None, 8), torch.float32)
    w = tensor_type((8, 8), torch.float32)
    exe = compile_once(f"""
func.func @main(%x: {t}, %w: {w}) -> {t} {{
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : ({t}, {w}) -> {t}
  %1 = disc.exponential %0 : {t}
  %2 = disc.tanh %1 : {t}
  %3 = disc.add %2, %x : {t}
  return %3 : {t}
}}""")
    counts = exe.kernel_counts
    assert counts["library_calls"] == 1, counts
    # exp, tanh and add fuse into one loop nest.
    assert counts["loops"] == 1, counts
    run_shapes(exe, lambda s: (torch.randn(s, 8), torch.randn(8, 8)),
               lambda x, w: torch.tanh(torch.exp(x @ w)) + x, [1, 7, 300],
               rtol=1e-5, atol=1e-5)


def test_stitch_kernel_with_dynamic_rows_is_split():
    """Attention-style softmax over [batch, heads, rows, row length], all
    dynamic (one stitch kernel: max, exp, sum and divide per row). Its row
    loops' trip counts are read in the kernel body (memref.dim of a row
    view); the launcher must still see rows x row length as the work and
    split across threads (it once counted each row as 4 elements and ran
    such softmaxes on one thread)."""
    assert _openmp_threads() >= 2, "needs 2 OpenMP threads (the CI machine has 2 cores)"
    torch._dynamo.reset()
    compiled = torch.compile(lambda x: torch.softmax(x * 0.5, dim=-1), backend="disc",
                             dynamic=True)
    compiles_before = disc.stats()["compilations"]
    launches_before = _variant_counts()[0]
    shapes = [(2, 3, 4, 20_000), (3, 2, 5, 9_001), (2, 3, 600, 601)]  # no equal dims: duck sizing
    with torch.no_grad():
        for shape in shapes:
            x = torch.randn(shape)
            torch.testing.assert_close(compiled(x), torch.softmax(x * 0.5, dim=-1),
                                       rtol=1e-5, atol=1e-7)
    assert disc.stats()["compilations"] - compiles_before == 1
    assert _variant_counts()[0] - launches_before >= len(shapes), \
        "every call's softmax kernel must run split across threads"
