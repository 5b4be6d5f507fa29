"""Compile time of the cuda target under two values of a compile-time
environment switch, on GraphNet samples, without a GPU: each sample's
partitions are imported once (the front end on the CPU with target
cuda-emulated, which partitions as the cuda target does), then each
partition's MLIR is compiled for target cuda (ptxas for sm_80 and sm_90
included) in a fresh process per value, alternating, `--repeats` times.
Prints per sample the seconds of each compile and the loop-kernel count.

    .venv/bin/python bench/cuda_compile_ab.py \\
        ../shared/graphnet/samples/torchvision/resnet18 \\
        --var DISC_CUDA_INDEX32_LIMIT --values 0,2147483647 [--repeats 2]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import torch

import disc
from disc.bench.graphnet import load_sample

_COMPILE = r'''
import sys, time, disc
text = open(sys.argv[1]).read()
start = time.perf_counter()
exe = disc.compile_mlir(text, target="cuda")
print(time.perf_counter() - start, exe.kernel_counts.get("loops"))
'''


def run_emulated(path: str) -> None:
    """One call of the sample at `path` through torch.compile with DISC's
    target cuda-emulated (which partitions as the cuda target does), the
    compile cache off."""
    os.environ["DISC_TARGET"] = "cuda-emulated"
    os.environ["DISC_CACHE"] = "0"
    sample = load_sample(path)
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(sample.module, backend="disc", dynamic=True)(*sample.inputs)


def partitions_of(path: str, out_dir: str) -> list[str]:
    """The MLIR of every partition the front end compiles for `path`."""
    files = []
    compile_mlir = disc.compile_mlir

    def saving(text, *args, **kwargs):
        name = os.path.join(out_dir, f"partition-{len(files)}.mlir")
        with open(name, "w") as f:
            f.write(text)
        files.append(name)
        return compile_mlir(text, *args, **kwargs)

    disc.compile_mlir = saving
    try:
        run_emulated(path)
    finally:
        disc.compile_mlir = compile_mlir
    return files


def compile_seconds(mlir: str, var: str, value: str) -> tuple[float, str]:
    env = dict(os.environ, DISC_CACHE="0", **{var: value})
    env.pop("DISC_TARGET", None)
    done = subprocess.run([sys.executable, "-c", _COMPILE, mlir], env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    seconds, loops = done.stdout.split()
    return float(seconds), loops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", nargs="+")
    parser.add_argument("--var", required=True)
    parser.add_argument("--values", default="0,1")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    values = args.values.split(",")
    for path in args.samples:
        with tempfile.TemporaryDirectory() as tmp:
            for mlir in partitions_of(path, tmp):
                seconds = {v: [] for v in values}
                loops = "?"
                try:
                    for _ in range(args.repeats):
                        for value in values:
                            s, loops = compile_seconds(mlir, args.var, value)
                            seconds[value].append(round(s, 2))
                except RuntimeError as e:  # a partition the cuda target rejects
                    print(f"{path} {os.path.basename(mlir)}: not compiled for cuda ({e})")
                    continue
                row = ", ".join(f"{args.var}={v}: {seconds[v]} s" for v in values)
                print(f"{path} {os.path.basename(mlir)} ({loops} loop kernels): {row}",
                      flush=True)


if __name__ == "__main__":
    main()
