"""propose_partitions: when every compute node is supported, the one
partition it returns directly is the one torch's partitioner reaches after
its merges (independent branches, multi-output nodes with getitems, shape
nodes under dynamic shapes); otherwise the partitioner decides."""
from __future__ import annotations

import operator

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from disc.frontend.backend import _classify, propose_partitions


def _independent_branches(x, y):
    return torch.relu(x) * 2, torch.tanh(y).sum(0)


def _multi_output(x):
    values, indices = torch.max(x, dim=1)
    return torch.exp(x - values.unsqueeze(1)), indices


def _topk_and_scale(x):
    values, indices = torch.topk(x, 2, dim=-1)
    return values * 2, indices + 1


def _node_sets(partitions):
    return sorted([[n.name for n in p.nodes] for p in partitions])


@pytest.mark.parametrize("fn, shapes", [
    (_independent_branches, [(4, 8), (5, 3)]),
    (_multi_output, [(6, 10)]),
    (_topk_and_scale, [(3, 7)]),
], ids=["independent", "multi-output", "topk"])
@pytest.mark.parametrize("mode", ["real", "symbolic"])
def test_all_supported_gives_the_partitioners_one_partition(fn, shapes, mode):
    gm = make_fx(fn, tracing_mode=mode)(*[torch.randn(s) for s in shapes])
    supported, _ = _classify(gm)
    compute = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert compute and all(n in supported for n in compute), "the case must take the fast path"
    if fn is not _independent_branches:
        assert any(n.target is operator.getitem for n in compute)
    direct = propose_partitions(gm, supported)
    general = propose_partitions(gm, supported, general=True)
    assert len(direct) == 1
    assert _node_sets(direct) == _node_sets(general)
    # In graph order, as the partitioner leaves them.
    assert list(direct[0].nodes) == list(general[0].nodes)


def test_an_unsupported_node_goes_to_the_partitioner():
    gm = make_fx(lambda x: torch.relu(x).exp() + 1)(torch.randn(3, 4))
    supported, _ = _classify(gm)
    exp = next(n for n in gm.graph.nodes if n.target == torch.ops.aten.exp.default)
    supported.discard(exp)
    partitions = propose_partitions(gm, supported)
    assert _node_sets(partitions) == _node_sets(propose_partitions(gm, supported, general=True))
    assert all(exp not in p.nodes for p in partitions)
    assert len(partitions) == 2  # relu, then add: the exp between them cuts them apart


def test_no_compute_node_no_partition():
    gm = make_fx(lambda x: x)(torch.randn(2))
    supported, _ = _classify(gm)
    assert propose_partitions(gm, supported) == []
