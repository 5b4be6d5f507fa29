"""The model zoo (examples/zoo.py) through torch.compile(backend="disc",
dynamic=True): correct against eager at 3 shapes, one DISC compile per model,
zero fallback nodes."""
from __future__ import annotations

import os
import sys

import pytest
import torch

import disc

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


def test_marked_dims_meeting_pinned_sizes():
    """Dims marked dynamic (torch._dynamo.mark_dynamic, everything else
    static) can meet sizes the model pins, as a ViT's (H/16)*(W/16)+1
    patches meet its 197-row position table: a reshape then goes from a
    dynamic dim to a static one. It compiles (a cast beside the
    collapse/expand), once for every image shape with that patch count."""
    torch.manual_seed(0)
    conv_w, cls, pos = torch.randn(8, 3, 4, 4), torch.randn(1, 1, 8), torch.randn(1, 13, 8)

    def fn(x):
        patches = torch.nn.functional.conv2d(x, conv_w, stride=4).flatten(2).transpose(1, 2)
        h = torch.cat([cls, patches], 1) + pos  # 1 + (H/4)*(W/4) must be 13
        heads = h.view(1, -1, 2, 4).transpose(1, 2).softmax(-1)
        return heads.transpose(1, 2).reshape(1, 13, 8)

    inputs = []
    for hw in ((12, 16), (16, 12), (8, 24)):
        x = torch.randn(1, 3, *hw)
        torch._dynamo.mark_dynamic(x, 2)
        torch._dynamo.mark_dynamic(x, 3)
        inputs.append((x,))
    import torch.fx.experimental._config as fx_config

    with fx_config.patch(backed_size_oblivious=True, use_duck_shape=False):
        check_compiled(fn, inputs, dynamic=None)


def _graphs_compiled(backend, fn, inputs):
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    compiled = torch.compile(fn, backend=backend, dynamic=None)
    with torch.no_grad():
        for args in inputs:
            compiled(*args)
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


@pytest.mark.parametrize("name", ["mlp", "conv_on_permuted"])
def test_disc_adds_no_guards(name):
    """Every recompilation is Dynamo's: DISC's front end never reads a size
    as a Python int or bool, so it installs no guard. With the batch marked
    dynamic and size-oblivious tracing, batch 1, 2 and 4 compile as many
    graphs under DISC as under backend="eager": one for the MLP, two for a
    convolution on a permuted input (PyTorch's convolution backend
    selection guards `batch <= 1`; docs/graphnet.md, "Compile once")."""
    import torch.fx.experimental._config as fx_config

    torch.manual_seed(0)
    if name == "mlp":
        model = zoo.build("mlp")
        make = lambda n: (torch.randn(n, 64),)  # noqa: E731
    else:
        w, b = torch.randn(8, 1, 3, 3), torch.randn(8)
        model = lambda x: torch.conv2d(x.permute(0, 3, 1, 2), w, b, 1, 1, 1, 8)  # noqa: E731
        make = lambda n: (torch.randn(n, 10, 12, 8),)  # noqa: E731
    inputs = [make(n) for n in (1, 2, 4)]
    for (x,) in inputs:
        torch._dynamo.mark_dynamic(x, 0)
    with fx_config.patch(backed_size_oblivious=True, use_duck_shape=False):
        counts = {backend: _graphs_compiled(backend, model, inputs) for backend in ("eager", "disc")}
    assert counts["disc"] == counts["eager"] == (1 if name == "mlp" else 2), counts


def test_graphs_counts_each_dynamo_graph_once():
    """disc.stats()["graphs"] counts the graphs Dynamo compiled, not the
    backend calls: Dynamo calls the backend again after an attempt it
    abandons (the MLP's float scalar becomes a tensor input:
    TensorifyScalarRestartAnalysis), which once counted 2 graphs for 1 and
    made the GPU zoo tests report a recompilation that was not one."""
    from torch._dynamo.utils import counters

    torch.manual_seed(0)
    model = zoo.build("mlp")
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(model, backend="disc", dynamic=True)
    before = disc.stats()["graphs"]
    with torch.no_grad():
        for n in (3, 17, 129):
            x = torch.randn(n, 64)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    assert counters["stats"]["unique_graphs"] == 1
    assert disc.stats()["graphs"] - before == 1
