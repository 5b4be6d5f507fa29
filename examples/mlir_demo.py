"""The dialect-level example (`python examples/mlir_demo.py`): compile examples/mlp.mlir once, run it at several batch
sizes, and compare with the same model in eager PyTorch (max error, median
time per call)."""
from __future__ import annotations

import os
import sys
import time

import torch

import disc
from demo import median_ms

HERE = os.path.dirname(os.path.abspath(__file__))
BATCHES = [1, 7, 64, 333, 1024, 4096]


class MLP(torch.nn.Module):
    """The PyTorch twin of examples/mlp.mlir."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 256)
        self.fc2 = torch.nn.Linear(256, 64)
        self.norm = torch.nn.LayerNorm(64, eps=1e-5)
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x))
        r = self.fc2(h) + x
        return torch.softmax(self.head(self.norm(r)), dim=-1)

    def parameters_in_program_order(self):
        return [self.fc1.weight, self.fc1.bias, self.fc2.weight, self.fc2.bias,
                self.norm.weight, self.norm.bias, self.head.weight, self.head.bias]


def main() -> int:
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    model = MLP().eval()
    with torch.no_grad():  # non-trivial affine parameters for the layer norm
        model.norm.weight.uniform_(0.5, 1.5)
        model.norm.bias.uniform_(-0.5, 0.5)
    params = [p.detach() for p in model.parameters_in_program_order()]
    with open(os.path.join(HERE, "mlp.mlir")) as f:
        text = f.read()

    before = disc.stats()["compilations"]
    start = time.perf_counter()
    exe = disc.compile_mlir(text)
    compile_ms = (time.perf_counter() - start) * 1e3
    print(f"DISC demo: examples/mlp.mlir (MLP + GELU + residual + layer norm + softmax)")
    print(f"compiled once in {compile_ms:.0f} ms; torch {torch.__version__}, "
          f"{threads} threads for PyTorch (DISC: oneDNN calls on the same threads, "
          f"generated loops single-threaded in this version)\n")
    header = f"{'batch':>6} {'max |err|':>10} {'eager ms':>9} {'disc ms':>8} {'speedup':>8} {'compiles':>8}"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for batch in BATCHES:
        x = torch.randn(batch, 64)
        with torch.no_grad():
            expected = model(x)
            (actual,) = exe(x, *params)
            err = (actual - expected).abs().max().item()
            worst = max(worst, err)
            repeats = 50 if batch <= 1024 else 20
            eager = median_ms(lambda: model(x), repeats)
            ours = median_ms(lambda: exe(x, *params), repeats)
        compiles = disc.stats()["compilations"] - before
        print(f"{batch:>6} {err:>10.2e} {eager:>9.3f} {ours:>8.3f} {eager / ours:>7.2f}x {compiles:>8}")
    print()
    ok = worst < 1e-4 and disc.stats()["compilations"] - before == 1
    print("correct at every batch size, compiled once" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
