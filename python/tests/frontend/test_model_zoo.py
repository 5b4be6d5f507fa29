"""The model zoo (examples/zoo.py) through torch.compile(backend="disc",
dynamic=True): correct against eager at 3 shapes, one DISC compile per model,
zero fallback nodes."""
from __future__ import annotations

import os
import sys

import pytest
import torch

from .harness import check_compiled

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
import zoo  # noqa: E402


@pytest.mark.parametrize("name", sorted(zoo.ZOO))
def test_zoo_model(name):
    entry = zoo.ZOO[name]
    model = zoo.build(name)
    g = torch.Generator().manual_seed(1)
    inputs = [entry.inputs(size, g) for size in entry.sizes]
    check_compiled(model, inputs, tol=dict(rtol=1e-4, atol=1e-4))
