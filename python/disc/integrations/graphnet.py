"""DISC as a back end of GraphNet's own harness.

GraphNet's `graph_net_bench.torch.test_compiler` looks a compiler up by name
in `compiler_backend_name2class` and uses it through the GraphCompilerBackend
interface: `backend = Class(config)`, `compiled = backend(model)`,
`backend.synchronize()` around timings, `backend.version()` in its logs.
`DiscBackend` is that class for DISC; docs/graphnet.md shows how to run
GraphNet's harness with it:

    python -m disc.integrations.graphnet --model-path SAMPLE_DIR --device cpu \
        --warmup 3 --trials 10

(registers the class under the name "disc", then runs test_compiler.main).
"""
from __future__ import annotations

import sys

import torch


def _base_class():
    for module in ("graph_net_bench.torch.backend.graph_compiler_backend",
                   "graph_net.torch.backend.graph_compiler_backend",
                   "graph_net.torch.graph_compiler_backend"):
        try:
            return __import__(module, fromlist=["GraphCompilerBackend"]).GraphCompilerBackend
        except (ImportError, AttributeError):
            continue
    return object


def version() -> str:
    try:
        from importlib.metadata import version as _version

        disc_version = _version("disc")
    except Exception:
        disc_version = "dev"
    return f"DISC {disc_version} (torch {torch.__version__})"


class DiscBackend(_base_class()):
    """GraphNet's GraphCompilerBackend for DISC.

    config (GraphNet passes a dict, from its --config): "dynamic" (default
    True: one compilation serves every batch size / length / image size) and
    any DISC backend option (e.g. "dump_dir"); unknown keys raise a
    TypeError naming them.
    """

    def __init__(self, config=None):
        import disc  # noqa: F401  (registers the "disc" torch.compile backend)
        from disc.frontend.backend import Options

        config = dict(config or {})
        self.dynamic = config.pop("dynamic", True)
        Options.from_kwargs(**config)  # reject unknown options now
        self.options = config

    def __call__(self, model):
        import disc

        return disc.compile(model, dynamic=self.dynamic, **self.options)

    def synchronize(self):
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()

    def version(self) -> str:
        return version()


def register() -> bool:
    """Adds DiscBackend to GraphNet's compiler table under "disc"; False
    when GraphNet is not importable."""
    try:
        from graph_net_bench.torch import test_compiler
    except ImportError:
        return False
    test_compiler.compiler_backend_name2class["disc"] = DiscBackend
    return True


def main(argv=None) -> int:
    """`python -m disc.integrations.graphnet ARGS`: GraphNet's
    test_compiler.main with ARGS (its own options) and `--compiler disc`,
    for one sample directory (test_compiler runs a folder of samples in
    fresh processes, which would not see the registration: loop over the
    samples instead, see docs/graphnet.md)."""
    import argparse

    if not register():
        print("GraphNet is not importable: install it (pip install -e GraphNet) or put its "
              "checkout on PYTHONPATH; see docs/graphnet.md", file=sys.stderr)
        return 2
    from graph_net_bench.torch import test_compiler

    parser = argparse.ArgumentParser(prog="python -m disc.integrations.graphnet")
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--compiler", default="disc")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--log-prompt", default="graph-net-test-compiler-log")
    parser.add_argument("--config", default=None, help="base64-encoded JSON, as GraphNet's")
    parser.add_argument("--profiler-device-time", action="store_true")
    args = parser.parse_args(argv)
    args.allow_list = None
    args.model_path_prefix = None
    test_compiler.main(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
