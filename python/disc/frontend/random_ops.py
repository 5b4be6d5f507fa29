"""Random ops (rand, rand_like: what dropout decomposes into) as a
counter-based generator, Philox4x32-10 (Salmon et al., "Parallel random
numbers: as easy as 1, 2, 3"), computed elementwise by DISC's fused kernels.

Every element's random word is Philox of the counter (element index low
and high words, the op's stream number within the partition, 0) under a
64-bit key. The key is one rank-0 int64 input of the partition (ArgPlan
kind "seed"), drawn from PyTorch's default generator on every call
(backend.DiscPartition): `torch.manual_seed` makes a run repeatable, and
every call (every training step) gets a fresh mask. Values are 32-bit
words held in int64 lanes: a 32x32-bit product wraps in int64 exactly as
in uint64, and its high word is a logical shift."""
from __future__ import annotations

import torch

from .emitter import ImportError_, Val
from .lowerings import register

aten = torch.ops.aten

_MASK32 = 0xFFFFFFFF
_PHILOX_M0, _PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
_PHILOX_W0, _PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
_ROUNDS = 10


def philox_words(b, seed: Val, index: Val, stream: int):
    """The first two 32-bit output words of Philox4x32-10 for each element
    of `index` (int64), key `seed` (rank-0 int64)."""
    shape = index.shape

    def const(value):
        return b.full(value, torch.int64, shape)

    mask = const(_MASK32)

    def low(v):
        return b.binary("and", v, mask)

    def high(v):
        return low(b.binary("shift_right_logical", v, const(32)))

    key = b.broadcast_to(seed, shape)
    k0, k1 = low(key), high(key)
    c0, c1, c2, c3 = low(index), high(index), const(stream), const(0)
    m0, m1 = const(_PHILOX_M0), const(_PHILOX_M1)
    w0, w1 = const(_PHILOX_W0), const(_PHILOX_W1)
    for r in range(_ROUNDS):
        p0 = b.binary("multiply", c0, m0)
        p1 = b.binary("multiply", c2, m1)
        hi0, lo0, hi1, lo1 = high(p0), low(p0), high(p1), low(p1)
        c0 = b.binary("xor", b.binary("xor", hi1, c1), k0)
        c1 = lo1
        c2 = b.binary("xor", b.binary("xor", hi0, c3), k1)
        c3 = lo0
        if r + 1 < _ROUNDS:
            k0 = low(b.binary("add", k0, w0))
            k1 = low(b.binary("add", k1, w1))
    return c0, c1


def uniform(ctx, shape, dtype: torch.dtype) -> Val:
    """U[0, 1) of `dtype` and `shape`: 24 random bits (53 for float64)."""
    if not dtype.is_floating_point:
        raise ImportError_(f"rand of dtype {dtype}")
    b = ctx.b
    seed, stream = ctx.importer.random_stream()
    numel = 1
    for d in shape:
        numel = numel * d
    index = b.reshape(b.iota((numel,), 0, torch.int64), shape)
    w0, w1 = philox_words(b, seed, index, stream)
    if dtype == torch.float64:
        bits = b.binary("or", b.binary("shift_left", w1, b.full(21, torch.int64, shape)),
                        b.binary("shift_right_logical", w0, b.full(11, torch.int64, shape)))
        scale = 2.0 ** -53
        compute = torch.float64
    else:
        bits = b.binary("shift_right_logical", w0, b.full(8, torch.int64, shape))
        scale = 2.0 ** -24
        compute = torch.float32
    value = b.binary("multiply", b.convert(bits, compute), b.full(scale, compute, shape))
    return b.convert(value, dtype)


@register(aten.rand_like.default)
def _rand_like(ctx, x, *, dtype=None, layout=None, device=None, pin_memory=None,
               memory_format=None):
    return uniform(ctx, ctx.out_shape, ctx.out_dtype)


@register(aten.rand.default)
def _rand(ctx, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return uniform(ctx, ctx.out_shape, ctx.out_dtype)
