"""Core ATen ops -> `disc` ops.

Each entry of LOWERINGS maps an ATen overload to a function that emits
`disc` ops for one FX node, and optionally to a `check(node)` that returns a
reason string when this particular use cannot be lowered (the node then runs
in eager PyTorch and the reason is logged). Composite ops PyTorch can
decompose (layer norm, softmax, gelu, ...) are decomposed by PyTorch's own
tables before the importer sees them (backend.py); this file lowers what is
left: elementwise math, views, indexing, reductions, matmul, convolution,
pooling.

Dtypes follow PyTorch: the node's FakeTensor says the result dtype; operands
are converted to it (or to the promoted type for comparisons) first.
"""
from __future__ import annotations

import itertools
import math
import operator
import os
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import sympy
import torch

from .. import _log
from . import symbolic
from .emitter import SUPPORTED_DTYPES, ImportError_, Val, as_expr, is_static, shape_of

aten = torch.ops.aten
prims = torch.ops.prims


@dataclass
class Lowering:
    fn: Callable
    check: Optional[Callable] = None


LOWERINGS: dict = {}


def register(*targets, check=None):
    def decorate(fn):
        for target in targets:
            LOWERINGS[target] = Lowering(fn, check)
        return fn
    return decorate


def fake(node):
    return node.meta.get("val", node.meta.get("example_value"))


class LoweringContext:
    def __init__(self, importer, node):
        self.importer = importer
        self.b = importer.b
        self.node = node
        self.out = fake(node)

    @property
    def out_shape(self):
        return shape_of(self.out)

    def hint(self, expr) -> int:
        """The example value of a size expression (from the shape env)."""
        expr = as_expr(expr)
        if expr.is_Integer:
            return int(expr)
        for v in node_tensors(self.node):
            mode = getattr(v, "fake_mode", None)
            env = getattr(mode, "shape_env", None)
            if env is not None:
                vals = getattr(env, "backed_var_to_val", None) or env.var_to_val
                return int(expr.xreplace(vals))
        raise ImportError_(f"no example value for the size {expr}")

    @property
    def out_dtype(self):
        return self.out.dtype

    def out_shape_of(self, i):
        return shape_of(self.out[i])

    # -------------------------------------------------- operand helpers

    def scalar(self, value, dtype: torch.dtype) -> Val:
        """A Python number or a SymInt expression as a rank-0 tensor."""
        if isinstance(value, Val):
            if value.rank != 0:
                raise ImportError_("expected a scalar")
            return self.b.convert(value, dtype)
        if isinstance(value, sympy.Expr):
            if value.is_Integer:
                return self.b.constant(int(value), dtype)
            if value.is_Float or value.is_Rational:
                return self.b.constant(float(value), dtype)
            if symbolic.is_float_of_int(value):
                # ToFloat(n): the integer size expression, converted.
                return self.scalar(value.args[0], dtype)
            if not value.is_integer:
                # A float of sizes (n / (n - 1)): computed in f64 on the
                # host as Python computes the SymFloat, then converted.
                f64 = symbolic.emit_float(self.b, value)
                name = self.b.fresh("t")
                self.b.emit(f"{name} = tensor.from_elements {f64} : tensor<f64>")
                return self.b.convert(Val(name, torch.float64, ()), dtype)
            idx = self.b.index(value)
            i64 = self.b.fresh("s")
            self.b.emit(f"{i64} = arith.index_cast {idx} : index to i64")
            name = self.b.fresh("t")
            self.b.emit(f"{name} = tensor.from_elements {i64} : tensor<i64>")
            return self.b.convert(Val(name, torch.int64, ()), dtype)
        if isinstance(value, bool) and dtype != torch.bool:
            value = int(value)
        if dtype == torch.bool:
            return self.b.constant(bool(value), dtype)
        if dtype.is_floating_point:
            return self.b.constant(float(value), dtype)
        return self.b.constant(int(value), dtype)

    def operand(self, value, dtype: torch.dtype, shape=None) -> Val:
        """A tensor or scalar operand converted to `dtype` and broadcast to
        `shape` (default: the node's result shape)."""
        shape = self.out_shape if shape is None else shape
        v = value if isinstance(value, Val) and value.rank > 0 else None
        if v is None:
            v = self.scalar(value, dtype)
        else:
            v = self.b.convert(v, dtype)
        return self.b.broadcast_to(v, shape)


def node_tensors(node):
    """The (fake) tensors of `node`'s value and of its inputs' values."""
    for n in [node, *node.all_input_nodes]:
        yield from _tensor_values(fake(n))


def _rank_dummy(value):
    """Something torch.result_type accepts with the same promotion
    category as `value` (dimensioned tensor, 0-d tensor or Python scalar)."""
    if isinstance(value, Val):
        return torch.empty((1,) * value.rank if value.rank else (), dtype=value.dtype)
    if isinstance(value, sympy.Expr):
        return 1 if value.is_integer else 1.0
    return value


def promoted_dtype(a, b) -> torch.dtype:
    return torch.result_type(_rank_dummy(a), _rank_dummy(b))


def norm_dim(dim: int, rank: int) -> int:
    dim = int(dim)
    return dim + rank if dim < 0 else dim


def dims_of(dims, rank):
    if dims is None:
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({norm_dim(d, rank) for d in dims})


# ====================================================================
# Elementwise
# ====================================================================

# Rounding is the identity on integers (and sign on bools): PyTorch
# accepts those dtypes and returns the input's values.
_IDENTITY_ON_INTEGERS = {"floor", "ceil", "round_nearest_even"}


def _unary(opname, *, float_only=False):
    def fn(ctx, x, *args, **kwargs):
        dtype = ctx.out_dtype
        v = ctx.operand(x, dtype)
        if not dtype.is_floating_point and (opname in _IDENTITY_ON_INTEGERS
                                            or (opname == "sign" and dtype == torch.bool)):
            return v
        return ctx.b.unary(opname, v)
    return fn


for _target, _op in [
    (aten.neg.default, "negate"), (aten.abs.default, "abs"), (aten.exp.default, "exponential"),
    (aten.expm1.default, "exponential_minus_one"), (aten.log.default, "log"),
    (aten.log1p.default, "log_plus_one"), (aten.log2.default, "log2"),
    (aten.log10.default, "log10"), (aten.exp2.default, "exponential2"), (aten.sqrt.default, "sqrt"), (aten.rsqrt.default, "rsqrt"),
    (aten.sin.default, "sine"), (aten.cos.default, "cosine"), (aten.tan.default, "tan"),
    (aten.tanh.default, "tanh"), (aten.sigmoid.default, "logistic"), (aten.erf.default, "erf"),
    (aten.floor.default, "floor"), (aten.ceil.default, "ceil"), (aten.round.default, "round_nearest_even"),
    (aten.sign.default, None), (aten.bitwise_not.default, "not"), (aten.logical_not.default, None),
]:
    if _op is not None:
        register(_target)(_unary(_op))


def _int_or_float_unary_check(node):
    x = fake(node.args[0]) if hasattr(node.args[0], "meta") else None
    return None


@register(aten.sign.default)
def _sign(ctx, x):
    """PyTorch's sign of NaN is 0 ((0 < x) - (x < 0)); disc.sign, as
    StableHLO's, keeps NaN."""
    v = _unary("sign")(ctx, x)
    if not ctx.out_dtype.is_floating_point:
        return v
    x = ctx.operand(x, ctx.out_dtype)
    return ctx.b.select(ctx.b.compare("NE", x, x), ctx.operand(0.0, ctx.out_dtype), v)


@register(aten.logical_not.default)
def _logical_not(ctx, x):
    return ctx.b.unary("not", _to_bool(ctx, x))


def _to_bool(ctx, x, shape=None):
    shape = ctx.out_shape if shape is None else shape
    if isinstance(x, Val) and x.dtype == torch.bool:
        return ctx.b.broadcast_to(x, shape)
    v = ctx.operand(x, x.dtype if isinstance(x, Val) else torch.float32, shape)
    zero = ctx.b.broadcast_to(ctx.scalar(0, v.dtype), shape)
    return ctx.b.compare("NE", v, zero)


@register(aten.reciprocal.default)
def _reciprocal(ctx, x):
    v = ctx.operand(x, ctx.out_dtype)
    one = ctx.operand(1.0, ctx.out_dtype)
    return ctx.b.binary("divide", one, v)


@register(aten.trunc.default)
def _trunc(ctx, x):
    v = ctx.operand(x, ctx.out_dtype)
    if not v.dtype.is_floating_point:
        return v
    return ctx.b.binary("multiply", ctx.b.unary("sign", v),
                        ctx.b.unary("floor", ctx.b.unary("abs", v)))


@register(aten.relu.default)
def _relu(ctx, x):
    v = ctx.operand(x, ctx.out_dtype)
    return ctx.b.binary("maximum", v, ctx.operand(0, ctx.out_dtype))


@register(aten.isnan.default)
def _isnan(ctx, x):
    if not x.dtype.is_floating_point:
        return ctx.b.full(False, torch.bool, ctx.out_shape)
    return ctx.b.compare("NE", x, x)


@register(aten.isinf.default)
def _isinf(ctx, x):
    if not x.dtype.is_floating_point:
        return ctx.b.full(False, torch.bool, ctx.out_shape)
    inf = ctx.operand(math.inf, x.dtype)
    return ctx.b.compare("EQ", ctx.b.unary("abs", x), inf)


@register(aten.isfinite.default)
def _isfinite(ctx, x):
    if not x.dtype.is_floating_point:
        return ctx.b.full(True, torch.bool, ctx.out_shape)
    return ctx.b.unary("is_finite", x, torch.bool)


def _binary_arith(opname):
    def fn(ctx, a, b, alpha=None, **kwargs):
        dtype = ctx.out_dtype
        va = ctx.operand(a, dtype)
        vb = ctx.operand(b, dtype)
        if alpha is not None and alpha != 1:
            vb = ctx.b.binary("multiply", vb, ctx.operand(alpha, dtype))
        if dtype == torch.bool and opname in ("add", "multiply", "maximum", "minimum"):
            opname2 = {"add": "or", "multiply": "and", "maximum": "or", "minimum": "and"}[opname]
            return ctx.b.binary(opname2, va, vb)
        return ctx.b.binary(opname, va, vb)
    return fn


for _targets, _op in [
    ((aten.add.Tensor, aten.add.Scalar), "add"),
    ((aten.sub.Tensor, aten.sub.Scalar), "subtract"),
    ((aten.mul.Tensor, aten.mul.Scalar), "multiply"),
    ((aten.maximum.default,), "maximum"),
    ((aten.minimum.default,), "minimum"),
    ((aten.atan2.default,), "atan2"),
    ((aten.bitwise_and.Tensor, aten.bitwise_and.Scalar), "and"),
    ((aten.bitwise_or.Tensor, aten.bitwise_or.Scalar), "or"),
    ((aten.bitwise_xor.Tensor, aten.bitwise_xor.Scalar), "xor"),
    ((aten.bitwise_left_shift.Tensor,), "shift_left"),
    ((aten.bitwise_right_shift.Tensor,), "shift_right_arithmetic"),
]:
    register(*_targets)(_binary_arith(_op))


@register(aten.atan.default)
def _atan(ctx, x):
    """atan(x) as atan2(x, 1): the dialect has no atan of its own."""
    dtype = ctx.out_dtype
    return ctx.b.binary("atan2", ctx.operand(x, dtype), ctx.operand(1.0, dtype))


@register(aten.signbit.default)
def _signbit(ctx, x):
    """The sign bit: -0.0 and a NaN with its sign bit set count, so a float
    compares copysign(1, x) with 0; an integer x < 0; a bool never."""
    dtype = x.dtype if isinstance(x, Val) else torch.float32
    v = ctx.operand(x, dtype)
    if dtype == torch.bool:
        return ctx.b.compare("NE", v, v)
    zero = ctx.operand(0, dtype)
    if dtype.is_floating_point:
        v = ctx.b.binary("copysign", ctx.operand(1.0, dtype), v)
    return ctx.b.compare("LT", v, zero)


@register(aten.fmax.default, aten.fmin.default)
def _fmax(ctx, a, b):
    """maximum/minimum that ignore a NaN operand (NaN only if both are)."""
    dtype = ctx.out_dtype
    va, vb = ctx.operand(a, dtype), ctx.operand(b, dtype)
    is_max = ctx.node.target is aten.fmax.default
    if dtype == torch.bool:
        return ctx.b.binary("or" if is_max else "and", va, vb)
    m = ctx.b.binary("maximum" if is_max else "minimum", va, vb)
    if not dtype.is_floating_point:
        return m
    m = ctx.b.select(ctx.b.compare("NE", vb, vb), va, m)
    return ctx.b.select(ctx.b.compare("NE", va, va), vb, m)


@register(aten.copysign.Tensor, aten.copysign.Scalar)
def _copysign(ctx, a, b):
    dtype = ctx.out_dtype
    return ctx.b.binary("copysign", ctx.operand(a, dtype), ctx.operand(b, dtype))


@register(aten.hypot.default)
def _hypot(ctx, a, b):
    """sqrt(a^2 + b^2) without overflow: big * sqrt(1 + (small/big)^2);
    inf if either is infinite (even with a NaN), as C's hypot. f16/bf16
    compute in f32."""
    dtype = ctx.out_dtype
    compute = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    x = ctx.b.unary("abs", ctx.operand(a, compute))
    y = ctx.b.unary("abs", ctx.operand(b, compute))
    big, small = ctx.b.binary("maximum", x, y), ctx.b.binary("minimum", x, y)
    zero, one = ctx.operand(0.0, compute), ctx.operand(1.0, compute)
    inf = ctx.operand(math.inf, compute)
    ratio = ctx.b.binary("divide", small, ctx.b.select(ctx.b.compare("EQ", big, zero), one, big))
    r = ctx.b.binary("multiply", big, ctx.b.unary(
        "sqrt", ctx.b.binary("add", one, ctx.b.binary("multiply", ratio, ratio))))
    either_inf = ctx.b.binary("or", ctx.b.compare("EQ", x, inf), ctx.b.compare("EQ", y, inf))
    return ctx.b.convert(ctx.b.select(either_inf, inf, r), dtype)


def _no_bool_sub(node):
    if fake(node).dtype == torch.bool:
        return "subtraction of bools"
    return None


LOWERINGS[aten.sub.Tensor].check = _no_bool_sub
LOWERINGS[aten.sub.Scalar].check = _no_bool_sub


@register(aten.rsub.Scalar, aten.rsub.Tensor)
def _rsub(ctx, a, b, alpha=1):
    dtype = ctx.out_dtype
    vb = ctx.operand(b, dtype)
    va = ctx.operand(a, dtype)
    if alpha != 1:
        va = ctx.b.binary("multiply", va, ctx.operand(alpha, dtype))
    return ctx.b.binary("subtract", vb, va)


def _floor_div_float(ctx, va, vb):
    """Python's (and PyTorch's) float floor division: (a - fmod(a, b)) / b,
    moved down by 1 where the remainder's sign is not the divisor's, then
    floored, so that a == (a // b) * b + a % b holds where floor(a / b)
    rounds wrong: 1e-40 // -1e30 and 88 // -inf are -1 (not -0), inf // 1
    is NaN (not inf); a / b for b == 0; a zero quotient takes the sign of
    a / b. f16/bf16 compute in f32."""
    b, dtype = ctx.b, va.dtype
    compute = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    va, vb = b.convert(va, compute), b.convert(vb, compute)
    zero, one, half = (ctx.operand(c, compute) for c in (0.0, 1.0, 0.5))
    quotient = b.binary("divide", va, vb)
    mod = b.binary("remainder", va, vb)
    div = b.binary("divide", b.binary("subtract", va, mod), vb)
    signs_differ = b.binary("xor", b.compare("LT", vb, zero), b.compare("LT", mod, zero))
    div = b.select(b.binary("and", b.compare("NE", mod, zero), signs_differ),
                   b.binary("subtract", div, one), div)
    floored = b.unary("floor", div)
    floored = b.select(b.compare("GT", b.binary("subtract", div, floored), half),
                       b.binary("add", floored, one), floored)
    result = b.select(b.compare("NE", div, zero), floored, b.binary("copysign", zero, quotient))
    return b.convert(b.select(b.compare("EQ", vb, zero), quotient, result), dtype)


def _floor_div_int(ctx, va, vb):
    """Python floor division for signed ints (StableHLO divide truncates)."""
    q = ctx.b.binary("divide", va, vb)
    r = ctx.b.binary("remainder", va, vb)
    zero = ctx.operand(0, va.dtype)
    one = ctx.operand(1, va.dtype)
    nonzero = ctx.b.compare("NE", r, zero)
    signs_differ = ctx.b.binary("xor", ctx.b.compare("LT", r, zero), ctx.b.compare("LT", vb, zero))
    adjust = ctx.b.binary("and", nonzero, signs_differ)
    return ctx.b.select(adjust, ctx.b.binary("subtract", q, one), q)


@register(aten.div.Tensor, aten.div.Scalar, aten.true_divide.Tensor, aten.div.Tensor_mode,
          aten.div.Scalar_mode, aten.floor_divide.default)
def _div(ctx, a, b, rounding_mode=None):
    if ctx.node.target is aten.floor_divide.default:
        rounding_mode = "floor"
    dtype = ctx.out_dtype
    va, vb = ctx.operand(a, dtype), ctx.operand(b, dtype)
    if dtype.is_floating_point:
        q = ctx.b.binary("divide", va, vb)
        if rounding_mode == "trunc":
            return ctx.b.binary("multiply", ctx.b.unary("sign", q),
                                ctx.b.unary("floor", ctx.b.unary("abs", q)))
        if rounding_mode == "floor":
            return _floor_div_float(ctx, va, vb)
        return q
    if rounding_mode == "floor":
        return _floor_div_int(ctx, va, vb)
    return ctx.b.binary("divide", va, vb)


def _div_check(node):
    mode = node.kwargs.get("rounding_mode", node.args[2] if len(node.args) > 2 else None)
    out = fake(node)
    if not out.dtype.is_floating_point and mode is None and node.target is not aten.floor_divide.default:
        return "integer true division"
    return None


for _t in (aten.div.Tensor_mode, aten.div.Scalar_mode, aten.floor_divide.default):
    LOWERINGS[_t].check = _div_check


@register(aten.remainder.Tensor, aten.remainder.Scalar)
def _remainder(ctx, a, b):
    """Python modulo: the result has the divisor's sign."""
    dtype = ctx.out_dtype
    va, vb = ctx.operand(a, dtype), ctx.operand(b, dtype)
    r = ctx.b.binary("remainder", va, vb)
    zero = ctx.operand(0, dtype)
    nonzero = ctx.b.compare("NE", r, zero)
    signs_differ = ctx.b.binary("xor", ctx.b.compare("LT", r, zero), ctx.b.compare("LT", vb, zero))
    adjust = ctx.b.binary("and", nonzero, signs_differ)
    return ctx.b.select(adjust, ctx.b.binary("add", r, vb), r)


@register(aten.fmod.Tensor, aten.fmod.Scalar)
def _fmod(ctx, a, b):
    dtype = ctx.out_dtype
    return ctx.b.binary("remainder", ctx.operand(a, dtype), ctx.operand(b, dtype))


@register(aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor, aten.pow.Scalar)
def _pow(ctx, a, b):
    dtype = ctx.out_dtype
    va = ctx.operand(a, dtype)
    if ctx.node.target is aten.pow.Tensor_Scalar and not isinstance(b, (Val, sympy.Expr)):
        # The special exponents PyTorch's CPU kernel computes exactly.
        if b == 1:
            return va
        if b == 2:
            return ctx.b.binary("multiply", va, va)
        if b == 3:
            return ctx.b.binary("multiply", ctx.b.binary("multiply", va, va), va)
        if dtype.is_floating_point:
            if b == 0.5:
                return ctx.b.unary("sqrt", va)
            if b == -0.5:
                return ctx.b.unary("rsqrt", va)
            if b == -1:
                return ctx.b.binary("divide", ctx.operand(1.0, dtype), va)
            if b == -2:
                return ctx.b.binary("divide", ctx.operand(1.0, dtype), ctx.b.binary("multiply", va, va))
    return ctx.b.binary("power", va, ctx.operand(b, dtype))


def _pow_check(node):
    if not fake(node).dtype.is_floating_point:
        exponent = node.args[1]
        if isinstance(exponent, (int, float)) and exponent < 0:
            return "integer power with a negative exponent"
    return None


for _t in (aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor, aten.pow.Scalar):
    LOWERINGS[_t].check = _pow_check


def _compare(direction):
    def fn(ctx, a, b):
        dtype = promoted_dtype(a, b)
        return ctx.b.compare(direction, ctx.operand(a, dtype), ctx.operand(b, dtype))
    return fn


for _name, _dir in [("eq", "EQ"), ("ne", "NE"), ("lt", "LT"), ("le", "LE"), ("gt", "GT"), ("ge", "GE")]:
    _op = getattr(aten, _name)
    register(_op.Tensor, _op.Scalar)(_compare(_dir))


def _logical(opname):
    def fn(ctx, a, b):
        return ctx.b.binary(opname, _to_bool(ctx, a), _to_bool(ctx, b))
    return fn


register(aten.logical_and.default)(_logical("and"))
register(aten.logical_or.default)(_logical("or"))
register(aten.logical_xor.default)(_logical("xor"))


@register(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def _where(ctx, cond, a, b):
    dtype = ctx.out_dtype
    pred = _to_bool(ctx, cond)
    return ctx.b.select(pred, ctx.operand(a, dtype), ctx.operand(b, dtype))


@register(aten.clamp.default, aten.clamp.Tensor, aten.clamp_min.default, aten.clamp_max.default,
          aten.clamp_min.Tensor, aten.clamp_max.Tensor)
def _clamp(ctx, x, lo=None, hi=None):
    t = ctx.node.target
    if t in (aten.clamp_max.default, aten.clamp_max.Tensor):
        lo, hi = None, lo
    dtype = ctx.out_dtype
    v = ctx.operand(x, dtype)
    if lo is not None:
        v = ctx.b.binary("maximum", v, ctx.operand(lo, dtype))
    if hi is not None:
        v = ctx.b.binary("minimum", v, ctx.operand(hi, dtype))
    return v


@register(aten.hardtanh.default)
def _hardtanh(ctx, x, lo=-1.0, hi=1.0):
    dtype = ctx.out_dtype
    v = ctx.operand(x, dtype)
    return ctx.b.binary("minimum", ctx.b.binary("maximum", v, ctx.operand(lo, dtype)),
                        ctx.operand(hi, dtype))


@register(aten.leaky_relu.default)
def _leaky_relu(ctx, x, slope=0.01):
    dtype = ctx.out_dtype
    v = ctx.operand(x, dtype)
    positive = ctx.b.compare("GT", v, ctx.operand(0, dtype))
    return ctx.b.select(positive, v, ctx.b.binary("multiply", v, ctx.operand(slope, dtype)))


# ====================================================================
# Conversions, copies, constants
# ====================================================================

@register(aten._to_copy.default, prims.convert_element_type.default, aten.clone.default,
          aten.alias.default, aten.lift_fresh_copy.default, aten.detach.default,
          aten.contiguous.default)
def _convert(ctx, x, *args, **kwargs):
    return ctx.operand(x, ctx.out_dtype)


def _to_copy_check(node):
    out, src = fake(node), fake(node.args[0])
    if isinstance(src, torch.Tensor) and out.device != src.device:
        return f"a copy from {src.device} to {out.device} (a device transfer)"
    return None


LOWERINGS[aten._to_copy.default].check = _to_copy_check


@register(aten.copy.default)
def _copy(ctx, dst, src, non_blocking=False):
    return ctx.operand(src, ctx.out_dtype)


@register(aten.scalar_tensor.default)
def _scalar_tensor(ctx, value, **kwargs):
    return ctx.scalar(value, ctx.out_dtype)


@register(aten.full.default, aten.full_like.default, aten.new_full.default)
def _full(ctx, *args, **kwargs):
    t = ctx.node.target
    value = args[1] if t is not aten.new_full.default else args[2]
    return ctx.b.broadcast_to(ctx.scalar(value, ctx.out_dtype), ctx.out_shape)


@register(aten.zeros.default, aten.zeros_like.default, aten.new_zeros.default,
          aten.empty.memory_format, aten.empty_like.default, aten.new_empty.default,
          aten.empty_strided.default, aten.empty_permuted.default,
          aten.new_empty_strided.default)
def _zeros(ctx, *args, **kwargs):
    """empty: any value is valid; zeros keeps results deterministic. A
    DISC value is its logical elements, so strides (empty_strided,
    AOTAutograd's clone of a permuted tensor: new_empty_strided, then a
    copy into it) do not change it; the one reader of memory order,
    as_strided, takes it from its operand's traced strides
    (_storage_order)."""
    return ctx.b.full(0, ctx.out_dtype, ctx.out_shape)


def _without_max_one(expr):
    """expr with every Max(1, e) as e: PyTorch's contiguous strides are
    products of max(1, size), which differ from the sizes' products only
    when a size is 0, and then the tensor has no element to place."""
    # (sympy's Max or PyTorch's own, torch.utils._sympy.functions.Max)
    return expr.replace(lambda e: type(e).__name__ == "Max" and len(e.args) == 2 and 1 in e.args,
                        lambda e: e.args[0] if e.args[1] == 1 else e.args[1])


def _is_contiguous_layout(shape, strides) -> bool:
    """Whether `strides` (sympy) are the row-major strides of `shape`
    (sympy; a dim of extent 1 may have any stride)."""
    expected = sympy.Integer(1)
    for d, st in reversed(list(zip(shape, strides))):
        if not (is_static(d) and int(d) == 1) and \
                sympy.simplify(_without_max_one(sympy.sympify(st)) - expected) != 0:
            return False
        expected = expected * d
    return True


@register(aten.ones.default, aten.ones_like.default, aten.new_ones.default)
def _ones(ctx, *args, **kwargs):
    return ctx.b.full(1, ctx.out_dtype, ctx.out_shape)


@register(aten.arange.start_step, aten.arange.start, aten.arange.default)
def _arange(ctx, *args, **kwargs):
    t = ctx.node.target
    if t is aten.arange.default:
        start, step = 0, 1
    elif t is aten.arange.start:
        start, step = args[0], 1
    else:
        start = args[0]
        step = args[2] if len(args) > 2 else kwargs.get("step", 1)
    dtype = ctx.out_dtype
    n = ctx.out_shape
    compute = torch.float64 if dtype.is_floating_point else torch.int64
    if dtype.is_floating_point and dtype != torch.float64:
        compute = torch.float32
    idx = ctx.b.iota(n, 0, compute)
    v = idx
    if step != 1:
        v = ctx.b.binary("multiply", v, ctx.operand(step, compute, n))
    if not (isinstance(start, (int, float)) and start == 0):
        v = ctx.b.binary("add", v, ctx.operand(start, compute, n))
    return ctx.b.convert(v, dtype)


def _integral_linspace_check(node):
    # backend.py decomposes every other linspace; what reaches the importer
    # is an integer linspace whose step is not a whole number.
    return "integer linspace with a fractional step (eager's values depend on its vector width)"


@register(aten.linspace.default, aten.linspace.Tensor_Tensor, aten.linspace.Tensor_Scalar,
          aten.linspace.Scalar_Tensor, check=_integral_linspace_check)
def _integral_linspace(ctx, *args, **kwargs):
    raise ImportError_(_integral_linspace_check(ctx.node))


# ====================================================================
# Views and data movement
# ====================================================================

@register(aten.view.default, aten._unsafe_view.default, aten.reshape.default,
          aten.squeeze.dims, aten.squeeze.dim, aten.squeeze.default, aten.unsqueeze.default,
          aten.view_as.default, aten.flatten.using_ints)
def _reshape(ctx, x, *args, **kwargs):
    return ctx.b.reshape(x, ctx.out_shape)


@register(aten.expand.default, aten.expand_as.default, aten.broadcast_to.default)
def _expand(ctx, x, *args, **kwargs):
    return ctx.b.broadcast_to(x, ctx.out_shape)


@register(aten.permute.default)
def _permute(ctx, x, dims):
    return ctx.b.transpose(x, [norm_dim(d, x.rank) for d in dims])


@register(aten.t.default)
def _t(ctx, x):
    return ctx.b.transpose(x, [1, 0] if x.rank == 2 else list(range(x.rank)))


@register(aten.transpose.int)
def _transpose(ctx, x, d0, d1):
    perm = list(range(x.rank))
    d0, d1 = norm_dim(d0, x.rank), norm_dim(d1, x.rank)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return ctx.b.transpose(x, perm)


INT64_MAX = 2**63 - 1


def _slice_bounds(size, start, end, step, out_size):
    """(start, limit) expressions for x[start:end:step] along a dim of
    `size`, giving `out_size` elements (PyTorch's clamping rules)."""
    size = as_expr(size)
    if start is None:
        start = 0
    if isinstance(start, int):
        if start < 0:
            start = size + start
            if is_static(size):
                start = max(int(start), 0)
        elif is_static(size):
            start = min(start, int(size))
    elif step == 1 and (end is None or (isinstance(end, int) and end >= INT64_MAX)) \
            and not is_static(as_expr(start)) and not as_expr(start).is_nonnegative:
        # x[s:] with a symbolic s that may be negative (a SymInt input;
        # sizes and their expressions are known nonnegative): the first
        # element taken is size - out_size whatever the sign.
        start = size - as_expr(out_size)
    start = as_expr(start)
    out_size = as_expr(out_size)
    if step == 1:
        limit = start + out_size
    else:
        limit = sympy.Max(start, start + (out_size - 1) * step + 1)
    return start, limit


@register(aten.slice.Tensor)
def _slice(ctx, x, dim=0, start=None, end=None, step=1):
    dim = norm_dim(dim, x.rank)
    out_shape = ctx.out_shape
    start, limit = _slice_bounds(x.shape[dim], start, end, step, out_shape[dim])
    starts = [0] * x.rank
    limits = list(x.shape)
    strides = [1] * x.rank
    starts[dim], limits[dim], strides[dim] = start, limit, step
    return ctx.b.slice(x, starts, limits, strides, out_shape)


def _slice_check(node):
    step = node.args[4] if len(node.args) > 4 else node.kwargs.get("step", 1)
    if not isinstance(step, int) or step < 1:
        return f"slice step {step}"
    return None


LOWERINGS[aten.slice.Tensor].check = _slice_check


def slice_along(b, x, dim, start, stop):
    """x[..., start:stop, ...] along `dim` (unit stride)."""
    starts = [0] * x.rank
    limits = list(x.shape)
    starts[dim], limits[dim] = start, stop
    shape = list(x.shape)
    shape[dim] = as_expr(stop) - as_expr(start)
    return b.slice(x, starts, limits, [1] * x.rank, shape)


@register(aten.select.int)
def _select(ctx, x, dim, index):
    dim = norm_dim(dim, x.rank)
    index = as_expr(index)
    if index.is_Integer and int(index) < 0:
        index = x.shape[dim] + index
    return ctx.b.reshape(slice_along(ctx.b, x, dim, index, index + 1), ctx.out_shape)


@register(aten.split_with_sizes.default, aten.split.Tensor)
def _split(ctx, x, sizes, dim=0):
    dim = norm_dim(dim, x.rank)
    outs = []
    offset = sympy.Integer(0)
    for part in ctx.out:
        stop = offset + shape_of(part)[dim]
        outs.append(slice_along(ctx.b, x, dim, offset, stop))
        offset = stop
    return tuple(outs)


@register(aten.unbind.int)
def _unbind(ctx, x, dim=0):
    dim = norm_dim(dim, x.rank)
    return tuple(ctx.b.reshape(slice_along(ctx.b, x, dim, i, i + 1), shape_of(part))
                 for i, part in enumerate(ctx.out))


def _unbind_check(node):
    x = fake(node.args[0])
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    if not isinstance(x.shape[dim], int):
        return "unbind along a dynamic dim"
    return None


LOWERINGS[aten.unbind.int].check = _unbind_check


@register(aten.cat.default, aten.concat.default)
def _cat(ctx, tensors, dim=0):
    dtype = ctx.out_dtype
    out_shape = ctx.out_shape
    rank = len(out_shape)
    dim = norm_dim(dim, rank)
    parts = [ctx.b.convert(t, dtype) for t in tensors
             if not (t.rank == 1 and t.shape[0] == 0 and rank != 1)]  # legacy empty inputs
    return ctx.b.concatenate(parts, dim, out_shape)


@register(aten.stack.default)
def _stack(ctx, tensors, dim=0):
    out_shape = ctx.out_shape
    dim = norm_dim(dim, len(out_shape))
    parts = []
    for t in tensors:
        shape = list(t.shape)
        shape.insert(dim, sympy.Integer(1))
        parts.append(ctx.b.reshape(ctx.b.convert(t, ctx.out_dtype), shape))
    return ctx.b.concatenate(parts, dim, out_shape)


@register(aten.constant_pad_nd.default)
def _constant_pad(ctx, x, pad, value=0):
    rank = x.rank
    low = [sympy.Integer(0)] * rank
    high = [sympy.Integer(0)] * rank
    for i in range(len(pad) // 2):
        d = rank - 1 - i
        low[d] = as_expr(pad[2 * i])
        high[d] = as_expr(pad[2 * i + 1])
    # Negative amounts crop, static or symbolic (disc.dynamic_pad checks
    # at run time that a crop fits in the dim).
    return ctx.b.pad(x, ctx.scalar(value, x.dtype), low, high, [0] * rank, ctx.out_shape)



@register(aten.repeat.default)
def _repeat(ctx, x, repeats):
    rank = len(repeats)
    v = x
    if v.rank < rank:
        v = ctx.b.reshape(v, (sympy.Integer(1),) * (rank - v.rank) + v.shape)
    # [r0, d0, r1, d1, ...] by broadcasting, then merge pairs.
    expanded_shape = []
    dims = []
    for i, r in enumerate(repeats):
        expanded_shape += [as_expr(r), v.shape[i]]
        dims.append(2 * i + 1)
    e = ctx.b.broadcast_in_dim(v, expanded_shape, dims)
    return ctx.b.reshape(e, ctx.out_shape)


@register(aten.flip.default)
def _flip(ctx, x, dims):
    return _reverse(ctx, x, [norm_dim(d, x.rank) for d in dims])


def _reverse(ctx, x: Val, dims):
    if not dims:
        return x
    dims_text = "[" + ", ".join(str(d) for d in dims) + "]"
    return ctx.b.op(f"disc.reverse {x.name}, dims = {dims_text}", x.dtype, x.shape, signature=x.type)


# ====================================================================
# Reductions
# ====================================================================

def _reduce_common(ctx, x, dims, keepdim, kind, dtype):
    v = ctx.b.convert(x, dtype)
    dims = dims_of(dims, x.rank) if x.rank else []
    r = ctx.b.reduce(v, dims, kind) if dims else v
    return ctx.b.reshape(r, ctx.out_shape) if keepdim else r


@register(aten.sum.dim_IntList, aten.sum.default)
def _sum(ctx, x, dims=None, keepdim=False, dtype=None):
    if ctx.node.target is aten.sum.default:
        dims, keepdim = None, False
    if dims is not None and len(dims) == 0:
        dims = None
    out_dtype = ctx.out_dtype
    if out_dtype == torch.bool:
        return _reduce_common(ctx, x, dims, keepdim, "or", torch.bool)
    return _reduce_common(ctx, x, dims, keepdim, "sum", out_dtype)


@register(aten.prod.dim_int, aten.prod.default)
def _prod(ctx, x, dim=None, keepdim=False, dtype=None):
    if ctx.node.target is aten.prod.default:
        dim, keepdim = None, False
    return _reduce_common(ctx, x, dim, keepdim, "prod", ctx.out_dtype)


@register(aten.amax.default, aten.amin.default)
def _amax(ctx, x, dims=(), keepdim=False):
    kind = "max" if ctx.node.target is aten.amax.default else "min"
    if dims is not None and len(dims) == 0:
        dims = None
    if x.dtype == torch.bool:
        kind = "or" if kind == "max" else "and"
    return _reduce_common(ctx, x, dims, keepdim, kind, ctx.out_dtype)


@register(aten.max.default, aten.min.default)
def _max_all(ctx, x):
    kind = "max" if ctx.node.target is aten.max.default else "min"
    if x.dtype == torch.bool:
        kind = "or" if kind == "max" else "and"
    return _reduce_common(ctx, x, None, False, kind, ctx.out_dtype)


@register(aten.any.dim, aten.any.dims, aten.any.default, aten.all.dim, aten.all.dims, aten.all.default)
def _any_all(ctx, x, dims=None, keepdim=False):
    kind = "or" if ctx.node.target in (aten.any.dim, aten.any.dims, aten.any.default) else "and"
    if ctx.node.target in (aten.any.default, aten.all.default):
        dims = None
    b = _to_bool(ctx, x, x.shape)
    if dims is not None and isinstance(dims, (list, tuple)) and len(dims) == 0:
        dims = None
    return _reduce_common(ctx, b, dims, keepdim, kind, torch.bool)


def _argreduce(ctx, x, dim, keepdim, is_max):
    """Index of the first max (min); NaN counts as the max (min), as in
    PyTorch."""
    rank = x.rank
    if dim is None:
        flat = ctx.b.reshape(x, (sympy.Mul(*x.shape) if rank else sympy.Integer(1),))
        idx = _argreduce(ctx, flat, 0, False, is_max)
        return ctx.b.reshape(idx, ctx.out_shape) if keepdim else idx
    if rank == 0:  # one element: its index is 0
        return ctx.b.full(0, torch.int64, ctx.out_shape)
    dim = norm_dim(dim, rank)
    kind = "max" if is_max else "min"
    extreme = ctx.b.reduce(x, [dim], kind)
    kept = [d for d in range(rank) if d != dim]
    eb = ctx.b.broadcast_in_dim(extreme, x.shape, kept)
    hit = ctx.b.compare("EQ", x, eb)
    if x.dtype.is_floating_point:
        both_nan = ctx.b.binary("and", ctx.b.compare("NE", x, x), ctx.b.compare("NE", eb, eb))
        hit = ctx.b.binary("or", hit, both_nan)
    iota = ctx.b.iota(x.shape, dim, torch.int64)
    big = ctx.b.broadcast_to(ctx.b.constant(INT64_MAX, torch.int64), x.shape)
    candidates = ctx.b.select(hit, iota, big)
    idx = ctx.b.reduce(candidates, [dim], "min")
    return ctx.b.reshape(idx, ctx.out_shape) if keepdim else idx


@register(aten.argmax.default, aten.argmin.default)
def _argmax(ctx, x, dim=None, keepdim=False):
    return _argreduce(ctx, x, dim, keepdim, ctx.node.target is aten.argmax.default)


@register(aten.max.dim, aten.min.dim)
def _max_dim(ctx, x, dim, keepdim=False):
    is_max = ctx.node.target is aten.max.dim
    if x.rank == 0:  # one element: itself, at index 0
        return (x, ctx.b.full(0, torch.int64, ctx.out_shape_of(1)))
    kind = "max" if is_max else "min"
    if x.dtype == torch.bool:
        kind = "or" if is_max else "and"
    values = _reduce_common(ctx, x, [dim], False, kind, x.dtype)
    shape0 = ctx.out_shape_of(0)
    if keepdim:
        values = ctx.b.reshape(values, shape0)
    indices = _argreduce(ctx, x, dim, False, is_max)
    if keepdim:
        indices = ctx.b.reshape(indices, ctx.out_shape_of(1))
    return (values, indices)


def _float_or_int_check(node):
    x = fake(node.args[0])
    if x.dtype == torch.bool:
        return "arg-reduction of bools"
    return None


for _t in (aten.argmax.default, aten.argmin.default, aten.max.dim, aten.min.dim):
    LOWERINGS[_t].check = _float_or_int_check


@register(aten.sort.default, aten.sort.stable)
def _sort(ctx, x, *args, **kwargs):
    """A stable sort (the runtime's): `sort.default`'s order of equal
    values is unspecified, so the stable one is a valid answer for it too."""
    if ctx.node.target is aten.sort.stable:
        dim, descending = kwargs.get("dim", -1), kwargs.get("descending", False)
    else:
        dim = args[0] if len(args) > 0 else kwargs.get("dim", -1)
        descending = args[1] if len(args) > 1 else kwargs.get("descending", False)
    if x.rank == 0:
        return (x, ctx.b.full(0, torch.int64, ()))
    return ctx.b.sort(x, norm_dim(dim, x.rank), bool(descending))


@register(aten.topk.default)
def _topk(ctx, x, k, dim=-1, largest=True, sorted=True):
    """The first k of the line sorted (descending for the largest): NaN
    counts as the largest, as in PyTorch. The order of equal values is
    unspecified in PyTorch; here the lowest index comes first. `sorted=False`
    leaves the order unspecified, so sorted order is an answer for it too."""
    if x.rank == 0:  # k is 0 or 1 (PyTorch checks): the element itself
        return (x, ctx.b.full(0, torch.int64, ()))
    dim = norm_dim(dim, x.rank)
    values, indices = ctx.b.sort(x, dim, bool(largest))
    shape = ctx.out_shape_of(0)
    starts, strides = [0] * x.rank, [1] * x.rank
    return (ctx.b.slice(values, starts, shape, strides, shape),
            ctx.b.slice(indices, starts, shape, strides, shape))


@register(aten.cummax.default, aten.cummin.default)
def _cummax(ctx, x, dim):
    """The running max (min) and where it was last reached. PyTorch's
    kernel moves the index on every tie (`>=`) and on every NaN (a NaN, once
    met, stays the running value): so position j is a new index where x[j]
    equals the running value at j or is NaN, and the index at i is the
    last such j <= i (a running max of their positions)."""
    is_max = ctx.node.target is aten.cummax.default
    if x.rank == 0:
        return (x, ctx.b.full(0, torch.int64, ()))
    dim = norm_dim(dim, x.rank)
    kind = "max" if is_max else "min"
    if x.dtype == torch.bool:
        kind = "or" if is_max else "and"
    values = ctx.b.scan(x, dim, kind)
    moved = ctx.b.compare("EQ", x, values)
    if x.dtype.is_floating_point:
        moved = ctx.b.binary("or", moved, ctx.b.compare("NE", x, x))
    positions = ctx.b.iota(x.shape, dim, torch.int64)
    zeros = ctx.b.broadcast_to(ctx.b.constant(0, torch.int64), x.shape)
    return (values, ctx.b.scan(ctx.b.select(moved, positions, zeros), dim, "max"))


# ====================================================================
# Matmul and convolution
# ====================================================================

# oneDNN's types; integer matmuls and convolutions become loop nests
# (disc-lower-integer-contractions).
MATMUL_DTYPES = (torch.float32, torch.float16, torch.bfloat16,
                 torch.int8, torch.int16, torch.int32, torch.int64)


def _matmul_check(node):
    if fake(node).dtype not in MATMUL_DTYPES:
        return f"matmul in {fake(node).dtype} (f32, f16, bf16 and signed integers only)"
    return None


@register(aten.mm.default, check=_matmul_check)
def _mm(ctx, a, b):
    return ctx.b.dot_general(a, b, [], [], [1], [0])


@register(aten.bmm.default, check=_matmul_check)
def _bmm(ctx, a, b):
    return ctx.b.dot_general(a, b, [0], [0], [2], [1])


@register(aten.addmm.default, check=_matmul_check)
def _addmm(ctx, bias, a, b, beta=1, alpha=1):
    dtype = ctx.out_dtype
    r = ctx.b.dot_general(a, b, [], [], [1], [0])
    if alpha != 1:
        r = ctx.b.binary("multiply", r, ctx.operand(alpha, dtype))
    c = ctx.operand(bias, dtype)
    if beta != 1:
        c = ctx.b.binary("multiply", c, ctx.operand(beta, dtype))
    return ctx.b.binary("add", r, c)


@register(aten.convolution.default, check=_matmul_check)
def _convolution(ctx, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    spatial = x.rank - 2
    stride = list(stride) * (spatial if len(stride) == 1 else 1)
    padding = list(padding) * (spatial if len(padding) == 1 else 1)
    dilation = list(dilation) * (spatial if len(dilation) == 1 else 1)
    out_shape = ctx.out_shape
    if transposed:
        y = _conv_transpose(ctx, x, w, stride, padding, dilation, list(output_padding), groups, out_shape)
    else:
        y = ctx.b.convolution(x, w, stride, padding, padding, dilation, groups, out_shape)
    if bias is not None:
        y = ctx.b.binary("add", y, ctx.b.broadcast_in_dim(bias, out_shape, [1]))
    return y


def _conv_transpose(ctx, x, w, stride, padding, dilation, output_padding, groups, out_shape):
    """A transposed convolution as a direct one: the input dilated by the
    stride, the kernel flipped with in/out channels swapped. Where the
    padding of that convolution is between 0 and dilation * (k - 1) on each
    side (output_padding <= padding <= dilation * (k - 1)), the dilation is
    the convolution's lhs_dilation, which the CPU library runs as a
    deconvolution without the inserted zeros (with stride 1, none: an
    ordinary convolution with that padding); otherwise the input is
    dilated by a pad op. Kernel sizes may be symbolic (a kernel passed as
    an input with dynamic=True): the padding is then a dynamic operand of
    the convolution, whether an edge pads or crops is decided from the
    example sizes, and the library (or the pad op) checks the sign at run
    time."""
    spatial = x.rank - 2
    ks = [w.shape[2 + i] for i in range(spatial)]
    cin, cout_g = w.shape[0], w.shape[1]
    g = int(groups)
    # w: [Cin, Cout/g, k...] -> [g, Cin/g, Cout/g, k...] -> [g, Cout/g, Cin/g, k...]
    from torch.utils._sympy.functions import FloorDiv
    cin_g = sympy.Integer(int(cin) // g) if is_static(cin) else FloorDiv(cin, g)
    wg = ctx.b.reshape(w, (sympy.Integer(g), cin_g, cout_g, *ks))
    wt = ctx.b.transpose(wg, [0, 2, 1] + list(range(3, 3 + spatial)))
    wk = ctx.b.reshape(wt, (g * cout_g, cin_g, *ks))
    wk = _reverse(ctx, wk, list(range(2, 2 + spatial)))
    low, high = [0, 0], [0, 0]
    for i in range(spatial):
        edge = dilation[i] * (ks[i] - 1)
        low.append(edge - padding[i])
        high.append(edge - padding[i] + output_padding[i])
    low = [as_expr(v) for v in low]
    high = [as_expr(v) for v in high]
    crops = any(ctx.hint(v) < 0 for v in low + high)
    interior = [0, 0] + [s - 1 for s in stride]
    dil_shape = list(x.shape[:2]) + [x.shape[2 + i] + (x.shape[2 + i] - 1) * (stride[i] - 1)
                                     for i in range(spatial)]
    padded_shape = list(x.shape[:2]) + [dil_shape[2 + i] + low[2 + i] + high[2 + i]
                                        for i in range(spatial)]
    # low = d*(k-1) - p and high = low + output_padding lie in [0, d*(k-1)]
    # when output_padding <= p <= d*(k-1): the last from the example
    # sizes when k is symbolic (the library rejects a negative padding at
    # run time, naming the convolution).
    # (Integer convolutions have no input dilation: pad first.)
    # With stride 1 there is no input dilation: the padding is the direct
    # convolution's own, whatever the dtype (no pad op copying the input).
    if (x.dtype.is_floating_point or all(s == 1 for s in stride)) and \
            all(output_padding[i] <= padding[i] <= ctx.hint(dilation[i] * (ks[i] - 1))
                for i in range(spatial)):
        return ctx.b.convolution(x, wk, [1] * spatial, low[2:], high[2:], dilation, g,
                                 out_shape, lhs_dilation=stride)
    zero = ctx.scalar(0, x.dtype)
    if crops and not all(is_static(v) for v in low + high):
        raise ImportError_("transposed convolution whose padding crops, with a dynamic kernel")
    if crops and any(s != 1 for s in stride):
        # Dilate first, then pad/crop (the static pad op crops).
        xd = ctx.b.pad(x, zero, [0] * x.rank, [0] * x.rank, interior, dil_shape)
        xp = ctx.b.pad(xd, zero, low, high, [0] * x.rank, padded_shape)
    else:
        xp = ctx.b.pad(x, zero, low, high, interior, padded_shape)
    return ctx.b.convolution(xp, wk, [1] * spatial, [0] * spatial, [0] * spatial, dilation, g, out_shape)


def _conv_check(node):
    reason = _matmul_check(node)
    if reason:
        return reason
    x = fake(node.args[0])
    if x.dim() not in (3, 4, 5):
        return f"convolution of rank {x.dim()}"

    padding = node.args[4]
    if isinstance(padding, str):
        return f"padding mode {padding}"
    # Strides, padding, dilation, output padding and groups are attributes
    # of the compiled convolution: a SymInt among them (an int that
    # Dynamo traced as dynamic, as `groups=c` of a closure with
    # dynamic=True) cannot be one.
    for name, value in zip(("stride", "padding", "dilation", "transposed",
                            "output_padding", "groups"), node.args[3:9]):
        values = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, (torch.SymInt, torch.fx.Node)) for v in values):
            return f"convolution with a symbolic {name} ({value})"
    return None


LOWERINGS[aten.convolution.default].check = _conv_check


def _convolution_backward_check(node):
    """Only the weight-gradient-only form backward.convolution_backward
    keeps whole (its other forms are decomposed before import)."""
    (grad, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
     output_mask) = node.args
    if list(output_mask) != [False, True, False] or transposed or any(output_padding):
        return f"convolution_backward with output_mask {list(output_mask)}"
    kernel = fake(node)[1]
    if kernel.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        return f"convolution_backward of dtype {kernel.dtype}"
    for name, value in (("stride", stride), ("padding", padding), ("dilation", dilation),
                        ("groups", groups)):
        values = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(v, (torch.SymInt, torch.fx.Node)) for v in values):
            return f"convolution_backward with a symbolic {name} ({value})"
    return None


@register(aten.convolution_backward.default, check=_convolution_backward_check)
def _convolution_backward(ctx, grad, x, w, bias_sizes, stride, padding, dilation, transposed,
                          output_padding, groups, output_mask):
    """The kernel gradient alone: disc.convolution_backward_weights (a
    kernel of symbolic sizes passes them as its kernel_size operand)."""
    spatial = x.rank - 2
    stride, padding, dilation = (list(v) * (spatial if len(v) == 1 else 1)
                                 for v in (stride, padding, dilation))
    shape = shape_of(ctx.out[1])
    return (None, ctx.b.convolution_backward_weights(x, grad, stride, padding, padding,
                                                     dilation, groups, shape), None)


# ====================================================================
# Attention
# ====================================================================
# PyTorch's CPU SDPA kernel stays one op (backend.py keeps it out of the
# decomposition table): disc.attention, a runtime library call that never
# materializes the [L, S] scores.

_SDPA_CPU = aten._scaled_dot_product_flash_attention_for_cpu.default


def _attention_mask_shape(mask_shape, scores_shape):
    """The mask's shape padded to rank 4, or None when a dim is neither a
    static 1 nor the scores' dim."""
    padded = [sympy.Integer(1)] * (4 - len(mask_shape)) + [as_expr(d) for d in mask_shape]
    for m, s in zip(padded, scores_shape):
        if not (m == 1 or m == as_expr(s)):
            return None
    return padded


def _sdpa_check(node):
    q, k, v = (fake(a) for a in node.args[:3])
    dropout = node.args[3] if len(node.args) > 3 else node.kwargs.get("dropout_p", 0.0)
    mask = node.kwargs.get("attn_mask")
    scale = node.kwargs.get("scale")
    if q.dtype not in MATMUL_DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
        return f"attention in {q.dtype} (f32, f16, bf16)"
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        return "attention on tensors of rank other than 4"
    if not isinstance(dropout, (int, float)) or dropout != 0:
        return f"attention with dropout_p={dropout}"
    if scale is not None and not isinstance(scale, (int, float)):
        return "attention with a symbolic scale"
    if mask is not None:
        m = fake(mask)
        if m.dtype not in (torch.bool, *MATMUL_DTYPES):
            return f"attention mask in {m.dtype}"
        if m.dim() > 4:
            return f"attention mask of rank {m.dim()}"
        scores = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])
        if _attention_mask_shape(m.shape, scores) is None:
            return (f"attention mask {tuple(m.shape)} is not [B, H, L, S] with dims 1 or "
                    f"equal to the scores' {tuple(scores)}")
    for user in node.users:
        if user.target is not operator.getitem:
            return "attention result used as a tuple"
        if user.args[1] != 0 and user.users:
            return "the logsumexp of attention is used"
    return None


@register(_SDPA_CPU, check=_sdpa_check)
def _sdpa(ctx, q, k, v, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    # The kernel is f32; f16/bf16 operands are converted (PyTorch's CPU
    # kernel also accumulates scores and the softmax in f32).
    dtype, f32 = q.dtype, torch.float32
    q, k, v = (ctx.b.convert(t, f32) for t in (q, k, v))
    mask = None
    if attn_mask is not None:
        scores = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])
        mask = ctx.b.reshape(attn_mask, _attention_mask_shape(attn_mask.shape, scores))
        if mask.dtype == torch.bool:
            # True keeps the score: 0 where kept, -inf elsewhere.
            mask = ctx.b.select(mask, ctx.operand(0.0, f32, mask.shape),
                                ctx.operand(-math.inf, f32, mask.shape))
        else:
            mask = ctx.b.convert(mask, f32)
    out = ctx.b.attention(q, k, v, mask, None if scale is None else float(scale),
                          bool(is_causal))
    return (ctx.b.convert(out, dtype), None)


# ====================================================================
# Pooling
# ====================================================================

def _separable_window_reduce(ctx, xp: Val, kernel, stride, dilation, out_spatial, combine):
    """Reduces every pooling window of the padded input `xp` with the
    elementwise op `combine` ("maximum" or "add"), one spatial dim at a time:
    k0 + k1 + ... strided slices instead of k0 * k1 * ... (both max and sum
    are separable over a rectangular window)."""
    spatial = len(kernel)
    lead = xp.rank - spatial
    cur = xp
    for i in range(spatial):
        dim = lead + i
        result = None
        for o in range(kernel[i]):
            starts = [0] * cur.rank
            limits = list(cur.shape)
            strides = [1] * cur.rank
            shape = list(cur.shape)
            starts[dim] = o * dilation[i]
            limits[dim] = as_expr(o * dilation[i]) + (out_spatial[i] - 1) * stride[i] + 1
            strides[dim] = stride[i]
            shape[dim] = out_spatial[i]
            w = ctx.b.slice(cur, starts, limits, strides, shape)
            result = w if result is None else ctx.b.binary(combine, result, w)
        cur = result
    return cur


def _pool_padding(x_shape, kernel, stride, padding, dilation, out_spatial):
    """Low/high padding so that every window fits (ceil_mode windows may
    reach past the padded input)."""
    spatial = len(kernel)
    low, high = [], []
    for i in range(spatial):
        size = x_shape[len(x_shape) - spatial + i]
        needed = (out_spatial[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1
        extra = sympy.Max(0, needed - (size + 2 * padding[i]))
        extra = sympy.Integer(int(extra)) if extra.is_Integer else extra
        low.append(sympy.Integer(padding[i]))
        high.append(padding[i] + extra)
    return low, high


def _pool_params(kernel, stride, padding, dilation, spatial):
    def expand(v, default):
        if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
            v = default
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return v * spatial if len(v) == 1 else v
    kernel = expand(kernel, None)
    stride = expand(stride, kernel)
    padding = expand(padding, [0])
    dilation = expand(dilation, [1])
    return [int(k) for k in kernel], [int(s) for s in stride], [int(p) for p in padding], \
        [int(d) for d in dilation]


@register(aten.max_pool2d_with_indices.default, aten.max_pool2d.default,
          aten.max_pool1d.default, aten.max_pool3d_with_indices.default)
def _max_pool(ctx, x, kernel, stride=None, padding=0, dilation=1, ceil_mode=False):
    with_indices = isinstance(ctx.out, (tuple, list))
    out_shape = ctx.out_shape_of(0) if with_indices else ctx.out_shape
    spatial = len(out_shape) - (x.rank - len(kernel)) if False else len(kernel) if isinstance(kernel, (list, tuple)) else 1
    kernel, stride, padding, dilation = _pool_params(kernel, stride, padding, dilation, spatial)
    out_spatial = list(out_shape[-spatial:])
    low, high = _pool_padding(x.shape, kernel, stride, padding, dilation, out_spatial)
    lead = x.rank - spatial
    init = -math.inf if x.dtype.is_floating_point else torch.iinfo(x.dtype).min
    padded_shape = list(x.shape[:lead]) + [x.shape[lead + i] + low[i] + high[i] for i in range(spatial)]
    xp = ctx.b.pad(x, ctx.scalar(init, x.dtype), [0] * lead + low, [0] * lead + high,
                   [0] * x.rank, padded_shape)
    if with_indices and _indices_used(ctx.node):
        return _max_pool_with_indices(ctx, x, xp, kernel, stride, padding, dilation, out_spatial)
    result = _separable_window_reduce(ctx, xp, kernel, stride, dilation, out_spatial, "maximum")
    if with_indices:
        return (result, None)
    return result


def _indices_used(node) -> bool:
    return any(u.target is operator.getitem and u.args[1] == 1 for u in node.users)


def _max_pool_with_indices(ctx, x: Val, xp: Val, kernel, stride, padding, dilation, out_spatial):
    """Max pooling that also returns where each maximum is, as PyTorch's CPU
    kernel does (`val > max || isnan(val)`, in the window's row-major
    order): the flat index into the input's spatial dims of the first
    maximum, of the last NaN when the window holds one, or of the window's
    first in-bounds position when nothing beats the lowest value (-inf, the
    dtype's minimum for integers; the padding holds it, so no bounds test).

    The maximum is the separable window reduction that max pooling without
    indices uses. The index is then a chain of selects over the window's
    offsets whose intermediates each have one use, so that the whole index
    computation fuses into one loop: flat indices grow with the offset, so
    the first maximum is found walking the offsets backwards and the last
    NaN walking them forwards. (A running (max, index) pair compared offset
    by offset gave every step two uses; it became one loop and one buffer per
    offset, 0.68 ms for a ResNet stem's 65K outputs.)"""
    b = ctx.b
    spatial = len(kernel)
    lead = x.rank - spatial
    out_shape = list(x.shape[:lead]) + list(out_spatial)
    i64 = torch.int64

    def const(v):
        return ctx.operand(v, i64, out_shape)

    def flat(positions):
        idx = positions[0]
        for i in range(1, spatial):
            idx = b.binary("add", b.binary("multiply", idx, const(as_expr(x.shape[lead + i]))),
                           positions[i])
        return idx

    starts = [b.binary("subtract", b.binary("multiply", b.iota(out_shape, lead + i, i64),
                                            const(stride[i])), const(padding[i]))
              for i in range(spatial)]
    firsts = []
    for i in range(spatial):
        before = b.binary("maximum", b.unary("negate", starts[i]), const(0))
        steps = b.binary("divide", b.binary("add", before, const(dilation[i] - 1)), const(dilation[i]))
        firsts.append(b.binary("add", starts[i], b.binary("multiply", steps, const(dilation[i]))))

    def window(offsets):
        starts_s, limits = [0] * xp.rank, list(xp.shape)
        strides, shape = [1] * xp.rank, list(xp.shape)
        for i, o in enumerate(offsets):
            dim = lead + i
            starts_s[dim] = o * dilation[i]
            limits[dim] = as_expr(o * dilation[i]) + (out_spatial[i] - 1) * stride[i] + 1
            strides[dim] = stride[i]
            shape[dim] = out_spatial[i]
        return b.slice(xp, starts_s, limits, strides, shape)

    def index_of(offsets):
        return flat([b.binary("add", starts[i], const(o * dilation[i]))
                     for i, o in enumerate(offsets)])

    best = _separable_window_reduce(ctx, xp, kernel, stride, dilation, out_spatial, "maximum")
    lowest = -math.inf if x.dtype.is_floating_point else torch.iinfo(x.dtype).min
    in_bounds = flat(firsts)
    offsets = list(itertools.product(*[range(k) for k in kernel]))
    found = in_bounds
    for o in reversed(offsets):
        found = b.select(b.compare("EQ", window(o), best), index_of(o), found)
    index = b.select(b.compare("EQ", best, b.broadcast_to(ctx.scalar(lowest, x.dtype), out_shape)),
                     in_bounds, found)
    if x.dtype.is_floating_point:
        # The maximum is NaN when the window holds one (maximumf propagates it).
        nan_at = in_bounds
        for o in offsets:
            v = window(o)
            nan_at = b.select(b.compare("NE", v, v), index_of(o), nan_at)
        index = b.select(b.compare("NE", best, best), nan_at, index)
    return (best, index)


MAX_POOL_WINDOW = 128


def _window_check(node):
    kernel = node.args[1]
    kernel = kernel if isinstance(kernel, (list, tuple)) else [kernel]
    if max(int(k) for k in kernel) > MAX_POOL_WINDOW:
        return f"pooling window wider than {MAX_POOL_WINDOW} along one dim (one slice per offset)"
    return None


MAX_POOL_INDEX_WINDOW = 256


def _max_pool_check(node):
    if node.target in (aten.max_pool2d_with_indices.default, aten.max_pool3d_with_indices.default):
        for u in node.users:
            if u.target is not operator.getitem:
                return "max_pool result used as a tuple"
        if _indices_used(node):
            kernel = node.args[1]
            kernel = kernel if isinstance(kernel, (list, tuple)) else [kernel]
            spatial = 2 if node.target is aten.max_pool2d_with_indices.default else 3
            window = math.prod(int(k) for k in kernel * (spatial if len(kernel) == 1 else 1))
            if window > MAX_POOL_INDEX_WINDOW:
                return (f"max_pool indices over a window of {window} elements "
                        f"(one slice per element, at most {MAX_POOL_INDEX_WINDOW})")
    return _window_check(node)


for _t in (aten.max_pool2d_with_indices.default, aten.max_pool2d.default,
           aten.max_pool1d.default, aten.max_pool3d_with_indices.default):
    LOWERINGS[_t].check = _max_pool_check


@register(aten.avg_pool2d.default, aten.avg_pool1d.default, aten.avg_pool3d.default)
def _avg_pool(ctx, x, kernel, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
              divisor_override=None):
    spatial = len(kernel) if isinstance(kernel, (list, tuple)) else 1
    kernel, stride, padding, dilation = _pool_params(kernel, stride, padding, 1, spatial)
    out_shape = ctx.out_shape
    out_spatial = list(out_shape[-spatial:])
    low, high = _pool_padding(x.shape, kernel, stride, padding, dilation, out_spatial)
    lead = x.rank - spatial
    compute = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    xc = ctx.b.convert(x, compute)
    padded_shape = list(x.shape[:lead]) + [x.shape[lead + i] + low[i] + high[i] for i in range(spatial)]
    zero = ctx.scalar(0, compute)
    xp = ctx.b.pad(xc, zero, [0] * lead + low, [0] * lead + high, [0] * x.rank, padded_shape)
    total = _separable_window_reduce(ctx, xp, kernel, stride, dilation, out_spatial, "add")
    if divisor_override:
        result = ctx.b.binary("divide", total, ctx.operand(float(divisor_override), compute, total.shape))
    else:
        # Count per window: 1 inside the input (and inside the explicit
        # padding when count_include_pad), 0 in the ceil_mode overhang.
        in_spatial = [x.shape[lead + i] for i in range(spatial)]
        ones = ctx.b.full(1.0, compute, in_spatial)
        pad_value = ctx.scalar(1.0 if count_include_pad else 0.0, compute)
        explicit_shape = [in_spatial[i] + 2 * padding[i] for i in range(spatial)]
        counted = ctx.b.pad(ones, pad_value, [padding[i] for i in range(spatial)],
                            [padding[i] for i in range(spatial)], [0] * spatial, explicit_shape)
        full_shape = [in_spatial[i] + low[i] + high[i] for i in range(spatial)]
        counted = ctx.b.pad(counted, zero, [0] * spatial, [high[i] - padding[i] for i in range(spatial)],
                            [0] * spatial, full_shape)
        count = _separable_window_reduce(ctx, counted, kernel, stride, dilation, out_spatial, "add")
        result = ctx.b.binary("divide", total, ctx.b.broadcast_to(count, total.shape))
    return ctx.b.convert(result, ctx.out_dtype)


def _avg_pool_check(node):
    return _window_check(node)


for _t in (aten.avg_pool2d.default, aten.avg_pool1d.default, aten.avg_pool3d.default):
    LOWERINGS[_t].check = _avg_pool_check


MAX_ADAPTIVE_OUTPUT = 64


def _adaptive_windows(n, o):
    """PyTorch's adaptive pooling windows along one dim of size n to o
    outputs: [floor(j*n/o), ceil((j+1)*n/o)) for j in 0..o-1."""
    from torch.utils._sympy.functions import FloorDiv
    n = as_expr(n)
    return [(FloorDiv(j * n, o), FloorDiv((j + 1) * n + o - 1, o)) for j in range(o)]


def _adaptive_pool(ctx, x, output_size, kind):
    """Adaptive pooling (kind "sum" = average, "max"), one spatial dim at a
    time (both are separable over rectangular windows): a whole-dim reduction
    for output size 1, a reshape + reduction when the size is a static
    multiple of the output, else one slice + reduction per output index
    (window bounds computed from the run-time size) and a concatenate."""
    spatial = len(output_size)
    lead = x.rank - spatial
    average = kind == "sum"
    compute = torch.float32 if average and x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    cur = ctx.b.convert(x, compute)

    def reduce_keepdim(v, dim, count):
        kept = list(v.shape)
        kept[dim] = sympy.Integer(1)
        r = ctx.b.reshape(ctx.b.reduce(v, [dim], kind), kept)
        return ctx.b.binary("divide", r, ctx.operand(count, compute, kept)) if average else r

    for i in range(spatial):
        dim = lead + i
        n, o = as_expr(cur.shape[dim]), int(output_size[i])
        if n == o:
            continue
        if o == 1:
            cur = reduce_keepdim(cur, dim, n)
        elif n.is_Integer and int(n) % o == 0:
            split = list(cur.shape[:dim]) + [sympy.Integer(o), sympy.Integer(int(n) // o)] + \
                list(cur.shape[dim + 1:])
            cur = ctx.b.reduce(ctx.b.reshape(cur, split), [dim + 1], kind)
            if average:
                cur = ctx.b.binary("divide", cur, ctx.operand(float(int(n) // o), compute, cur.shape))
        else:
            parts = [reduce_keepdim(slice_along(ctx.b, cur, dim, start, stop), dim, stop - start)
                     for start, stop in _adaptive_windows(n, o)]
            shape = list(cur.shape)
            shape[dim] = sympy.Integer(o)
            cur = ctx.b.concatenate(parts, dim, shape)
    return cur


@register(aten._adaptive_avg_pool2d.default, aten.adaptive_avg_pool2d.default,
          aten._adaptive_avg_pool3d.default, aten.adaptive_avg_pool1d.default)
def _adaptive_avg_pool(ctx, x, output_size):
    cur = _adaptive_pool(ctx, x, output_size, "sum")
    return ctx.b.convert(ctx.b.reshape(cur, ctx.out_shape), ctx.out_dtype)


@register(aten.adaptive_max_pool2d.default, aten.adaptive_max_pool1d.default,
          aten.adaptive_max_pool3d.default)
def _adaptive_max_pool(ctx, x, output_size):
    cur = _adaptive_pool(ctx, x, output_size, "max")
    return (ctx.b.reshape(cur, ctx.out_shape_of(0)), None)


def _adaptive_check(node):
    out = node.args[1]
    x = fake(node.args[0])
    spatial = len(out)
    for i in range(spatial):
        n = x.shape[x.dim() - spatial + i]
        if not isinstance(out[i], int):  # a size Dynamo made symbolic
            return "adaptive pooling to a symbolic output size"
        o = int(out[i])
        if o > MAX_ADAPTIVE_OUTPUT and not (isinstance(n, int) and (n % o == 0)):
            return (f"adaptive pooling to {o} outputs along a dim whose size {n} is not a "
                    f"static multiple of it (one slice per output; limit {MAX_ADAPTIVE_OUTPUT})")
    return None


def _adaptive_max_check(node):
    for u in node.users:
        if u.target is not operator.getitem or u.args[1] != 0:
            return "the indices of adaptive_max_pool are used"
    return _adaptive_check(node)


for _t in (aten._adaptive_avg_pool2d.default, aten.adaptive_avg_pool2d.default,
           aten._adaptive_avg_pool3d.default, aten.adaptive_avg_pool1d.default):
    LOWERINGS[_t].check = _adaptive_check
for _t in (aten.adaptive_max_pool2d.default, aten.adaptive_max_pool1d.default,
           aten.adaptive_max_pool3d.default):
    LOWERINGS[_t].check = _adaptive_max_check


# ====================================================================
# Indexing: gather / scatter
# ====================================================================

def _check_indices(ctx, idx64: Val, size, allow_negative: bool) -> None:
    """PyTorch raises for an index outside [-size, size) ([0, size) when
    negative indices are not allowed); disc.gather clamps (StableHLO) and
    disc.scatter skips, which would turn a bad index into a wrong answer.
    The index range is checked before the op: each index compared with
    both bounds, an `and` reduction of the results and a cf.assert (a
    disc.InvocationError naming the ATen node). Empty indices pass (the
    reduction's identity). One reduction, not a min and a max: on the cuda
    target each check is a kernel, and two i64 reductions of one row made
    it several times larger (SegFormer_B0's 34 checks were half of its
    kernel code)."""
    b = ctx.b
    size_v = ctx.scalar(as_expr(size), torch.int64)
    low_bound = b.unary("negate", size_v) if allow_negative else b.constant(0, torch.int64)
    above = b.compare("GE", idx64, b.broadcast_to(low_bound, idx64.shape))
    below = b.compare("LT", idx64, b.broadcast_to(size_v, idx64.shape))
    ok = b.reduce(b.binary("and", above, below), list(range(idx64.rank)), "and")
    flag = b.fresh("ok")
    b.emit(f"{flag} = tensor.extract {ok.name}[] : tensor<i1>")
    what = f"[-size, size)" if allow_negative else "[0, size)"
    b.emit(f'cf.assert {flag}, "{ctx.node.target} ({ctx.node.name}): an index is out of '
           f'range {what} for a dim of size {size}"')


# PyTorch's bounds-unchecked indexing: "unsafe" versions of index and
# index_put that its decompositions (upsampling, reflection and replication
# padding, _unsafe_masked_index) emit with indices in range by construction
# (clamped, or computed from sizes that Dynamo's guards bound). Their
# contract is that the caller keeps the indices in range, and Inductor
# checks them no more (its lowering: index_impl(..., check=False)). DISC
# leaves out the range check there (on the cuda target a kernel per index
# tensor: SegFormer_B0's call launched 253 kernels with them, 225 without,
# against the fake driver). An index out of range still never touches
# memory outside the operand: disc.gather clamps it and disc.scatter
# skips it.
_UNCHECKED_INDEXING = (aten._unsafe_index.Tensor, aten._unsafe_index_put.default)


def _wrap_negative(ctx, idx: Val, size, checked: bool = True) -> Val:
    """PyTorch indices may be negative (count from the end); checked to be
    in [-size, size) unless `checked` is False (_UNCHECKED_INDEXING)."""
    idx64 = ctx.b.convert(idx, torch.int64)
    if checked:
        _check_indices(ctx, idx64, size, allow_negative=True)
    zero = ctx.b.broadcast_to(ctx.b.constant(0, torch.int64), idx64.shape)
    neg = ctx.b.compare("LT", idx64, zero)
    size_v = ctx.b.broadcast_to(ctx.scalar(as_expr(size), torch.int64), idx64.shape)
    return ctx.b.select(neg, ctx.b.binary("add", idx64, size_v), idx64)


@register(aten.embedding.default)
def _embedding(ctx, weight, indices, *args):
    idx = ctx.b.convert(indices, torch.int64)
    _check_indices(ctx, idx, weight.shape[0], allow_negative=False)
    rank = idx.rank
    out_shape = ctx.out_shape
    return ctx.b.gather(weight, idx, [1, weight.shape[1]], [rank], [0], [0], rank, out_shape)


def _rank1(ctx, v):
    """A 0-d tensor (or scalar) as a [1] tensor: PyTorch's indexing ops
    treat a 0-d operand as one element along dim 0 (or -1)."""
    if not isinstance(v, Val) or v.rank > 0:
        return v
    return ctx.b.reshape(v, (sympy.Integer(1),))


def _on_rank1(ctx, fn, x, *operands):
    """Runs `fn(x, *operands)` on [1] views of 0-d tensors and reshapes the
    result to the node's (0-d) shape."""
    out = fn(_rank1(ctx, x), *(_rank1(ctx, o) for o in operands))
    return ctx.b.reshape(out, ctx.out_shape)


@register(aten.index_select.default)
def _index_select(ctx, x, dim, index):
    if x.rank == 0:
        return _on_rank1(ctx, lambda xv, iv: _index_select_ranked(ctx, xv, 0, iv, (1,)),
                         x, index)
    return _index_select_ranked(ctx, x, dim, index, ctx.out_shape)


def _index_select_ranked(ctx, x, dim, index, out_shape):
    dim = norm_dim(dim, x.rank)
    idx = _wrap_negative(ctx, index, x.shape[dim])
    if idx.rank == 0:
        idx = ctx.b.reshape(idx, (sympy.Integer(1),))
    sizes = list(x.shape)
    sizes[dim] = sympy.Integer(1)
    offset_dims = [d for d in range(x.rank) if d != dim]
    out_shape = tuple(sympy.Integer(d) if isinstance(d, int) else d for d in out_shape)
    return ctx.b.gather(x, idx, sizes, offset_dims, [dim], [dim], 1, out_shape)


def _full_coordinates(ctx, index: Val, dim: int, size):
    """[..., rank] int64 coordinates: the iota of each dim, with `index`'s
    values at `dim` (torch.gather / scatter addressing; checked to be in
    [0, size) as PyTorch requires)."""
    _check_indices(ctx, ctx.b.convert(index, torch.int64), size, allow_negative=False)
    rank = index.rank
    shape = index.shape
    parts = []
    for d in range(rank):
        v = ctx.b.convert(index, torch.int64) if d == dim else ctx.b.iota(shape, d, torch.int64)
        parts.append(ctx.b.reshape(v, tuple(shape) + (sympy.Integer(1),)))
    return ctx.b.concatenate(parts, rank, tuple(shape) + (sympy.Integer(rank),))


@register(aten.gather.default)
def _gather(ctx, x, dim, index, sparse_grad=False):
    if x.rank == 0 or index.rank == 0:
        return _on_rank1(ctx, lambda xv, iv: _gather_ranked(ctx, xv, 0, iv), x, index)
    return _gather_ranked(ctx, x, dim, index)


def _gather_ranked(ctx, x, dim, index):
    dim = norm_dim(dim, x.rank)
    rank = x.rank
    coords = _full_coordinates(ctx, index, dim, x.shape[dim])
    return ctx.b.gather(x, coords, [1] * rank, [], list(range(rank)), list(range(rank)), rank,
                        index.shape)


def _scatter_full(ctx, x, dim, index, src, kind):
    if x.rank == 0 or index.rank == 0:
        return _on_rank1(ctx, lambda xv, iv, sv: _scatter_ranked(ctx, xv, 0, iv, sv, kind),
                         x, index, src)
    return _scatter_ranked(ctx, x, dim, index, src, kind)


def _scatter_ranked(ctx, x, dim, index, src, kind):
    dim = norm_dim(dim, x.rank)
    dtype = ctx.out_dtype
    xv = ctx.b.convert(x, dtype)
    if not isinstance(src, Val) or src.rank == 0:
        src = ctx.operand(src, dtype, index.shape)
    else:
        src = ctx.b.convert(src, dtype)
        if src.shape != index.shape:
            # Only the leading index-shaped part of src is used.
            src = ctx.b.slice(src, [0] * src.rank, list(index.shape), [1] * src.rank, index.shape)
    coords = _full_coordinates(ctx, index, dim, x.shape[dim])
    rank = x.rank
    return ctx.b.scatter(xv, coords, src, kind, [], list(range(rank)), list(range(rank)), rank)


@register(aten.scatter.src, aten.scatter.value)
def _scatter(ctx, x, dim, index, src, reduce=None):
    return _scatter_full(ctx, x, dim, index, src, "replace")


@register(aten.scatter.reduce, aten.scatter.value_reduce)
def _scatter_with_reduce(ctx, x, dim, index, src, reduce):
    # The legacy `reduce=` of scatter: "add" or "multiply", into self.
    return _scatter_full(ctx, x, dim, index, src, {"add": "add", "multiply": "mul"}[reduce])


def _scatter_with_reduce_check(node):
    reduce = node.kwargs.get("reduce", node.args[4] if len(node.args) > 4 else None)
    if reduce not in ("add", "multiply"):
        return f"scatter with reduce={reduce}"
    return None


LOWERINGS[aten.scatter.reduce].check = _scatter_with_reduce_check
LOWERINGS[aten.scatter.value_reduce].check = _scatter_with_reduce_check


@register(aten.scatter_add.default)
def _scatter_add(ctx, x, dim, index, src):
    return _scatter_full(ctx, x, dim, index, src, "add")


_SCATTER_REDUCE_KINDS = {"sum": "add", "prod": "mul", "amax": "max", "amin": "min", "mean": "add"}


@register(aten.scatter_reduce.two)
def _scatter_reduce(ctx, x, dim, index, src, reduce, include_self=True):
    return _reduce_into(ctx, x, reduce, include_self,
                        lambda start, values, kind: _scatter_full(
                            ctx, start, dim, index, src if values is None else values, kind))


def _reduce_into(ctx, x, reduce, include_self, scatter):
    """scatter_reduce / index_reduce: x with the values `scatter(start,
    values, kind)` sends to each position reduced there by `reduce` (sum,
    prod, mean, amax, amin), x's own value included or not. `values` 1
    means a count of one per scattered value."""
    kind = _SCATTER_REDUCE_KINDS[reduce]
    dtype = ctx.out_dtype
    shape = x.shape
    xv = ctx.b.convert(x, dtype)
    if include_self and reduce != "mean":
        return scatter(xv, None, kind)
    if reduce in ("amax", "amin"):
        # max/min are idempotent: store one of its values at every position
        # an index hits, then reduce all of them there; the rest keep x.
        # (No identity-filled copy and no per-position count.)
        return scatter(scatter(xv, None, "replace"), None, kind)
    if include_self:
        start = xv
    else:
        # Reduce the scattered values alone, from the reduction's identity;
        # positions no index hits keep x.
        start = ctx.b.full({"add": 0, "mul": 1}[kind], dtype, shape)
    reduced = scatter(start, None, kind)
    # How many values each position received.
    counts = scatter(ctx.b.full(0, dtype, shape), 1, "add")
    if reduce == "mean":
        total = ctx.b.binary("add", counts, ctx.b.full(1, dtype, shape)) if include_self else counts
        safe = ctx.b.binary("maximum", total, ctx.b.full(1, dtype, shape))
        reduced = ctx.b.binary("divide", reduced, safe) if dtype.is_floating_point \
            else _floor_div_int(ctx, reduced, safe)
    if include_self:
        return reduced
    hit = ctx.b.compare("GT", counts, ctx.b.full(0, dtype, shape))
    return ctx.b.select(hit, reduced, xv)


def _scatter_reduce_check(node):
    reduce = node.args[4] if len(node.args) > 4 else node.kwargs.get("reduce")
    if reduce not in _SCATTER_REDUCE_KINDS:
        return f"scatter_reduce with reduce={reduce}"
    if reduce == "mean" and not fake(node).dtype.is_floating_point:
        return "scatter_reduce mean on integers"
    return None


LOWERINGS[aten.scatter_reduce.two].check = _scatter_reduce_check


def _scatter_check(node):
    if len(node.args) > 4 or "reduce" in node.kwargs:
        return "scatter with a reduce argument"
    return None


for _t in (aten.scatter.src, aten.scatter.value):
    LOWERINGS[_t].check = _scatter_check


@register(aten.index_add.default)
def _index_add(ctx, x, dim, index, src, alpha=1):
    dim = norm_dim(dim, x.rank)
    dtype = ctx.out_dtype
    srcv = ctx.b.convert(src, dtype)
    if alpha != 1:
        srcv = ctx.b.binary("multiply", srcv, ctx.operand(alpha, dtype, srcv.shape))
    return _index_scatter(ctx, ctx.b.convert(x, dtype), dim, index, srcv, "add")


def _index_scatter(ctx, x: Val, dim: int, index, src: Val, kind: str) -> Val:
    """x with src's slices along `dim` combined (`kind`) into the slices
    `index` names (index_add / index_reduce)."""
    idx = _wrap_negative(ctx, index, x.shape[dim])
    idx = ctx.b.reshape(idx, (idx.shape[0] if idx.rank else sympy.Integer(1), sympy.Integer(1)))
    # updates [n_index at dim, other dims...]: move the indexed dim first.
    perm = [dim] + [d for d in range(x.rank) if d != dim]
    upd = ctx.b.transpose(src, perm)
    return ctx.b.scatter(x, idx, upd, kind, list(range(1, x.rank)), [dim], [dim], 1)


@register(aten.index_reduce.default)
def _index_reduce(ctx, x, dim, index, source, reduce, include_self=True):
    dim = norm_dim(dim, x.rank)
    dtype = ctx.out_dtype
    srcv = ctx.b.convert(source, dtype)

    def scatter(start, values, kind):
        values = srcv if values is None else ctx.b.full(values, dtype, srcv.shape)
        return _index_scatter(ctx, start, dim, index, values, kind)
    return _reduce_into(ctx, x, reduce, include_self, scatter)


def _index_reduce_check(node):
    if fake(node).dim() == 0 or fake(node.args[2]).dim() == 0:
        return "index_reduce of a 0-d tensor"
    return None


LOWERINGS[aten.index_reduce.default].check = _index_reduce_check


def _advanced_index_layout(x_rank, indexed_dims):
    adjacent = indexed_dims == list(range(indexed_dims[0], indexed_dims[0] + len(indexed_dims)))
    return adjacent


def _index_coordinates(ctx, x, indices):
    """Broadcast the index tensors together and stack them along a new last
    dim: ([..., k] int64 coordinates, indexed dims, broadcast index shape).
    The indices are range-checked unless the node is _UNCHECKED_INDEXING."""
    checked = ctx.node.target not in _UNCHECKED_INDEXING
    indexed = [i for i, t in enumerate(indices) if t is not None]
    tensors = [indices[i] for i in indexed]
    from torch._refs import _broadcast_shapes  # noqa
    shape = _broadcast_index_shape([t.shape for t in tensors])
    cols = []
    for d, t in zip(indexed, tensors):
        w = _wrap_negative(ctx, t, x.shape[d], checked)
        w = ctx.b.broadcast_to(w, shape)
        cols.append(ctx.b.reshape(w, tuple(shape) + (sympy.Integer(1),)))
    coords = ctx.b.concatenate(cols, len(shape), tuple(shape) + (sympy.Integer(len(cols)),))
    return coords, indexed, tuple(shape)


def _broadcast_index_shape(shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        non_one = [d for d in dims if not (is_static(d) and int(d) == 1)]
        out.append(non_one[0] if non_one else sympy.Integer(1))
    return out


@register(aten.index.Tensor, aten._unsafe_index.Tensor)
def _index(ctx, x, indices):
    indices = list(indices) + [None] * (x.rank - len(indices))
    masks = [i for i, t in enumerate(indices) if t is not None and t.dtype == torch.bool]
    if masks:
        return _masked_index(ctx, x, masks[0], indices[masks[0]])
    coords, indexed, ishape = _index_coordinates(ctx, x, indices)
    remaining = [d for d in range(x.rank) if d not in indexed]
    nb = len(ishape)
    if _advanced_index_layout(x.rank, indexed):
        p = indexed[0]
        # result: x.shape[:p] + ishape + x.shape[after]
        offset_dims = list(range(p)) + list(range(p + nb, p + nb + len(remaining) - p))
    else:
        offset_dims = list(range(nb, nb + len(remaining)))
    sizes = [sympy.Integer(1) if d in indexed else x.shape[d] for d in range(x.rank)]
    return ctx.b.gather(x, coords, sizes, offset_dims, indexed, indexed, nb, ctx.out_shape)


def _masked_index(ctx, x, p, mask):
    """x[..., mask, ...] with a boolean mask over dims p..p+k-1: a size
    that depends on the data (the count of true elements, the graph's
    unbacked symbol u), computed on the host from a reduction and bound to
    that symbol for every later shape. The true elements' positions come
    from a running count: element i goes to slot cumsum(mask)[i] - 1, the
    false ones to a spare slot u that is sliced off; then an index_select
    over the flattened masked dims."""
    k = mask.rank
    n = sympy.Mul(*mask.shape) if k else sympy.Integer(1)
    count = ctx.out_shape[p]
    flat = ctx.b.reshape(mask, (n,))
    ones = ctx.b.convert(flat, torch.int64)
    running = ctx.b.scan(ones, 0, "sum")
    total = ctx.b.reduce(ones, [0], "sum")
    if not count.is_Integer:
        ctx.b.bind_index(count, ctx.b.read_index(total))
    slot = ctx.b.select(flat, ctx.b.binary("subtract", running,
                                           ctx.b.full(1, torch.int64, (n,))),
                        ctx.b.broadcast_to(total, (n,)))
    # Scatter-add onto zeros: each true element's slot receives its own
    # index once; the spare slot's sum is discarded (no write race).
    positions = ctx.b.scatter(ctx.b.full(0, torch.int64, (count + 1,)),
                              ctx.b.reshape(slot, (n, sympy.Integer(1))),
                              ctx.b.iota((n,), 0, torch.int64), "add", [], [0], [0], 1)
    selected = ctx.b.slice(positions, [0], [count], [1], (count,))
    flattened = ctx.b.reshape(x, tuple(x.shape[:p]) + (n,) + tuple(x.shape[p + k:]))
    return _index(ctx, flattened, [None] * p + [selected])


def _default_target() -> str:
    import disc

    return disc.default_target()


def _index_check(node):
    indices = node.args[1]
    masks = 0
    for t in indices:
        if t is None:
            continue
        v = fake(t)
        if v.dtype == torch.uint8:
            return "uint8-mask indexing"
        if v.dtype == torch.bool:
            masks += 1
            if v.device.type != "cpu" or _default_target() != "cpu":
                return ("boolean-mask indexing (its size is read by the host, from device "
                        "memory on a GPU), which the cuda target does not support")
            if node.target is not aten.index.Tensor:
                return "boolean-mask index_put"
            continue
        if v.dtype not in (torch.int64, torch.int32):
            return f"index tensor of dtype {v.dtype}"
    if masks and (masks > 1 or sum(t is not None for t in indices) > 1):
        return "a boolean mask combined with other index tensors"
    return None


LOWERINGS[aten.index.Tensor].check = _index_check
LOWERINGS[aten._unsafe_index.Tensor].check = _index_check


@register(aten.index_put.default, aten._unsafe_index_put.default)
def _index_put(ctx, x, indices, values, accumulate=False):
    indices = list(indices) + [None] * (x.rank - len(indices))
    coords, indexed, ishape = _index_coordinates(ctx, x, indices)
    dtype = ctx.out_dtype
    remaining = [d for d in range(x.rank) if d not in indexed]
    nb = len(ishape)
    if _advanced_index_layout(x.rank, indexed):
        p = indexed[0]
        upd_shape = list(x.shape[:p]) + list(ishape) + [x.shape[d] for d in remaining if d > p]
        window_dims = list(range(p)) + list(range(p + nb, p + nb + len(remaining) - p))
    else:
        upd_shape = list(ishape) + [x.shape[d] for d in remaining]
        window_dims = list(range(nb, nb + len(remaining)))
    upd = ctx.operand(values, dtype, tuple(upd_shape))
    kind = "add" if accumulate else "replace"
    if window_dims and _advanced_index_layout(x.rank, indexed) and indexed[0] > 0:
        # StableHLO wants the scatter batch dims first in the updates when
        # window dims precede them: move them.
        p = indexed[0]
        perm = list(range(p, p + nb)) + list(range(p)) + list(range(p + nb, len(upd_shape)))
        upd = ctx.b.transpose(upd, perm)
        window_dims = list(range(nb, len(upd_shape)))
    return ctx.b.scatter(ctx.b.convert(x, dtype), coords, upd, kind, window_dims, indexed, indexed, nb)


LOWERINGS[aten.index_put.default].check = _index_check
LOWERINGS[aten._unsafe_index_put.default].check = _index_check


def _scatter_into(ctx, x: Val, src: Val, dim: int, start, step, count) -> Val:
    """x with the positions start, start+step, ... (count of them) along `dim`
    replaced by src: pad src into x's shape, select with an iota mask."""
    rank = x.rank
    low = [sympy.Integer(0)] * rank
    high = [sympy.Integer(0)] * rank
    interior = [sympy.Integer(0)] * rank
    size = x.shape[dim]
    start = as_expr(start)
    count = as_expr(count)
    low[dim] = start
    span = count + (count - 1) * (step - 1) if step != 1 else count
    high[dim] = size - start - span
    interior[dim] = as_expr(step) - 1  # (a SymInt step under dynamic=True)
    srcv = ctx.b.convert(src, x.dtype)
    zero = ctx.scalar(0, x.dtype)
    padded = ctx.b.pad(srcv, zero, low, high, interior, x.shape)
    pos = ctx.b.iota(x.shape, dim, torch.int64)
    startv = ctx.b.broadcast_to(ctx.scalar(start, torch.int64), x.shape)
    endv = ctx.b.broadcast_to(ctx.scalar(start + span, torch.int64), x.shape)
    inside = ctx.b.binary("and", ctx.b.compare("GE", pos, startv), ctx.b.compare("LT", pos, endv))
    if step != 1:
        rel = ctx.b.binary("subtract", pos, startv)
        stepv = ctx.operand(step, torch.int64, x.shape)
        on_step = ctx.b.compare("EQ", ctx.b.binary("remainder", rel, stepv), ctx.operand(0, torch.int64, x.shape))
        inside = ctx.b.binary("and", inside, on_step)
    return ctx.b.select(inside, padded, x)


@register(aten.slice_scatter.default)
def _slice_scatter(ctx, x, src, dim=0, start=None, end=None, step=1):
    dim = norm_dim(dim, x.rank)
    count = src.shape[dim]
    start, _ = _slice_bounds(x.shape[dim], start, end, step, count)
    return _scatter_into(ctx, ctx.b.convert(x, ctx.out_dtype), src, dim, start, step, count)


@register(aten.select_scatter.default)
def _select_scatter(ctx, x, src, dim, index):
    dim = norm_dim(dim, x.rank)
    index = as_expr(index)
    if index.is_Integer and int(index) < 0:
        index = x.shape[dim] + index
    shape = list(x.shape)
    shape[dim] = sympy.Integer(1)
    s = ctx.b.reshape(ctx.b.convert(src, ctx.out_dtype), shape)
    return _scatter_into(ctx, ctx.b.convert(x, ctx.out_dtype), s, dim, index, 1, 1)


# ====================================================================
# Shape-only ops
# ====================================================================

@register(aten.sym_size.int, aten.sym_numel.default, aten.sym_stride.int)
def _sym(ctx, *args):
    raise ImportError_("symbolic size ops are host computations")


@register(aten.sym_constrain_range_for_size.default, aten._assert_tensor_metadata.default)
def _assert(ctx, *args, **kwargs):
    return None


@register(aten._assert_scalar.default)
def _assert_scalar(ctx, cond, msg="", *args, **kwargs):
    """A runtime assertion on sizes (torch.export keeps the relations the
    trace relied on this way): a host check, a disc.InvocationError when a
    call breaks it. Under torch.compile Dynamo's guards check them already:
    one the importer cannot express is skipped there (logged), while an
    exported graph (importer strict_asserts) fails to import."""
    if not isinstance(cond, (bool, sympy.Basic)):
        raise ImportError_(f"_assert_scalar of a {type(cond).__name__}")
    unbacked = [str(s) for s in getattr(cond, "free_symbols", ()) if str(s).startswith("u")]
    if unbacked:
        # A data-dependent size (nonzero, item): the op that computes it
        # from the data checks it (index bounds, non-negative sizes).
        _log.log("import", f"{ctx.node.name}: runtime assertion {cond} on data-dependent "
                 f"size(s) {', '.join(unbacked)} is left to the ops that compute them")
        return None
    try:
        flag = symbolic.emit_condition(ctx.b, cond)
    except symbolic.UnsupportedExpr as e:
        if getattr(ctx.importer, "strict_asserts", False):
            raise ImportError_(f"runtime assertion {cond}: {e}") from e
        _log.log("import", f"{ctx.node.name}: runtime assertion {cond} not compiled ({e}); "
                 "Dynamo's guards check it")
        return None
    text = str(msg or f"runtime assertion {cond}").replace("\\", "/").replace('"', "'")
    ctx.b.emit(f'cf.assert {flag}, "{text}"')
    return None


# ====================================================================
# Support check
# ====================================================================

# Ops that are free in eager PyTorch (views and no-ops): a partition of
# only these stays in eager, where they cost nothing.
NO_COMPUTE = frozenset({
    aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.squeeze.dims,
    aten.squeeze.dim, aten.squeeze.default, aten.unsqueeze.default, aten.alias.default,
    aten.permute.default, aten.expand.default, aten.t.default, aten.transpose.int,
    aten.slice.Tensor, aten.select.int, aten._assert_scalar.default, aten.detach.default,
})


def _tensor_values(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensor_values(v)


# The devices whose tensors a partition can hold: "cpu" compiles for the CPU
# target, "cuda" for the cuda target (backend._partition_target).
TARGET_DEVICE_TYPES = ("cpu", "cuda")


def is_host_scalar(value) -> bool:
    """A 0-dim CPU tensor: beside cuda tensors eager takes it as a scalar,
    and so does a cuda partition (its call moves it to the device)."""
    return isinstance(value, torch.Tensor) and value.device.type == "cpu" and value.dim() == 0


def unsupported_reason(node) -> Optional[str]:
    """None when the importer can lower `node`, else why not."""
    lowering = LOWERINGS.get(node.target)
    if lowering is None:
        return "no lowering"
    devices, host_scalars = set(), False
    for n in [node, *node.all_input_nodes]:
        for v in _tensor_values(fake(n)):
            if v.dtype not in SUPPORTED_DTYPES:
                return f"dtype {v.dtype}"
            if v.device.type not in TARGET_DEVICE_TYPES:
                return f"device {v.device}"
            if v.is_sparse or v.is_quantized:
                return "sparse or quantized tensor"
            if n is not node and is_host_scalar(v):
                host_scalars = True  # decided below
                continue
            devices.add(str(v.device))
    # A 0-dim CPU input of a node on cuda is a scalar, as eager treats it
    # (x_cuda * torch.tensor(2.0)): the partition's call moves it to the
    # device (DiscPartition). Anywhere else it is a CPU tensor.
    if host_scalars and not any(d.startswith("cuda") for d in devices):
        devices.add("cpu")
    if len(devices) > 1:
        return f"tensors on several devices ({', '.join(sorted(devices))})"
    if lowering.check is not None:
        try:
            return lowering.check(node)
        except Exception as e:  # a bug in the check: the node falls back, saying so
            if os.environ.get("DISC_STRICT") == "1":
                raise
            return f"internal error in the check of {node.target} ({type(e).__name__}: {e})"
    return None


# ====================================================================
# prims (what some of PyTorch's reference decompositions produce)
# ====================================================================

@register(prims.broadcast_in_dim.default)
def _prims_broadcast(ctx, x, shape, broadcast_dimensions):
    return ctx.b.broadcast_in_dim(x, ctx.out_shape, list(broadcast_dimensions))


@register(prims.sum.default)
def _prims_sum(ctx, x, dims, output_dtype=None):
    return _reduce_common(ctx, x, list(dims), False,
                          "or" if ctx.out_dtype == torch.bool else "sum", ctx.out_dtype)


@register(prims.prod.default)
def _prims_prod(ctx, x, dims, output_dtype=None):
    return _reduce_common(ctx, x, list(dims), False, "prod", ctx.out_dtype)


@register(prims.amax.default, prims.amin.default)
def _prims_amax(ctx, x, dims, output_dtype=None):
    kind = "max" if ctx.node.target is prims.amax.default else "min"
    return _reduce_common(ctx, x, list(dims), False, kind, ctx.out_dtype)


@register(prims.var.default)
def _prims_var(ctx, x, dims, correction=1, output_dtype=None):
    """sum((x - mean)^2) / (N - correction), computed in the result dtype."""
    dtype = ctx.out_dtype
    v = ctx.b.convert(x, dtype)
    dims = dims_of(dims, x.rank)
    kept = [d for d in range(x.rank) if d not in dims]
    count = sympy.Mul(*[x.shape[d] for d in dims]) if dims else sympy.Integer(1)
    total = ctx.b.reduce(v, dims, "sum")
    mean = ctx.b.binary("divide", total, ctx.operand(count, dtype, total.shape))
    centered = ctx.b.binary("subtract", v, ctx.b.broadcast_in_dim(mean, v.shape, kept))
    sq = ctx.b.reduce(ctx.b.binary("multiply", centered, centered), dims, "sum")
    # max(N - correction, 0) as PyTorch: fewer elements than the correction
    # give 0 / 0 = NaN (inf for a nonzero sum), never a negative divisor.
    # A fractional correction (0.5) is subtracted in the result dtype.
    if float(correction) == int(correction):
        n = ctx.operand(count - int(correction), dtype, sq.shape)
    else:
        n = ctx.b.binary("subtract", ctx.operand(count, dtype, sq.shape),
                         ctx.operand(float(correction), dtype, sq.shape))
    denom = ctx.b.binary("maximum", n, ctx.operand(0, dtype, sq.shape))
    return ctx.b.binary("divide", sq, denom)


@register(prims.div.default)
def _prims_div(ctx, a, b):
    dtype = ctx.out_dtype
    # prims.div truncates for integers.
    return ctx.b.binary("divide", ctx.operand(a, dtype), ctx.operand(b, dtype))


for _name, _op in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                   ("maximum", "maximum"), ("minimum", "minimum")]:
    register(getattr(prims, _name).default)(_binary_arith(_op))

for _name, _op in [("neg", "negate"), ("abs", "abs"), ("exp", "exponential"), ("log", "log"),
                   ("sqrt", "sqrt"), ("rsqrt", "rsqrt"), ("tanh", "tanh"), ("sin", "sine"),
                   ("cos", "cosine"), ("erf", "erf"), ("floor", "floor"), ("ceil", "ceil")]:
    register(getattr(prims, _name).default)(_unary(_op))


@register(prims.squeeze.default, prims.collapse_view.default, prims.split_dim.default,
          prims.reshape.default, prims.view_of.default)
def _prims_reshape(ctx, x, *args):
    return ctx.b.reshape(x, ctx.out_shape)


@register(prims.transpose.default)
def _prims_transpose(ctx, x, perm):
    return ctx.b.transpose(x, list(perm))


@register(prims.where.default)
def _prims_where(ctx, pred, a, b):
    return _where(ctx, pred, a, b)


@register(prims.iota.default)
def _prims_iota(ctx, length, *, start, step, dtype, device, requires_grad):
    n = ctx.out_shape
    compute = torch.int64 if not dtype.is_floating_point else dtype
    v = ctx.b.iota(n, 0, compute)
    if step != 1:
        v = ctx.b.binary("multiply", v, ctx.operand(step, compute, n))
    if not (isinstance(start, int) and start == 0):
        v = ctx.b.binary("add", v, ctx.operand(start, compute, n))
    return ctx.b.convert(v, ctx.out_dtype)


# ====================================================================
# Scans, roll, as_strided
# ====================================================================

@register(aten.cumsum.default, aten.cumprod.default)
def _cumsum(ctx, x, dim, dtype=None):
    kind = "sum" if ctx.node.target is aten.cumsum.default else "prod"
    v = ctx.b.convert(x, ctx.out_dtype)
    if v.rank == 0:
        return v
    if v.dtype == torch.bool:
        raise ImportError_("scan over bools")
    return ctx.b.scan(v, norm_dim(dim, v.rank), kind)


@register(aten.roll.default)
def _roll(ctx, x, shifts, dims=()):
    if isinstance(shifts, (int, sympy.Expr)):
        shifts = [shifts]
    if not dims:
        flat = ctx.b.reshape(x, (sympy.Mul(*x.shape),))
        rolled = _roll_dim(ctx, flat, as_expr(shifts[0]), 0)
        return ctx.b.reshape(rolled, x.shape)
    v = x
    for shift, dim in zip(shifts, dims):
        v = _roll_dim(ctx, v, as_expr(shift), norm_dim(dim, x.rank))
    return v


def _roll_dim(ctx, x: Val, shift, dim: int) -> Val:
    """cat(x[n - s:], x[:n - s]) along dim, s = shift mod n."""
    n = x.shape[dim]
    if is_static(n) and int(n) == 0:
        return x
    # (A dynamic n may be 0 at run time: modulo max(n, 1), never by zero.)
    s = sympy.Mod(shift, sympy.Max(n, 1)) if not (is_static(n) and shift.is_Integer) \
        else sympy.Integer(int(shift) % int(n))
    if s == 0:
        return x
    cut = n - s
    head_shape = list(x.shape)
    head_shape[dim] = s
    tail_shape = list(x.shape)
    tail_shape[dim] = cut
    starts = [0] * x.rank
    limits = list(x.shape)
    starts[dim] = cut
    head = ctx.b.slice(x, starts, limits, [1] * x.rank, head_shape)
    starts[dim], limits[dim] = 0, cut
    tail = ctx.b.slice(x, starts, limits, [1] * x.rank, tail_shape)
    return ctx.b.concatenate([head, tail], dim, x.shape)


def _numel(x: Val) -> sympy.Expr:
    return sympy.Mul(*x.shape) if x.rank else sympy.Integer(1)


def _storage_order(val) -> Optional[list]:
    """The dims of traced tensor `val` from outermost to innermost in
    memory, when its elements fill their span of memory in some order of
    its dims (dense, no overlap, any storage offset: a TensorIterator
    result of permuted inputs, AOTAutograd's clone of one, a contiguous
    tensor's leading rows); None otherwise (gaps), or when the symbolic
    strides do not prove it. A DISC value is its logical elements: this
    order is how an as_strided of it reads them as eager's memory holds
    them (_view_offset says where it starts)."""
    from torch._prims_common import is_contiguous_or_false
    from torch.fx.experimental.symbolic_shapes import optimization_hint

    if is_contiguous_or_false(val):
        return list(range(val.dim()))
    shape = [as_expr(d) for d in val.shape]
    strides = [as_expr(st) for st in val.stride()]
    hints = [optimization_hint(st, fallback=1) for st in val.stride()]
    # Outermost first; among equal strides (extent-1 dims) the later dim
    # inner, as in a contiguous layout.
    order = sorted(range(len(shape)), key=lambda d: (-hints[d], d))
    if not _is_contiguous_layout([shape[d] for d in order], [strides[d] for d in order]):
        return None
    return order


def _view_offset(node, position: int):
    """The storage offset of as_strided(-scatter) `node` from its operand's
    first element in memory (its argument `position`), or None when the
    operand does not start its storage and the offset is given: then the
    view may read memory outside the operand's elements."""
    given = node.args[position] if len(node.args) > position else \
        node.kwargs.get("storage_offset")
    if given is None:
        return sympy.Integer(0)
    given = as_expr(fake(given) if hasattr(given, "meta") else given)
    return given if as_expr(fake(node.args[0]).storage_offset()) == 0 else None


def _as_storage(ctx, x: Val, order) -> Val:
    """x's elements in the order eager's memory holds them, as one line."""
    if order != sorted(order):
        x = ctx.b.transpose(x, order)
    return ctx.b.reshape(x, (_numel(x),))


def _strided_view(ctx, x, order, size, stride, offset):
    """(whether the view is x's elements in order, reshaped, [*size, 1]
    linear positions into x's storage, or None then): an as_strided view
    of x laid out in memory in `order` (_storage_order), `offset` from its
    first element (_view_offset)."""
    out_shape = [as_expr(d) for d in size]
    strides = [as_expr(st) for st in stride]
    if offset == 0 and order == sorted(order) and _is_contiguous_layout(out_shape, strides) \
            and sympy.simplify(sympy.Mul(*out_shape) - _numel(x)) == 0:
        return True, None
    pos = ctx.b.broadcast_to(ctx.scalar(offset, torch.int64), out_shape)
    for d, st in enumerate(strides):
        if is_static(out_shape[d]) and int(out_shape[d]) == 1:
            continue
        term = ctx.b.binary("multiply", ctx.b.iota(out_shape, d, torch.int64),
                            ctx.b.broadcast_to(ctx.scalar(st, torch.int64), out_shape))
        pos = ctx.b.binary("add", pos, term)
    return False, ctx.b.reshape(pos, tuple(out_shape) + (sympy.Integer(1),))


@register(aten.as_strided.default)
def _as_strided(ctx, x, size, stride, storage_offset=None):
    """An as_strided view of a tensor whose memory is its elements in some
    order of its dims (_storage_order): a reshape when the view is all of
    a contiguous x in order, else a gather of computed linear positions
    from x's elements in memory order."""
    order = _storage_order(fake(ctx.node.args[0]))
    whole, idx = _strided_view(ctx, x, order, size, stride, _view_offset(ctx.node, 3))
    if whole:
        return ctx.b.reshape(x, ctx.out_shape)
    flat = _as_storage(ctx, x, order)
    out_shape = ctx.out_shape
    return ctx.b.gather(flat, idx, [1], [], [0], [0], len(out_shape), out_shape)


@register(aten.as_strided_scatter.default)
def _as_strided_scatter(ctx, x, src, size, stride, storage_offset=None):
    """x with its as_strided view replaced by src (AOTAutograd's backward
    of a view it cannot replay): src itself when the view is all of a
    contiguous x in order, else a scatter into computed linear positions
    of x's elements in memory order, put back in x's dim order."""
    order = _storage_order(fake(ctx.node.args[0]))
    whole, idx = _strided_view(ctx, x, order, size, stride, _view_offset(ctx.node, 4))
    src = ctx.b.convert(src, x.dtype)
    if whole:
        return ctx.b.reshape(src, x.shape)
    flat = _as_storage(ctx, x, order)
    out = ctx.b.scatter(flat, idx, src, "replace", [], [0], [0], src.rank)
    out = ctx.b.reshape(out, tuple(x.shape[d] for d in order))
    if order != sorted(order):
        inverse = sorted(range(len(order)), key=lambda d: order[d])
        out = ctx.b.transpose(out, inverse)
    return out


# In the reasons below (written out for scripts/gen_aten_ops_doc.py): an
# operand whose memory is not its elements in some order of its dims.
LAYOUT_REASON = "a view with gaps or an offset"


def _as_strided_check(node):
    if _storage_order(fake(node.args[0])) is None or _view_offset(node, 3) is None:
        return "as_strided of a view with gaps or an offset (dense layouts compile)"
    return None


def _as_strided_scatter_check(node):
    if _storage_order(fake(node.args[0])) is None or _view_offset(node, 4) is None:
        return "as_strided_scatter into a view with gaps or an offset (dense layouts compile)"
    # Overlapping positions (a zero stride): eager refuses them; the
    # scatter would leave which write wins to its order.
    if any(isinstance(st, int) and st <= 0 for st in node.args[3]):
        return "as_strided_scatter with a zero or negative stride"
    return None


LOWERINGS[aten.as_strided.default].check = _as_strided_check
LOWERINGS[aten.as_strided_scatter.default].check = _as_strided_scatter_check


# Random ops live in their own module (they register into LOWERINGS).
from . import random_ops  # noqa: E402,F401
