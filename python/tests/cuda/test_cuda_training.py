"""Training on the GPU (`pytest -m cuda`; skipped without one): the zoo's
gradients, AdamW steps with a batch change, and dropout, through
torch.compile(backend="disc") on cuda tensors, against eager on the device
(python/tests/training/test_training.py is the CPU suite; it also runs under
DISC_TARGET=cuda-emulated, the cuda grid mapping on the CPU).

TF32 is off for both (eager's cuDNN convolutions use it by default; DISC's
f32 convolutions and GEMMs never do), so the comparison is about DISC's
arithmetic. What the cuda target does not support yet (docs/cuda.md) and
the CPU side of a cuda graph run in eager with those reasons; any other
fallback fails. Kernel gradients are cuDNN's backward filter, stride-1
input gradients cuDNN's forward and strided ones its backward data (all
added after the first GPU run of this file)."""
from __future__ import annotations

import os
import sys

import pytest
import torch
import torch.nn.functional as F

import disc
from cuda.test_cuda_models import UNSUPPORTED_ON_CUDA, _to_cuda
from disc.frontend.backend import _CPU_IN_CUDA_GRAPH_REASON
from training.test_training import (_PARAM_TOL, _assert_grads_close_in_norm, _new_fallbacks,
                                    _no_dropout, adamw_run_against_eager,
                                    zoo_gradients_against_eager)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
import zoo  # noqa: E402

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU"),
]

# Fallbacks by design on the cuda target (docs/cuda.md): library calls it
# lacks, and the CPU side of a cuda graph (constants, index set-up).
EXPECTED_ON_CUDA = (UNSUPPORTED_ON_CUDA, _CPU_IN_CUDA_GRAPH_REASON)


@pytest.fixture(autouse=True)
def _no_tf32():
    # PyTorch's test utilities freeze the global cuDNN flags: the context
    # manager is the way to change them.
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    with torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
        yield
    torch.backends.cuda.matmul.allow_tf32 = saved


@pytest.mark.parametrize("name", sorted(zoo.ZOO))
def test_zoo_gradients_on_cuda_at_every_size_with_one_compilation(name):
    # In L2 (1e-3): the device's reductions and GEMMs order sums their own
    # way (test_training.py compares elementwise on the CPU).
    def close(model, ref):
        _assert_grads_close_in_norm(model, ref, 1e-3)

    zoo_gradients_against_eager(name, close, device="cuda", allowed_fallback=EXPECTED_ON_CUDA)


@pytest.mark.parametrize("name", ["mlp", "transformer", "resnet"])
def test_adamw_steps_on_cuda_with_a_batch_change(name):
    """8 AdamW steps, the batch size changed at step 4 without a DISC
    recompilation; losses and final parameters as eager's on the device."""
    entry = zoo.ZOO[name]
    g = torch.Generator().manual_seed(0)
    batches = [_to_cuda(entry.inputs(entry.sizes[0], g)), _to_cuda(entry.inputs(entry.sizes[1], g))]
    losses, want_losses, model, ref = adamw_run_against_eager(
        _no_dropout(zoo.build(name).train()).cuda(), batches, 8,
        allowed_fallback=EXPECTED_ON_CUDA)
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(want_losses),
                               rtol=1e-3, atol=1e-3)
    tol = _PARAM_TOL.get(name, 1e-4)
    for (pname, p), q in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=tol, atol=tol, msg=lambda m: f"{pname}: {m}")


def test_dropout_on_cuda_rate_scaling_seed_and_backward():
    torch._dynamo.reset()
    compiled = torch.compile(lambda t: F.dropout(t * 2, 0.3, training=True), backend="disc",
                             dynamic=True)
    before = dict(disc.stats()["fallback_ops"])
    for n in (4096, 1000, 77):
        x = torch.ones(n, 32, device="cuda", requires_grad=True)
        y = compiled(x)
        kept = y != 0
        rate = float(kept.float().mean())
        assert abs(rate - 0.7) < 4 * (0.21 / (n * 32)) ** 0.5 + 1e-3, rate
        torch.testing.assert_close(y[kept], torch.full_like(y[kept], 2 / 0.7))
        y.sum().backward()
        torch.testing.assert_close(x.grad, kept.float() * 2 / 0.7)
    x = torch.ones(500, 8, device="cuda")
    torch.manual_seed(3)
    a = compiled(x)
    b = compiled(x)
    torch.manual_seed(3)
    a2 = compiled(x)
    assert torch.equal(a, a2), "the same seed gives the same mask"
    assert not torch.equal(a, b), "every call draws a new mask"
    new = _new_fallbacks(before, EXPECTED_ON_CUDA)
    assert not new, new
