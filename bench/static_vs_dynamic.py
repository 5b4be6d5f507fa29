"""Dynamic dims' cost on one GraphNet sample, in one process: the sample
(its pinned sizes generalised, as `--generalize` does) is compiled by DISC
twice, with `dynamic=False` and with `dynamic=True`, then eager and both
compiled versions are timed interleaved, call by call, so that the VM's
drift hits all three alike (disc.bench.harness.time_interleaved, the
benchmark's own timing). Prints the three medians, the speedups over
eager and dynamic/static (the issue's "within 10%" figure). With
`--profile` both are compiled with DISC_PROFILE=1 and the kernel time per
call is printed by kind (generated loops, each library routine, copies).

    .venv/bin/python bench/static_vs_dynamic.py \\
        ../shared/graphnet/samples/torchvision/mobilenet_v3_small [--shape 0] [--calls 15] [--profile]
"""
from __future__ import annotations

import argparse
import collections
import os
import statistics

import torch

import disc
from disc.bench.harness import time_interleaved
from disc.bench.shapes import generalize, load_variant


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample")
    parser.add_argument("--shape", type=int, default=0, help="variant index (0: example shape)")
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--profile", action="store_true",
                        help="DISC_PROFILE=1: kernel time per call by kind, static and dynamic")
    args = parser.parse_args()
    if args.profile:
        os.environ["DISC_PROFILE"] = "1"  # read when DISC compiles
    torch.set_num_threads(args.threads)
    sample, constraints, values, inputs = load_variant(args.sample, args.shape)
    static_gm, _ = generalize(sample.module, constraints)
    dynamic_gm, _ = generalize(sample.module, constraints)  # its own code object
    runners = {"eager": static_gm,
               "static": torch.compile(static_gm, backend="disc", dynamic=False),
               "dynamic": torch.compile(dynamic_gm, backend="disc", dynamic=True)}
    with torch.no_grad():
        if args.profile:
            for run in runners.values():
                run(*inputs)  # compile before the profile is reset
            disc.reset_profile()
        times = time_interleaved(list(runners.values()), inputs, "cpu", warmup=3,
                                 trials=args.calls, budget_s=600.0)
    ms = {name: statistics.median(t) * 1e3 for name, t in zip(runners, times)}
    print(f"{sample.name} {values}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in ms.items())
          + f"; static {ms['eager'] / ms['static']:.2f}x, dynamic "
          f"{ms['eager'] / ms['dynamic']:.2f}x eager; dynamic/static time "
          f"{ms['dynamic'] / ms['static']:.2f}")
    if args.profile:
        _print_profile(times)


def _print_profile(times) -> None:
    """Kernel ms per call by kind. The static build is the first graph DISC
    compiled in this process (graph0-...), the dynamic one the second."""
    calls = len(times[0]) + 3  # the warm-up calls count too
    totals = collections.defaultdict(float)
    for entry in disc.profile():
        kind, where = entry["name"].split(" at ")
        build = "static" if where.startswith("graph0-") else "dynamic"
        words = kind.split()
        totals[(build, words[0] if words[0] != "library" else " ".join(words[:2]))] += \
            entry["seconds"] * 1e3 / calls
    for (build, kind), ms in sorted(totals.items()):
        print(f"  {build:8s} {kind:28s} {ms:8.3f} ms per call")


if __name__ == "__main__":
    main()
