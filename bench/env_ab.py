"""A/B of an environment switch on one GraphNet sample, in one process:
the sample is compiled once per value of the variable (read by the
compiler at compile time, e.g. DISC_LIBRARY_EPILOGUES), then the variants
are timed interleaved, call by call, so that the VM's drift hits both
alike. Before each call the variable is set to its variant's value and
DISC's run-time settings are read again, so a switch read when a call runs
(DISC_CUDA_ALLOCATOR) is compared the same way. Prints the median of each
and their largest output difference.

    .venv/bin/python bench/env_ab.py ../shared/graphnet/samples/torchvision/resnet18 \\
        --var DISC_LIBRARY_EPILOGUES --values 1,0 [--calls 40] [--dynamic]

On a GPU (`--device cuda`; each call is timed to the end of its work):

    python bench/env_ab.py SAMPLE --device cuda --dynamic \\
        --var DISC_CUDA_DEPTHWISE --values generated,cudnn
"""
from __future__ import annotations

import argparse
import os
import time

import torch

import disc
from disc.bench.graphnet import load_sample


def _tensors(result):
    items = result if isinstance(result, (list, tuple)) else [result]
    return [t for t in items if isinstance(t, torch.Tensor)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sample")
    parser.add_argument("--var", required=True)
    parser.add_argument("--values", default="1,0")
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--dynamic", action="store_true", help="dynamic=True (default: None)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cuda = args.device.startswith("cuda")
    if cuda:  # full float32 for both, as the GraphNet harness runs them
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def select(value):
        os.environ[args.var] = value
        disc._reset_runtime_settings()

    variants = []
    for value in args.values.split(","):
        select(value)
        sample = load_sample(args.sample, device=args.device)
        compiled = torch.compile(sample.module, backend="disc",
                                 dynamic=True if args.dynamic else None)
        with torch.no_grad():
            first = compiled(*sample.inputs)  # compiles with this value
        variants.append((value, compiled, sample.inputs, first))

    times = [[] for _ in variants]
    with torch.no_grad():
        for _ in range(args.calls):
            for i, (value, compiled, inputs, _) in enumerate(variants):
                select(value)
                sync()
                start = time.perf_counter()
                compiled(*inputs)
                sync()
                times[i].append(time.perf_counter() - start)
    base = _tensors(variants[0][3])
    for (value, _, _, first), samples in zip(variants, times):
        samples.sort()
        diff = max(((a - b).abs().max().item() for a, b in zip(base, _tensors(first))), default=0.0)
        print(f"{args.var}={value}: median {samples[len(samples) // 2] * 1e3:.3f} ms "
              f"(max |difference| to the first variant {diff:.2e})")


if __name__ == "__main__":
    main()
