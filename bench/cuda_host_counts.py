"""What one call of each cuda partition of a GraphNet sample costs the
host, without a GPU: kernel launches, device allocator calls, library calls
and DISC's own host microseconds per call.

Each sample runs once through the front end on the CPU with target
cuda-emulated (which partitions as the cuda target does); each partition's
MLIR and its first call's input shapes are saved; then the gtest
CudaHost.DISABLED_HostCountsOfAPartition compiles the partition for target
cuda (ptxas included) and calls it against the fake driver, the libraries'
math skipped (unittests/Cuda/FakeCudaDriver.cpp). `--env VAR=VALUE` sets
a variable for those runs (an A/B: run twice). `--launches` also lists one
call's launches, in order: kernel, grid, block, dynamic shared memory
(which kernels run with how many threads: what to look at first when a
partition's GPU time is unexplained).

    .venv/bin/python bench/cuda_host_counts.py \\
        ../shared/graphnet/samples/torchvision/resnet18 [--env DISC_CUDA_REUSE_BLOCKS=0]

`--instructions` adds the instructions per call under callgrind (valgrind;
minutes per partition) in steady state: all of them, and DISC's own,
without the fake libraries' entry points and what they call. Deterministic, where this VM's host microseconds
vary by half between runs: the figure to compare host-side changes by.
`--keep DIR` keeps the partitions' files (DIR/SAMPLE/partition-K.mlir and
.shapes), for a profiler run on the gtest by hand (docs/cuda.md,
"Library calls' host work per call"; DISC_HOST_COUNTS_CALLS sets its call
count).

Needs `make build` (build/unittests/disc-cuda-host-tests) and ptxas.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

import torch

import disc
from cuda_compile_ab import run_emulated  # bench/, the script's folder

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_GTEST = os.path.join(_ROOT, "build", "unittests", "disc-cuda-host-tests")
_LAUNCH = re.compile(r"^launch .*$", re.MULTILINE)
_LINE = re.compile(r"host counts: launches ([\d.]+) allocations ([\d.]+) "
                   r"convolutions ([\d.]+) matmuls ([\d.]+) us ([\d.]+)")


# torch dtypes by the runtime's names (ral::dtypeName), as the gtest reads them.
_DISC_DTYPE_NAMES = {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
    torch.float64: "f64", torch.bool: "i1", torch.int8: "i8",
    torch.int16: "i16", torch.int32: "i32", torch.int64: "i64",
    torch.uint8: "ui8"}

_last_arguments: list = []  # (dtype, shape) of the last disc._as_arguments


class _Recording:
    """An executable that records the dtypes and shapes of its first call's
    arguments (the front end converts them with disc._as_arguments right
    before it calls `_run`)."""

    def __init__(self, exe, shapes: list):
        self._exe, self._shapes = exe, shapes

    def _run(self, *args, **kwargs):
        if not self._shapes:
            self._shapes.extend(_last_arguments)
        return self._exe._run(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        # Executable.__call__ run on the proxy, so that its _run records.
        return type(self._exe).__call__(self, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._exe, name)


def partitions_of(path: str, out_dir: str) -> list[tuple[str, str]]:
    """(MLIR file, shapes file) of every partition the front end compiles
    for `path`, in compile order."""
    made = []
    compile_mlir = disc.compile_mlir

    def recording(text, *args, **kwargs):
        shapes = []
        made.append((text, shapes))
        return _Recording(compile_mlir(text, *args, **kwargs), shapes)

    as_arguments = disc._as_arguments

    def recording_arguments(values):
        _last_arguments[:] = [(_DISC_DTYPE_NAMES[v.dtype], tuple(v.shape))
                              for v in values if isinstance(v, torch.Tensor)]
        return as_arguments(values)

    disc.compile_mlir = recording
    disc._as_arguments = recording_arguments
    try:
        run_emulated(path)
    finally:
        disc.compile_mlir = compile_mlir
        disc._as_arguments = as_arguments
    files = []
    for k, (text, shapes) in enumerate(made):
        if not shapes:
            continue  # never called
        mlir = os.path.join(out_dir, f"partition-{k}.mlir")
        with open(mlir, "w") as f:
            f.write(text)
        shapes_file = os.path.join(out_dir, f"partition-{k}.shapes")
        with open(shapes_file, "w") as f:
            for dtype, shape in shapes:
                f.write(" ".join([dtype, *map(str, shape)]) + "\n")
        files.append((mlir, shapes_file))
    return files


def _gtest_run(mlir: str, shapes: str, env: dict, prefix: tuple = ()):
    """The counting gtest on one partition (under `prefix`, a profiler's
    command line, when given)."""
    return subprocess.run(
        [*prefix, _GTEST, "--gtest_also_run_disabled_tests",
         "--gtest_filter=CudaHost.DISABLED_HostCountsOfAPartition"],
        env=dict(os.environ, **env, DISC_HOST_COUNTS_MLIR=mlir,
                 DISC_HOST_COUNTS_SHAPES=shapes),
        capture_output=True, text=True)


def counts(mlir: str, shapes: str, env: dict, launches: list | None = None) -> str:
    """The partition's counts row; with `launches`, one call's launch lines
    appended to it."""
    if launches is not None:
        env = dict(env, DISC_HOST_COUNTS_LAUNCHES="1")
    run = _gtest_run(mlir, shapes, env)
    found = _LINE.search(run.stdout)
    if launches is not None:
        launches.extend(_LAUNCH.findall(run.stdout))
    if not found:
        tail = (run.stdout + run.stderr).strip().splitlines()[-5:]
        return "failed: " + " | ".join(tail)
    launches, allocations, convolutions, matmuls, us = found.groups()
    return (f"{float(launches):9.0f} {float(allocations):11.0f} "
            f"{float(convolutions) + float(matmuls):9.0f} {float(us):9.1f}")


# The gtest's timed calls under callgrind, collected alone (not the compile,
# not the warm-up calls that prepare plans and load modules).
_INSTRUCTION_CALLS = 10
_FAKE_LIBRARY = "libdisc-fake-cuda.so"


def instructions(mlir: str, shapes: str, env: dict) -> str:
    """Instructions per call of the partition under callgrind (deterministic,
    where this VM's timings vary by half): all of them, and DISC's own (less
    the fake libraries' entry points, with what they call)."""
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "callgrind.out")
        run = _gtest_run(
            mlir, shapes, dict(env, DISC_HOST_COUNTS_CALLS=str(_INSTRUCTION_CALLS)),
            prefix=("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                    "--collect-atstart=no", "--toggle-collect=*hostCountsTimedCalls*"))
        if run.returncode != 0 or not os.path.exists(out):
            tail = (run.stdout + run.stderr).strip().splitlines()[-3:]
            return "callgrind failed: " + " | ".join(tail)
        annotate = subprocess.run(
            ["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
            capture_output=True, text=True).stdout
    # The fake libraries' cost: the inclusive cost of their entry points (the
    # driver's, cuDNN's and cuBLASLt's functions, all named cu...), which
    # counts what they call in libc too; their internals are not entry
    # points, so nothing is counted twice.
    total = fake = 0
    for line in annotate.splitlines():
        words = line.split()
        if not words or not words[0].replace(",", "").isdigit():
            continue
        count = int(words[0].replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = count
        elif (line.rstrip().endswith(_FAKE_LIBRARY + "]") and
              re.search(r"\?\?\?:cu[A-Za-z]", line)):
            fake += count
    calls = _INSTRUCTION_CALLS
    return f"{total / calls / 1e3:9.0f}K {(total - fake) / calls / 1e3:9.0f}K"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("samples", nargs="+")
    parser.add_argument("--env", action="append", default=[],
                        help="VAR=VALUE for the counting runs")
    parser.add_argument("--launches", action="store_true",
                        help="also list one call's launches per partition")
    parser.add_argument("--instructions", action="store_true",
                        help="also the instructions per call under callgrind "
                             "(valgrind; minutes per partition): all, and "
                             "DISC's own without the fake libraries'")
    parser.add_argument("--keep", metavar="DIR",
                        help="write each sample's partition MLIR and input "
                             "shapes under DIR/SAMPLE (the gtest's "
                             "DISC_HOST_COUNTS_MLIR / _SHAPES, for a "
                             "profiler run by hand) instead of a temporary "
                             "folder")
    args = parser.parse_args()
    if not os.path.exists(_GTEST):
        print(f"{_GTEST} is missing: run `make build` first", file=sys.stderr)
        return 2
    env = dict(item.split("=", 1) for item in args.env)
    header = (f"{'sample / partition':48s} {'launches':>9s} {'allocations':>11s} "
              f"{'libcalls':>9s} {'host us':>9s}")
    if args.instructions:
        header += f" {'instr/call':>10s} {'DISC own':>10s}"
    print(header)
    for path in args.samples:
        with tempfile.TemporaryDirectory() as temporary:
            work = temporary
            if args.keep:
                work = os.path.join(args.keep, os.path.basename(path.rstrip("/")))
                os.makedirs(work, exist_ok=True)
            for mlir, shapes in partitions_of(path, work):
                name = f"{os.path.basename(path.rstrip('/'))}/{os.path.basename(mlir)}"
                launches = [] if args.launches else None
                row = f"{name[:48]:48s} {counts(mlir, shapes, env, launches)}"
                if args.instructions:
                    row += " " + instructions(mlir, shapes, env)
                print(row, flush=True)
                for line in launches or []:
                    print("    " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
