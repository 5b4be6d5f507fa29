"""Memory planning: every intermediate goes back to the runtime's caching
allocator right after its last use (disc-free-after-last-use), so a chain of
layers keeps a few activations alive, not one per layer. disc.memory_stats()
reports the allocator's counters and the peak."""
from __future__ import annotations

import pytest
import torch

import disc
from conftest import compile_once, run_shapes, tensor_type

LAYERS = 8
WIDTH = 256
X = tensor_type((None, WIDTH), torch.float32)
W = tensor_type((WIDTH, WIDTH), torch.float32)


def _chain_program() -> str:
    """x -> (matmul, tanh) x LAYERS: every layer allocates the library
    call's [N, WIDTH] result (tanh then runs in place in it)."""
    lines = [f"func.func @main(%x: {X}, %w: {W}) -> {X} {{"]
    value = "%x"
    for i in range(LAYERS):
        lines.append(f"  %m{i} = disc.dot_general {value}, %w, batching_dims = [] x [], "
                     f"contracting_dims = [1] x [0] : ({X}, {W}) -> {X}")
        lines.append(f"  %t{i} = disc.tanh %m{i} : {X}")
        value = f"%t{i}"
    lines.append(f"  return {value} : {X}")
    lines.append("}")
    return "\n".join(lines)


def _reference(x, w):
    for _ in range(LAYERS):
        x = torch.tanh(x @ w)
    return x


def test_chain_reuses_freed_buffers():
    exe = compile_once(_chain_program())
    w = torch.randn(WIDTH, WIDTH) / WIDTH ** 0.5
    run_shapes(exe, lambda n: (torch.randn(n, WIDTH), w), _reference, [1, 37, 512])

    rows = 1024
    x = torch.randn(rows, WIDTH)
    activation = rows * WIDTH * 4
    exe(x, w)  # warm the allocator's cache
    disc.reset_peak_memory()
    before = disc.memory_stats()
    (result,) = exe(x, w)
    after = disc.memory_stats()
    peak = after["peak_bytes_in_use"] - before["bytes_in_use"]
    # Without freeing after the last use, all LAYERS buffers would be alive
    # at the end of the call. With it: a layer's input and its result, and
    # the matmul's scratchpad while it runs (oneDNN asks for about 1 KiB on
    # AVX-512 machines, none on AVX2 ones).
    scratchpad = 64 * 1024
    assert activation <= peak <= 2 * activation + scratchpad, (
        f"peak {peak} bytes during the call, one activation is {activation}")
    # The result is the only buffer left to the caller.
    assert after["bytes_in_use"] - before["bytes_in_use"] == activation
    # Every allocation of the warm call came from the cache.
    calls_allocations = after["allocations"] - before["allocations"]
    assert calls_allocations >= LAYERS
    assert after["allocation_cache_hits"] - before["allocation_cache_hits"] == calls_allocations
    del result
    assert disc.memory_stats()["bytes_in_use"] == before["bytes_in_use"]


def test_memory_stats_keys():
    stats = disc.memory_stats()
    assert set(stats) == {"bytes_in_use", "peak_bytes_in_use", "bytes_cached",
                          "allocations", "allocation_cache_hits", "thread_scratch_bytes"}
    disc.reset_peak_memory()
    stats = disc.memory_stats()
    assert stats["peak_bytes_in_use"] == stats["bytes_in_use"]


# A row loop (the shape stitch fusion produces) whose per-row temporary has
# the row's dynamic length: the scaled row, read by the row max and by the
# output stage.
ROW_TEMPORARY_PROGRAM = """
#row = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %three = arith.constant 3.0 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %init = tensor.empty(%rows, %n) : tensor<?x?xf32>
  %out = scf.forall (%i) in (%rows) shared_outs(%o = %init) -> (tensor<?x?xf32>) {
    %xrow = tensor.extract_slice %x[%i, 0] [1, %n] [1, 1] : tensor<?x?xf32> to tensor<?xf32>
    %tmp0 = tensor.empty(%n) : tensor<?xf32>
    %scaled = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel"]}
        ins(%xrow : tensor<?xf32>) outs(%tmp0 : tensor<?xf32>) {
    ^bb0(%in: f32, %unused: f32):
      %d = arith.divf %in, %three : f32
      linalg.yield %d : f32
    } -> tensor<?xf32>
    %m0 = tensor.empty() : tensor<f32>
    %minit = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<f32>) -> tensor<f32>
    %max = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["reduction"]}
        ins(%scaled : tensor<?xf32>) outs(%minit : tensor<f32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %tmp1 = tensor.empty(%n) : tensor<?xf32>
    %shifted = linalg.generic {indexing_maps = [#row, #red, #row], iterator_types = ["parallel"]}
        ins(%scaled, %max : tensor<?xf32>, tensor<f32>) outs(%tmp1 : tensor<?xf32>) {
    ^bb0(%in: f32, %mx: f32, %unused: f32):
      %s = arith.subf %in, %mx : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %shifted into %o[%i, 0] [1, %n] [1, 1] : tensor<?xf32> into tensor<?x?xf32>
    }
  }
  return %out : tensor<?x?xf32>
}
"""


def _expected_row_temporary(x):
    expected = x / 3
    return expected - expected.amax(1, keepdim=True)


def test_row_temporaries_come_from_thread_scratch(tmp_path, monkeypatch):
    """A loop body's dynamic-size temporary is the thread's scratch buffer
    (disc-thread-scratch-temporaries), not an allocator request per row:
    CosyVoice's masked softmax made ~37,000 requests per call and could not
    run on the runtime's threads. Each call allocates only its output, the
    scratch grows to the longest row, large inputs still run in parallel,
    and every shape is correct (rows of different lengths reuse the
    buffer). The cuda targets have no thread scratch: each row views its
    slice of one buffer the host allocates per call
    (disc-hoist-loop-temporaries), two allocations with the output (one row
    per thread; the block and warp variants' shared-memory caches are heap
    buffers per row under cuda-emulated)."""
    if disc.default_target() != "cpu":
        monkeypatch.setenv("DISC_CUDA_ROW_VARIANT", "thread")
        monkeypatch.setenv("DISC_CACHE", "0")
        exe = disc.compile_mlir(ROW_TEMPORARY_PROGRAM, dump_dir=str(tmp_path))
        for rows, n in [(3, 50), (1000, 123), (7, 5)]:
            x = torch.randn(rows, n)
            before = disc.memory_stats()["allocations"]
            (out,) = exe(x)
            torch.testing.assert_close(out, _expected_row_temporary(x))
            assert disc.memory_stats()["allocations"] - before == 2, (rows, n)
        dumps = sorted(tmp_path.rglob("*disc-hoist-loop-temporaries.mlir"))
        assert dumps and "disc.loop_temporaries" in dumps[-1].read_text()
        return
    exe = compile_once(ROW_TEMPORARY_PROGRAM)
    torch.manual_seed(0)
    for rows, n, parallel in [(3, 50, False), (1000, 123, True), (64, 3000, True), (7, 5, False)]:
        x = torch.randn(rows, n)
        memory_before, stats_before = disc.memory_stats(), disc.stats()
        (out,) = exe(x)
        memory_after, stats_after = disc.memory_stats(), disc.stats()
        torch.testing.assert_close(out, _expected_row_temporary(x))
        shape = f"[{rows}, {n}]"
        assert memory_after["allocations"] - memory_before["allocations"] == 1, shape
        assert memory_after["thread_scratch_bytes"] >= 4 * n, shape
        launches = stats_after["parallel_launches"] - stats_before["parallel_launches"]
        assert launches == (1 if parallel else 0), shape
    # The IR shows where the buffer comes from.
    exe = disc.compile_mlir(ROW_TEMPORARY_PROGRAM, dump_dir=str(tmp_path))
    dumps = sorted(tmp_path.rglob("*disc-thread-scratch-temporaries.mlir"))
    assert dumps and "disc.thread_scratch" in dumps[-1].read_text()
