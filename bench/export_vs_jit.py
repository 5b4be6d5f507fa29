"""Exported artifact vs the JIT path: the model zoo (examples/zoo.py) through
torch.compile(backend="disc", dynamic=True) and through disc.export, saved
and loaded back with disc.load, run at each zoo size with the calls of the
two interleaved (medians per call), plus disc.load's time per artifact.

    .venv/bin/python bench/export_vs_jit.py [--calls 30] [MODEL ...]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import disc  # noqa: E402
import zoo  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=["mlp", "resnet", "transformer", "gnn",
                                                       "audio", "embedding_mlp"])
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    rows, ratios = [], []
    tmp = tempfile.mkdtemp(prefix="disc-export-bench-")
    for name in args.models:
        entry = zoo.ZOO[name]
        model = zoo.build(name).eval()
        g = torch.Generator().manual_seed(0)
        jit = torch.compile(model, backend="disc", dynamic=True)
        artifact = disc.export(model, entry.inputs(entry.sizes[0], g))
        path = os.path.join(tmp, f"{name}.disc")
        artifact.save(path)
        disc.load(path)  # imports the loader's Python modules once
        start = time.perf_counter()
        loaded = disc.load(path)
        load_ms = (time.perf_counter() - start) * 1e3
        for size in entry.sizes:
            inputs = entry.inputs(size, g)
            with torch.no_grad():
                for _ in range(3):
                    jit(*inputs), loaded(*inputs)
                t_jit, t_art = [], []
                for _ in range(args.calls):
                    t0 = time.perf_counter()
                    jit(*inputs)
                    t1 = time.perf_counter()
                    loaded(*inputs)
                    t2 = time.perf_counter()
                    t_jit.append(t1 - t0)
                    t_art.append(t2 - t1)
            a, b = statistics.median(t_jit) * 1e3, statistics.median(t_art) * 1e3
            ratios.append(b / a)
            rows.append(f"| {name} | {entry.describe(size)} | {a:.3f} | {b:.3f} | {b / a:.3f} | "
                        f"{load_ms:.1f} | {os.path.getsize(path) / 1e6:.2f} |")
    geo = statistics.geometric_mean(ratios)
    print("| model | shape | torch.compile(disc) ms | exported artifact ms | artifact / JIT "
          "| disc.load ms | artifact MB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print(f"\ngeomean artifact/JIT time {geo:.3f} over {len(ratios)} (model, shape) pairs; "
          f"{torch.get_num_threads()} threads, {args.calls} interleaved calls each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
