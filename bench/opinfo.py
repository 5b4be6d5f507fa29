"""The OpInfo suite in full: every sample of every op DISC claims
(python/tests/opinfo/runner.py), f32 and int64, static and dynamic=True,
against eager. Prints and writes a report: pass rate (samples that match
eager), compiled share (samples whose graph DISC compiled whole), and per op
the mismatches, errors and fallback reasons.

    .venv/bin/python bench/opinfo.py --out bench/results/opinfo.md [--ops add,sum]

--grad: training instead: every float32 sample with inputs that require
grad, dynamic=True, outputs and input gradients against eager (the joint
graph's forward and backward compiled by DISC; runner.run_gradient_samples).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))

import torch  # noqa: E402

from opinfo.runner import (claimed_opinfos, dtypes_for, run_gradient_samples,  # noqa: E402
                           run_samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-out/opinfo.md")
    parser.add_argument("--jsonl", default=None, help="every sample result, one JSON per line")
    parser.add_argument("--ops", default=None, help="comma-separated OpInfo names (default: all claimed)")
    parser.add_argument("--max-samples", type=int, default=None)
    parser.add_argument("--grad", action="store_true",
                        help="gradients (training) instead of forward results")
    args = parser.parse_args()
    torch.set_num_threads(2)
    wanted = set(args.ops.split(",")) if args.ops else None
    results = []
    start = time.time()
    for name, op in claimed_opinfos():
        if wanted and name not in wanted:
            continue
        if args.grad:
            if not op.supports_autograd or torch.float32 not in dtypes_for(op):
                continue
            rs = run_gradient_samples(op, torch.float32, args.max_samples)
            results += rs
            bad = sum(r.status in ("mismatch", "error") for r in rs)
            print(f"{name:45s} gradients {len(rs):3d} samples, {bad} bad", flush=True)
            continue
        for dtype in dtypes_for(op):
            for dynamic in (False, True):
                rs = run_samples(op, dtype, dynamic, args.max_samples)
                results += rs
                bad = sum(r.status in ("mismatch", "error") for r in rs)
                print(f"{name:45s} {str(dtype):15s} {'dynamic' if dynamic else 'static ':7s} "
                      f"{len(rs):3d} samples, {bad} bad", flush=True)
    elapsed = time.time() - start
    compared = [r for r in results if r.status != "skipped"]
    matched = [r for r in compared if r.status == "match"]
    compiled = [r for r in matched if r.coverage == "compiled"]
    partial = [r for r in matched if r.coverage == "partial"]
    bad = [r for r in compared if r.status != "match"]
    reasons = collections.Counter()
    for r in matched:
        if r.coverage != "compiled":
            for reason in r.detail.split("; "):
                reasons[reason] += 1
    pct = lambda a, b: f"{100.0 * a / b:.1f}%" if b else "-"  # noqa: E731
    lines = [
        "# OpInfo suite: PyTorch's op samples through torch.compile(backend=\"disc\")"
        + (", gradients" if args.grad else ""),
        "",
        f"`bench/opinfo.py` ({time.strftime('%Y-%m-%d')}, torch {torch.__version__}, "
        f"{elapsed / 60:.1f} min): {len({r.op for r in results})} OpInfos, "
        + ("f32 samples with inputs that require grad, `dynamic=True`: outputs and the "
           "gradients of every input against eager, the forward and the backward graph "
           "compiled by DISC" if args.grad else
           "f32 and int64 where the op takes them, static and `dynamic=True`")
        + (f", the first {args.max_samples} samples of each" if args.max_samples else "")
        + f". Command: `.venv/bin/python bench/opinfo.py{' --grad' if args.grad else ''}"
        f"{' --max-samples ' + str(args.max_samples) if args.max_samples else ''}`.",
        "",
        "A sample's graph with no ATen compute node (views only) runs in eager by "
        "design and counts as not compiled.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| samples compared with eager | {len(compared)} ({len(results) - len(compared)} "
        "skipped: eager raises) |",
        f"| match eager | {len(matched)} ({pct(len(matched), len(compared))}) |",
        f"| mismatches + errors | {len(bad)} |",
        f"| run DISC-compiled code (whole graph) | {len(compiled)} "
        f"({pct(len(compiled), len(compared))}) |",
        f"| partly compiled | {len(partial)} ({pct(len(partial), len(compared))}) |",
        "",
    ]
    if bad:
        lines += ["## Mismatches and errors", ""]
        for r in bad:
            lines.append(f"- `{r.op}` {r.dtype} {'dynamic' if r.dynamic else 'static'} "
                         f"sample {r.index} `{r.description}`: {r.status}: {r.detail}")
        lines.append("")
    lines += ["## Fallback reasons (samples)", "", "| samples | reason |", "|---|---|"]
    for reason, count in reasons.most_common():
        lines.append(f"| {count} | {reason.replace('|', '/')} |")
    per_op = collections.defaultdict(lambda: [0, 0])
    for r in compared:
        per_op[r.op][0] += 1
        per_op[r.op][1] += r.status == "match" and r.coverage == "compiled"
    lines += ["", "## Compiled share per op", "", "| op | samples | compiled |", "|---|---|---|"]
    for op, (n, c) in sorted(per_op.items()):
        lines.append(f"| `{op}` | {n} | {pct(c, n)} |")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    if args.jsonl:
        with open(args.jsonl, "w") as f:
            for r in results:
                f.write(json.dumps(r.__dict__) + "\n")
    print("\n".join(lines[:14]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
