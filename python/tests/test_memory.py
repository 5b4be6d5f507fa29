"""Memory planning: every intermediate goes back to the runtime's caching
allocator right after its last use (disc-free-after-last-use), so a chain of
layers keeps a few activations alive, not one per layer. disc.memory_stats()
reports the allocator's counters and the peak."""
from __future__ import annotations

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
                          "allocations", "allocation_cache_hits"}
    disc.reset_peak_memory()
    stats = disc.memory_stats()
    assert stats["peak_bytes_in_use"] == stats["bytes_in_use"]
