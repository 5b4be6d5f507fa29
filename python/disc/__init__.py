"""DISC: a dynamic-shape deep-learning compiler on MLIR.

This version compiles programs written in the `disc` MLIR dialect:

    exe = disc.compile_mlir(text)     # compiled once
    y, = exe(x)                        # any shapes the program allows

See README.md and docs/ for the architecture and the op table.
"""
from __future__ import annotations

import itertools
import os

from . import _C
from ._C import CompileError, DiscError, InvocationError

__all__ = [
    "CompileError",
    "DiscError",
    "Executable",
    "InvocationError",
    "compile_mlir",
    "stats",
]

_dump_counter = itertools.count()


def _as_tensor(value, index):
    import torch

    if isinstance(value, torch.Tensor):
        tensor = value
    elif hasattr(value, "__dlpack__"):
        tensor = torch.from_dlpack(value)
    else:
        raise InvocationError(
            f"argument {index} is a {type(value).__name__}; expected a tensor "
            "(a torch.Tensor or an object with __dlpack__)"
        )
    if tensor.device.type != "cpu":
        raise InvocationError(
            f"argument {index} is on {tensor.device}; this build runs on the CPU"
        )
    # Zero-copy when the tensor is already contiguous.
    return tensor.detach().contiguous()


class Executable:
    """A compiled program. Call it with tensors; it returns a tuple of tensors."""

    def __init__(self, impl):
        self._impl = impl

    def __call__(self, *args):
        tensors = [_as_tensor(a, i) for i, a in enumerate(args)]
        return tuple(self._impl.run(tensors))

    @property
    def entry_name(self) -> str:
        return self._impl.entry_name

    @property
    def compile_seconds(self) -> float:
        return self._impl.compile_seconds

    @property
    def signature(self):
        """([(name, dtype, dims, dim_classes)], [(dtype, rank)]); dims -1 = dynamic."""
        return self._impl.signature

    def __repr__(self):
        args, results = self.signature
        return f"<disc.Executable @{self.entry_name} args={args} results={results}>"


def _log_topics() -> set[str]:
    """DISC_LOG=compile,... : comma-separated topics to log to stderr."""
    return {t.strip() for t in os.environ.get("DISC_LOG", "").split(",") if t.strip()}


def compile_mlir(text: str, *, dump_dir: str | None = None,
                 source_name: str = "input.mlir") -> Executable:
    """Compiles the public function of an MLIR module (the one named `main`
    if there are several) to native code, once for all shapes.

    Raises CompileError with MLIR's diagnostics (source_name:line:column) when
    the module is malformed, does not verify, or cannot be lowered. With
    `dump_dir` (or the environment variable DISC_DUMP_DIR) the IR after every
    pass is written there, one sub-directory per compilation. DISC_LOG=compile
    prints the time of each compile phase to stderr.
    """
    if not isinstance(text, str):
        raise TypeError("compile_mlir expects the module as a str")
    dump_dir = dump_dir or os.environ.get("DISC_DUMP_DIR", "")
    if dump_dir:
        dump_dir = os.path.join(dump_dir, f"compile-{os.getpid()}-{next(_dump_counter):04d}")
    return Executable(_C.compile_mlir(text, dump_dir or "", source_name,
                                      "compile" in _log_topics()))


def stats() -> dict:
    """Process-wide counters: {"compilations": MLIR compilations so far}."""
    return {"compilations": _C.compilation_count()}
