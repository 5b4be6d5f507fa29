"""Which decomposition moves a GraphNet sample's training gradients away
from eager's rounding (issue 31; docs/training.md, "How to find where
precision goes", step 2).

Runs the sample's training step in eager three ways against a float64 run:
plain eager; AOTAutograd's forward and backward graphs with DISC's
decomposition table, executed in eager (no DISC compilation); and the same
with one op at a time left out of the table (eager's own kernel runs it).
For the gradients named on the command line (output indices, as
`bench/train_precision.py` lists them) it prints each run's RMS error
against float64 over eager's. An op whose removal brings the ratio back to
1.00 is the decomposition that rounds differently from eager's kernel.

    .venv/bin/python bench/train_precision_decomp.py \\
        ../shared/graphnet/samples/torchaudio/convtasnet_base_libri2mix 260,321
"""
from __future__ import annotations

import argparse
import copy

import torch
from functorch.compile import make_boxed_func
from torch._functorch.aot_autograd import aot_module_simplified

import disc  # noqa: F401  (registers the backend)
from disc.bench.graphnet import load_sample
from disc.bench.harness import float64_args, rms_error, trainable_inputs, training_step
from disc.frontend.backend import decompositions


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sample")
    parser.add_argument("outputs", help="comma-separated output indices (train_precision.py's)")
    parser.add_argument("--ops", default="",
                        help="comma-separated op names to try (default: every op of the graphs "
                             "traced without decompositions)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sample = load_sample(args.sample)
    outputs = [int(i) for i in args.outputs.split(",")]
    trainable = trainable_inputs(sample.arg_names)
    eager = training_step(sample.module, trainable)(*sample.inputs)
    reference = training_step(copy.deepcopy(sample.module).double(), trainable)(
        *float64_args(sample.inputs))
    table = decompositions(training=True)
    traced_ops: set[str] = set()

    def run(decomposition_table):
        torch._dynamo.reset()

        def keep_graph(graph, _inputs):
            for node in graph.graph.nodes:
                if node.op == "call_function" and hasattr(node.target, "name"):
                    traced_ops.add(node.target.name().split("::")[-1].split(".")[0])
            return make_boxed_func(graph.forward)

        def backend(graph, example_inputs):
            return aot_module_simplified(graph, example_inputs, fw_compiler=keep_graph,
                                         bw_compiler=keep_graph,
                                         decompositions=decomposition_table)

        compiled = torch.compile(sample.module, backend=backend, dynamic=True)
        return training_step(compiled, trainable)(*sample.inputs)

    def ratios(got):
        return "  ".join(f"{rms_error(got[i], reference[i].double()) / rms_error(eager[i], reference[i].double()):6.2f}"
                         for i in outputs)

    print("eager's RMS error against float64: "
          + "  ".join(f"{rms_error(eager[i], reference[i].double()):.3g}" for i in outputs))
    print(f"{'run (error over eager' + chr(39) + 's, per output)':48s}")
    print(f"{'DISC table':48s}{ratios(run(table))}")
    traced_ops.clear()
    print(f"{'no decompositions':48s}{ratios(run({}))}", flush=True)
    wanted = set(args.ops.split(",")) if args.ops else set(traced_ops)
    by_name: dict[str, list] = {}
    for op in table:
        name = op.name().split("::")[-1].split(".")[0] if hasattr(op, "name") else str(op)
        by_name.setdefault(name, []).append(op)
    for name in sorted(wanted & set(by_name)):
        kept = {op: fn for op, fn in table.items() if op not in by_name[name]}
        print(f"{'DISC table, ' + name + ' kept whole':48s}{ratios(run(kept))}", flush=True)


if __name__ == "__main__":
    main()
