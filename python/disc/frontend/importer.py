"""FX graph (core ATen, with FakeTensor metadata) -> one `disc` function.

The importer walks the graph in order and asks the lowering table
(`lowerings.py`) to express each node with `disc` ops. Tensor placeholders
become function arguments carrying `disc.dims`; a symbol (`s0`) is read from
the first argument dim that is exactly that symbol, or, if no tensor carries
it, from a SymInt placeholder passed as a rank-0 i64 tensor.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Optional

import sympy
import torch
import torch.fx as fx

from . import symbolic
from .emitter import (MLIR_TYPE, FunctionBuilder, ImportError_, Val, as_expr, dims_attr,
                      shape_of, tensor_type)


# A SymInt input s that no tensor size gives travels as the shape of an
# empty int8 tensor (symint_carrier): [s, 0, 0] when s >= 0, [0, -s, 0]
# when not (a slice start can be negative); s = dim 0 - dim 1. No memory,
# no copy, read on the host.
SYMINT_CARRIER_TYPE = "tensor<?x?x0xi8>"


def symint_carrier(value, device) -> torch.Tensor:
    """The argument that carries SymInt `value` (SYMINT_CARRIER_TYPE)."""
    value = int(value)
    shape = (value, 0, 0) if value >= 0 else (0, -value, 0)
    return torch.empty(shape, dtype=torch.int8, device=device)


@dataclass
class ArgPlan:
    """How to build the executable's inputs from the graph's inputs."""
    # "tensor", "symint" (symint_carrier), "symfloat", "symbool", or "seed"
    # (a non-negative int64 the caller draws from PyTorch's generator on
    # every call, carried like a SymInt: random ops)
    kind: str
    placeholder: int     # index among the graph's placeholders (-1: none)


@dataclass
class ImportedFunction:
    text: str
    args: list[ArgPlan]
    num_outputs: int
    lowered_nodes: int = 0
    notes: list[str] = field(default_factory=list)


def fake_value(node):
    """node.meta['val'] (FakeTensor, SymInt, tuple, ...) or None."""
    return node.meta.get("val", node.meta.get("example_value"))


class Importer:
    def __init__(self, gm: fx.GraphModule, func_name: str = "main",
                 strict_asserts: bool = False, results_into: Optional[dict] = None):
        from . import lowerings

        self.gm = gm
        # Runtime assertions the importer cannot express fail the import
        # (an exported graph, which no guard protects) instead of being
        # left to Dynamo's guards.
        self.strict_asserts = strict_asserts
        # {output index: placeholder index}: outputs the caller writes into
        # an input (an optimizer step's parameter updates). The function
        # says so (`disc.result_into`), and the compiled code computes each
        # in the input's memory where it can.
        self.results_into = results_into or {}
        self.func_name = func_name
        self.lowerings = lowerings
        self.env: dict[fx.Node, object] = {}
        # per argument: (name, type, attribute list)
        self.args: list[tuple[str, str, list[str]]] = []
        self.plan: list[ArgPlan] = []
        # expr -> how to read it: ("dim", arg, d, type) or ("carrier", arg)
        self.sources: dict[sympy.Expr, tuple] = {}
        self.b = FunctionBuilder(self._read_expr)
        self._seed = None      # the "seed" argument, made by the first random op
        self._streams = 0      # random ops so far: each gets its own stream

    # ------------------------------------------------------------ symbols

    def _read_expr(self, expr: sympy.Expr):
        source = self.sources.get(expr)
        if source is None:
            return None
        if source[0] == "dim":
            _, arg, dim, type_text = source
            c = self.b.index_const(dim)
            name = self.b.fresh("d")
            self.b.emit(f"{name} = tensor.dim {arg}, {c} : {type_text}")
            return name
        if source[0] == "carrier":
            return self._carried_value(source[1])
        raise AssertionError(f"unknown source {source!r} of {expr}")

    def _carried_value(self, arg: str) -> str:
        """The index a symint_carrier argument carries: dim 0 - dim 1."""
        dims = []
        for d in (0, 1):
            dims.append(self.b.fresh("d"))
            self.b.emit(f"{dims[-1]} = tensor.dim {arg}, {self.b.index_const(d)} : "
                        f"{SYMINT_CARRIER_TYPE}")
        name = self.b.fresh("d")
        self.b.emit(f"{name} = arith.subi {dims[0]}, {dims[1]} : index")
        return name

    # ---------------------------------------------------------- arguments

    def _new_arg(self, type_text: str, attrs: str, kind: str, placeholder: int) -> str:
        name = f"%arg{len(self.plan)}"
        self.args.append((name, type_text, [attrs] if attrs else []))
        self.plan.append(ArgPlan(kind, placeholder))
        return name

    def random_stream(self):
        """(the partition's seed argument, a stream number of its own) for
        a random op (random_ops.py)."""
        if self._seed is None:
            # Carried like a SymInt (symint_carrier): read on the host and
            # passed to the kernels by value, on the cpu and cuda targets.
            name = self._new_arg(SYMINT_CARRIER_TYPE, "", "seed", -1)
            size = self._carried_value(name)
            key = self.b.fresh("s")
            self.b.emit(f"{key} = arith.index_cast {size} : index to i64")
            seed = self.b.fresh("seed")
            self.b.emit(f"{seed} = tensor.from_elements {key} : tensor<i64>")
            self._seed = Val(seed, torch.int64, ())
        self._streams += 1
        return self._seed, self._streams - 1

    def _add_arguments(self) -> None:
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        scalars = []
        for i, node in enumerate(placeholders):
            val = fake_value(node)
            if isinstance(val, torch.Tensor):
                if val.dtype not in MLIR_TYPE:
                    raise ImportError_(f"input {node.name} has dtype {val.dtype}")
                shape = shape_of(val)
                type_text = tensor_type(shape, val.dtype)
                name = self._new_arg(type_text, dims_attr(shape), "tensor", i)
                self.env[node] = Val(name, val.dtype, shape)
                for d, expr in enumerate(shape):
                    if not expr.is_Integer and expr not in self.sources:
                        self.sources[expr] = ("dim", name, d, type_text)
            elif isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                scalars.append((i, node, val))
            elif isinstance(val, (int, float, bool)):
                self.env[node] = val
            elif val is None:
                raise ImportError_(f"input {node.name} has no metadata")
            else:
                raise ImportError_(f"input {node.name} is a {type(val).__name__}")
        for i, node, val in scalars:
            if isinstance(val, torch.SymInt):
                expr = as_expr(val)
                self.env[node] = expr
                if expr.is_Integer or expr in self.sources:
                    continue
                # The shape of an empty tensor argument: read on the
                # host from the argument's shape, never from memory (the
                # cuda target's host code cannot read device memory, and a
                # CPU tensor cannot reach a cuda program).
                name = self._new_arg(SYMINT_CARRIER_TYPE, "", "symint", i)
                self.sources[expr] = ("carrier", name)
            else:
                # A symbolic float or bool computed on the host: a rank-0
                # tensor input.
                dtype = torch.float64 if isinstance(val, torch.SymFloat) else torch.bool
                kind = "symfloat" if isinstance(val, torch.SymFloat) else "symbool"
                name = self._new_arg(tensor_type((), dtype), "", kind, i)
                self.env[node] = Val(name, dtype, ())

    # --------------------------------------------------------------- body

    def value_of(self, arg):
        """An FX argument as a Val / sympy expr / python value (recursively)."""
        if isinstance(arg, fx.Node):
            if arg not in self.env:
                raise ImportError_(f"{arg.name} is used before it is defined")
            return self.env[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.value_of(a) for a in arg)
        return arg

    def _check_derived_dims(self) -> None:
        """An argument dim whose size is an expression of other inputs'
        sizes (x: [2*s0] next to y: [s0]) is checked against it on every
        call: nothing else guarantees the relation in an exported graph."""
        for expr, source in list(self.sources.items()):
            if source[0] != "dim" or isinstance(expr, sympy.Symbol) or expr.is_Integer:
                continue
            try:
                computed = symbolic.emit_index(self.b, expr)
            except symbolic.UnsupportedExpr:
                continue  # its symbols have no other source: nothing to compare
            actual = self.b.index(expr)
            flag = self.b.fresh("b")
            self.b.emit(f"{flag} = arith.cmpi eq, {actual}, {computed} : index")
            _, arg, dim, _ = source
            placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
            name = placeholders[self.plan[int(arg[len("%arg"):])].placeholder].name
            self.b.emit(f'cf.assert {flag}, "input {name} dim {dim} must be {expr} in terms '
                        f'of the other inputs\' sizes (a relation the model was exported '
                        f'with)"')

    def run(self) -> ImportedFunction:
        self._add_arguments()
        if self.strict_asserts:
            self._check_derived_dims()
        outputs = None
        lowered = 0
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                outputs = node.args[0]
                continue
            if node.op != "call_function":
                raise ImportError_(f"node {node.name} is a {node.op}")
            self.env[node] = self.lower_node(node)
            lowered += 1
        if not isinstance(outputs, (list, tuple)):
            outputs = (outputs,)
        results = []
        for out in outputs:
            v = self.value_of(out)
            if not isinstance(v, Val):
                raise ImportError_(f"output {out} is not a tensor")
            results.append(v)
        if not results:
            raise ImportError_("the partition has no tensor outputs")
        self._tie_results(results)
        result_types = ", ".join(r.type for r in results)
        args_text = [f"{name}: {type_text}" + (f" {{{', '.join(attrs)}}}" if attrs else "")
                     for name, type_text, attrs in self.args]
        lines = [f"func.func @{self.func_name}({', '.join(args_text)}) -> ({result_types}) {{"]
        lines += self.b.lines
        lines.append(f"  return {', '.join(r.name for r in results)} : {result_types}")
        lines.append("}")
        return ImportedFunction("\n".join(lines) + "\n", self.plan, len(results), lowered)

    def _tie_results(self, results) -> None:
        """`disc.result_into` on each input an output is written into, where
        the output has the input's type (otherwise the runtime copies it
        there after the call, as for an untied output)."""
        args_of = {}
        for i, p in enumerate(self.plan):
            if p.kind == "tensor":
                args_of.setdefault(p.placeholder, []).append(i)
        for output, placeholder in sorted(self.results_into.items()):
            args = args_of.get(placeholder, [])
            if len(args) != 1 or not 0 <= output < len(results):
                continue
            _, type_text, attrs = self.args[args[0]]
            if type_text == results[output].type:
                attrs.append(f"disc.result_into = {output} : i64")

    def lower_node(self, node: fx.Node):
        target = node.target
        if target is operator.getitem:
            src = self.value_of(node.args[0])
            return src[node.args[1]]
        val = fake_value(node)
        if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            # Host-side shape arithmetic: its value is the expression.
            return as_expr(val) if isinstance(val, torch.SymInt) else val.node.expr
        if isinstance(val, (int, float, bool)) and not isinstance(val, torch.Tensor) \
                and target not in self.lowerings.LOWERINGS:
            return val
        lowering = self.lowerings.LOWERINGS.get(target)
        if lowering is None:
            raise ImportError_(f"no lowering for {target}")
        ctx = self.lowerings.LoweringContext(self, node)
        args = self.value_of(node.args)
        kwargs = {k: self.value_of(v) for k, v in node.kwargs.items()}
        try:
            result = lowering.fn(ctx, *args, **kwargs)
        except symbolic.UnsupportedExpr as e:
            raise ImportError_(str(e)) from e
        return result


def import_graph(gm: fx.GraphModule, func_name: str = "main",
                 strict_asserts: bool = False,
                 results_into: Optional[dict] = None) -> ImportedFunction:
    return Importer(gm, func_name, strict_asserts, results_into).run()
