"""PyTorch's OpInfo samples through torch.compile(backend="disc").

For one OpInfo (an entry of torch's op_db), one dtype and one dynamic
mode, every sample input is run in eager and through a fresh
torch.compile(backend="disc"), and classified:

  match       DISC's result equals eager's (dtype tolerances)
  mismatch    it does not: a bug
  error       torch.compile raised where eager did not: a bug
  skipped     eager itself raises for the sample (nothing to compare)

and, for each sample that matched, whether DISC compiled code ran
("compiled": every ATen node of the graph compiled), part of it ("partial")
or none ("fallback", the reasons from disc.stats()["fallback_ops"], the
same text DISC_LOG=fallback logs).

Used by test_opinfo.py (a bounded number of samples per op, in CI) and by
bench/opinfo.py (every sample, the report with pass and compiled rates).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Optional

import torch

import disc

# OpInfo names (op.name + "." + variant when there is one) DISC claims: the
# torch functions whose core-ATen decompositions DISC lowers (docs/ops.md).
# Samples of these must match eager; a sample that falls back must say why.
CLAIMED_OPS = [
    # elementwise unary
    "abs", "neg", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
    "sin", "cos", "tan", "tanh", "sigmoid", "erf", "floor", "ceil", "round", "trunc",
    "frac", "sign", "sgn", "reciprocal", "square", "bitwise_not", "logical_not", "isnan",
    "isinf", "isfinite", "isposinf", "isneginf", "nan_to_num", "positive", "nn.functional.relu",
    "nn.functional.relu6", "nn.functional.gelu", "nn.functional.silu", "nn.functional.elu",
    "nn.functional.leaky_relu", "nn.functional.hardswish", "nn.functional.hardsigmoid",
    "nn.functional.hardtanh", "nn.functional.mish", "nn.functional.softplus",
    "nn.functional.logsigmoid", "nn.functional.tanhshrink", "nn.functional.softsign",
    "exp2", "deg2rad", "rad2deg", "logit",
    # elementwise binary / ternary
    "add", "sub", "mul", "div.no_rounding_mode", "div.trunc_rounding", "div.floor_rounding",
    "true_divide", "floor_divide", "remainder", "fmod", "pow", "float_power", "maximum",
    "minimum", "fmax", "fmin", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
    "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "where", "clamp", "clamp_min", "clamp_max",
    "lerp", "addcmul", "addcdiv", "rsub", "xlogy", "hypot", "copysign", "heaviside",
    "masked_fill",
    # reductions
    "sum", "prod", "mean", "amax", "amin", "max.reduction_with_dim",
    "max.reduction_no_dim", "min.reduction_with_dim", "min.reduction_no_dim", "argmax",
    "argmin", "any", "all", "var", "std", "var_mean", "std_mean", "logsumexp", "norm",
    "linalg.vector_norm", "softmax", "log_softmax", "nn.functional.softmin", "cumsum",
    "count_nonzero", "aminmax",
    # data movement
    "reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "permute",
    "transpose", "t", "expand", "expand_as", "broadcast_to", "cat", "stack", "hstack",
    "vstack", "split", "split_with_sizes", "chunk", "unbind", "narrow", "select",
    "index_select", "gather", "scatter", "scatter_add", "take_along_dim", "flip",
    "fliplr", "flipud", "roll", "repeat", "tile", "tril", "triu", "constant_pad_nd",
    "nn.functional.pad.constant", "movedim", "slice_scatter", "select_scatter",
    "index_add", "index_put", "masked_scatter", "clone", "contiguous", "zeros_like",
    "ones_like", "full_like", "new_zeros", "new_ones", "new_full", "arange", "linspace",
    "diag_embed", "diagonal", "unfold", "nn.functional.pixel_shuffle",
    "nn.functional.pixel_unshuffle", "nn.functional.embedding",
    # matmul / convolution / normalisation / pooling / attention
    "mm", "bmm", "matmul", "addmm", "baddbmm", "nn.functional.linear", "einsum",
    "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv_transpose1d",
    "nn.functional.conv_transpose2d", "nn.functional.layer_norm",
    "nn.functional.group_norm", "nn.functional.batch_norm",
    "nn.functional.instance_norm", "nn.functional.max_pool1d", "nn.functional.max_pool2d",
    "nn.functional.avg_pool1d", "nn.functional.avg_pool2d",
    "nn.functional.adaptive_avg_pool1d", "nn.functional.adaptive_avg_pool2d",
    "nn.functional.adaptive_max_pool2d", "nn.functional.interpolate.nearest",
    "nn.functional.interpolate.bilinear", "nn.functional.upsample_nearest",
    "nn.functional.scaled_dot_product_attention", "nn.functional.glu",
    "nn.functional.normalize", "nn.functional.cosine_similarity",
    "nn.functional.pairwise_distance", "nn.functional.mse_loss", "nn.functional.l1_loss",
    # ops the issue names as gaps (lgamma, polygamma, sort, int64 matmul, ...)
    "lgamma", "polygamma.polygamma_n_0", "sort", "index_reduce.prod",
    # found falling back by fuzz/torch_fuzz.py
    "topk", "cummax", "cummin",
]

# What DISC takes: the dtypes the runtime's signature accepts.
DISC_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
               torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool)

TOLERANCE = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-4, 1e-4),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (3e-2, 3e-2),
}


@dataclasses.dataclass
class SampleResult:
    op: str
    dtype: str
    dynamic: bool
    index: int
    description: str
    status: str  # match | mismatch | error | skipped
    coverage: str = ""  # compiled | partial | fallback (for matches)
    detail: str = ""


def full_name(op) -> str:
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


@functools.lru_cache(maxsize=1)
def op_table() -> dict:
    from torch.testing._internal.common_methods_invocations import op_db

    return {full_name(op): op for op in op_db}


def claimed_opinfos():
    table = op_table()
    return [(name, table[name]) for name in CLAIMED_OPS if name in table]


def _describe(sample) -> str:
    def short(v):
        if isinstance(v, torch.Tensor):
            return f"{str(v.dtype).replace('torch.', '')}{list(v.shape)}"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(short(x) for x in v) + "]"
        return repr(v)
    parts = [short(sample.input)] + [short(a) for a in sample.args]
    parts += [f"{k}={short(v)}" for k, v in sample.kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def _flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flatten(v)]
    if isinstance(value, (int, float, bool)) or value is None:
        return [value]
    return [value]


def _compare(actual, expected) -> Optional[str]:
    got, want = _flatten(actual), _flatten(expected)
    if len(got) != len(want):
        return f"{len(got)} outputs, eager has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, torch.Tensor):
            if g != w and not (isinstance(w, float) and math.isnan(w)):
                return f"output {i}: {g!r} != {w!r}"
            continue
        if not isinstance(g, torch.Tensor):
            return f"output {i}: {type(g).__name__}, eager has a tensor"
        if g.dtype != w.dtype or g.shape != w.shape:
            return (f"output {i}: {g.dtype}{list(g.shape)}, eager has "
                    f"{w.dtype}{list(w.shape)}")
        if w.is_floating_point() or w.is_complex():
            rtol, atol = TOLERANCE.get(w.dtype, (1e-4, 1e-4))
            if not torch.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                err = (g.double() - w.double()).abs().nan_to_num(float("inf")).max().item()
                return f"output {i}: max abs error {err:.3g}"
        elif not torch.equal(g, w):
            return f"output {i}: {int((g != w).sum())} elements differ"
    return None


def _each_sample(op, dtype, dynamic, max_samples, results, requires_grad=False,
                 device="cpu", indices=None):
    """(result record, args, kwargs) per sample input of `op` (at most
    max_samples; only those at `indices` when given) on `device`; each
    record, "skipped" until classified, is appended to `results`."""
    samples = op.sample_inputs(device, dtype, requires_grad=requires_grad)
    if indices is None and max_samples is not None:
        indices = range(max_samples)
    last = None if indices is None else max(indices, default=-1)
    for index, sample in enumerate(samples):
        if last is not None and index > last:
            break
        if indices is not None and index not in indices:
            continue
        res = SampleResult(full_name(op), str(dtype).replace("torch.", ""), dynamic, index,
                           _describe(sample), "skipped")
        results.append(res)
        yield res, (sample.input, *sample.args), sample.kwargs


def _error_detail(e: Exception) -> str:
    lines = [l for l in str(e).splitlines() if l.strip()]
    return (f"{type(e).__name__}: " + " | ".join(lines[:3]))[:600]


def run_samples(op, dtype: torch.dtype, dynamic: bool, max_samples: Optional[int] = None,
                device: str = "cpu", indices=None):
    """The SampleResults of `op`'s sample inputs (at most max_samples; only
    those at `indices` when given) on `device` ("cuda": the partitions
    compile for the cuda target)."""
    results = []
    for res, args, kwargs in _each_sample(op, dtype, dynamic, max_samples, results,
                                          device=device, indices=indices):
        try:
            with torch.no_grad():
                expected = op(*args, **kwargs)
        except Exception as e:  # eager rejects the sample: nothing to compare
            res.detail = f"eager raises {type(e).__name__}"
            continue

        def fn(*a):
            return op(*a, **kwargs)

        torch._dynamo.reset()
        compiled = torch.compile(fn, backend="disc", dynamic=dynamic)
        before = disc.stats()
        try:
            with torch.no_grad():
                actual = compiled(*args)
        except Exception as e:
            res.status, res.detail = "error", _error_detail(e)
            continue
        after = disc.stats()
        if res.op == "topk":
            actual, expected = (_topk_as_chosen(args, kwargs, actual),
                                _topk_as_chosen(args, kwargs, expected))
        problem = _compare(actual, expected)
        if problem:
            res.status, res.detail = "mismatch", problem
            continue
        res.status = "match"
        compiled_nodes = after["compiled_nodes"] - before["compiled_nodes"]
        fallback_nodes = after["fallback_nodes"] - before["fallback_nodes"]
        eager_calls = after["eager_calls"] - before["eager_calls"]
        if compiled_nodes and not fallback_nodes and not eager_calls:
            res.coverage = "compiled"
        else:
            res.coverage = "partial" if compiled_nodes else "fallback"
            reasons = sorted(k for k, v in after["fallback_ops"].items()
                             if v != before["fallback_ops"].get(k, 0))
            if eager_calls:
                reasons.append(f"{eager_calls} call(s) rejected by the compiled code")
            if not reasons and not compiled_nodes:
                reasons.append("nothing to compile (no ATen compute node)")
            res.detail = "; ".join(reasons)[:400]
    return results


def _topk_as_chosen(args, kwargs, result):
    """topk's indices of equal values are unspecified (eager's come from
    std::partial_sort or nth_element): a result is its values, the input's
    values at its indices, and whether each line's indices are distinct."""
    x, values, indices = args[0], result[0], result[1]
    if x.dim() == 0:
        return result
    dim = args[2] if len(args) > 2 else kwargs.get("dim", -1)
    chosen = torch.gather(x, dim, indices)
    ordered = indices.sort(dim).values
    distinct = (ordered.diff(dim=dim) != 0).all(dim) if indices.shape[dim] > 1 else None
    return values, chosen, distinct


def _grad_inputs(args, kwargs):
    """The float tensors among a sample's arguments that require grad."""
    flat = _flatten(list(args)) + _flatten(list(kwargs.values()))
    return [t for t in flat if isinstance(t, torch.Tensor) and t.requires_grad]


def _loss_and_grads(fn, args, kwargs):
    out = fn(*args, **kwargs)
    outs = [o for o in _flatten(out) if isinstance(o, torch.Tensor)
            and o.requires_grad and o.is_floating_point()]
    inputs = _grad_inputs(args, kwargs)
    if not outs or not inputs:
        return out, None
    g = torch.Generator().manual_seed(7)
    loss = sum((o * torch.randn(o.shape, generator=g, dtype=o.dtype)).sum() for o in outs)
    grads = torch.autograd.grad(loss, inputs, allow_unused=True)
    return out, [torch.zeros_like(i) if gr is None else gr for i, gr in zip(inputs, grads)]


def run_gradient_samples(op, dtype: torch.dtype, max_samples: Optional[int] = None):
    """Like run_samples, in training: each sample's inputs require grad, the
    loss weighs every output element differently, and the gradients of
    every input (through torch.compile(backend="disc", dynamic=True): the
    joint graph's forward and backward both compiled by DISC) must equal
    eager's. `coverage` covers the forward and the backward graph."""
    results = []
    for res, args, kwargs in _each_sample(op, dtype, True, max_samples, results,
                                          requires_grad=True):
        try:
            expected, expected_grads = _loss_and_grads(op, args, kwargs)
        except Exception as e:
            res.detail = f"eager raises {type(e).__name__}"
            continue
        if expected_grads is None:
            res.detail = "no differentiable output or input"
            continue

        def fn(*a, **k):
            return op(*a, **k)

        torch._dynamo.reset()
        compiled = torch.compile(fn, backend="disc", dynamic=True)
        before = disc.stats()
        try:
            actual, actual_grads = _loss_and_grads(compiled, args, kwargs)
        except Exception as e:
            res.status, res.detail = "error", _error_detail(e)
            continue
        after = disc.stats()
        problem = _compare(actual, expected)
        if problem is None:
            problem = _compare(actual_grads, expected_grads)
            problem = problem and "gradient " + problem
        if problem:
            res.status, res.detail = "mismatch", problem
            continue
        res.status = "match"
        fallback_nodes = after["fallback_nodes"] - before["fallback_nodes"]
        compiled_nodes = after["compiled_nodes"] - before["compiled_nodes"]
        if after["training_graphs"] == before["training_graphs"]:
            res.coverage, res.detail = "fallback", "no training graph reached DISC"
        elif compiled_nodes and not fallback_nodes:
            res.coverage = "compiled"
        else:
            res.coverage = "partial" if compiled_nodes else "fallback"
            res.detail = "; ".join(sorted(k for k, v in after["fallback_ops"].items()
                                          if v != before["fallback_ops"].get(k, 0)))[:400]
            if not res.detail and not compiled_nodes:
                res.detail = "nothing to compile (no ATen compute node)"
    return results


def dtypes_for(op, wanted=(torch.float32, torch.int64), device="cpu"):
    supported = op.supported_dtypes(device)
    return [d for d in wanted if d in supported and d in DISC_DTYPES]
