"""Stitch fusion (disc-stitch-fusion): a row reduction with the elementwise
stages around it is one loop over rows. Softmax, log-softmax, layer norm
and RMS norm must match eager PyTorch at several shapes from one
compilation, and each must be a single loop kernel (DISC_LOG=fusion prints
the groups). Shapes include rows longer than one 1024-element block, a
single row, and row counts that do not divide between the threads."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import disc
from .harness import check_compiled


def _rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


CASES = {
    "softmax": (lambda x: torch.softmax(x, -1), lambda r, n: (torch.randn(r, n),)),
    "softmax_3d": (lambda x: torch.softmax(x * 0.5, -1),
                   lambda r, n: (torch.randn(2, r, n),)),
    "log_softmax": (lambda x: F.log_softmax(x, -1), lambda r, n: (torch.randn(r, n),)),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b),
                   lambda r, n: (torch.randn(r, n), torch.randn(n), torch.randn(n))),
    "rms_norm": (_rms_norm, lambda r, n: (torch.randn(r, n), torch.randn(n))),
}

SHAPES = [(3, 5), (17, 1030), (64, 77)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_row_reduction_chain_is_one_kernel(name):
    fn, make = CASES[name]
    torch.manual_seed(0)
    inputs = [make(r, n) for r, n in SHAPES]
    before = disc.stats()["kernels"]
    # Sums over rows of up to 1030 elements in vectorised partial sums.
    check_compiled(fn, inputs, tol=dict(rtol=1e-4, atol=1e-5))
    kernels = disc.stats()["kernels"] - before
    assert kernels == 1, f"{name}: {kernels} kernels, expected one stitch kernel"


def test_reduction_also_returned_stays_correct():
    def fn(x):
        m = x.amax(-1, keepdim=True)
        return torch.exp(x - m), m

    torch.manual_seed(0)
    check_compiled(fn, [(torch.randn(r, n),) for r, n in SHAPES])


def test_log_sum_exp_subtracted_from_its_row():
    """Softmax as SDPA's training decomposition writes it: the row's
    log-sum-exp, log(sum(exp(x - m))) + m, subtracted from every element.
    Stitch fusion computes the log-sum-exp over the max's row value; fused
    into the subtraction through the broadcast, each element added log(sum)
    again to what the one before wrote (wrong from the row's second element
    on the cuda targets, where the recompute rule allows the fusion)."""
    def fn(x):
        m = x.amax(-1, keepdim=True)
        m = torch.where(m.abs() == float("inf"), 0.0, m)
        lse = (x - m).exp().sum(-1, keepdim=True).log() + m
        # The decomposition saves it squeezed and reads it back unsqueezed.
        return (x - lse.squeeze(-1).unsqueeze(-1)).exp()

    torch.manual_seed(0)
    check_compiled(fn, [(torch.randn(2, r, n),) for r, n in SHAPES],
                   tol=dict(rtol=1e-4, atol=1e-5))


def test_column_reduction_is_not_stitched():
    """x / x.sum(0): fusing the column sum into a row loop would redo it
    per row; it stays its own kernel, apart from the divide."""
    def fn(x):
        return x / x.sum(0, keepdim=True)

    torch.manual_seed(0)
    before = disc.stats()["kernels"]
    # Positive values: a column sum near zero would make the quotient
    # ill-conditioned (DISC's f64 column sums and eager's f32 ones then
    # differ in the divisor's last bits, magnified).
    check_compiled(fn, [(torch.rand(r, n) + 0.5,) for r, n in SHAPES])
    assert disc.stats()["kernels"] - before >= 2


def _with_nans(rows, n, dtype):
    """Random rows with a NaN in the vectorised body (row 1), one in the
    scalar tail (row 2), a row of -inf, a row with +inf, a row all NaN."""
    x = torch.randn(rows, n, dtype=dtype)
    x[1, n // 3] = float("nan")
    x[2, n - 1] = float("nan")
    x[3, :] = float("-inf")
    x[4, 0] = float("inf")
    x[5, :] = float("nan")
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", ["amax", "amin", "softmax", "amax_all"])
def test_max_min_reductions_propagate_nan(name, dtype):
    """Max/min reductions carry a plain max and, apart, whether a NaN was
    seen (disc-promote-accumulators): NaN anywhere in a row, in the
    vectorised part or the tail, must still give NaN, and +-inf rows stay
    exact, at three shapes from one compilation."""
    fn = {"amax": lambda x: x.amax(-1), "amin": lambda x: x.amin(-1),
          "softmax": lambda x: torch.softmax(x, -1), "amax_all": lambda x: x.amax()}[name]
    check_compiled(fn, [(_with_nans(r, n, dtype),) for r, n in ((6, 37), (9, 1030), (7, 200))])
