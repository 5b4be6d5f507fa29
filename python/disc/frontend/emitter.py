"""Builds `disc` dialect MLIR text for one function.

Values are `Val`s: an SSA name, a torch dtype and a shape whose entries are
sympy expressions (an Integer for a static dim, an expression over the
graph's input symbols -- `s0`, `s0*s1`, `s1 - 1` -- for a dynamic one).
Dynamic dims print as `?` in types and travel as `disc.dims` attributes, so
the compiler knows which unknown dims are equal. Sizes needed as values (for
a broadcast, a reshape, an iota) are computed on the host from the inputs'
dims with `tensor.dim` and `arith` ops, once per function.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

import sympy
import torch

from . import symbolic

MLIR_TYPE = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.bool: "i1",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
}
SUPPORTED_DTYPES = frozenset(MLIR_TYPE)


class ImportError_(Exception):
    """Something in the graph the importer cannot express (the partition
    then runs in eager PyTorch, with this message as the reason)."""


def as_expr(size) -> sympy.Expr:
    """A dim (int, SymInt or sympy expression) as a sympy expression."""
    if isinstance(size, sympy.Expr):
        return size
    if isinstance(size, torch.SymInt):
        return size.node.expr
    if isinstance(size, (int, bool)):
        return sympy.Integer(int(size))
    raise ImportError_(f"cannot use {size!r} ({type(size).__name__}) as a size")


def shape_of(value) -> tuple[sympy.Expr, ...]:
    return tuple(as_expr(s) for s in value.shape)


def is_static(expr: sympy.Expr) -> bool:
    return bool(expr.is_Integer)


@dataclass(frozen=True)
class Val:
    name: str
    dtype: torch.dtype
    shape: tuple

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.dtype)


def tensor_type(shape: Sequence[sympy.Expr], dtype: torch.dtype) -> str:
    if dtype not in MLIR_TYPE:
        raise ImportError_(f"dtype {dtype} is not supported")
    dims = "".join(f"{int(d)}x" if is_static(d) else "?x" for d in shape)
    return f"tensor<{dims}{MLIR_TYPE[dtype]}>"


def dims_attr(shape: Sequence[sympy.Expr]) -> str:
    """`disc.dims = [...]` when a dim is dynamic, else empty."""
    if all(is_static(d) for d in shape):
        return ""
    items = ", ".join('"' + symbolic.to_string(d) + '"' for d in shape)
    return f"disc.dims = [{items}]"


def _int_list(values: Iterable[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def scalar_literal(value, dtype: torch.dtype) -> str:
    """A literal for `dense<...>` that round-trips exactly (floats as their
    bit pattern, so 1e-05, inf and nan need no decimal spelling)."""
    if dtype == torch.bool:
        return "true" if bool(value) else "false"
    if not dtype.is_floating_point:
        return str(int(value))
    if dtype == torch.float64:
        bits = struct.unpack("<Q", struct.pack("<d", float(value)))[0]
        return f"0x{bits:016X}"
    if dtype == torch.float32:
        bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
        return f"0x{bits:08X}"
    bits = torch.tensor([float(value)], dtype=dtype).view(torch.int16).item() & 0xFFFF
    return f"0x{bits:04X}"


class FunctionBuilder:
    """Emits the body of one `func.func`."""

    def __init__(self, expr_source: Callable[[sympy.Expr], "str | None"]):
        # expr_source(expr) returns the SSA name of an index value holding
        # exactly `expr` when the function can read it directly (an input
        # dim, a SymInt input), emitting what is needed; else None, and the
        # expression is computed from its parts.
        self.lines: list[str] = []
        self._counter = 0
        self._index_cache: dict[sympy.Expr, str] = {}
        self._const_cache: dict[tuple, Val] = {}
        self._expr_source = expr_source

    # ------------------------------------------------------------ plumbing

    def fresh(self, prefix: str = "v") -> str:
        self._counter += 1
        return f"%{prefix}{self._counter}"

    def emit(self, text: str) -> None:
        self.lines.append("  " + text)

    def op(self, body: str, dtype: torch.dtype, shape, *, attrs: str = "",
           signature: str) -> Val:
        """`%r = <body> {attrs, disc.dims} : <signature>` returning a Val."""
        shape = tuple(as_expr(d) for d in shape)
        name = self.fresh()
        all_attrs = ", ".join(a for a in (attrs, dims_attr(shape)) if a)
        attr_text = f" {{{all_attrs}}}" if all_attrs else ""
        self.emit(f"{name} = {body}{attr_text} : {signature}")
        return Val(name, dtype, shape)

    def sort(self, v: Val, dim: int, descending: bool) -> tuple:
        """disc.sort: (values, int64 indices), both of v's shape."""
        name = self.fresh()
        # (No disc.dims: both results have the operand's dims, which the
        # shape analysis joins.)
        attrs = " {descending = true}" if descending else ""
        indices_type = tensor_type(v.shape, torch.int64)
        self.emit(f"{name}:2 = disc.sort {v.name}, dim = {int(dim)}{attrs} : "
                  f"({v.type}) -> ({v.type}, {indices_type})")
        return Val(f"{name}#0", v.dtype, v.shape), Val(f"{name}#1", torch.int64, v.shape)

    # -------------------------------------------------------------- shapes

    def index(self, expr) -> str:
        """An `index` SSA value holding `expr` (computed once)."""
        expr = as_expr(expr)
        cached = self._index_cache.get(expr)
        if cached is not None:
            return cached
        name = None if expr.is_Integer else self._expr_source(expr)
        if name is None:
            name = symbolic.emit_index(self, expr)
        self._index_cache[expr] = name
        return name

    def read_index(self, v: "Val") -> str:
        """An `index` SSA value read from a rank-0 integer tensor (a size
        that depends on the data: the host reads it)."""
        scalar = self.fresh("s")
        self.emit(f"{scalar} = tensor.extract {v.name}[] : {v.type}")
        name = self.fresh("d")
        self.emit(f"{name} = arith.index_cast {scalar} : {MLIR_TYPE[v.dtype]} to index")
        return name

    def bind_index(self, expr, name: str) -> None:
        """Every later use of the size `expr` (a data-dependent symbol)
        reads the SSA value `name`."""
        self._index_cache[as_expr(expr)] = name

    def index_const(self, value: int) -> str:
        return self.index(sympy.Integer(value))

    def shape_tensor(self, shape: Sequence) -> str:
        dims = [self.index(d) for d in shape]
        name = self.fresh("shape")
        if not dims:
            self.emit(f"{name} = arith.constant dense<> : tensor<0xindex>")
        else:
            self.emit(f"{name} = tensor.from_elements {', '.join(dims)} : tensor<{len(dims)}xindex>")
        return name

    # ---------------------------------------------------------- constants

    def constant(self, value, dtype: torch.dtype) -> Val:
        """A rank-0 constant (cached per value and dtype)."""
        if isinstance(value, float) and math.isnan(value):
            key = ("nan", dtype)
        else:
            key = (value, type(value), dtype)
        cached = self._const_cache.get(key)
        if cached is not None:
            return cached
        t = tensor_type((), dtype)
        name = self.fresh("c")
        self.emit(f"{name} = disc.constant dense<{scalar_literal(value, dtype)}> : {t}")
        val = Val(name, dtype, ())
        self._const_cache[key] = val
        return val

    def dense_constant(self, tensor: torch.Tensor) -> Val:
        """A small constant tensor (already static)."""
        dtype = tensor.dtype
        flat = tensor.reshape(-1).tolist()
        if len(set(flat)) == 1 and flat:
            body = scalar_literal(flat[0], dtype)
        else:
            body = "[" + ", ".join(scalar_literal(v, dtype) for v in flat) + "]"
            if tensor.dim() != 1:
                # dense<[...]> of the flat values, reshaped by the type.
                flat_val = self._dense(body, dtype, (len(flat),))
                return self.reshape(flat_val, tuple(sympy.Integer(s) for s in tensor.shape))
        return self._dense(body, dtype, tuple(sympy.Integer(s) for s in tensor.shape))

    def _dense(self, body: str, dtype, shape) -> Val:
        name = self.fresh("c")
        t = tensor_type(shape, dtype)
        self.emit(f"{name} = disc.constant dense<{body}> : {t}")
        return Val(name, dtype, shape)

    def full(self, value, dtype: torch.dtype, shape) -> Val:
        return self.broadcast_in_dim(self.constant(value, dtype), shape, [])

    # ------------------------------------------------------ element types

    def convert(self, v: Val, dtype: torch.dtype) -> Val:
        if v.dtype == dtype:
            return v
        return self.op(f"disc.convert {v.name}", dtype, v.shape,
                       signature=f"({v.type}) -> {tensor_type(v.shape, dtype)}")

    # ---------------------------------------------------------- broadcast

    def broadcast_in_dim(self, v: Val, shape, dims: Sequence[int]) -> Val:
        """Operand dim i becomes result dim dims[i] (size 1 expands)."""
        shape = tuple(as_expr(d) for d in shape)
        if v.shape == shape and list(dims) == list(range(len(shape))):
            return v
        nonexpanding = [i for i, d in enumerate(dims)
                        if not is_static(v.shape[i]) and v.shape[i] == shape[d]]
        extra = f" nonexpanding = {_int_list(nonexpanding)}" if nonexpanding else ""
        out_type = tensor_type(shape, v.dtype)
        if all(is_static(d) for d in shape):
            return self.op(f"disc.broadcast_in_dim {v.name}, dims = {_int_list(dims)}",
                           v.dtype, shape, signature=f"({v.type}) -> {out_type}")
        st = self.shape_tensor(shape)
        return self.op(
            f"disc.dynamic_broadcast_in_dim {v.name}, {st}, dims = {_int_list(dims)}{extra}",
            v.dtype, shape,
            signature=f"({v.type}, tensor<{len(shape)}xindex>) -> {out_type}")

    def broadcast_to(self, v: Val, shape) -> Val:
        """NumPy-style: trailing dims aligned."""
        shape = tuple(as_expr(d) for d in shape)
        if v.shape == shape:
            return v
        offset = len(shape) - v.rank
        if offset < 0:
            raise ImportError_(f"cannot broadcast rank {v.rank} to rank {len(shape)}")
        return self.broadcast_in_dim(v, shape, list(range(offset, len(shape))))

    # ------------------------------------------------------- elementwise

    def unary(self, opname: str, v: Val, result_dtype: torch.dtype | None = None) -> Val:
        if result_dtype is None or result_dtype == v.dtype:
            return self.op(f"disc.{opname} {v.name}", v.dtype, v.shape, signature=v.type)
        return self.op(f"disc.{opname} {v.name}", result_dtype, v.shape,
                       signature=f"({v.type}) -> {tensor_type(v.shape, result_dtype)}")

    def binary(self, opname: str, a: Val, b: Val) -> Val:
        assert a.dtype == b.dtype and a.shape == b.shape, (opname, a, b)
        return self.op(f"disc.{opname} {a.name}, {b.name}", a.dtype, a.shape, signature=a.type)

    def compare(self, direction: str, a: Val, b: Val) -> Val:
        assert a.dtype == b.dtype and a.shape == b.shape
        out = tensor_type(a.shape, torch.bool)
        return self.op(f"disc.compare {direction}, {a.name}, {b.name}", torch.bool, a.shape,
                       signature=f"({a.type}, {b.type}) -> {out}")

    def select(self, pred: Val, a: Val, b: Val) -> Val:
        assert a.dtype == b.dtype and a.shape == b.shape
        return self.op(f"disc.select {pred.name}, {a.name}, {b.name}", a.dtype, a.shape,
                       signature=f"{pred.type}, {a.type}")

    def clamp(self, lo: Val, v: Val, hi: Val) -> Val:
        return self.op(f"disc.clamp {lo.name}, {v.name}, {hi.name}", v.dtype, v.shape,
                       signature=f"({lo.type}, {v.type}, {hi.type}) -> {v.type}")

    # ----------------------------------------------------- data movement

    def reshape(self, v: Val, shape) -> Val:
        shape = tuple(as_expr(d) for d in shape)
        if v.shape == shape:
            return v
        out_type = tensor_type(shape, v.dtype)
        if all(is_static(d) for d in shape):
            return self.op(f"disc.reshape {v.name}", v.dtype, shape,
                           signature=f"({v.type}) -> {out_type}")
        st = self.shape_tensor(shape)
        return self.op(f"disc.dynamic_reshape {v.name}, {st}", v.dtype, shape,
                       signature=f"({v.type}, tensor<{len(shape)}xindex>) -> {out_type}")

    def transpose(self, v: Val, perm: Sequence[int]) -> Val:
        perm = [int(p) for p in perm]
        if perm == list(range(v.rank)):
            return v
        shape = tuple(v.shape[p] for p in perm)
        return self.op(f"disc.transpose {v.name}, dims = {_int_list(perm)}", v.dtype, shape,
                       signature=f"({v.type}) -> {tensor_type(shape, v.dtype)}")

    def slice(self, v: Val, starts, limits, strides, shape) -> Val:
        """Strided slice; bounds are sizes (ints or expressions), `shape` the
        result's (from the graph's metadata)."""
        starts = [as_expr(s) for s in starts]
        limits = [as_expr(s) for s in limits]
        strides = [int(s) for s in strides]
        shape = tuple(as_expr(d) for d in shape)
        if all(s == 0 for s in starts) and tuple(limits) == v.shape and all(st == 1 for st in strides):
            return v
        out_type = tensor_type(shape, v.dtype)
        if all(is_static(x) for x in (*starts, *limits)):
            return self.op(
                f"disc.slice {v.name}, start = {_int_list(starts)}, limit = {_int_list(limits)}, "
                f"strides = {_int_list(strides)}", v.dtype, shape,
                signature=f"({v.type}) -> {out_type}")
        n = v.rank
        st_start = self.shape_tensor(starts)
        st_limit = self.shape_tensor(limits)
        st_strides = self.shape_tensor([sympy.Integer(s) for s in strides])
        ty = f"tensor<{n}xindex>"
        return self.op(f"disc.real_dynamic_slice {v.name}, {st_start}, {st_limit}, {st_strides}",
                       v.dtype, shape, signature=f"({v.type}, {ty}, {ty}, {ty}) -> {out_type}")

    def concatenate(self, values: Sequence[Val], dim: int, shape) -> Val:
        if len(values) == 1:
            return values[0]
        types = ", ".join(v.type for v in values)
        out = tensor_type(shape, values[0].dtype)
        names = ", ".join(v.name for v in values)
        return self.op(f"disc.concatenate {names} dim = {dim}", values[0].dtype, shape,
                       signature=f"({types}) -> {out}")

    def pad(self, v: Val, value: Val, low, high, interior, shape) -> Val:
        low = [as_expr(x) for x in low]
        high = [as_expr(x) for x in high]
        interior = [as_expr(x) for x in interior]
        out = tensor_type(shape, v.dtype)
        if all(is_static(x) for x in (*low, *high, *interior)):
            return self.op(
                f"disc.pad {v.name}, {value.name}, low = {_int_list(low)}, high = {_int_list(high)}, "
                f"interior = {_int_list(interior)}", v.dtype, shape,
                signature=f"({v.type}, {value.type}) -> {out}")
        ty = f"tensor<{v.rank}xindex>"
        lo, hi, it = self.shape_tensor(low), self.shape_tensor(high), self.shape_tensor(interior)
        return self.op(f"disc.dynamic_pad {v.name}, {value.name}, {lo}, {hi}, {it}", v.dtype, shape,
                       signature=f"({v.type}, {value.type}, {ty}, {ty}, {ty}) -> {out}")

    def iota(self, shape, dim: int, dtype: torch.dtype) -> Val:
        shape = tuple(as_expr(d) for d in shape)
        out = tensor_type(shape, dtype)
        if all(is_static(d) for d in shape):
            return self.op(f"disc.iota dim = {dim}", dtype, shape, signature=out)
        st = self.shape_tensor(shape)
        return self.op(f"disc.dynamic_iota {st}, dim = {dim}", dtype, shape,
                       signature=f"(tensor<{len(shape)}xindex>) -> {out}")

    # --------------------------------------------------------- reductions

    def reduce(self, v: Val, dims: Sequence[int], kind: str) -> Val:
        dims = sorted({int(d) % max(v.rank, 1) for d in dims}) if v.rank else []
        if not dims:
            return v
        shape = tuple(s for i, s in enumerate(v.shape) if i not in dims)
        return self.op(f"disc.reduce {v.name}, dims = {_int_list(dims)}, kind = {kind}",
                       v.dtype, shape, signature=f"({v.type}) -> {tensor_type(shape, v.dtype)}")

    def scan(self, v: Val, dim: int, kind: str) -> Val:
        """Inclusive running sum/product along `dim`."""
        return self.op(f"disc.scan {v.name}, dim = {int(dim)}, kind = {kind}", v.dtype, v.shape,
                       signature=v.type)

    # ------------------------------------------------- library-call ops

    def dot_general(self, a: Val, b: Val, lb, rb, lc, rc) -> Val:
        shape = [a.shape[d] for d in lb]
        shape += [s for i, s in enumerate(a.shape) if i not in lb and i not in lc]
        shape += [s for i, s in enumerate(b.shape) if i not in rb and i not in rc]
        shape = tuple(shape)
        out = tensor_type(shape, a.dtype)
        return self.op(
            f"disc.dot_general {a.name}, {b.name}, batching_dims = {_int_list(lb)} x {_int_list(rb)}, "
            f"contracting_dims = {_int_list(lc)} x {_int_list(rc)}", a.dtype, shape,
            signature=f"({a.type}, {b.type}) -> {out}")

    def convolution(self, x: Val, w: Val, stride, pad_lo, pad_hi, dilation, groups, shape,
                    lhs_dilation=None) -> Val:
        """disc.convolution; lhs_dilation (a transposed convolution's
        stride) spreads the input before the padding. A symbolic padding
        entry becomes an index operand."""
        out = tensor_type(shape, x.dtype)
        attrs = f"feature_group_count = {int(groups)} : i64" if groups != 1 else ""
        lhs_text = (f" lhs_dilation = {_int_list(lhs_dilation)}"
                    if lhs_dilation and any(d != 1 for d in lhs_dilation) else "")
        dynamic = 0

        def padding(values) -> str:
            nonlocal dynamic
            entries = []
            for v in (as_expr(v) for v in values):
                if is_static(v):
                    entries.append(str(int(v)))
                else:
                    entries.append(self.index(v))
                    dynamic += 1
            return "[" + ", ".join(entries) + "]"

        lo_text, hi_text = padding(pad_lo), padding(pad_hi)
        index_types = ", index" * dynamic
        return self.op(
            f"disc.convolution {x.name}, {w.name}, strides = {_int_list(stride)}, "
            f"pad_low = {lo_text}, pad_high = {hi_text}, "
            f"dilation = {_int_list(dilation)}{lhs_text}", x.dtype, shape, attrs=attrs,
            signature=f"({x.type}, {w.type}{index_types}) -> {out}")

    def convolution_backward_weights(self, x: Val, grad: Val, stride, pad_lo, pad_hi, dilation,
                                     groups, shape) -> Val:
        """disc.convolution_backward_weights: the kernel gradient of the
        convolution of x whose output's gradient is grad; shape is the
        kernel's, whose symbolic spatial sizes go as the kernel_size
        operand (the op cannot infer them: a stride leaves input rows
        unread)."""
        out = tensor_type(shape, x.dtype)
        attrs = f"feature_group_count = {int(groups)} : i64" if groups != 1 else ""
        spatial = list(shape[2:])
        kernel_size, kernel_size_type = "", ""
        if not all(is_static(k) for k in spatial):
            kernel_size = f" kernel_size({self.shape_tensor(spatial)})"
            kernel_size_type = f", tensor<{len(spatial)}xindex>"
        return self.op(
            f"disc.convolution_backward_weights {x.name}, {grad.name}{kernel_size}, "
            f"strides = {_int_list(stride)}, pad_low = {_int_list(pad_lo)}, "
            f"pad_high = {_int_list(pad_hi)}, dilation = {_int_list(dilation)}",
            x.dtype, shape, attrs=attrs,
            signature=f"({x.type}, {grad.type}{kernel_size_type}) -> {out}")

    def attention(self, q: Val, k: Val, v: Val, mask: Optional[Val], scale: Optional[float],
                  causal: bool) -> Val:
        """disc.attention; scale None is 1 / sqrt(head dim)."""
        shape = (q.shape[0], q.shape[1], q.shape[2], v.shape[3])
        out = tensor_type(shape, q.dtype)
        operands = [q, k, v] + ([mask] if mask is not None else [])
        mask_text = f" mask({mask.name})" if mask is not None else ""
        causal_text = " causal" if causal else ""
        scale_text = "" if scale is None else f" scale = {float(scale):.17e}"
        return self.op(
            f"disc.attention {q.name}, {k.name}, {v.name}{mask_text}{scale_text}{causal_text}",
            q.dtype, shape,
            signature=f"({', '.join(o.type for o in operands)}) -> {out}")

    # --------------------------------------------------- gather / scatter

    def gather(self, operand: Val, indices: Val, slice_sizes, offset_dims, collapsed,
               start_index_map, index_vector_dim: int, shape) -> Val:
        out = tensor_type(shape, operand.dtype)
        common = (f"offset_dims = {_int_list(offset_dims)}, collapsed_slice_dims = {_int_list(collapsed)}, "
                  f"start_index_map = {_int_list(start_index_map)}, index_vector_dim = {index_vector_dim}")
        slice_sizes = [as_expr(s) for s in slice_sizes]
        if all(is_static(s) for s in slice_sizes):
            return self.op(f"disc.gather {operand.name}[{indices.name}] slice_sizes = "
                           f"{_int_list(slice_sizes)}, {common}", operand.dtype, shape,
                           signature=f"({operand.type}, {indices.type}) -> {out}")
        st = self.shape_tensor(slice_sizes)
        return self.op(f"disc.dynamic_gather {operand.name}[{indices.name}], {st}, {common}",
                       operand.dtype, shape,
                       signature=f"({operand.type}, {indices.type}, tensor<{len(slice_sizes)}xindex>) -> {out}")

    def scatter(self, operand: Val, indices: Val, updates: Val, kind: str, update_window_dims,
                inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim: int) -> Val:
        return self.op(
            f"disc.scatter {operand.name}[{indices.name}], {updates.name}, kind = {kind}, "
            f"update_window_dims = {_int_list(update_window_dims)}, "
            f"inserted_window_dims = {_int_list(inserted_window_dims)}, "
            f"scatter_dims_to_operand_dims = {_int_list(scatter_dims_to_operand_dims)}, "
            f"index_vector_dim = {index_vector_dim}", operand.dtype, operand.shape,
            signature=f"({operand.type}, {indices.type}, {updates.type}) -> {operand.type}")
