"""Per-call overhead: the time of one call of a tiny compiled graph (a
softmax of a [4, 8] tensor: the work is negligible, the rest is the
wrappers around it) for eager, DISC and Inductor, both compiled with
dynamic=True, and the parts of DISC's call (its partition's forward, the
executable's run, the argument conversion). Best of --repeat timeit runs of
--number calls each, on one thread.

    .venv/bin/python bench/call_overhead.py [--number 20000] [--repeat 7]

Run it on an otherwise idle machine: it measures microseconds.
"""
from __future__ import annotations

import argparse
import gc
import timeit

import torch

import disc
from disc.frontend.backend import DiscPartition


def graph(x):
    return torch.softmax(x * 2.0, -1)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    x = torch.randn(4, 8)
    compiled = {}
    for backend in ("disc", "inductor"):
        torch._dynamo.reset()
        fn = torch.compile(graph, backend=backend, dynamic=True)
        fn(x), fn(torch.randn(5, 8))  # compiled once for both shapes
        compiled[backend] = fn

    def best(call) -> float:
        return min(timeit.repeat(call, number=args.number, repeat=args.repeat)) / args.number * 1e6

    rows = [("eager", best(lambda: graph(x))),
            ("disc (torch.compile)", best(lambda: compiled["disc"](x))),
            ("inductor (torch.compile)", best(lambda: compiled["inductor"](x)))]
    partitions = []
    for obj in gc.get_objects():
        try:
            if type(obj) is DiscPartition:
                partitions.append(obj)
        except ReferenceError:
            pass
    if len(partitions) == 1:
        (partition,) = partitions
        exe = partition.executable
        rows += [("  its partition's forward", best(lambda: partition.forward(x))),
                 ("  Executable._run", best(lambda: exe._run(disc._as_arguments([x]), [], -1,
                                                             partition.share_groups))),
                 ("  disc._as_arguments", best(lambda: disc._as_arguments([x])))]
    print("| call | us |\n|---|---:|")
    for name, us in rows:
        print(f"| {name} | {us:.2f} |")


if __name__ == "__main__":
    main()
