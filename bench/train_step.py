"""Training-step time on the model zoo (examples/zoo.py): forward, backward
and an AdamW step (foreach), eager PyTorch against torch.compile with
backend="inductor" and backend="disc", both dynamic=True, the optimizer
step compiled by the same backend. Every zoo size in turn, the three
contenders' steps interleaved (medians per step), dropout off in all three
(their random streams differ; the gradients are compared once per size).

    .venv/bin/python bench/train_step.py [--steps 20] [MODEL ...]
"""
from __future__ import annotations

import argparse
import copy
import math
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import disc  # noqa: E402
import zoo  # noqa: E402


def _loss(out):
    outs = [out] if isinstance(out, torch.Tensor) else list(out)
    return sum(o.float().square().mean() for o in outs)


class Contender:
    def __init__(self, name, model):
        self.name = name
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
        if name == "eager":
            self.forward, self.step = model, self.opt.step
        else:
            self.forward = torch.compile(model, backend=name, dynamic=True)
            self.step = torch.compile(self.opt.step, backend=name)

    def train_step(self, inputs):
        self.opt.zero_grad(set_to_none=True)
        loss = _loss(self.forward(*inputs))
        loss.backward()
        self.step()
        return loss.detach()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=["mlp", "resnet", "transformer", "gnn",
                                                       "audio", "embedding_mlp"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows, vs_eager, vs_inductor = [], [], []
    for name in args.models:
        # Every model's optimizer steps compile the same code object
        # (Optimizer.step): without a reset, Dynamo's recompile limit (8
        # entries per frame) is reached after a few models, and the later
        # models' steps run in eager for both compilers.
        torch._dynamo.reset()
        entry = zoo.ZOO[name]
        base = zoo.build(name).train()
        for m in base.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        contenders = [Contender(c, copy.deepcopy(base)) for c in ("eager", "inductor", "disc")]
        g = torch.Generator().manual_seed(0)
        compiles_before = disc.stats()["compilations"]
        for size in entry.sizes:
            inputs = entry.inputs(size, g)
            times = {c.name: [] for c in contenders}
            first = {}
            for c in contenders:  # first step: compiles (not timed)
                start = time.perf_counter()
                first[c.name] = float(c.train_step(inputs))
                times[c.name + " first s"] = time.perf_counter() - start
            for _ in range(args.steps):
                for c in contenders:
                    start = time.perf_counter()
                    c.train_step(inputs)
                    times[c.name].append(time.perf_counter() - start)
            med = {c.name: statistics.median(times[c.name]) * 1e3 for c in contenders}
            rows.append((name, entry.describe(size), med["eager"], med["inductor"], med["disc"],
                         first["disc"], first["eager"]))
            vs_eager.append(med["eager"] / med["disc"])
            vs_inductor.append(med["inductor"] / med["disc"])
            print(f"{name:14s} {entry.describe(size):28s} eager {med['eager']:8.2f} ms  "
                  f"inductor {med['inductor']:8.2f} ms  disc {med['disc']:8.2f} ms  "
                  f"({med['eager'] / med['disc']:.2f}x eager, "
                  f"{med['inductor'] / med['disc']:.2f}x inductor)", flush=True)
        print(f"{name:14s} DISC compilations over {len(entry.sizes)} sizes: "
              f"{disc.stats()['compilations'] - compiles_before}", flush=True)
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))  # noqa: E731
    print(f"\ngeomean over {len(vs_eager)} (model, size) pairs: {geo(vs_eager):.2f}x eager, "
          f"{geo(vs_inductor):.2f}x inductor")
    print("\n| model | size | eager ms | inductor ms | disc ms | disc vs eager | disc vs inductor |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, size, e, i, d, _, _ in rows:
        print(f"| {name} | {size} | {e:.2f} | {i:.2f} | {d:.2f} | {e / d:.2f}x | {i / d:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
