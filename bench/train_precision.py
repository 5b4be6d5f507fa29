"""Where a GraphNet sample's training gradients lose precision (issue 31):
per trainable input, the RMS error against a float64 run of eager's and
of DISC's float32 gradients, and the outputs that fail the harness's
criterion (DISC's error above twice eager's, harness.float64_verdict).
The harness names only the first failing output; this lists them all, in
order, with their magnitudes.

    .venv/bin/python bench/train_precision.py ../shared/graphnet/samples/mmseg/Fast-SCNN [--all]
"""
from __future__ import annotations

import argparse
import copy

import torch

import disc  # noqa: F401  (registers the backend)
from disc.bench.graphnet import load_sample
from disc.bench.harness import FLOAT64_MULTIPLIER, trainable_inputs, training_step


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sample")
    parser.add_argument("--all", action="store_true", help="every output, not only failing ones")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sample = load_sample(args.sample)
    trainable = trainable_inputs(sample.arg_names)
    names = [(n, tuple(a.shape)) for n, a, t in zip(sample.arg_names, sample.inputs, trainable)
             if isinstance(a, torch.Tensor) and a.is_floating_point() and t]
    eager = training_step(sample.module, trainable)(*sample.inputs)
    module64 = copy.deepcopy(sample.module).double()
    inputs64 = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                for a in sample.inputs]
    reference = training_step(module64, trainable)(*inputs64)
    compiled = torch.compile(sample.module, backend="disc", dynamic=True)
    got = training_step(compiled, trainable)(*sample.inputs)
    failing = 0
    print("output  eager RMS err  DISC RMS err  ratio  |ref| RMS  name (shape)")
    for i, ((name, shape), r, e, g) in enumerate(zip(names, reference, eager, got)):
        r = r.double()
        eager_err = (e.double() - r).pow(2).mean().sqrt().item()
        disc_err = (g.double() - r).pow(2).mean().sqrt().item()
        fails = not disc_err <= FLOAT64_MULTIPLIER * eager_err + 1e-4
        failing += fails
        if fails or args.all:
            ratio = disc_err / eager_err if eager_err else float("inf")
            print(f"{i:6d}  {eager_err:13.3g}  {disc_err:12.3g}  {ratio:5.1f}  "
                  f"{r.pow(2).mean().sqrt().item():9.3g}  {name} {shape}"
                  + ("  FAILS" if fails and args.all else ""))
    print(f"{failing} of {len(names)} outputs fail the float64 criterion")


if __name__ == "__main__":
    main()
