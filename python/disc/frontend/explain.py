"""disc.explain(model, *inputs): what compiles, what falls back, and why."""
from __future__ import annotations

import collections
from dataclasses import dataclass, field

import torch

from . import backend as _backend


@dataclass
class Explanation:
    graphs: list = field(default_factory=list)  # GraphReport per Dynamo graph

    @property
    def compiled_nodes(self) -> int:
        return sum(g.compiled_nodes for g in self.graphs)

    @property
    def fallback_nodes(self) -> int:
        return sum(g.fallback_nodes for g in self.graphs)

    @property
    def partitions(self) -> int:
        return sum(g.partitions for g in self.graphs)

    @property
    def fallbacks(self) -> list:
        return [f for g in self.graphs for f in g.fallbacks]

    def __str__(self) -> str:
        lines = [f"DISC: {len(self.graphs)} graph(s), {self.partitions} compiled partition(s), "
                 f"{self.compiled_nodes} ATen nodes compiled, {self.fallback_nodes} in eager"]
        by_op = collections.Counter((f.op, f.reason) for f in self.fallbacks)
        for (op, reason), count in by_op.most_common():
            lines.append(f"  fallback {count}x {op}: {reason}")
        return "\n".join(lines)


def explain(model, *inputs, dynamic: bool = True) -> Explanation:
    import torch._dynamo

    result = Explanation()
    _backend._report_sinks.append(result.graphs.append)
    try:
        compiled = torch.compile(model, backend="disc", dynamic=dynamic)
        with torch.no_grad():
            compiled(*inputs)
    finally:
        _backend._report_sinks.remove(result.graphs.append)
    return result
