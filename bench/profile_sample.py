"""Where one GraphNet sample's time goes, DISC against eager, in one process.

The sample (generalised as `--generalize` does) is compiled by DISC with
DISC_PROFILE=1, then eager and DISC are timed interleaved at one shape
variant (disc.bench.harness.time_interleaved). Printed: both medians, DISC's
kernel time per call by kind, DISC's top kernels (their names point into a
DISC_DUMP_DIR dump: see docs/debugging.md), and eager's top ATen ops from
torch.profiler, so that a slow sample can be traced to the kernels that
make the difference.

    .venv/bin/python bench/profile_sample.py \\
        ../shared/graphnet/samples/others/pigu_hybrid [--shape 0] [--dynamic false] [--top 15]

With --mode train, a call is the harness's training step (forward, loss =
sum of the outputs, backward to the weights and float inputs:
disc.bench.harness.training_step), and the eager profile is of that step.
"""
from __future__ import annotations

import argparse
import collections
import os
import statistics

import torch

import disc
from disc.bench.harness import time_interleaved, trainable_inputs, training_step
from disc.bench.shapes import generalize, load_variant


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample")
    parser.add_argument("--shape", type=int, default=0, help="variant index (0: example shape)")
    parser.add_argument("--dynamic", choices=["true", "false"], default="true")
    parser.add_argument("--mode", choices=["infer", "train"], default="infer")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--top", type=int, default=15, help="kernels and ATen ops listed")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    os.environ["DISC_PROFILE"] = "1"  # read when DISC compiles
    torch.set_num_threads(args.threads)
    sample, constraints, values, inputs = load_variant(args.sample, args.shape)
    module, _ = generalize(sample.module, constraints)
    compiled = torch.compile(module, backend="disc", dynamic=args.dynamic == "true")
    eager = module
    if args.mode == "train":
        trainable = trainable_inputs(sample.arg_names)
        eager, compiled = (training_step(f, trainable) for f in (module, compiled))
    with torch.no_grad():
        compiled(*inputs)  # compile before the profile is reset
        disc.reset_profile()
        times = time_interleaved([eager, compiled], inputs, "cpu", warmup=2,
                                 trials=args.calls, budget_s=600.0)
        calls = len(times[1]) + 2  # the warm-up calls are profiled too
        eager_ms, disc_ms = (statistics.median(t) * 1e3 for t in times)
        print(f"{sample.name} {values} ({args.mode}): eager {eager_ms:.2f} ms, "
              f"disc {disc_ms:.2f} ms ({eager_ms / disc_ms:.2f}x)")
        _print_disc_profile(calls, args.top)
        _print_eager_profile(eager, inputs, args.top)


def _print_disc_profile(calls: int, top: int) -> None:
    entries = disc.profile()
    by_kind = collections.defaultdict(float)
    for entry in entries:
        words = entry["name"].split(" at ")[0].split()
        kind = words[0] if words[0] != "library" else " ".join(words[:2])
        by_kind[kind] += entry["seconds"] * 1e3 / calls
    print("DISC kernel time per call by kind:")
    for kind, ms in sorted(by_kind.items(), key=lambda item: -item[1]):
        print(f"  {kind:28s} {ms:8.3f} ms")
    print(f"DISC top {top} kernels (ms per call, launches per call):")
    for entry in entries[:top]:
        print(f"  {entry['seconds'] * 1e3 / calls:8.3f} ms  x{entry['calls'] / calls:<5.1f} "
              f"{entry['name']}")


def _print_eager_profile(module, inputs, top: int) -> None:
    from torch.profiler import ProfilerActivity, profile
    module(*inputs)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        module(*inputs)
    print(f"eager top {top} ATen ops (one call):")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=top))


if __name__ == "__main__":
    main()
