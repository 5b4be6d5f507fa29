"""PyTorch's OpInfo samples of every op DISC claims (runner.CLAIMED_OPS),
f32 and int64 where the op takes them, static and dynamic=True, against
eager: every sample matches or falls back with a logged reason; none
crashes, raises or differs. CI runs the first DISC_OPINFO_SAMPLES samples
per op with dynamic=True (default 3, the product's main mode) and the first
DISC_OPINFO_STATIC_SAMPLES with static shapes (default 2: CI time);
bench/opinfo.py runs them all and reports the compiled share."""
from __future__ import annotations

import os

import pytest
import torch

from opinfo.runner import claimed_opinfos, dtypes_for, run_samples

MAX_SAMPLES = int(os.environ.get("DISC_OPINFO_SAMPLES", "3"))
MAX_STATIC_SAMPLES = int(os.environ.get("DISC_OPINFO_STATIC_SAMPLES", "2"))

CASES = [(name, op, dtype) for name, op in claimed_opinfos() for dtype in dtypes_for(op)]


def test_every_claimed_op_is_in_op_db():
    from opinfo.runner import CLAIMED_OPS, op_table

    assert [n for n in CLAIMED_OPS if n not in op_table()] == []


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name, op, dtype", CASES,
                         ids=[f"{n}-{str(d).replace('torch.', '')}" for n, _, d in CASES])
def test_opinfo_samples(name, op, dtype, dynamic):
    results = run_samples(op, dtype, dynamic,
                          max_samples=MAX_SAMPLES if dynamic else MAX_STATIC_SAMPLES)
    bad = [f"sample {r.index} {r.description}: {r.status}: {r.detail}"
           for r in results if r.status in ("mismatch", "error")]
    assert not bad, "\n".join(bad)
    unexplained = [r for r in results if r.coverage in ("partial", "fallback") and not r.detail]
    assert not unexplained, "a fallback without a logged reason"


GRAD_SAMPLES = int(os.environ.get("DISC_OPINFO_GRAD_SAMPLES", "2"))
GRAD_CASES = [(name, op) for name, op in claimed_opinfos()
              if op.supports_autograd and torch.float32 in dtypes_for(op)]


@pytest.mark.parametrize("name, op", GRAD_CASES, ids=[n for n, _ in GRAD_CASES])
def test_opinfo_gradients(name, op):
    """Training: the gradients of every claimed op with a backward, float32,
    dynamic=True, against eager's (forward and backward graph compiled)."""
    from opinfo.runner import run_gradient_samples

    results = run_gradient_samples(op, torch.float32, max_samples=GRAD_SAMPLES)
    bad = [f"sample {r.index} {r.description}: {r.status}: {r.detail}"
           for r in results if r.status in ("mismatch", "error")]
    assert not bad, "\n".join(bad)
    unexplained = [r for r in results if r.coverage in ("partial", "fallback") and not r.detail]
    assert not unexplained, "a fallback without a logged reason"
