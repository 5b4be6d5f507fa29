"""Accuracy of DISC's f32 transcendental functions on the CPU (inline
polynomial approximations, disc-approximate-math) against PyTorch's, in
units in the last place of the float64 result rounded to f32: the largest
and the mean error over uniform random inputs in each function's useful
range. python/tests/test_math_accuracy.py bounds them; this shows how close
each is, next to PyTorch's own.

    .venv/bin/python bench/math_accuracy.py [--n 2000000]
"""
from __future__ import annotations

import argparse
import math

import torch

import disc

# DISC op -> (PyTorch function, input range)
FUNCTIONS = {
    "exponential": (torch.exp, (-80.0, 80.0)),
    "exponential_minus_one": (torch.expm1, (-20.0, 20.0)),
    "log": (torch.log, (1e-3, 1e3)),
    "log_plus_one": (torch.log1p, (-0.9, 100.0)),
    "tanh": (torch.tanh, (-9.0, 9.0)),
    "erf": (torch.erf, (-4.0, 4.0)),
    "logistic": (torch.sigmoid, (-20.0, 20.0)),
}


def ulp_errors(got: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """|got - exact| in units of the f32 spacing at the exact result."""
    rounded = exact.float().abs()
    spacing = (torch.nextafter(rounded, torch.tensor(math.inf)) - rounded).double()
    return (got.double() - exact).abs() / spacing


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2_000_000, help="inputs per function")
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(0)
    t = "tensor<?xf32>"
    print("| function | DISC max ulp | DISC mean ulp | PyTorch max ulp | PyTorch mean ulp |")
    print("|---|---:|---:|---:|---:|")
    for op, (reference, (low, high)) in FUNCTIONS.items():
        exe = disc.compile_mlir(f"func.func @main(%a: {t}) -> {t} {{\n"
                                f"  %0 = disc.{op} %a : {t}\n  return %0 : {t}\n}}")
        x = torch.empty(args.n).uniform_(low, high, generator=generator)
        exact = reference(x.double())
        (ours,) = exe(x)
        disc_errors, torch_errors = ulp_errors(ours, exact), ulp_errors(reference(x), exact)
        print(f"| {op} | {disc_errors.max():.2f} | {disc_errors.mean():.3f} | "
              f"{torch_errors.max():.2f} | {torch_errors.mean():.3f} |")


if __name__ == "__main__":
    main()
