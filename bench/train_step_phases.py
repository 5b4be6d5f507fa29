"""Where a training step's time goes (issue 31): per compiler, the median
forward, backward and optimizer-step times of one zoo model at one size
(the same step as bench/train_step.py), and, for DISC, the optimizer step
on its own split into the partition call (the runtime, the arguments'
DLPack export, the rest of the call) and what is outside it (Dynamo,
AOTAutograd, the optimizer's wrapper).

    .venv/bin/python bench/train_step_phases.py resnet --size 2
    DISC_PROFILE=1 .venv/bin/python bench/train_step_phases.py resnet   # + DISC's per-kernel table

Run on an otherwise idle machine (docs/debugging.md: OpenMP's spinning
turns contention into noise)."""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc  # noqa: E402
import zoo  # noqa: E402
from disc.frontend import backend  # noqa: E402
from train_step import Contender, _loss  # noqa: E402


def phases(c, inputs, steps):
    times = {"forward": [], "backward": [], "optimizer": []}
    for _ in range(steps):
        c.opt.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        loss = _loss(c.forward(*inputs))
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        c.step()
        t3 = time.perf_counter()
        times["forward"].append(t1 - t0)
        times["backward"].append(t2 - t1)
        times["optimizer"].append(t3 - t2)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def optimizer_alone(c, calls=2000) -> float:
    """us per optimizer step alone (gradients unchanged)."""
    t = time.perf_counter()
    for _ in range(calls):
        c.step()
    return (time.perf_counter() - t) / calls * 1e6


def optimizer_breakdown(c, calls=2000):
    """us per optimizer step alone (gradients unchanged), and its parts."""
    spent = {"run": 0.0, "arguments": 0.0, "partition": 0.0}
    originals = (disc.Executable._run, disc._as_arguments, backend.DiscPartition.forward)

    def timed(key, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t
        return wrapper

    disc.Executable._run = timed("run", originals[0])
    disc._as_arguments = timed("arguments", originals[1])
    backend.DiscPartition.forward = timed("partition", originals[2])
    try:
        total = optimizer_alone(c, calls)
    finally:
        disc.Executable._run, disc._as_arguments, backend.DiscPartition.forward = originals
    per = {k: v / calls * 1e6 for k, v in spent.items()}
    return (f"optimizer step alone {total:.1f} us: partition call {per['partition']:.1f} "
            f"(runtime {per['run']:.1f}, argument export {per['arguments']:.1f}), "
            f"outside it {total - per['partition']:.1f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(zoo.ZOO))
    parser.add_argument("--size", type=int, default=0, help="index into the model's zoo sizes")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    entry = zoo.ZOO[args.model]
    base = zoo.build(args.model).train()
    for m in base.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    size = entry.sizes[args.size]
    inputs = entry.inputs(size, torch.Generator().manual_seed(0))
    print(f"{args.model} {entry.describe(size)}, {args.threads} threads")
    for name in ("inductor", "disc"):
        torch._dynamo.reset()
        c = Contender(name, copy.deepcopy(base))
        for _ in range(3):
            c.train_step(inputs)
        ms = phases(c, inputs, args.steps)
        print(f"{name:9s} " + "  ".join(f"{k} {v:.3f} ms" for k, v in ms.items()), flush=True)
        print(optimizer_breakdown(c) if name == "disc" else
              f"optimizer step alone {optimizer_alone(c):.1f} us")
        if name == "disc":
            if os.environ.get("DISC_PROFILE") == "1":
                disc.reset_profile()
                for _ in range(10):
                    c.train_step(inputs)
                print(disc.profile_table(15))
    return 0


if __name__ == "__main__":
    sys.exit(main())
