"""One attention, three ways, timed interleaved call by call in one process
(disc.bench.harness.time_interleaved): DISC's disc.attention (the runtime's
blocked attention, compiled once with every dim dynamic), eager
F.scaled_dot_product_attention (PyTorch's CPU flash kernel), and eager
matmul + softmax + matmul (what the decomposition computes). 2 threads by
default; prints medians and the max abs error against eager SDPA.

    .venv/bin/python bench/attention.py [--shape 1,3,1125,64] [--causal] [--heads-inside] [--threads 2]

The "Attention" figures in README.md come from this script.
"""
from __future__ import annotations

import argparse
import statistics

import torch
import torch.nn.functional as F

import disc
from disc.bench.harness import time_interleaved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="1,3,1125,64", help="B,H,L,E (keys: S = L)")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--heads-inside", action="store_true",
                        help="q, k, v as a linear layer leaves them: [B, L, H, E] "
                             "viewed as [B, H, L, E] (row stride H*E)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trials", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    b, h, length, e = (int(x) for x in args.shape.split(","))
    t = "tensor<?x?x?x?xf32>"
    causal = " causal" if args.causal else ""
    exe = disc.compile_mlir(f"""
func.func @main(%q: {t}, %k: {t}, %v: {t}) -> {t} {{
  %0 = disc.attention %q, %k, %v{causal} : ({t}, {t}, {t}) -> {t}
  return %0 : {t}
}}""")
    if args.heads_inside:
        q, k, v = (torch.randn(b, length, h, e).transpose(1, 2) for _ in range(3))
    else:
        q, k, v = (torch.randn(b, h, length, e) for _ in range(3))
    scale = e ** -0.5

    def sdpa(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)

    def decomposed(q, k, v):
        s = q @ k.transpose(-1, -2) * scale
        if args.causal:
            s = s.masked_fill(torch.ones(length, length, dtype=torch.bool).triu(1), float("-inf"))
        return torch.softmax(s, -1) @ v

    def compiled(q, k, v):
        return exe(q, k, v)[0]

    with torch.no_grad():
        error = (compiled(q, k, v) - sdpa(q, k, v)).abs().max().item()
        times = time_interleaved([compiled, sdpa, decomposed], (q, k, v), "cpu", warmup=3,
                                 trials=args.trials)
    names = ["disc.attention", "eager SDPA", "eager matmul+softmax+matmul"]
    print(f"[{b}, {h}, {length}, {e}]{' causal' if args.causal else ''}"
          f"{' heads inside' if args.heads_inside else ''}, "
          f"{args.threads} threads, max abs error vs eager SDPA {error:.1e}")
    for name, ts in zip(names, times):
        print(f"  {name:30s} {statistics.median(ts) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
