"""PyTorch's OpInfo samples of every op DISC claims (runner.CLAIMED_OPS),
f32 and int64 where the op takes them, static and dynamic=True, against
eager: every sample matches or falls back with a logged reason; none
crashes, raises or differs. CI runs the first DISC_OPINFO_SAMPLES samples
per op (default 3), the first two of them with dynamic=True and the first
and last with static shapes (CI time: each sample in one mode at least, the
first in both); DISC_OPINFO_SAMPLES=0 runs every sample in both modes.
bench/opinfo.py runs them all and reports the compiled share."""
from __future__ import annotations

import os

import pytest
import torch

from opinfo.runner import claimed_opinfos, dtypes_for, run_samples

MAX_SAMPLES = int(os.environ.get("DISC_OPINFO_SAMPLES", "3"))


def _sample_indices(dynamic: bool):
    """The sample indices a mode runs (None: all of them)."""
    if MAX_SAMPLES <= 0:
        return None
    if MAX_SAMPLES < 3:
        return list(range(MAX_SAMPLES))
    middle = list(range(1, MAX_SAMPLES - 1))
    return [0] + (middle if dynamic else [MAX_SAMPLES - 1])

CASES = [(name, op, dtype) for name, op in claimed_opinfos() for dtype in dtypes_for(op)]


def test_every_claimed_op_is_in_op_db():
    from opinfo.runner import CLAIMED_OPS, op_table

    assert [n for n in CLAIMED_OPS if n not in op_table()] == []


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name, op, dtype", CASES,
                         ids=[f"{n}-{str(d).replace('torch.', '')}" for n, _, d in CASES])
def test_opinfo_samples(name, op, dtype, dynamic):
    results = run_samples(op, dtype, dynamic, indices=_sample_indices(dynamic))
    bad = [f"sample {r.index} {r.description}: {r.status}: {r.detail}"
           for r in results if r.status in ("mismatch", "error")]
    assert not bad, "\n".join(bad)
    unexplained = [r for r in results if r.coverage in ("partial", "fallback") and not r.detail]
    assert not unexplained, "a fallback without a logged reason"


GRAD_SAMPLES = int(os.environ.get("DISC_OPINFO_GRAD_SAMPLES", "1"))
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
