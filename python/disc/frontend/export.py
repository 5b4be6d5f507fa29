"""disc.export: one shape-polymorphic graph (torch.export), compiled once,
as an artifact that runs without the compiler (docs/artifacts.md).

    artifact = disc.export(model, (x,))          # every input dim dynamic
    artifact.save("model.disc")
    run = disc.load("model.disc")                 # no MLIR/LLVM loaded
    y = run(torch.randn(7, 128))                  # any valid shape

The exported graph is imported whole (no partitions, no eager fallback: an
op DISC cannot compile is an error naming it). Parameters, buffers and
constant tensors become weights stored in the artifact; callers pass the
model's own inputs, flattened as torch.export flattened them.
"""
from __future__ import annotations

import json
import os
import contextlib
import time
import warnings
from dataclasses import dataclass

import torch
import torch.fx as fx
import torch.utils._pytree as pytree

from .. import _log, _runtime

# Nodes torch.export leaves that check nothing DISC needs (metadata checks,
# ranges of data-dependent sizes). Its runtime assertions on sizes
# (aten._assert_scalar) stay: they become host checks in the program.
_EXPORT_CHECKS = {
    torch.ops.aten.sym_constrain_range_for_size.default,
    torch.ops.aten.sym_constrain_range.default,
    torch.ops.aten._assert_tensor_metadata.default,
}


def _default_dynamic_shapes(args, kwargs):
    """Every dim of every tensor input Dim.AUTO: dynamic unless the model's
    code pins it."""
    auto = torch.export.Dim.AUTO

    def spec(value):
        if isinstance(value, torch.Tensor):
            return {d: auto for d in range(value.dim())}
        return None

    dyn_args = pytree.tree_map(spec, tuple(args), is_leaf=lambda v: isinstance(v, torch.Tensor))
    if kwargs:
        dyn_kwargs = pytree.tree_map(spec, dict(kwargs),
                                     is_leaf=lambda v: isinstance(v, torch.Tensor))
        return {**{f"__arg{i}": a for i, a in enumerate(dyn_args)}, **dyn_kwargs}, True
    return dyn_args, False


@contextlib.contextmanager
def _unguarded_conv_backend():
    """The fake convolution picks the backend eager would use and that
    backend's memory format (to give its output eager's strides), and both
    compare sizes: a batch of 1 takes Slow2d, more takes oneDNN, so the
    export gets a guard such as `batch <= 1` and a range that stops the
    artifact at batch 2. DISC picks its own kernels and layouts, so both
    choices are made on the example's sizes, with no guard."""
    select = torch._C._select_conv_backend
    memory_format = torch._C._conv_determine_backend_memory_format

    def hinted(t):
        if not isinstance(t, torch.Tensor) or not any(
                isinstance(v, torch.SymInt) for v in (*t.shape, *t.stride())):
            return t
        sizes = [s.node.hint if isinstance(s, torch.SymInt) else s for s in t.shape]
        strides = [s.node.hint if isinstance(s, torch.SymInt) else s for s in t.stride()]
        if any(v is None for v in sizes + strides):
            return None
        return torch.empty_strided(sizes, strides, dtype=t.dtype, device=t.device)

    def on_hints(original):
        def call(input, weight, *args, **kwargs):
            hinted_input, hinted_weight = hinted(input), hinted(weight)
            if hinted_input is None or hinted_weight is None:
                return original(input, weight, *args, **kwargs)
            return original(hinted_input, hinted_weight, *args, **kwargs)
        return call

    torch._C._select_conv_backend = on_hints(select)
    torch._C._conv_determine_backend_memory_format = on_hints(memory_format)
    try:
        yield
    finally:
        torch._C._select_conv_backend = select
        torch._C._conv_determine_backend_memory_format = memory_format


def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    # at::group_norm makes its input contiguous in its suggested memory
    # format, and suggesting one guards batch <= 1 and H, W > 1.
    n, c = input.shape[0], input.shape[1]
    hw = 1
    for size in input.shape[2:]:
        hw = hw * size
    return torch.ops.aten.native_group_norm(input, weight, bias, n, c, hw, num_groups, eps)[0]


def _adaptive_avg_pool2d(input, output_size):
    # at::adaptive_avg_pool2d takes a mean for a 1x1 output, in the input's
    # suggested memory format (which guards batch <= 1 and H, W > 1).
    if all(isinstance(s, int) and s == 1 for s in output_size):
        return input.mean([-2, -1], keepdim=True)
    return torch.ops.aten._adaptive_avg_pool2d(input, output_size)


@contextlib.contextmanager
def _unguarded_composites():
    """Composite ops whose C++ kernels ask memory-format questions of
    symbolic sizes (guards that only pick a kernel's layout) traced as the
    same math without the question, for the length of an export."""
    key = torch._C.DispatchKey.CompositeImplicitAutograd
    kernels = {torch.ops.aten.group_norm.default: _group_norm,
               torch.ops.aten.adaptive_avg_pool2d.default: _adaptive_avg_pool2d}
    saved = {}
    for op, kernel in kernels.items():
        saved[op] = op.py_kernels.get(key)
        op.py_kernels[key] = kernel
        op._dispatch_cache.clear()
    try:
        yield
    finally:
        for op, kernel in saved.items():
            if kernel is None:
                op.py_kernels.pop(key, None)
            else:
                op.py_kernels[key] = kernel
            op._dispatch_cache.clear()


def _without_unit_dims(args, dynamic_shapes):
    """The example inputs with every dynamic dim of size 1 repeated to a
    size no input dim has, or None when there is none (or the spec is not
    positional). PyTorch's code asks questions of sizes that a size of 1
    answers specially (is this transposed tensor contiguous? a guard
    `N == 1` in multi-head attention's batch-second layout), and the graph
    traced at 1 then holds for 1 only: a second trace for every other
    size."""
    if not isinstance(dynamic_shapes, (tuple, list)) or len(dynamic_shapes) != len(args):
        return None
    sizes = {int(d) for a in args if isinstance(a, torch.Tensor) for d in a.shape}
    hint = next(n for n in range(2, 1 << 20) if n not in sizes)
    out, changed = [], False
    for a, spec in zip(args, dynamic_shapes):
        if isinstance(a, torch.Tensor) and isinstance(spec, dict):
            for d, dim_spec in spec.items():
                if dim_spec is not None and a.shape[d] == 1 and _may_grow(dim_spec, hint):
                    a = a.repeat_interleave(hint, dim=d)
                    changed = True
        out.append(a)
    return tuple(out) if changed else None


def _may_grow(dim_spec, size) -> bool:
    """Whether a dynamic_shapes entry allows `size` (Dim.AUTO, or a Dim
    whose range holds it)."""
    if dim_spec is torch.export.Dim.AUTO or dim_spec is torch.export.Dim.DYNAMIC:
        return True
    lo, hi = getattr(dim_spec, "min", None), getattr(dim_spec, "max", None)
    return (lo is None or lo <= size) and (hi is None or size <= hi)


def _accepts(exported, args) -> bool:
    """Whether the example inputs satisfy the exported graph's input shapes:
    static sizes equal, every symbol in its range, one value per symbol and
    every derived size (2 * s0) consistent."""
    import sympy

    from torch.export.graph_signature import InputKind

    placeholders = [n for n in exported.graph.nodes if n.op == "placeholder"]
    users = [n for n, spec in zip(placeholders, exported.graph_signature.input_specs)
             if spec.kind == InputKind.USER_INPUT]
    flat = [a for a in pytree.tree_leaves(tuple(args))]
    if len(users) != len(flat):
        return False
    value, derived = {}, []
    for node, arg in zip(users, flat):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or not isinstance(arg, torch.Tensor):
            continue
        if val.dim() != arg.dim():
            return False
        for size, actual in zip(val.shape, arg.shape):
            expr = size.node.expr if isinstance(size, torch.SymInt) else sympy.Integer(size)
            if isinstance(expr, sympy.Symbol):
                if value.setdefault(expr, int(actual)) != int(actual):
                    return False
                vr = exported.range_constraints.get(expr)
                if vr is not None and not (vr.lower <= int(actual) <= vr.upper):
                    return False
            else:
                derived.append((expr, int(actual)))
    return all(expr.xreplace({k: sympy.Integer(v) for k, v in value.items()}) == actual
               for expr, actual in derived)


def trace(model, args, kwargs=None, dynamic_shapes=None):
    """torch.export with every dim dynamic (unless given `dynamic_shapes`)
    and no 0/1 specialisation, decomposed to core ATen with DISC's table."""
    from torch.fx.experimental import _config as fx_config

    from .backend import decompositions

    kwargs = kwargs or {}
    if dynamic_shapes is None:
        dyn, by_name = _default_dynamic_shapes(args, kwargs)
        if by_name:
            # torch.export names positional args by the forward's parameters.
            import inspect

            params = list(inspect.signature(model.forward).parameters)
            dyn = {(params[int(k[5:])] if k.startswith("__arg") else k): v
                   for k, v in dyn.items()}
        dynamic_shapes = dyn
    with fx_config.patch(backed_size_oblivious=True), _unguarded_conv_backend(), \
            _unguarded_composites():
        exported = None
        hinted = _without_unit_dims(args, dynamic_shapes)
        if hinted is not None:
            try:
                exported = torch.export.export(model, hinted, kwargs,
                                               dynamic_shapes=dynamic_shapes, strict=False)
            except Exception as e:  # the model's code needs the 1: trace at it
                _log.log("recompiles", "disc.export: tracing with the dims of size 1 at "
                         f"another size failed ({type(e).__name__}); tracing at 1")
            if exported is not None and not _accepts(exported, args):
                _log.log("recompiles", "disc.export: the graph traced with the dims of size 1 "
                         "at another size does not take the example; tracing at 1")
                exported = None
        if exported is None:
            exported = torch.export.export(model, tuple(args), kwargs,
                                           dynamic_shapes=dynamic_shapes, strict=False)
        with warnings.catch_warnings():
            # PyTorch's own deprecation inside run_decompositions (2.13).
            warnings.filterwarnings("ignore", message=".*isinstance\\(treespec, LeafSpec\\)",
                                    category=FutureWarning)
            return exported.run_decompositions(decompositions())


def _tensor_bytes(t: torch.Tensor) -> bytes:
    t = t.detach().to("cpu").contiguous()
    if t.numel() == 0:
        return b""
    return t.reshape(-1).view(torch.uint8).numpy().tobytes()


def _finite_int(value):
    """A sympy bound as an int, or None when it is infinite."""
    try:
        return int(value)
    except (AttributeError, OverflowError, TypeError, ValueError):
        return None


def _ranges(exported, user_placeholders, arg_index):
    """(arg, dim, min, max) for every user input dim that is a plain symbol
    with a range torch.export derived; max -1 = unbounded."""
    import sympy

    ranges = []
    constraints = exported.range_constraints
    for node in user_placeholders:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        for d, size in enumerate(val.shape):
            if not isinstance(size, torch.SymInt):
                continue
            expr = size.node.expr
            if not isinstance(expr, sympy.Symbol) or expr not in constraints:
                continue
            vr = constraints[expr]
            lo, hi = _finite_int(vr.lower), _finite_int(vr.upper)
            ranges.append((arg_index[node], d, max(lo or 0, 0),
                           hi if hi is not None and hi < 2**62 else -1))
    return ranges


@dataclass
class Lowered:
    """An exported model as one DISC program, before compilation."""
    exported: object          # torch.export.ExportedProgram (decomposed)
    text: str                 # the disc-dialect MLIR
    # Per argument of the program: ("input", i) for the i-th flattened
    # user input, ("weight", name) for a parameter/buffer/constant.
    sources: list
    weights: dict             # name -> tensor
    user_nodes: list
    names: list               # per argument: the input's or the weight's name
    ranges: list              # (argument, dim, min, max): torch.export's ranges
    trace_seconds: float
    constants: dict           # flat input index -> the scalar value the graph assumes


def _fill_from_tensors(graph) -> None:
    """aten.full whose fill value is a tensor's element read on the host
    (`torch.full(shape, t[0])`: _local_scalar_dense, a data-dependent
    scalar) becomes a broadcast of that element, converted to the fill's
    dtype: the value stays on the device side of the program instead of
    being a host scalar the program cannot produce."""
    aten = torch.ops.aten
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not aten.full.default:
            continue
        shape, value = node.args[0], node.args[1]
        if not (isinstance(value, torch.fx.Node)
                and value.target is aten._local_scalar_dense.default):
            continue
        source = value.args[0]
        dtype = node.kwargs.get("dtype") or torch.get_default_dtype()
        with graph.inserting_before(node):
            element = graph.call_function(aten.reshape.default, (source, []))
            element.meta["val"] = source.meta["val"].reshape([])
            converted = graph.call_function(aten._to_copy.default, (element,),
                                            {"dtype": dtype})
            converted.meta["val"] = element.meta["val"].to(dtype)
            filled = graph.call_function(aten.expand.default, (converted, shape))
            filled.meta["val"] = node.meta["val"]
            copied = graph.call_function(aten.clone.default, (filled,))
            copied.meta["val"] = node.meta["val"]
        node.replace_all_uses_with(copied)
        graph.erase_node(node)


def lower(model, args, kwargs=None, dynamic_shapes=None) -> Lowered:
    """torch.export (trace) and import of the whole graph into one program."""
    import disc
    from torch.export.graph_signature import InputKind, OutputKind

    from .emitter import ImportError_
    from .importer import import_graph

    start = time.perf_counter()
    with torch.no_grad():
        exported = trace(model, args, kwargs, dynamic_shapes)
    trace_seconds = time.perf_counter() - start
    sig = exported.graph_signature
    for spec in sig.output_specs:
        if spec.kind != OutputKind.USER_OUTPUT:
            raise disc.DiscError(f"the exported model updates {spec.target} "
                                 f"({spec.kind.name}); export it in eval mode, without "
                                 "in-place updates of buffers or inputs")
    gm = exported.graph_module
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target in _EXPORT_CHECKS:
            gm.graph.erase_node(node)
    _fill_from_tensors(gm.graph)
    gm.graph.eliminate_dead_code()
    gm.recompile()

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    state = dict(exported.state_dict)
    state.update(exported.constants)
    weight_of = {}   # placeholder -> name
    user_nodes = []
    constants = {}   # flat input index -> the value the trace specialised on
    for node, spec in zip(placeholders, sig.input_specs):
        if spec.kind == InputKind.USER_INPUT:
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor):
                if isinstance(val, (bool, int, float)) or val is None:
                    # A Python scalar input: torch.export specialised the
                    # graph on its value; calls must pass that value.
                    constants[len(user_nodes)] = val
                else:
                    raise disc.DiscError(f"input {spec.arg.name} is a {type(val).__name__}; "
                                         "disc.export takes tensors and Python scalars")
            user_nodes.append(node)
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            weight_of[node] = spec.target
        else:
            raise disc.DiscError(f"input {spec.arg.name} is a {spec.kind.name}, which "
                                 "disc.export does not support")
    try:
        imported = import_graph(gm, strict_asserts=True)
    except ImportError_ as e:
        raise disc.CompileError(f"disc.export: the exported graph has an op DISC cannot "
                                f"compile: {e}") from e
    _log.log("import", f"disc.export:\n{imported.text}")
    arg_index, sources = {}, []
    for i, plan in enumerate(imported.args):
        if plan.kind == "seed":
            raise disc.CompileError("disc.export: the exported graph has random ops (dropout "
                                    "in training mode?); export the model in eval mode")
        node = placeholders[plan.placeholder]
        if plan.kind != "tensor":
            raise disc.CompileError(f"disc.export: symbol {node.name} is not the size of "
                                    "any input dim")
        arg_index[node] = i
        if node in weight_of:
            sources.append(("weight", weight_of[node]))
        else:
            sources.append(("input", user_nodes.index(node)))
    weights = {name: state[name] for kind, name in sources if kind == "weight"}
    names = [what if kind == "weight" else user_nodes[what].name for kind, what in sources]
    return Lowered(exported, imported.text, sources, weights, user_nodes, names,
                   _ranges(exported, user_nodes, arg_index), trace_seconds, constants)


def export(model, args, kwargs=None, dynamic_shapes=None, *, target: str = "cpu"):
    """Traces `model` once with torch.export (every input dim dynamic unless
    the model pins it, or as `dynamic_shapes` says), compiles the whole
    graph with DISC and returns a disc.Artifact: call it, `save(path)` it,
    `disc.load(path)` it in another process."""
    import disc

    if target != "cpu":
        raise ValueError("disc.export supports target 'cpu' (cuda artifacts with stored "
                         "weights are not supported yet)")
    lowered = lower(model, args, kwargs, dynamic_shapes)
    weights = []
    for i, (kind, what) in enumerate(lowered.sources):
        if kind == "weight":
            tensor = lowered.weights[what]
            weights.append((i, what, _DTYPE_NAMES[tensor.dtype], list(tensor.shape),
                            _tensor_bytes(tensor)))
    exported = lowered.exported
    metadata = {
        "python.in_spec": pytree.treespec_dumps(exported.call_spec.in_spec),
        "python.out_spec": pytree.treespec_dumps(exported.call_spec.out_spec),
        "python.inputs": json.dumps([n.name for n in lowered.user_nodes]),
        "python.constant_inputs": json.dumps({str(k): v for k, v in lowered.constants.items()}),
        "torch.version": torch.__version__,
        "export.trace_seconds": f"{lowered.trace_seconds:.6f}",
        "model": type(model).__name__,
    }
    exe = disc.compile_mlir(lowered.text, source_name="export.mlir", target=target,
                            _bind=dict(metadata=metadata, weights=weights,
                                       arg_names=lowered.names, ranges=lowered.ranges))
    artifact = Artifact(exe._artifact, "disc.export", program=exe._impl)
    artifact.trace_seconds = lowered.trace_seconds
    artifact.compile_seconds = exe.compile_seconds
    return artifact


_DTYPE_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
                torch.float64: "f64", torch.bool: "i1", torch.int8: "i8", torch.int16: "i16",
                torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8"}


class Artifact:
    """A compiled, shape-polymorphic model: call it with the model's inputs
    (torch tensors, as the exported call took them); `save(path)` writes it
    to one file, `disc.load(path)` reads it back without the compiler."""

    def __init__(self, data: bytes, origin: str, program=None):
        self._data = data
        self._program = program if program is not None else _runtime.load_program(data, origin)
        meta = self._program.metadata
        self._in_spec = (pytree.treespec_loads(meta["python.in_spec"])
                         if "python.in_spec" in meta else None)
        self._out_spec = (pytree.treespec_loads(meta["python.out_spec"])
                          if "python.out_spec" in meta else None)
        self._constants = {int(k): v for k, v in
                           json.loads(meta.get("python.constant_inputs", "{}")).items()}
        self.trace_seconds = float(meta.get("export.trace_seconds", 0) or 0)
        self.compile_seconds = float(meta.get("compile.seconds", 0) or 0)

    def __call__(self, *args, **kwargs):
        import disc

        if self._in_spec is not None:
            flat, spec = pytree.tree_flatten((args, kwargs))
            if spec != self._in_spec:
                raise disc.InvocationError(
                    f"the artifact takes inputs structured as {self._in_spec}, got {spec}")
        else:
            flat = list(args)
        check_constants(flat, self._constants)
        flat = [x for i, x in enumerate(flat) if i not in self._constants]
        outputs = disc.Executable(self._program)(*flat)
        if self._out_spec is not None:
            return pytree.tree_unflatten(list(outputs), self._out_spec)
        return outputs

    def save(self, path) -> None:
        """Writes the artifact to `path` (a temporary file renamed into
        place: a reader never sees a partial file)."""
        path = os.fspath(path)
        tmp = f"{path}.tmp.{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(self._data)
        os.replace(tmp, path)

    @property
    def metadata(self) -> dict:
        return dict(self._program.metadata)

    @property
    def load_seconds(self) -> float:
        return self._program.load_seconds

    @property
    def input_names(self) -> list:
        return json.loads(self._program.metadata.get("python.inputs", "[]"))

    @property
    def signature(self):
        """([(name, dtype, dims, dim_classes, min_sizes, max_sizes)],
        [(dtype, rank)]) of the inputs callers pass; dims -1 = dynamic,
        max -1 = unbounded."""
        return self._program.signature

    def __repr__(self):
        args, results = self.signature
        shapes = ", ".join(f"{name}: {dtype}{['?' if d < 0 else d for d in dims]}"
                           for name, dtype, dims, *_ in args)
        return f"<disc.Artifact ({shapes}) -> {len(results)} output(s)>"


def check_constants(flat, constants) -> None:
    """The Python scalar inputs the graph was specialised on must come back
    with the same values."""
    import disc

    for i, want in constants.items():
        got = flat[i] if i < len(flat) else None
        if got != want or type(got) is not type(want):
            raise disc.InvocationError(f"input {i} is {got!r}; the graph was traced with "
                                       f"{want!r} and assumes it")


def load(path) -> Artifact:
    """Reads an artifact written by Artifact.save. Loads no compiler; a
    truncated, corrupted or foreign file raises disc.ArtifactError."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise _runtime.ArtifactError(f"{path}: cannot read ({e.strerror})") from e
    return Artifact(data, path)
