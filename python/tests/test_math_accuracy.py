"""f32 transcendental functions are inline polynomial approximations
(disc-approximate-math), so the loops around them vectorise. These tests
check each approximated op against PyTorch over its whole useful range,
specials included, not just around 0 (test_elementwise covers the
ordinary ranges and the other dtypes)."""
from __future__ import annotations

import math

import pytest
import torch

from conftest import compile_once, run_shapes, tensor_type

# op -> (reference, input range, rtol, atol). Ranges reach where the
# result saturates, overflows or needs range reduction.
WIDE_RANGE = {
    # Results below the normal f32 range (exp(x) for x < -87.3) flush to 0.
    "exponential": (torch.exp, (-100.0, 90.0), 4e-6, 1.2e-38),
    "exponential_minus_one": (torch.expm1, (-30.0, 30.0), 4e-6, 1e-7),
    "log": (torch.log, (1e-30, 1e30), 2e-6, 1e-6),
    "log_plus_one": (torch.log1p, (-0.999, 1e6), 2e-6, 1e-7),
    "tanh": (torch.tanh, (-20.0, 20.0), 4e-6, 1e-6),
    "erf": (torch.erf, (-8.0, 8.0), 4e-6, 1e-6),
    "logistic": (torch.sigmoid, (-100.0, 100.0), 4e-6, 1e-7),
    # Not approximated (upstream's range reduction is too coarse): libm.
    "sine": (torch.sin, (-1000.0, 1000.0), 4e-6, 1e-6),
    "cosine": (torch.cos, (-1000.0, 1000.0), 4e-6, 1e-6),
}


def _unary(op: str) -> str:
    t = tensor_type((None,), torch.float32)
    return f"""
func.func @main(%a: {t}) -> {t} {{
  %0 = disc.{op} %a : {t}
  return %0 : {t}
}}"""


@pytest.mark.parametrize("op", sorted(WIDE_RANGE))
def test_wide_range(op):
    reference, (low, high), rtol, atol = WIDE_RANGE[op]
    exe = compile_once(_unary(op))

    def make(shape):
        n = shape[0]
        # Evenly spaced over the range (log-spaced for log) plus random points.
        if low > 0:
            grid = torch.logspace(math.log10(low), math.log10(high), n)
        else:
            grid = torch.linspace(low, high, n)
        return (torch.cat([grid, torch.empty(n).uniform_(low, high)]),)

    def ref(x):
        return reference(x.double()).float()

    run_shapes(exe, make, ref, [(1000,), (4099,), (65536,)], rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", ["exponential", "log", "tanh", "erf", "logistic",
                                "exponential_minus_one", "log_plus_one"])
def test_specials(op):
    """NaN, infinities, zeros of both signs and the overflow edges."""
    reference = WIDE_RANGE[op][0]
    exe = compile_once(_unary(op))
    specials = [math.nan, math.inf, -math.inf, 0.0, -0.0, 88.7, 89.0, -87.5,
                -104.0, 1e-40, -1e-40, 3.4e38, -3.4e38]

    def make(shape):
        return (torch.tensor(specials * shape[0], dtype=torch.float32),)

    run_shapes(exe, make, lambda x: reference(x.double()).float(), [(1,), (2,), (3,)],
               rtol=4e-6, atol=1.2e-38)
