"""Dynamic dims' cost on GraphNet samples, each in one process: the sample
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

With several samples (or a folder of them: every model.py below it), each
runs in a subprocess of its own and a Markdown table follows: per sample
the three medians and dynamic/static, then how many are within 10% and the
geometric mean of dynamic/static (`--out FILE` writes the table too).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import types

import torch

import disc
from disc.bench.graphnet import find_samples
from disc.bench.harness import time_interleaved
from disc.bench.shapes import generalize, load_variant


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", nargs="+", help="sample directories or folders of them")
    parser.add_argument("--out", help="also write the Markdown table (several samples) here")
    parser.add_argument("--shape", type=int, default=0, help="variant index (0: example shape)")
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=1200,
                        help="seconds per sample (several samples)")
    parser.add_argument("--profile", action="store_true",
                        help="DISC_PROFILE=1: kernel time per call by kind, static and dynamic")
    args = parser.parse_args()
    paths = find_samples(args.samples)
    if not paths:
        parser.error(f"no model.py under {' '.join(args.samples)}")
    if len(paths) != 1:
        return _run_each(paths, args)
    ms = _measure(paths[0], args)
    print(RESULT_TAG + json.dumps(ms), flush=True)
    return 0


RESULT_TAG = "static_vs_dynamic: "


def _own_forward(module: torch.nn.Module):
    """`module.forward` bound to a copy of its function with a code object of
    its own (Dynamo keys its cache on the code object)."""
    fn = type(module).forward
    code = fn.__code__.replace(co_name=fn.__code__.co_name)  # a new object
    copy = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    return types.MethodType(copy, module)


def _measure(path: str, args) -> dict:
    """Compiles and times one sample (this process); prints its line and
    returns the three medians in ms."""
    if args.profile:
        os.environ["DISC_PROFILE"] = "1"  # read when DISC compiles
    torch.set_num_threads(args.threads)
    sample, constraints, values, inputs = load_variant(path, args.shape)
    try:
        static_gm, _ = generalize(sample.module, constraints)
        dynamic_gm, _ = generalize(sample.module, constraints)  # its own code object
    except Exception as e:  # noqa: BLE001 - torch.fx cannot trace every sample
        # As the harness does: the sample as it is. Each compiled copy needs
        # a forward of its own code object, or Dynamo would share one cache
        # between the static and the dynamic build.
        print(f"{sample.name}: not generalised ({type(e).__name__}: {e}); "
              "its model.py as it is", file=sys.stderr)
        static_gm, dynamic_gm = _own_forward(sample.module), _own_forward(sample.module)
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
    return dict(ms, sample=sample.name, symbols=str(values))


def _run_each(paths, args) -> int:
    """Every sample in a subprocess of its own (a crash or a hang costs one
    row); the table and the summary at the end."""
    import math
    import subprocess
    import sys

    rows = []
    for path in paths:
        cmd = [sys.executable, __file__, path, "--shape", str(args.shape), "--calls",
               str(args.calls), "--threads", str(args.threads)] + \
            (["--profile"] if args.profile else [])
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            out = proc.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout or ""
            if isinstance(out, bytes):
                out = out.decode(errors="replace")
            proc = None
        lines = [line for line in out.splitlines() if line.startswith(RESULT_TAG)]
        if lines:
            rows.append(json.loads(lines[-1][len(RESULT_TAG):]))
            print(out.replace(lines[-1] + "\n", ""), end="", flush=True)
        else:
            why = "timeout" if proc is None else \
                f"exit {proc.returncode}: {(proc.stderr or '').strip().splitlines()[-1:]}"
            rows.append({"sample": path, "error": why})
            print(f"{path}: {why}", flush=True)
    table = ["| sample | eager ms | static ms | dynamic ms | dynamic / static |",
             "|---|---:|---:|---:|---:|"]
    ratios = []
    for row in rows:
        if "error" in row:
            table.append(f"| {row['sample']} | {row['error']} | | | |")
            continue
        ratio = row["dynamic"] / row["static"]
        ratios.append(ratio)
        table.append(f"| {row['sample']} | {row['eager']:.2f} | {row['static']:.2f} | "
                     f"{row['dynamic']:.2f} | {ratio:.2f} |")
    if ratios:
        within = sum(r <= 1.10 for r in ratios)
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        table.append("")
        table.append(f"Dynamic within 10% of static on {within} of {len(ratios)} samples "
                     f"(worst {max(ratios):.2f}); geometric mean of dynamic/static time "
                     f"{geomean:.3f}; {len(rows) - len(ratios)} failed. Command: "
                     f"`bench/static_vs_dynamic.py {' '.join(args.samples)} --shape {args.shape} "
                     f"--calls {args.calls} --threads {args.threads}`.")
    text = "\n".join(table) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0 if len(ratios) == len(rows) else 1


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
    raise SystemExit(main())
