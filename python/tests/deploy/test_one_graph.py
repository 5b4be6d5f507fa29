"""disc.compile(model, mode="export"): one trace and one DISC compilation for
every shape the model's code allows, a logged re-trace where its Python
decides on a shape, live weights."""
from __future__ import annotations

import os
import sys

import pytest
import torch

import disc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import zoo  # noqa: E402


@pytest.mark.parametrize("name", ["mlp", "resnet", "transformer", "gnn"])
def test_zoo_model_traces_and_compiles_once(name):
    entry = zoo.ZOO[name]
    model = zoo.build(name).eval()
    compiled = disc.compile(model, mode="export")
    g = torch.Generator().manual_seed(1)
    before = disc.stats()["compilations"]
    with torch.no_grad():
        for size in entry.sizes + [entry.sizes[0] + 1]:
            inputs = entry.inputs(size, g)
            torch.testing.assert_close(compiled(*inputs), model(*inputs), rtol=2e-4, atol=2e-4)
    assert compiled.traces == 1
    assert disc.stats()["compilations"] - before == 1


def test_batch_of_one_does_not_recompile():
    model = zoo.build("mlp").eval()
    compiled = disc.compile(model, mode="export")
    with torch.no_grad():
        for b in (4, 1, 2, 1, 9):
            x = torch.randn(b, 64)
            torch.testing.assert_close(compiled(x), model(x), rtol=2e-4, atol=2e-4)
    assert compiled.traces == 1


class ShapeDecision(torch.nn.Module):
    """The model's own Python branches on a size: each side is its own
    graph."""

    def forward(self, x):
        if x.shape[0] > 8:
            return x.sum(0)
        return x.mean(0)


def test_shape_dependent_python_retraces_and_logs_why(capfd, monkeypatch):
    monkeypatch.setenv("DISC_LOG", "recompiles")
    model = ShapeDecision()
    compiled = disc.compile(model, mode="export")
    with torch.no_grad():
        for b in (4, 6, 12, 20, 3):
            x = torch.randn(b, 5)
            torch.testing.assert_close(compiled(x), model(x))
    assert compiled.traces == 2
    log = capfd.readouterr().err
    assert "[disc:recompiles] ShapeDecision: tracing for input shapes [(4, 5)] (first call)" in log
    assert "tracing for input shapes [(12, 5)]" in log and "dim 0 is 12" in log


def test_parameters_are_live():
    model = torch.nn.Linear(8, 3).eval()
    compiled = disc.compile(model, mode="export")
    x = torch.randn(5, 8)
    with torch.no_grad():
        compiled(x)
        model.weight.mul_(2)
        model.bias.add_(1)
        torch.testing.assert_close(compiled(x), model(x))
    assert compiled.traces == 1


def test_autograd_runs_in_eager():
    model = torch.nn.Linear(8, 3)
    compiled = disc.compile(model, mode="export")
    out = compiled(torch.randn(2, 8))
    assert out.requires_grad and compiled.traces == 0
    out.sum().backward()
    assert model.weight.grad is not None


def test_unknown_mode_and_options_are_rejected():
    with pytest.raises(ValueError, match="mode"):
        disc.compile(torch.nn.Linear(2, 2), mode="fast")
    with pytest.raises(TypeError, match="no backend options"):
        disc.compile(torch.nn.Linear(2, 2), mode="export", verify=True)


class EvenHalves(torch.nn.Module):
    """Relations between sizes torch.export turns into runtime assertions
    (not per-dim ranges): they are checked on every call."""

    def forward(self, x, y):
        torch._check(x.shape[0] == 2 * y.shape[0])
        a, b = x.split(x.shape[0] // 2)
        return a * y + b


def test_exported_size_relations_are_checked_not_assumed():
    model = EvenHalves()
    artifact = disc.export(model, (torch.randn(8, 3), torch.randn(4, 3)))
    for n in (1, 3, 6):
        x, y = torch.randn(2 * n, 3), torch.randn(n, 3)
        torch.testing.assert_close(artifact(x, y), model(x, y))
    with pytest.raises(disc.InvocationError, match=r"input x dim 0 must be 2\*s\d+"):
        artifact(torch.randn(7, 3), torch.randn(4, 3))


class ReshapeByRelation(torch.nn.Module):
    def forward(self, x, y):
        torch._check(x.shape[0] == 2 * y.shape[0])
        return x.reshape(2, y.shape[0], 3).sum(0) + y


def test_a_relation_only_a_reshape_relies_on_is_checked():
    model = ReshapeByRelation()
    artifact = disc.export(model, (torch.randn(8, 3), torch.randn(4, 3)))
    x, y = torch.randn(6, 3), torch.randn(3, 3)
    torch.testing.assert_close(artifact(x, y), model(x, y))
    with pytest.raises(disc.InvocationError, match="must be 2"):
        artifact(torch.randn(7, 3), torch.randn(4, 3))


class Scaled(torch.nn.Module):
    def forward(self, x, factor):
        return x * factor


def test_python_scalar_inputs_are_specialised_and_checked(tmp_path):
    artifact = disc.export(Scaled(), (torch.randn(3, 2), 3))
    x = torch.randn(5, 2)
    torch.testing.assert_close(artifact(x, 3), x * 3)
    with pytest.raises(disc.InvocationError, match="traced with 3"):
        artifact(x, 4)
    artifact.save(tmp_path / "s.disc")
    with pytest.raises(disc.InvocationError, match="traced with 3"):
        disc.load(tmp_path / "s.disc")(x, 4)
    compiled = disc.compile(Scaled(), mode="export")
    torch.testing.assert_close(compiled(x, 2), x * 2)
    torch.testing.assert_close(compiled(x, 5), x * 5)
    assert compiled.traces == 2
