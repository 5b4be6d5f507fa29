"""Memory-bound ops one at a time: eager vs DISC (dynamic=True), 2 threads,
median of 20 calls after 3 warm-up calls, max abs error against eager.

    .venv/bin/python bench/cpu_ops.py [case ...]

The figures quoted in docs/architecture.md ("CPU loops") come from this
script (the "before" figures from the same script at earlier commits).
"""
import sys
import time

import torch
import torch.nn.functional as F

import disc  # noqa: F401  (registers the "disc" backend)


def median_ms(fn, *args, n=20):
    for _ in range(3):
        fn(*args)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e3


CASES = {
    "softmax": (lambda x: torch.softmax(x, -1), lambda: (torch.randn(16, 12, 128, 128),)),
    "layernorm": (lambda x, w, b: F.layer_norm(x, (768,), w, b),
                  lambda: (torch.randn(16, 128, 768), torch.randn(768), torch.randn(768))),
    "gelu_bias": (lambda x, b: F.gelu(x + b), lambda: (torch.randn(16, 128, 3072), torch.randn(3072))),
    "add_relu": (lambda x, y: torch.relu(x + y),
                 lambda: (torch.randn(64, 512, 768), torch.randn(64, 512, 768))),
    "sigmoid_mul": (lambda x: x * torch.sigmoid(x), lambda: (torch.randn(8, 64, 80, 80),)),
    # gathers with computed indices (disc-mark-noalias-args: row indices and
    # weights hoisted out of the column loop)
    "upsample_bilinear": (lambda x: F.interpolate(x, scale_factor=2.0, mode="bilinear"),
                          lambda: (torch.randn(1, 64, 64, 128),)),
    # one long row (rows < threads): convtasnet's global layer norm,
    # GroupNorm(1, C) at batch 1, reduces over all of [512, 4000]
    "groupnorm1": (lambda x, w, b: F.group_norm(x, 1, w, b, 1e-8),
                   lambda: (torch.randn(1, 512, 4000), torch.randn(512), torch.randn(512))),
    "linear_gelu": (lambda x, w, b: F.gelu(F.linear(x, w, b)),
                    lambda: (torch.randn(16, 128, 768), torch.randn(3072, 768), torch.randn(3072))),
}


def main(names) -> int:
    torch.set_num_threads(2)
    torch.manual_seed(0)
    for name in names or CASES:
        fn, make = CASES[name]
        args = make()
        compiled = torch.compile(fn, backend="disc", dynamic=True)
        err = (fn(*args) - compiled(*args)).abs().max().item()
        eager, ours = median_ms(fn, *args), median_ms(compiled, *args)
        print(f"{name:12s} eager {eager:8.2f} ms  disc {ours:8.2f} ms  "
              f"x{eager / ours:5.2f}  max abs error {err:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
