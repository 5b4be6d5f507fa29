"""Compile-time benchmark: a generated 100-op `disc` module (elementwise
chains, broadcasts, reductions, reshapes, a transpose and matmuls, all with
dynamic dims), compiled several times; prints the median, and checks the
result once so that a fast-but-wrong compile cannot pass.

    .venv/bin/python bench/compile_time.py [--ops 100] [--repeats 5] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch

import disc

T = "tensor<?x?xf32>"
UNARY = ["tanh", "exponential", "logistic", "negate", "abs", "sine"]
BINARY = ["add", "multiply", "subtract", "maximum", "minimum"]


def build_module(num_ops: int) -> str:
    """A chain over x[N, M] and w[M, M] with exactly `num_ops` disc ops."""
    lines = [
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %n = tensor.dim %x, %c0 : {T}",
        f"  %m = tensor.dim %x, %c1 : {T}",
        "  %shape = tensor.from_elements %n, %m : tensor<2xindex>",
        "  %nm = arith.muli %n, %m : index",
        "  %flat = tensor.from_elements %nm : tensor<1xindex>",
    ]
    count = 0
    values = ["%x"]  # the 2-d values, in order

    def emit(text, full=True):
        nonlocal count
        count += 1
        name = f"%v{count}"
        lines.append(f"  {name} = {text}")
        if full:
            values.append(name)
        return name

    i = 0
    while count < num_ops:
        cur, prev = values[-1], values[max(0, len(values) - 3)]
        kind = i % 10
        remaining = num_ops - count
        if kind == 3 and remaining >= 1:
            emit(f"disc.dot_general {cur}, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : ({T}, {T}) -> {T}")
        elif kind == 5 and remaining >= 2:
            r = emit(f"disc.reduce {cur}, dims = [1], kind = max : ({T}) -> tensor<?xf32>", False)
            emit(f"disc.dynamic_broadcast_in_dim {r}, %shape, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> {T}")
        elif kind == 7 and remaining >= 2:
            f = emit(f"disc.dynamic_reshape {cur}, %flat : ({T}, tensor<1xindex>) -> tensor<?xf32>", False)
            emit(f"disc.dynamic_reshape {f}, %shape : (tensor<?xf32>, tensor<2xindex>) -> {T}")
        elif kind == 9 and remaining >= 2:
            t = emit(f"disc.transpose {cur}, dims = [1, 0] : ({T}) -> {T}")
            emit(f"disc.transpose {t}, dims = [1, 0] : ({T}) -> {T}")
        elif kind % 2 == 0:
            emit(f"disc.{UNARY[i % len(UNARY)]} {cur} : {T}")
        else:
            emit(f"disc.{BINARY[i % len(BINARY)]} {cur}, {prev} : {T}")
        i += 1
    body = "\n".join(lines)
    return f"func.func @main(%x: {T}, %w: {T}) -> {T} {{\n{body}\n  return {values[-1]} : {T}\n}}\n"


def count_disc_ops(text: str) -> int:
    return sum(1 for line in text.splitlines() if "= disc." in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    text = build_module(args.ops)
    assert count_disc_ops(text) == args.ops
    exe = disc.compile_mlir(text)  # warm-up (process-wide LLVM initialisation)
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        exe = disc.compile_mlir(text)
        times.append(time.perf_counter() - start)
    x = torch.rand(8, 8) * 0.1
    w = torch.rand(8, 8) * 0.1
    (y,) = exe(x, w)
    assert y.shape == (8, 8) and torch.isfinite(y).all()
    result = {
        "ops": args.ops,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "repeats": args.repeats,
        "cpu": platform.processor() or platform.machine(),
    }
    print(f"compile time of a {args.ops}-op module: median {result['median_s'] * 1e3:.0f} ms "
          f"(min {result['min_s'] * 1e3:.0f}, max {result['max_s'] * 1e3:.0f}, {args.repeats} runs)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
