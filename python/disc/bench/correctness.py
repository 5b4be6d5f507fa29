"""Correctness of DISC on GraphNet samples, against eager PyTorch.

    python -m disc.bench.correctness PATH [PATH ...] [--jobs N] [--dynamic]
                                     [--timeout S] [--json FILE]

Each sample (a directory with model.py, or a folder searched for them) runs
in its own subprocess with a timeout, so a crash or hang is a recorded
outcome, not the end of the run. The sample runs once in eager and once
through `torch.compile(model, backend="disc")` (by default as a user would
call it: static shapes first; `--dynamic` compiles with dynamic=True), and
every output is compared with `outputs_match`. Prints a Markdown table:
sample, correct, compiled nodes, fallback nodes with their ops.

Tolerance (per output tensor, by dtype): |disc - eager| <= rtol * |eager| +
atol with atol = rtol * max(1, max|eager|), rtol 1e-5 for float64, 1e-3 for
float32, 1e-2 for float16, 2e-2 for bfloat16. The absolute part scales with
the output's magnitude because rounding error in a reduction scales with
the size of its terms, not of its result: a sum of large terms that cancels
to a small value carries an error of the terms' order in eager PyTorch too.
NaN and inf must be in the same places; integer and bool outputs must be
equal.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

RTOL = {"float64": 1e-5, "float32": 1e-3, "float16": 1e-2, "bfloat16": 2e-2,
        "complex64": 1e-3, "complex128": 1e-5}


def outputs_match(expected, actual) -> tuple[bool, float, str]:
    """Compares one output (tensor, or nested tuple/list of them) of DISC
    with eager. Returns (ok, max abs error, what differs)."""
    import torch

    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return False, float("inf"), f"expected {len(expected)} outputs, got {actual!r:.80}"
        worst, ok_all, why = 0.0, True, ""
        for i, (e, a) in enumerate(zip(expected, actual)):
            ok, err, detail = outputs_match(e, a)
            worst = max(worst, err)
            if not ok and ok_all:
                ok_all, why = False, f"output {i}: {detail}"
        return ok_all, worst, why
    if not isinstance(expected, torch.Tensor):
        same = expected == actual
        return bool(same), 0.0 if same else float("inf"), "" if same else f"{actual} != {expected}"
    if not isinstance(actual, torch.Tensor):
        return False, float("inf"), f"got a {type(actual).__name__}, expected a tensor"
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False, float("inf"), (f"got {actual.dtype}{list(actual.shape)}, expected "
                                     f"{expected.dtype}{list(expected.shape)}")
    if expected.numel() == 0:
        return True, 0.0, ""
    dtype = str(expected.dtype).replace("torch.", "")
    if dtype not in RTOL:
        same = torch.equal(actual, expected)
        return same, 0.0 if same else float("inf"), "" if same else "integer/bool values differ"
    errors = float_errors(expected, actual)
    if errors is None:
        return False, float("inf"), "NaN/inf in different places"
    err, _, ratio, scale = errors
    rtol = RTOL[dtype]
    bad = ratio > rtol
    worst = err.max().item() if err.numel() else 0.0
    if bad.any():
        return False, worst, (f"{int(bad.sum())} of {expected.numel()} elements off, max abs "
                              f"error {worst:.3g} (tolerance {rtol:g} relative, "
                              f"{rtol * scale:.3g} absolute)")
    return True, worst, ""


def float_errors(expected, actual):
    """Errors of a floating-point or complex output of the same shape and
    dtype as eager's, over the elements where eager is finite: (|d - e|,
    |e|, |d - e| / (|e| + scale), scale) with scale = max(1, max|e|); the
    tolerance rule is ratio <= rtol. None when NaN/inf are not in the same
    places."""
    import torch

    cast = torch.complex128 if expected.is_complex() else torch.float64
    e, a = expected.detach().cpu().to(cast), actual.detach().cpu().to(cast)
    finite = torch.isfinite(e)
    if not torch.equal(finite, torch.isfinite(a)) or not torch.equal(
            e[~finite].nan_to_num(0, 1, -1), a[~finite].nan_to_num(0, 1, -1)):
        return None
    e, a = e[finite], a[finite]
    magnitude = e.abs()
    scale = max(1.0, magnitude.max().item()) if magnitude.numel() else 1.0
    err = (a - e).abs()
    return err, magnitude, err / (magnitude + scale), scale


def disc_stats_delta(before: dict, after: dict) -> dict:
    """What one compilation added to disc.stats(): compilations, compiled
    and fallback nodes, calls run in eager, and the fallback ops with their
    counts."""
    return {
        "disc_compilations": after["compilations"] - before["compilations"],
        "disc_compile_s": after.get("compile_seconds", 0) - before.get("compile_seconds", 0),
        "cache_hits": after.get("cache_hits", 0) - before.get("cache_hits", 0),
        "compiled_nodes": after["compiled_nodes"] - before["compiled_nodes"],
        "kernels": after.get("kernels", 0) - before.get("kernels", 0),
        "fallback_nodes": after["fallback_nodes"] - before["fallback_nodes"],
        # Calls of a compiled partition that its compiled code rejected
        # (they ran the partition in eager): the timing is then partly eager's.
        "eager_calls": after.get("eager_calls", 0) - before.get("eager_calls", 0),
        "fallback_ops": {k: v - before["fallback_ops"].get(k, 0)
                         for k, v in after["fallback_ops"].items()
                         if v != before["fallback_ops"].get(k, 0)},
    }


def check_sample(path: str, dynamic: bool | None = None, threads: int = 1) -> dict:
    """Runs one sample in this process; returns its result record."""
    import torch

    import disc
    from disc.bench.graphnet import load_sample

    torch.set_num_threads(threads)
    start = time.time()
    sample = load_sample(path)
    record = {"sample": sample.name, "path": path}
    with torch.no_grad():
        expected = sample.module(*sample.inputs)
        torch._dynamo.reset()
        before = disc.stats()
        compiled = torch.compile(sample.module, backend="disc", dynamic=dynamic)
        actual = compiled(*sample.inputs)
    after = disc.stats()
    ok, err, detail = outputs_match(expected, actual)
    delta = disc_stats_delta(before, after)
    record.update(
        outcome="correct" if ok else "wrong",
        max_abs_error=err,
        detail=detail,
        compiled_nodes=delta["compiled_nodes"],
        fallback_nodes=delta["fallback_nodes"],
        fallback_ops=delta["fallback_ops"],
        compilations=delta["disc_compilations"],
        seconds=round(time.time() - start, 1),
    )
    return record


def run_isolated(path: str, dynamic: bool | None, timeout: float, threads: int = 1) -> dict:
    """check_sample in a subprocess: a crash, hang or exception becomes the
    record's outcome ("crash", "timeout", "error")."""
    from disc.bench.graphnet import sample_name

    from .isolation import run_child

    start = time.time()
    base = {"sample": sample_name(path), "path": path}
    child = run_child("disc.bench.correctness",
                      ["--one", path, "--threads", threads] + (["--dynamic"] if dynamic else []),
                      timeout)
    for line in reversed(child.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {**base, "outcome": child.outcome or "error",
            "detail": child.detail or "the worker printed no result",
            "seconds": round(time.time() - start, 1)}


def markdown_table(records: list[dict]) -> str:
    lines = ["| sample | correct | compiled nodes | fallback nodes | fallback ops | s |",
             "|---|---|---:|---:|---|---:|"]
    for r in sorted(records, key=lambda r: r["sample"]):
        ops = "; ".join(f"{n}x {k}" for k, n in sorted(r.get("fallback_ops", {}).items(),
                                                       key=lambda kv: -kv[1]))
        verdict = {"correct": "yes", "wrong": "**no**"}.get(r["outcome"], f"**{r['outcome']}**")
        lines.append(f"| {r['sample']} | {verdict} | {r.get('compiled_nodes', '')} | "
                     f"{r.get('fallback_nodes', '')} | {ops.replace('|', '/')} | {r.get('seconds', '')} |")
    n = len(records)
    correct = sum(r["outcome"] == "correct" for r in records)
    full = sum(r["outcome"] == "correct" and r.get("fallback_nodes") == 0 for r in records)
    lines.append("")
    lines.append(f"{correct}/{n} correct, {full}/{n} fully compiled (no fallback node)")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m disc.bench.correctness", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # worker mode
    parser.add_argument("--dynamic", action="store_true", help="compile with dynamic=True")
    parser.add_argument("--jobs", type=int, default=1, help="samples run in parallel")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per sample")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per sample")
    parser.add_argument("--json", help="write one JSON record per sample to this file")
    args = parser.parse_args(argv)
    if args.one:
        try:
            record = check_sample(args.one, dynamic=True if args.dynamic else None,
                                  threads=args.threads)
        except Exception as e:  # recorded, not fatal
            from disc.bench.graphnet import sample_name

            record = {"sample": sample_name(args.one), "path": args.one, "outcome": "error",
                      "detail": f"{type(e).__name__}: {str(e)[:2000]}"}
        print(json.dumps(record), flush=True)
        return 0
    from disc.bench.graphnet import find_samples

    paths = find_samples(args.paths or [])
    if not paths:
        parser.error("no samples (directories with model.py) found")
    records = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_isolated, p, args.dynamic, args.timeout, args.threads)
                   for p in paths]
        for i, future in enumerate(futures):
            r = future.result()
            records.append(r)
            print(f"[{i + 1}/{len(paths)}] {r['outcome']:8s} {r['sample']} ({r.get('seconds', '?')} s)"
                  + (f": {r['detail'][:300]}" if r["outcome"] != "correct" else ""),
                  file=sys.stderr, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
    print(markdown_table(records))
    return 0 if all(r["outcome"] == "correct" for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
