"""disc.compile(model, mode="export"): one graph for every shape.

torch.compile's graphs carry guards that only pick a kernel (the fake
convolution's backend selection) or come from duck sizing and 0/1
specialisation, so a model can recompile at shapes its code handles
perfectly well. This mode traces through the export path instead
(export.lower: torch.export, every dim dynamic, size-oblivious) and compiles
the whole graph once. A call whose shapes the program does not accept (the
model's own Python made a shape-dependent decision while tracing: a
specialised dim, a narrowed range) is traced again with those inputs, and
the reason is logged under DISC_LOG=recompiles; the programs are kept and
tried in order.

Parameters and buffers are passed to the program on every call (not stored),
so in-place updates of them (load_state_dict, an optimizer step) are seen.
Inference only, as the torch.compile backend: with grad mode on and a
parameter or input that requires grad, the call runs in eager PyTorch
(logged once).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import torch
import torch.utils._pytree as pytree

from .. import _log


@dataclass
class _Entry:
    executable: object
    in_spec: object
    out_spec: object
    sources: list  # ("input", i) | ("weight", tensor)
    constants: dict  # flat input index -> the scalar value the graph assumes


class OneGraphModule:
    """The callable disc.compile(model, mode="export") returns."""

    def __init__(self, model, dynamic_shapes=None):
        self.model = model
        self.dynamic_shapes = dynamic_shapes
        self.entries: list[_Entry] = []
        self.traces = 0
        self._lock = threading.Lock()
        self._warned_grad = False

    def _needs_grad(self, flat) -> bool:
        if not torch.is_grad_enabled():
            return False
        if any(isinstance(x, torch.Tensor) and x.requires_grad for x in flat):
            return True
        return isinstance(self.model, torch.nn.Module) and any(
            p.requires_grad for p in self.model.parameters())

    def __call__(self, *args, **kwargs):
        import disc

        flat, spec = pytree.tree_flatten((args, kwargs))
        if self._needs_grad(flat):
            if not self._warned_grad:
                self._warned_grad = True
                _log.log("fallback", f"{type(self.model).__name__}: autograd is needed "
                         "(grad mode on, parameters or inputs require grad): eager PyTorch; "
                         "use torch.no_grad()")
            return self.model(*args, **kwargs)
        reasons = []
        for entry in list(self.entries):
            if entry.in_spec != spec:
                reasons.append(f"input structure {spec} is not {entry.in_spec}")
                continue
            try:
                return self._run(entry, flat)
            except disc.InvocationError as e:
                reasons.append(str(e).splitlines()[0])
        with self._lock:
            why = "; ".join(reasons) if reasons else "first call"
            shapes = [tuple(x.shape) for x in flat if isinstance(x, torch.Tensor)]
            _log.log("recompiles", f"{type(self.model).__name__}: tracing for input shapes "
                     f"{shapes} ({why})")
            entry = self._trace(args, kwargs)
            self.entries.append(entry)
        return self._run(entry, flat)

    def _trace(self, args, kwargs) -> _Entry:
        import disc

        from .export import lower

        lowered = lower(self.model, args, kwargs, self.dynamic_shapes)
        self.traces += 1
        # The dim ranges torch.export derived are checked on every call: a
        # call outside them is the model's Python deciding differently.
        executable = disc.compile_mlir(
            lowered.text, source_name="one-graph.mlir",
            _bind=dict(metadata={}, weights=[], arg_names=lowered.names,
                       ranges=lowered.ranges))
        # Weights by reference: the live parameter/buffer tensors.
        live = {}
        if isinstance(self.model, torch.nn.Module):
            live.update(self.model.named_parameters(remove_duplicate=False))
            live.update(self.model.named_buffers(remove_duplicate=False))
        sources = []
        for kind, what in lowered.sources:
            if kind == "weight":
                sources.append(("weight", live.get(what, lowered.weights[what])))
            else:
                sources.append(("input", what))
        call_spec = lowered.exported.call_spec
        return _Entry(executable, call_spec.in_spec, call_spec.out_spec, sources,
                      lowered.constants)

    def _run(self, entry: _Entry, flat):
        from .export import check_constants

        check_constants(flat, entry.constants)
        inputs = [flat[what] if kind == "input" else what.detach()
                  for kind, what in entry.sources]
        outputs = entry.executable(*inputs)
        return pytree.tree_unflatten(list(outputs), entry.out_spec)
