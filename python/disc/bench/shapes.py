"""Shape variants of GraphNet samples, and the FX pass that frees their
pinned sizes.

A sample's input_tensor_constraints.py names its dynamic dimensions: sympy
symbols (S0, S1, ...), their example values, relations between them and,
per forward argument, a shape with symbols where a dim is dynamic.
`derive_variants` scales the symbols into K shape assignments (the first is
the example); `variant_inputs` builds the inputs for one of them.

The model.py files are static traces: literal sizes in view / reshape /
expand / arange / full / zeros / slicing pin the example shape, so most
samples cannot run another shape as written. `generalize` is an FX pass
that rewrites those literals into sizes read from the inputs:

- a literal equal to the example value of a symbol S (value > 1), to the
  product of two symbols' values, or to S + 1, in a size position becomes
  `input.size(d)` (the product of two, or size + 1), where input dim d is S;
- a symbol whose example value is 1 (a batch size) is only matched in the
  first position of a size list, since 1 also means "broadcast dim";
- `stop` of a slice equal to a symbol's value becomes that size.

It is a heuristic in the spirit of GraphNet's own "dimension generalization
passes": a size derived in another way (224 / 16 patches) stays pinned, and
the sample then fails at the other shapes; the harness reports that.
"""
from __future__ import annotations

import operator
import os
import types
from dataclasses import dataclass, field
from typing import Optional

import torch
from torch import fx

from .graphnet import Sample, make_tensor


@dataclass
class Constraints:
    symbols: list  # names, in file order
    examples: dict  # name -> example value
    relations: list  # sympy relations
    input_shapes: dict  # argument name -> [int | sympy expr]


def read_constraints(path: str) -> Optional[Constraints]:
    """The sample's input_tensor_constraints.py; None when it is absent or
    declares no dynamic dimension."""
    file = os.path.join(path, "input_tensor_constraints.py")
    if not os.path.exists(file):
        return None
    module = types.ModuleType("graphnet_constraints")
    with open(file) as f:
        exec(compile(f.read(), file, "exec"), module.__dict__)
    examples = getattr(module, "dynamic_dim_constraint_symbol2example_value", None) or {}
    if not examples:
        return None
    symbols = [str(s) for s in getattr(module, "dynamic_dim_constraint_symbols", examples)]
    shapes = {}
    for shape, name in getattr(module, "dynamic_dim_constraint_input_shapes", []):
        shapes[name] = list(shape)
    return Constraints(symbols=symbols, examples={str(k): int(v) for k, v in examples.items()},
                       relations=list(getattr(module, "dynamic_dim_constraint_relations", [])),
                       input_shapes=shapes)


def scale_value(value: int, step: int) -> int:
    """The value of a symbol in variant `step` (0 = the example). A value of
    1 (a batch size) doubles per step; larger values grow by a quarter per
    step, rounded to the largest power of two (at most 32) dividing the
    example value, so that image sizes stay multiples of their strides."""
    if step == 0:
        return value
    if value <= 1:
        return 2 ** step
    granule = min(32, value & -value)
    grow = max(granule, round(value * 0.25 * step / granule) * granule)
    return value + grow


def _satisfy_relations(constraints: Constraints, values: dict) -> Optional[dict]:
    """Adjusts `values` to the stated relations (solving each unmet one for
    its last symbol); None when that is not possible."""
    import sympy

    if not constraints.relations:
        return values
    values = dict(values)
    for relation in constraints.relations:
        subs = {sympy.Symbol(k): v for k, v in values.items()}
        if bool(relation.subs(subs)):
            continue
        free = sorted(relation.free_symbols, key=lambda s: str(s))
        if not free or not isinstance(relation, sympy.Equality):
            return None
        target = free[-1]
        rest = {s: v for s, v in subs.items() if s != target}
        solutions = sympy.solve(relation.subs(rest), target)
        ints = [int(s) for s in solutions if s.is_integer and s > 0]
        if not ints:
            return None
        values[str(target)] = ints[0]
    subs = {sympy.Symbol(k): v for k, v in values.items()}
    return values if all(bool(r.subs(subs)) for r in constraints.relations) else None


def derive_variants(constraints: Optional[Constraints], count: int) -> list:
    """Up to `count` symbol assignments {name: value}; the first is the
    example. Without constraints there is one, empty assignment."""
    if constraints is None:
        return [{}]
    variants = [dict(constraints.examples)]
    for step in range(1, count):
        values = {k: scale_value(v, step) for k, v in constraints.examples.items()}
        values = _satisfy_relations(constraints, values)
        if values is not None and values not in variants:
            variants.append(values)
    return variants


def concrete_shape(shape: list, values: dict) -> list:
    import sympy

    subs = {sympy.Symbol(k): v for k, v in values.items()}
    out = []
    for dim in shape:
        if isinstance(dim, int):
            out.append(dim)
        else:
            out.append(int(sympy.sympify(dim).subs(subs)))
    return out


def variant_inputs(sample: Sample, constraints: Optional[Constraints], values: dict,
                   seed: int = 0, device: str = "cpu") -> list:
    """The sample's forward arguments at one shape assignment: tensors whose
    shape names a symbol get the new shape (random, from their metadata);
    SymInt arguments equal to a symbol's example value take the new value;
    everything else is the sample's own input."""
    if constraints is None or values == constraints.examples:
        return list(sample.inputs)
    generator = torch.Generator().manual_seed(seed + 1)
    by_example = {}
    for name, example in constraints.examples.items():
        by_example.setdefault(example, values[name])
    inputs = []
    for name, original in zip(sample.arg_names, sample.inputs):
        if not isinstance(original, torch.Tensor):
            inputs.append(by_example.get(original, original))
            continue
        shape = constraints.input_shapes.get(name)
        if shape is None:
            inputs.append(original)
            continue
        new_shape = concrete_shape(shape, values)
        if new_shape == list(original.shape):
            inputs.append(original)
        else:
            inputs.append(make_tensor(sample.metas[name], generator, device, shape=new_shape))
    return inputs


# ------------------------------------------------------------- generalize


@dataclass
class GeneralizeReport:
    rewritten: dict = field(default_factory=dict)  # op -> literals rewritten

    @property
    def total(self) -> int:
        return sum(self.rewritten.values())

    def __str__(self) -> str:
        ops = ", ".join(f"{k} {v}" for k, v in sorted(self.rewritten.items()))
        return f"{self.total} pinned sizes rewritten" + (f" ({ops})" if ops else "")


_SIZE_LIST_METHODS = {"view", "reshape", "expand", "new_zeros", "new_ones", "new_empty",
                      "new_full"}
_SIZE_LIST_FUNCTIONS = {torch.zeros, torch.ones, torch.empty, torch.full, torch.rand,
                        torch.randn, torch.reshape}


def load_variant(path: str, index: int = 0):
    """One GraphNet sample at shape variant `index` (0: the example shape),
    for the one-sample scripts in bench/: (sample, constraints, the
    symbols' values, the inputs)."""
    from .graphnet import load_sample
    sample = load_sample(path)
    constraints = read_constraints(path)
    values = derive_variants(constraints, index + 1)[index]
    return sample, constraints, values, variant_inputs(sample, constraints, values)


def _symbol_sources(constraints: Constraints, placeholders: dict) -> dict:
    """symbol name -> (placeholder node, dim): the first input whose shape
    has the bare symbol at that dim."""
    import sympy

    sources = {}
    for arg, shape in constraints.input_shapes.items():
        node = placeholders.get(arg)
        if node is None:
            continue
        for d, dim in enumerate(shape):
            if isinstance(dim, sympy.Symbol) and str(dim) not in sources:
                sources[str(dim)] = (node, d)
    return sources


# Factory functions whose size arguments may be pinned literals. Plain
# torch.fx evaluates a call without tensor arguments at trace time and keeps
# its result as a constant; FactoryTracer records them as calls instead.
_FACTORIES = ("arange", "zeros", "ones", "full", "empty", "rand", "randn")


class FactoryTracer(fx.Tracer):
    """torch.fx tracer that records torch.arange / zeros / ones / full /
    empty / rand / randn as graph calls even when no argument is traced."""

    def trace(self, root, concrete_args=None):
        originals = {name: getattr(torch, name) for name in _FACTORIES}

        def recording(fn):
            def call(*args, **kwargs):
                return self.create_proxy("call_function", fn, args, kwargs)
            return call

        try:
            for name, fn in originals.items():
                setattr(torch, name, recording(fn))
            return super().trace(root, concrete_args)
        finally:
            for name, fn in originals.items():
                setattr(torch, name, fn)


def trace_module(module: torch.nn.Module) -> fx.GraphModule:
    tracer = FactoryTracer()
    graph = tracer.trace(module)
    name = type(module).__name__
    return fx.GraphModule(tracer.root, graph, name)


def generalize(module: torch.nn.Module, constraints: Optional[Constraints],
               record_factories: bool = True):
    """Returns (fx.GraphModule, GeneralizeReport): `module` traced with
    torch.fx (FactoryTracer unless `record_factories` is False) and its
    pinned sizes rewritten (see the module docstring). Raises when the
    module cannot be traced."""
    if record_factories:
        depth = torch._C._functorch.get_dynamic_layer_stack_depth()
        try:
            gm = trace_module(module)
        except Exception:
            # Some library code (vmap, ...) cannot take recorded factory
            # calls: plain torch.fx, with those calls as constants. A
            # graph that calls _vmap_increment_nesting itself (Dynamo's
            # output for vmap, e.g. whisper's causal mask) has pushed a
            # functorch layer that the failed trace never popped; left
            # there, every later torch.compile skips its frames ("Unsupported
            # functorch tracing attempt") and the sample runs in eager.
            torch._C._functorch.pop_dynamic_layer_stack_and_undo_to_depth(depth)
            gm = fx.symbolic_trace(module)
    else:
        gm = fx.symbolic_trace(module)
    report = GeneralizeReport()
    if constraints is None:
        return gm, report
    graph = gm.graph
    placeholders = {n.target: n for n in graph.nodes if n.op == "placeholder"}
    sources = _symbol_sources(constraints, placeholders)
    if not sources:
        return gm, report
    last_placeholder = [n for n in graph.nodes if n.op == "placeholder"][-1]
    size_nodes = {}

    def size_of(symbol: str) -> fx.Node:
        if symbol not in size_nodes:
            node, dim = sources[symbol]
            with graph.inserting_after(last_placeholder):
                size_nodes[symbol] = graph.call_method("size", (node, dim))
        return size_nodes[symbol]

    # value -> how to build it, for values > 1 that name one symbol (or a
    # product of two) unambiguously; batch symbols (value 1) separately.
    big, batch = {}, []
    ambiguous = set()
    for name in sources:
        v = constraints.examples[name]
        if v <= 1:
            batch.append(name)
        elif v in big and big[v] != (name,):
            ambiguous.add(v)
        else:
            big[v] = (name,)
    names = [n for n in sources if constraints.examples[n] > 1]
    for i, a in enumerate(names):
        for b in names[i:]:
            v = constraints.examples[a] * constraints.examples[b]
            if v not in big:
                big[v] = (a, b)
    for name in names:  # S + 1 (GraphNet's "plus_one" passes), when unambiguous
        v = constraints.examples[name] + 1
        if v not in big:
            big[v] = (name, "+1")
    for v in ambiguous:
        big.pop(v, None)

    def value_node(symbols: tuple, anchor: fx.Node) -> fx.Node:
        if symbols[-1] == "+1":
            with graph.inserting_before(anchor):
                return graph.call_function(operator.add, (size_of(symbols[0]), 1))
        nodes = [size_of(s) for s in symbols]
        if len(nodes) == 1:
            return nodes[0]
        with graph.inserting_before(anchor):
            return graph.call_function(operator.mul, tuple(nodes))

    def rewrite_sizes(values, anchor, kind):
        out = list(values)
        for i, v in enumerate(out):
            if type(v) is not int:
                continue
            if v in big:
                out[i] = value_node(big[v], anchor)
            elif v == 1 and i == 0 and len(batch) == 1:
                out[i] = size_of(batch[0])
            else:
                continue
            report.rewritten[kind] = report.rewritten.get(kind, 0) + 1
        return out

    def rewrite_slice(s, anchor):
        if isinstance(s, slice) and type(s.stop) is int and s.stop in big:
            report.rewritten["slice"] = report.rewritten.get("slice", 0) + 1
            return slice(s.start, value_node(big[s.stop], anchor), s.step)
        return s

    for node in list(graph.nodes):
        if node.op == "call_method" and node.target in _SIZE_LIST_METHODS and len(node.args) > 1:
            self_arg, sizes = node.args[0], node.args[1:]
            if node.target == "new_full":
                sizes = node.args[1]
                if isinstance(sizes, (list, tuple)):
                    node.args = (self_arg, type(sizes)(rewrite_sizes(sizes, node, node.target)),
                                 *node.args[2:])
                continue
            if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
                node.args = (self_arg, type(sizes[0])(rewrite_sizes(sizes[0], node, node.target)))
            else:
                node.args = (self_arg, *rewrite_sizes(sizes, node, node.target))
        elif node.op == "call_function" and node.target in _SIZE_LIST_FUNCTIONS:
            name = node.target.__name__
            if node.target is torch.reshape:
                if len(node.args) > 1 and isinstance(node.args[1], (list, tuple)):
                    node.args = (node.args[0], type(node.args[1])(
                        rewrite_sizes(node.args[1], node, name)), *node.args[2:])
            elif node.args and isinstance(node.args[0], (list, tuple)):
                node.args = (type(node.args[0])(rewrite_sizes(node.args[0], node, name)),
                             *node.args[1:])
            elif node.target is not torch.full:
                count = len([a for a in node.args if type(a) is int])
                node.args = (*rewrite_sizes(node.args[:count], node, name), *node.args[count:])
        elif node.op == "call_function" and node.target is torch.arange:
            hits = sum(type(a) is int and a in big for a in node.args)
            node.args = tuple(value_node(big[a], node) if type(a) is int and a in big else a
                              for a in node.args)
            if hits:
                report.rewritten["arange"] = report.rewritten.get("arange", 0) + hits
        elif node.op == "call_function" and node.target is operator.getitem:
            index = node.args[1]
            if isinstance(index, tuple):
                index = tuple(rewrite_slice(s, node) for s in index)
            else:
                index = rewrite_slice(index, node)
            node.args = (node.args[0], index)
    graph.lint()
    gm.recompile()
    return gm, report
