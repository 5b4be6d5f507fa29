"""Symbolic sizes: PyTorch's sympy expressions over the graph's input
symbols, printed for `disc.dims` and computed on the host as `index`
arithmetic (`arith` ops on `tensor.dim` values)."""
from __future__ import annotations

import functools
from typing import Callable

import sympy
from torch.utils._sympy import functions as torch_fns


class UnsupportedExpr(Exception):
    pass


@functools.lru_cache(maxsize=8192)
def to_string(expr: sympy.Expr) -> str:
    """sympy's printer, once per expression: a partition prints the same
    few sizes thousands of times (RTMO-s: 5132 calls, 0.55 s uncached)."""
    return str(expr)


def simplify(expr: sympy.Expr) -> sympy.Expr:
    return sympy.simplify(expr) if not expr.is_Integer else expr


def _binary(builder, op: str, a: str, b: str) -> str:
    name = builder.fresh("i")
    builder.emit(f"{name} = arith.{op} {a}, {b} : index")
    return name


def emit_index(builder, expr: sympy.Expr) -> str:
    """Emits index arithmetic for `expr`; returns the SSA name. Uses
    builder.index() for sub-expressions so that they are shared."""
    if expr.is_Integer:
        name = builder.fresh("c")
        builder.emit(f"{name} = arith.constant {int(expr)} : index")
        return name
    if isinstance(expr, sympy.Symbol):
        raise UnsupportedExpr(f"the size symbol {expr} is not available in this partition")
    sub = builder.index
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        op = "addi" if isinstance(expr, sympy.Add) else "muli"
        terms = [sub(a) for a in expr.args]
        out = terms[0]
        for t in terms[1:]:
            out = _binary(builder, op, out, t)
        return out
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) > 0:
        base = sub(expr.base)
        out = base
        for _ in range(int(expr.exp) - 1):
            out = _binary(builder, "muli", out, base)
        return out
    if isinstance(expr, getattr(torch_fns, "PowByNatural", ())) and expr.args[1].is_Integer:
        return sub(sympy.Pow(expr.args[0], expr.args[1], evaluate=False)) \
            if int(expr.args[1]) > 0 else sub(sympy.Integer(1))
    if isinstance(expr, torch_fns.FloorDiv):
        return _binary(builder, "floordivsi", sub(expr.args[0]), sub(expr.args[1]))
    if isinstance(expr, getattr(torch_fns, "CleanDiv", ())):
        return _binary(builder, "divsi", sub(expr.args[0]), sub(expr.args[1]))
    if isinstance(expr, getattr(torch_fns, "CeilDiv", ())):
        return _binary(builder, "ceildivsi", sub(expr.args[0]), sub(expr.args[1]))
    if isinstance(expr, (sympy.Mod, getattr(torch_fns, "Mod", sympy.Mod),
                         getattr(torch_fns, "PythonMod", sympy.Mod))):
        a, b = sub(expr.args[0]), sub(expr.args[1])
        q = _binary(builder, "floordivsi", a, b)
        return _binary(builder, "subi", a, _binary(builder, "muli", q, b))
    if isinstance(expr, getattr(torch_fns, "ModularIndexing", ())):
        x, div, mod = (sub(a) for a in expr.args)
        q = _binary(builder, "floordivsi", x, div)
        q2 = _binary(builder, "floordivsi", q, mod)
        return _binary(builder, "subi", q, _binary(builder, "muli", q2, mod))
    if isinstance(expr, (sympy.Max, getattr(torch_fns, "Max", sympy.Max))):
        args = [sub(a) for a in expr.args]
        out = args[0]
        for a in args[1:]:
            out = _binary(builder, "maxsi", out, a)
        return out
    if isinstance(expr, (sympy.Min, getattr(torch_fns, "Min", sympy.Min))):
        args = [sub(a) for a in expr.args]
        out = args[0]
        for a in args[1:]:
            out = _binary(builder, "minsi", out, a)
        return out
    for fn, rounding in (("TruncToInt", None), ("CeilToInt", "ceil"), ("FloorToInt", "floor")):
        if isinstance(expr, getattr(torch_fns, fn, ())):
            # A size computed in Python floats (int(1.7 * n)): the same
            # double arithmetic on the host, then converted as PyTorch does.
            f = emit_float(builder, expr.args[0])
            if rounding:
                rounded = builder.fresh("f")
                builder.emit(f"{rounded} = math.{rounding} {f} : f64")
                f = rounded
            i64 = builder.fresh("i")
            builder.emit(f"{i64} = arith.fptosi {f} : f64 to i64")
            name = builder.fresh("i")
            builder.emit(f"{name} = arith.index_cast {i64} : i64 to index")
            return name
    raise UnsupportedExpr(f"size expression {expr} ({type(expr).__name__}) is not supported")


_COMPARISONS = {sympy.Eq: "eq", sympy.Ne: "ne", sympy.StrictLessThan: "slt",
                sympy.LessThan: "sle", sympy.StrictGreaterThan: "sgt",
                sympy.GreaterThan: "sge"}


def emit_condition(builder, expr) -> str:
    """Emits an i1 for a sympy condition over sizes (a torch.export runtime
    assertion: Eq(Mod(s0, 2), 0), s0 > 8, And(...)); returns the SSA name."""
    if expr is True or expr == sympy.true:
        name = builder.fresh("b")
        builder.emit(f"{name} = arith.constant true")
        return name
    if expr is False or expr == sympy.false:
        name = builder.fresh("b")
        builder.emit(f"{name} = arith.constant false")
        return name
    for kind, predicate in _COMPARISONS.items():
        if isinstance(expr, kind):
            lhs, rhs = builder.index(expr.lhs), builder.index(expr.rhs)
            name = builder.fresh("b")
            builder.emit(f"{name} = arith.cmpi {predicate}, {lhs}, {rhs} : index")
            return name
    if isinstance(expr, (sympy.And, sympy.Or)):
        op = "andi" if isinstance(expr, sympy.And) else "ori"
        parts = [emit_condition(builder, a) for a in expr.args]
        out = parts[0]
        for p in parts[1:]:
            name = builder.fresh("b")
            builder.emit(f"{name} = arith.{op} {out}, {p} : i1")
            out = name
        return out
    if isinstance(expr, sympy.Not):
        inner = emit_condition(builder, expr.args[0])
        true = emit_condition(builder, True)
        name = builder.fresh("b")
        builder.emit(f"{name} = arith.xori {inner}, {true} : i1")
        return name
    raise UnsupportedExpr(f"condition {expr} ({type(expr).__name__}) is not supported")


# True divisions of sizes: FloatTrueDiv of floats, IntTrueDiv of integers
# (float(a) / float(b)); emit_float and is_computable_float both use it.
_TRUE_DIVISIONS = (getattr(torch_fns, "FloatTrueDiv", ()), getattr(torch_fns, "IntTrueDiv", ()))


def emit_float(builder, expr: sympy.Expr) -> str:
    """An f64 SSA value for a float-valued size expression (ToFloat of
    integer sizes, float constants, +, *, true division of floats or of
    integers), computed in doubles as Python computes the SymFloat."""
    def binary(op, args):
        out = emit_float(builder, args[0])
        for a in args[1:]:
            name = builder.fresh("f")
            builder.emit(f"{name} = arith.{op} {out}, {emit_float(builder, a)} : f64")
            out = name
        return out
    if expr.is_Number:
        name = builder.fresh("f")
        builder.emit(f"{name} = arith.constant {float(expr)!r} : f64")
        return name
    if is_float_of_int(expr) or (expr.is_integer and not expr.is_Number):
        i64 = builder.fresh("i")
        inner = expr.args[0] if is_float_of_int(expr) else expr
        builder.emit(f"{i64} = arith.index_cast {builder.index(inner)} : index to i64")
        name = builder.fresh("f")
        builder.emit(f"{name} = arith.sitofp {i64} : i64 to f64")
        return name
    if isinstance(expr, sympy.Add):
        return binary("addf", expr.args)
    if isinstance(expr, sympy.Mul):
        return binary("mulf", expr.args)
    if isinstance(expr, _TRUE_DIVISIONS):
        # IntTrueDiv's operands are integers, which the branch above converts.
        return binary("divf", expr.args)
    raise UnsupportedExpr(f"float size expression {expr} ({type(expr).__name__}) is not supported")


def is_computable_float(expr) -> bool:
    """Whether emit_float computes `expr` (a SymFloat's expression): the
    unbiased-variance factor n / (n - 1) of a batch norm's running
    statistics is IntTrueDiv(n, 16) / (IntTrueDiv(n, 16) - 1.0)."""
    if not isinstance(expr, sympy.Expr):
        return False
    if expr.is_Number or is_float_of_int(expr) or (expr.is_integer and not expr.is_Number):
        return True
    if isinstance(expr, (sympy.Add, sympy.Mul) + _TRUE_DIVISIONS):
        return all(is_computable_float(a) for a in expr.args)
    return False


def is_float_of_int(expr) -> bool:
    """ToFloat(n) of an integer size expression (a SymFloat the importer
    computes itself)."""
    return isinstance(expr, getattr(torch_fns, "ToFloat", ())) and len(expr.args) == 1


def free_symbols(expr: sympy.Expr) -> set:
    return set(expr.free_symbols) if isinstance(expr, sympy.Expr) else set()
