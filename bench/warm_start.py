"""Warm start: DISC's compile time in a second process (compile-cache hit)
against the first (cold), per GraphNet sample, PyTorch's tracing apart.

    .venv/bin/python bench/warm_start.py [--out DIR] [SAMPLE_DIRS...]

Runs the GraphNet harness (DISC only, dynamic=True, the example shape) twice
with one fresh DISC_CACHE_DIR: the first process compiles and fills the
cache, the second finds every partition there. Per sample: DISC's compile
time (stats()["compile_seconds"]: compile_mlir's wall time) cold and warm,
their ratio, and PyTorch's tracing time (first call - DISC compile - a
steady call). Writes DIR/warm_start.md (the table) and prints it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_pass(name: str, out: str, cache: str, paths: list, timeout: float) -> dict:
    env = dict(os.environ, DISC_CACHE="1", DISC_CACHE_DIR=cache)
    cmd = [sys.executable, "-m", "disc.bench", "graphnet", *paths, "--compilers", "disc",
           "--dynamic", "true", "--trials", "1", "--warmup", "0", "--min-time", "0",
           "--budget", "1", "--timeout", str(timeout), "--out", os.path.join(out, name)]
    print(f"[warm_start] {name}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    records = {}
    with open(os.path.join(out, name, "results.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r.get("contender") == "disc" and r.get("shape_index") == 0:
                records[r["sample"]] = r
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*",
                        default=[os.path.join(ROOT, "..", "shared", "graphnet", "samples")])
    parser.add_argument("--out", default=os.path.join(ROOT, "bench-out", "warm-start"))
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args(argv)
    cache = os.path.join(args.out, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    cold = run_pass("cold", args.out, cache, args.paths, args.timeout)
    warm = run_pass("warm", args.out, cache, args.paths, args.timeout)

    rows, ratios = [], []
    for sample in sorted(cold):
        c, w = cold[sample], warm.get(sample, {})
        if c.get("outcome") != "correct" or w.get("outcome") != "correct":
            rows.append(f"| {sample} | {c.get('outcome')} / {w.get('outcome')} | | | | | |")
            continue
        trace_c = max(0.0, c["first_call_s"] - c["disc_compile_s"] - c["median_ms"] / 1e3)
        trace_w = max(0.0, w["first_call_s"] - w["disc_compile_s"] - w["median_ms"] / 1e3)
        ratio = w["disc_compile_s"] / c["disc_compile_s"] if c["disc_compile_s"] else 0.0
        ratios.append(ratio)
        rows.append(f"| {sample} | {c['disc_compilations']} / {w['disc_compilations']} "
                    f"(hits {w.get('cache_hits', 0)}) | {c['disc_compile_s']:.2f} | "
                    f"{w['disc_compile_s']:.3f} | {ratio:.1%} | {trace_c:.1f} | {trace_w:.1f} |")
    lines = [
        "# Warm start: DISC compile time, cold vs compile-cache hit",
        "",
        f"`{' '.join(['bench/warm_start.py'] + (argv or sys.argv[1:]))}`; DISC only, "
        "dynamic=True, the example shape, two processes sharing one DISC_CACHE_DIR.",
        "",
        "| sample | DISC compilations cold / warm | DISC compile cold (s) | warm (s) | warm/cold "
        "| PyTorch tracing cold (s) | warm (s) |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    if ratios:
        lines.append(f"{len(ratios)} samples correct in both: warm/cold median "
                     f"{statistics.median(ratios):.1%}, max {max(ratios):.1%}; "
                     f"{sum(r <= 0.10 for r in ratios)}/{len(ratios)} at most 10%.")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "warm_start.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
