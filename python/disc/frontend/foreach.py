"""The optimizers' fused multi-tensor ops (`_foreach_add`, `_foreach_addcdiv`,
... : what `foreach=True` SGD, Adam and AdamW step with) decomposed into
their per-tensor ops, which DISC fuses into its own kernels (one loop per
parameter shape class instead of one opaque op per list)."""
from __future__ import annotations

import torch

aten = torch.ops.aten

# torch.<name> is the per-tensor op of aten._foreach_<name>.
_NAMES = ["add", "sub", "mul", "div", "addcmul", "addcdiv", "pow", "neg", "reciprocal",
          "sqrt", "rsqrt", "lerp", "maximum", "minimum", "clamp_min", "clamp_max", "exp",
          "log", "abs", "sign", "sigmoid", "tanh", "sin", "cos", "floor", "ceil", "round",
          "trunc", "frac", "expm1", "log1p", "erf"]


def _is_list(arg_type) -> bool:
    return str(arg_type).startswith(("List[", "Tensor[]", "Scalar[]"))


def _per_tensor(name: str, overload):
    schema = overload._schema
    positional = [a for a in schema.arguments if not a.kwarg_only]
    fn = getattr(torch, name)
    scalars_tensor = overload._overloadname == "Tensor" and name in ("addcmul", "addcdiv")

    def decomposition(*args, **kwargs):
        listed = [i for i, a in enumerate(positional[:len(args)]) if _is_list(a.type)]
        count = len(args[listed[0]])
        results = []
        for i in range(count):
            call = [a[i] if j in listed else a for j, a in enumerate(args)]
            if scalars_tensor:
                # addcdiv.Tensor(self, t1, t2, scalars): one scalar per tensor.
                self_, t1, t2, scalars = call
                inner = t1 * t2 if name == "addcmul" else t1 / t2
                results.append(self_ + scalars[i] * inner)
                continue
            each = {k: (v[i] if isinstance(v, (list, tuple)) else v) for k, v in kwargs.items()}
            if name in ("addcmul", "addcdiv") and len(call) == 4:
                # The foreach op's value is positional, torch.addcmul's a keyword.
                each["value"] = call.pop()
            results.append(fn(*call, **each))
        return results

    return decomposition


def _norm(tensors, ord=2, dtype=None):
    return [torch.linalg.vector_norm(t, ord, dtype=dtype) for t in tensors]


def table() -> dict:
    out = {}
    for name in _NAMES:
        packet = getattr(aten, f"_foreach_{name}", None)
        if packet is None:
            continue
        for overload_name in packet.overloads():
            overload = getattr(packet, overload_name)
            out[overload] = _per_tensor(name, overload)
    for overload_name in aten._foreach_norm.overloads():
        out[getattr(aten._foreach_norm, overload_name)] = _norm
    return out
