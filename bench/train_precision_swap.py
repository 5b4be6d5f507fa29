"""Which of a training step's saved tensors decide how far DISC's
gradients are from eager's (issue 31; docs/training.md, "How to find
where precision goes").

Runs a GraphNet sample's training step twice through DISC's AOTAutograd
split, the forward once in eager and once compiled by DISC, the backward
graph always in eager; then swaps the forward's saved tensors one at a
time from the DISC run into the eager run and reports, per tensor, what
share of the backward's difference that one swap reproduces. On
Fast-SCNN one ReLU output carried 99.4% of it (one element within
rounding of the kink). `--halves` first prints the mixed runs against
float64 (eager forward + DISC backward, DISC forward + eager backward):
which half the difference comes from.

    .venv/bin/python bench/train_precision_swap.py ../shared/graphnet/samples/mmseg/Fast-SCNN [--top 20]
"""
from __future__ import annotations

import argparse
import copy

import torch

import disc  # noqa: F401  (registers the backend)
from disc.bench.graphnet import load_sample
from disc.bench.harness import (float64_args, rms_error, trainable_inputs, training_step,
                                within_float64_criterion)
from disc.frontend import backend


def _relative_distance(outs, base):
    total = 0.0
    for x, y in zip(outs, base):
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            y = y.double()
            total += rms_error(x, y) / (y.pow(2).mean().sqrt().item() or 1.0)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sample")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--halves", action="store_true")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sample = load_sample(args.sample)
    trainable = trainable_inputs(sample.arg_names)
    compile_graph = backend.compile_aten_graph
    mode = {"forward": "eager", "backward": "eager"}
    # Per run (the forward's mode), per backward graph in compilation order
    # (a graph break gives several): [graph, the saved tensors of its call].
    captured = {}

    def patched(gm, graph_id, opts, role=""):
        if role == "backward":
            entry = [copy.deepcopy(gm), None]
            captured.setdefault(mode["forward"], []).append(entry)
            compiled = entry[0].forward if mode["backward"] == "eager" else \
                compile_graph(gm, graph_id, opts, role)

            def record(*call_args):
                entry[1] = [a.clone() if isinstance(a, torch.Tensor) else a for a in call_args]
                return compiled(*call_args)
            return record
        if role == "forward" and mode["forward"] == "eager":
            return gm.forward
        return compile_graph(gm, graph_id, opts, role)

    backend.compile_aten_graph = patched

    def step(forward, backward):
        mode.update(forward=forward, backward=backward)
        torch._dynamo.reset()
        compiled = torch.compile(sample.module, backend="disc", dynamic=True)
        return training_step(compiled, trainable)(*sample.inputs)

    if args.halves:
        eager = training_step(sample.module, trainable)(*sample.inputs)
        module64 = copy.deepcopy(sample.module).double()
        inputs64 = float64_args(sample.inputs)
        reference = training_step(module64, trainable)(*inputs64)
        for forward, backward in (("eager", "disc"), ("disc", "eager"), ("disc", "disc")):
            got = step(forward, backward)
            failing = sum(
                not within_float64_criterion(rms_error(g, r.double()), rms_error(e, r.double()),
                                             0.0, g.dtype, g.shape)
                for r, e, g in zip(reference, eager, got))
            print(f"forward {forward:5}, backward {backward:5}: {failing} of {len(got)} gradients "
                  f"beyond the allowed multiple of eager's error against float64")
    captured.clear()
    step("eager", "eager")
    step("disc", "eager")
    rows = []
    for index, ((graph, saved_eager), (_, saved_disc)) in enumerate(
            zip(captured["eager"], captured["disc"])):
        if saved_eager is None or saved_disc is None:
            continue

        def run(saved, graph=graph):
            return graph.forward(*[a.clone() if isinstance(a, torch.Tensor) else a
                                   for a in saved])

        base = run(saved_eager)
        total = _relative_distance(run(saved_disc), base)
        print(f"backward graph {index}: its outputs from DISC's saved tensors against eager's: "
              f"summed relative distance {total:.3g}")
        names = [n.name for n in graph.graph.nodes if n.op == "placeholder"]
        for i, (e, d) in enumerate(zip(saved_eager, saved_disc)):
            if not isinstance(e, torch.Tensor) or not e.is_floating_point() or torch.equal(e, d):
                continue
            mixed = list(saved_eager)
            mixed[i] = d
            share = _relative_distance(run(mixed), base) / total if total else 0.0
            flips = ((e == 0) != (d == 0)).sum().item()
            rows.append((share, index, i, names[i], tuple(e.shape),
                         (e != d).float().mean().item(), flips))
    print("share (of its graph's distance)  graph  input  name (shape)  elements that differ  "
          "zero in one run only")
    for share, index, i, name, shape, differ, flips in sorted(rows, reverse=True)[:args.top]:
        print(f"{share:5.3f}  {index:3d}  {i:5d}  {name} {shape}  {differ:.3f}  {flips}")
    print(f"{len(rows)} saved tensors differ")

if __name__ == "__main__":
    main()
