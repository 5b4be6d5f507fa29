"""torch.compile backend: AOTAutograd with PyTorch's decompositions, then
partitioning into DISC-compiled regions and eager fallbacks."""
from __future__ import annotations

import collections
import functools
import itertools
import operator
import os
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch
import torch.fx as fx

import disc as _disc

from .. import _log
from .emitter import ImportError_, shape_of
from .importer import fake_value, import_graph, symint_carrier
from . import lowerings, symbolic

aten = torch.ops.aten

# ----------------------------------------------------------------- counters

_lock = threading.Lock()
_counters = collections.Counter()
_fallback_ops: collections.Counter = collections.Counter()
_graph_ids = itertools.count()


def stats() -> dict:
    with _lock:
        return {
            "compiled_nodes": _counters["compiled_nodes"],
            "kernels": _counters["kernels"],
            "fallback_nodes": _counters["fallback_nodes"],
            "graphs": _counters["graphs"],
            "partitions": _counters["partitions"],
            "training_graphs": _counters["training_graphs"],
            "eager_calls": _counters["eager_calls"],
            "eager_views": _counters["eager_views"],
            "inputs_updated_in_place": _counters["inputs_updated_in_place"],
            "inputs_written_by_kernels": _counters["inputs_written_by_kernels"],
            "fallback_ops": dict(_fallback_ops),
        }


def _count(**values) -> None:
    with _lock:
        _counters.update(values)


# ----------------------------------------------------------- decompositions

# Composite ops decomposed by PyTorch's own tables (torch._decomp) on top
# of the core-ATen set, so that DISC sees elementwise ops, reductions and
# matmuls it can fuse instead of one opaque kernel per composite.
_EXTRA_DECOMPOSITIONS = [
    aten.native_layer_norm, aten.native_group_norm, aten._softmax, aten._log_softmax,
    aten.gelu, aten._native_batch_norm_legit_no_training, aten._native_batch_norm_legit,
    aten.native_batch_norm, aten._native_batch_norm_legit_functional, aten.addmm, aten.linalg_vector_norm, aten.mean, aten.var,
    aten.var_mean, aten.std, aten.std_mean, aten.embedding, aten.split_with_sizes,
    aten.leaky_relu, aten.elu, aten.silu, aten.hardswish, aten.hardsigmoid, aten.mish,
    aten.upsample_nearest2d, aten.upsample_bilinear2d, aten.upsample_nearest1d,
    aten.upsample_linear1d, aten.upsample_bicubic2d, aten.logsumexp, aten.native_dropout,
    aten.baddbmm, aten.addbmm, aten.clamp_min, aten.clamp_max, aten.glu, aten.softplus,
    aten.hardtanh, aten.rsub, aten.masked_fill, aten.index_select, aten.repeat, aten.tril,
    aten.triu, aten.roll, aten.t, aten.transpose, aten.expand_as, aten.squeeze, aten.unbind,
    aten.stack, aten.hstack, aten.vstack, aten.flatten, aten.meshgrid, aten.channel_shuffle,
    aten.pixel_shuffle, aten.pixel_unshuffle, aten.instance_norm, aten.norm, aten.cumsum,
]


@functools.lru_cache(maxsize=2)
def decompositions(training: bool = False) -> dict:
    """PyTorch's core-ATen table, the composites above, and for training
    graphs the backward ops PyTorch leaves whole (backward.py)."""
    from torch._decomp import core_aten_decompositions, get_decompositions

    from . import backward, foreach

    table = dict(core_aten_decompositions())
    table.update(get_decompositions(_EXTRA_DECOMPOSITIONS))
    table.update(foreach.table())
    from . import cuda_attention

    if training:
        table.update(backward.table())
        table.update(cuda_attention.training_table())
    else:
        table.update(cuda_attention.table())
    # Ops DISC lowers better than their decompositions (PyTorch's CPU SDPA
    # kernel becomes disc.attention: no [L, S] scores in memory). In
    # training the attention's backward needs its softmax statistics, so
    # SDPA is decomposed into the math whose backward DISC compiles.
    kept = () if training else (aten._scaled_dot_product_flash_attention_for_cpu.default,)
    # PyTorch's bounds-unchecked indexing (what upsampling and padding
    # decompose into) stays itself rather than becoming aten.index, so the
    # lowering can leave out the range check (lowerings.py,
    # _UNCHECKED_INDEXING).
    for op in (*kept, aten._unsafe_index.Tensor, aten._unsafe_index_put.default,
               aten.embedding.default, aten.index_select.default, aten.repeat.default,
               aten.split_with_sizes.default, aten.leaky_relu.default, aten.clamp_min.default,
               aten.clamp_max.default, aten.hardtanh.default, aten.cumsum.default,
               aten.unbind.int, aten.t.default, aten.squeeze.dims, aten.squeeze.dim,
               aten.squeeze.default, aten.transpose.int, aten.roll.default):
        table.pop(op, None)
    for op in (aten.linspace.default, aten.linspace.Tensor_Tensor, aten.linspace.Tensor_Scalar,
               aten.linspace.Scalar_Tensor):
        table[op] = _integral_linspace(table[op])
    table[aten.meshgrid.default] = _meshgrid
    table[aten.meshgrid.indexing] = _meshgrid
    table[aten.silu.default] = _silu
    table[aten.silu_backward.default] = _silu_backward
    return table


def _silu(x):
    """SiLU as eager's CPU and CUDA kernels compute it, x / (1 + exp(-x)),
    not PyTorch's decomposition x * sigmoid(x) (one more rounding). Run in
    eager, the decomposed training graph of the GraphNet sample yolo11n-pose
    then has 86 of its 282 weight gradients more than twice eager's error
    from a float64 run (up to 4.9x); with eager's formula, 1 (as with
    Inductor, which keeps SiLU whole)."""
    return aten.div.Tensor(x, _one_plus_exp_neg(x))


def _one_plus_exp_neg(x):
    return aten.add.Tensor(aten.exp.default(aten.neg.default(x)), 1)


def _silu_backward(grad_output, x):
    """SiLU's gradient as eager's kernels compute it: (grad * s) * (1 + x *
    (1 - s)), s = 1 / (1 + exp(-x)); PyTorch's decomposition multiplies
    grad last."""
    sigmoid = aten.reciprocal.default(_one_plus_exp_neg(x))
    slope = aten.add.Tensor(aten.mul.Tensor(x, aten.rsub.Scalar(sigmoid, 1)), 1)
    return aten.mul.Tensor(aten.mul.Tensor(grad_output, sigmoid), slope)


def _meshgrid(tensors, indexing="ij"):
    """meshgrid as views and expands. PyTorch's reference decomposition
    emits prims.broadcast_in_dim, a view op torch.export's functionalisation
    rejects (disc.export of yolov8n, RTMO-s)."""
    tensors = list(tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', not {indexing!r}")
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = [t.numel() for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[i] = -1
        grids.append(aten.expand.default(aten.view.default(t, view), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


def _integral_linspace(decomposition):
    """Linspace into an integer dtype. Eager converts start and end to that
    dtype first (4.3 becomes 4), steps in double, and its vectorised loop
    then adds the step converted to the integer type: unless the step is a
    whole number, its values depend on the CPU's vector width. DISC computes
    the whole-number case exactly as eager does and leaves the others to
    eager (the node stays an aten.linspace with a logged reason); PyTorch's
    reference decomposition, which interpolates from 4.3 in float32, agrees
    with neither."""
    def linspace(start, end, steps, *args, dtype=None, device=None, **kwargs):
        integral = dtype is not None and not dtype.is_floating_point \
            and not dtype.is_complex and dtype != torch.bool
        if not integral or not isinstance(steps, int) or steps < 2:
            return decomposition(start, end, steps, *args, dtype=dtype, device=device, **kwargs)
        if isinstance(start, torch.Tensor) or isinstance(end, torch.Tensor):
            return NotImplemented
        start, end = int(start), int(end)
        if (end - start) % (steps - 1) != 0:
            return NotImplemented
        step = (end - start) // (steps - 1)
        return (torch.arange(steps, dtype=torch.int64, device=device) * step + start).to(dtype)
    return linspace


# ----------------------------------------------------------------- options

@dataclass
class Options:
    dump_dir: Optional[str] = None
    # Partitions whose nodes are all free in eager (views, getitem) stay eager.
    skip_view_only_partitions: bool = True
    # Debugging: every compiled partition also runs its FX graph in eager
    # and raises disc.VerificationError naming the partition and output that
    # differ (DISC_VERIFY=1). Slow; finds which partition computes wrong.
    verify: Optional[bool] = None

    @classmethod
    def from_kwargs(cls, **kwargs) -> "Options":
        unknown = set(kwargs) - set(cls.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown disc option(s): {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(cls.__dataclass_fields__)}")
        opts = cls(**kwargs)
        if opts.dump_dir is None:
            opts.dump_dir = os.environ.get("DISC_DUMP_DIR") or None
        if opts.verify is None:
            opts.verify = os.environ.get("DISC_VERIFY", "") not in ("", "0")
        return opts


# ---------------------------------------------------------------- reports

@dataclass
class Fallback:
    node: str
    op: str
    reason: str


@dataclass
class GraphReport:
    graph_id: int
    compiled_nodes: int = 0
    fallback_nodes: int = 0
    partitions: int = 0
    fallbacks: list = field(default_factory=list)


_report_sinks: list = []  # explain() listens here


def _emit_report(report: GraphReport) -> None:
    for sink in list(_report_sinks):
        sink(report)


# ------------------------------------------------------------ the backend

def backend(gm: fx.GraphModule, example_inputs, **options):
    """The `"disc"` torch.compile backend. Inference graphs compile into one
    forward; a graph that needs autograd (grad mode on and an input that
    requires grad) becomes AOTAutograd's joint graph, split by PyTorch's
    min-cut rematerialisation partitioner (as Inductor does) into a forward
    and a backward graph, each compiled by DISC with symbolic shapes kept."""
    opts = Options.from_kwargs(**options)
    graph_id = next(_graph_ids)
    from torch._functorch.aot_autograd import aot_module_simplified

    def fw_compiler(aten_gm: fx.GraphModule, aten_inputs):
        return compile_aten_graph(aten_gm, graph_id, opts)

    needs_grad = torch.is_grad_enabled() and any(
        isinstance(x, torch.Tensor) and x.requires_grad for x in example_inputs)
    if not needs_grad:
        # Input mutations (an optimizer step's parameters and state) stay in
        # the graph as copy_ nodes, which the compiled calls apply in place
        # (_fold_input_mutations) instead of AOTAutograd's eager epilogue.
        compiled = aot_module_simplified(gm, example_inputs, fw_compiler=fw_compiler,
                                         decompositions=decompositions(),
                                         keep_inference_input_mutations=True)
        # Counted once traced: Dynamo calls the backend again after an
        # attempt it abandons (TensorifyScalarRestartAnalysis, when a float
        # scalar input becomes a tensor), and that attempt is no graph.
        _count(graphs=1)
        return compiled
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    _log.log("training", f"graph {graph_id}: autograd is needed; the joint graph is split "
             "into a forward and a backward graph, both compiled by DISC")

    from torch._functorch.aot_autograd import make_boxed_func

    # Boxed (one list argument): AOTAutograd's training runtime calls its
    # compiled halves that way, and frees the inputs it no longer needs.
    def forward_compiler(aten_gm: fx.GraphModule, aten_inputs):
        return make_boxed_func(compile_aten_graph(aten_gm, graph_id, opts, role="forward"))

    def backward_compiler(aten_gm: fx.GraphModule, aten_inputs):
        return make_boxed_func(compile_aten_graph(aten_gm, graph_id, opts, role="backward"))

    # Mutations of inputs that do not require grad (batch norm's running
    # statistics) stay in the forward graph as copy_ nodes too, as Inductor
    # has them: the forward's call computes them in the buffers' memory
    # instead of returning them for AOTAutograd's eager copy_ per buffer.
    compiled = aot_module_simplified(gm, example_inputs, fw_compiler=forward_compiler,
                                     bw_compiler=backward_compiler,
                                     inference_compiler=fw_compiler,
                                     partition_fn=min_cut_rematerialization_partition,
                                     decompositions=decompositions(training=True),
                                     keep_inference_input_mutations=True)
    _count(graphs=1, training_graphs=1)  # once traced, as above
    return compiled


_warned = set()


def _warn_once(message: str) -> None:
    import warnings

    key = message.split(":", 1)[-1]
    if key not in _warned:
        _warned.add(key)
        warnings.warn("disc: " + message.split(": ", 1)[-1], stacklevel=3)


# ------------------------------------------------------------ partitioning

_ASSERT_TARGETS = (aten._assert_scalar.default, aten.sym_constrain_range_for_size.default,
                   aten._assert_tensor_metadata.default)


def _is_shape_node(node: fx.Node) -> bool:
    """Host-side shape arithmetic (SymInt values) and assertions: they stay
    in Python in every case and count neither as compiled nor fallback."""
    val = fake_value(node)
    if isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)):
        return True
    return node.target in _ASSERT_TARGETS or node.target is aten.sym_size.int


def _importable_shape_node(node: fx.Node) -> bool:
    """A shape node whose value the importer can compute inside a partition
    (a SymInt, or a SymFloat of sizes: symbolic.is_computable_float). Left
    in Python, a SymFloat computed from a partition's output sizes (a batch
    norm's n / (n - 1)) and used by later compiled nodes cut the graph in
    two partitions around it."""
    if node.target in _ASSERT_TARGETS or not node.users:
        return False
    val = fake_value(node)
    if isinstance(val, torch.SymFloat):
        return symbolic.is_computable_float(val.node.expr)
    return isinstance(val, (torch.SymInt, int))


def _duplicate_shape_nodes(gm: fx.GraphModule) -> None:
    """Gives every importable shape node one user, copying it for the
    others, so that each partition computes its own sizes and no partition
    has to return a SymInt (which compiled code cannot produce)."""
    for node in reversed(list(gm.graph.nodes)):
        if node.op != "call_function" or not _is_shape_node(node) \
                or not _importable_shape_node(node) or len(node.users) < 2:
            continue
        for user in list(node.users)[1:]:
            with gm.graph.inserting_after(node):
                copy = gm.graph.node_copy(node)
            copy.meta = dict(node.meta)
            user.replace_input_with(node, copy)


def propose_partitions(gm: fx.GraphModule, supported: set, general: bool = False,
                       graph_id=None) -> list:
    """The partitions of `gm`'s `supported` nodes: torch's capability-based
    partitioner (which merges independent supported nodes too), or, when
    every compute node is supported, the one partition of all of them that
    the partitioner would reach after its merges, without its quadratic
    reachability sets (2.1 s of the 31 s that checking squeezeformer took
    in one process: loading, eager, compiling, running). `general`:
    always the partitioner (the tests compare the two)."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner, Partition
    from torch.fx.passes.operator_support import OperatorSupportBase

    compute = [n for n in gm.graph.nodes if n.op == "call_function"]
    if not general and compute and all(n in supported for n in compute):
        _log.log("partition", f"graph {graph_id}: all {len(compute)} compute nodes supported, "
                 "one partition (the partitioner's merges skipped)")
        return [Partition(id=0, nodes=compute)]

    class Support(OperatorSupportBase):
        def is_node_supported(self, submodules, node):
            return node in supported

    partitioner = CapabilityBasedPartitioner(gm, Support(), allows_single_node_partition=True)
    return partitioner.propose_partitions()


def _place_shape_nodes(gm: fx.GraphModule, partitions) -> None:
    """A shape node belongs to the partition of its (single) user: moved
    there when the partitioner put it elsewhere, left to Python when its
    user is not compiled."""
    owner = {n: p for p in partitions for n in p.nodes}
    for node in reversed(list(gm.graph.nodes)):
        part = owner.get(node)
        if part is None or not _is_shape_node(node):
            continue
        targets = {owner.get(u) for u in node.users}
        if targets == {part}:
            continue
        part.remove_node(node)
        del owner[node]
        if len(targets) == 1 and None not in targets:
            (target,) = targets
            target.add_node(node)
            owner[node] = target


_INPUT_VIEW_REASON = ("view returned as an output: stays a view in eager (AOTAutograd "
                      "rebuilds it from its base, a graph input or another output, with the "
                      "output's strides and offset, which a compiled copy does not have)")

# View ops whose result, taken of a contiguous tensor, is that tensor's
# first elements in order: contiguous, offset 0. A compiled partition's
# copy of such a view has the strides and offset of the real view.
_RESHAPE_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.unsqueeze.default,
                  aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims,
                  aten.alias.default)


def _view_chain(node: fx.Node):
    """(view ops from `node` down to its base, the base): the chain of
    view ops (and getitems of multi-result views such as split) that
    produces `node`, ending at the first node that is not a view."""
    path = []
    while node.op == "call_function":
        target = node.target
        if target is operator.getitem:
            source = node.args[0]
            if not (isinstance(source, fx.Node) and isinstance(source.target, torch._ops.OpOverload)
                    and source.target.is_view):
                break
        elif not (isinstance(target, torch._ops.OpOverload) and target.is_view):
            break
        path.append(node)
        node = node.args[0]
        if not isinstance(node, fx.Node):
            return [], None
    return path, node


def _views_at_outputs(gm: fx.GraphModule) -> set:
    """Graph outputs that are views keep their chain of view ops in eager
    where AOTAutograd rebuilds them. It regenerates an output that aliases
    a graph input, or (under autograd) an output that aliases an
    intermediate another output also aliases, from that base: an as_strided
    view with the returned tensor's sizes, strides and storage offset. A
    compiled partition returns a fresh contiguous copy (offset 0), so the
    regenerated view would read the wrong elements: every chunk but the
    first of torch.chunk(x) under dynamic=True, or the second of two
    slices of one projection (pigu_hybrid's forward values, hence every
    gradient). These chains stay in eager, where they cost nothing and are
    real views of the base:
    - every view chain from a graph input;
    - a view chain from a computed tensor that another output aliases too
      (or is), unless it only reshapes (a compiled copy of a reshape of a
      contiguous tensor is what the regenerated view reads) or the traced
      base is not contiguous (DISC's base is: the chain's view ops may not
      apply to it, so the chain stays compiled as before).
    The chain is copied for the output when compiled nodes also read its
    nodes, so they keep reading them in their partition."""
    from torch._prims_common import is_contiguous_or_false

    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    outputs = _flat_nodes(out_node.args)
    chains = {value: _view_chain(value) for value in outputs}
    roots = collections.Counter(base for _, base in chains.values() if base is not None)

    def eager_chain(path, base) -> bool:
        if not path or base is None:
            return False
        if base.op == "placeholder":
            return True
        if roots[base] < 2 or all(n.target in _RESHAPE_VIEWS for n in path):
            return False
        val = fake_value(base)
        return isinstance(val, torch.Tensor) and is_contiguous_or_false(val)

    views = set()
    copies = {}
    for value in outputs:
        if value not in out_node.all_input_nodes:
            continue  # a repeated output whose chain was copied already
        path, base = chains[value]
        if not eager_chain(path, base):
            continue
        if not any(n in copies for n in path) and all(len(n.users) == 1 for n in path):
            views.update(path)
            continue
        # Some link of the chain also feeds other nodes: the output gets
        # its own copy of the chain.
        for node in reversed(path):
            if node not in copies:
                with gm.graph.inserting_before(out_node):
                    copy = gm.graph.node_copy(node, lambda n: copies.get(n, n))
                copy.meta = dict(node.meta)
                copies[node] = copy
                views.add(copy)
        out_node.replace_input_with(value, copies[value])
        for node in path:  # originals only the output used
            if not node.users:
                gm.graph.erase_node(node)
    return views


def _output_share_groups(gm: fx.GraphModule, num_outputs: int) -> list:
    """Per output of `gm`, the group of outputs it may share memory with
    (the runtime's share groups): one node returned twice, or views of one
    base. Empty when there is no FX graph or its outputs do not line up with
    the partition's (no two outputs share)."""
    if not isinstance(gm, fx.GraphModule):
        return []
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    outputs = _flat_nodes(out_node.args)
    if len(outputs) != num_outputs:
        return []
    groups, numbers = [], {}
    for node in outputs:
        _, base = _view_chain(node)
        base = node if base is None else base
        groups.append(numbers.setdefault(base, len(numbers)))
    return groups


def _flat_nodes(value) -> list:
    if isinstance(value, fx.Node):
        return [value]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _flat_nodes(v)]
    return []


_INPUT_MUTATION_REASON = ("an input mutation (AOTAutograd's copy_ into a graph input) that no "
                          "compiled partition's call can apply: applied in eager")


def _is_input_mutation(node: fx.Node) -> bool:
    return node.op == "call_function" and node.target is aten.copy_.default \
        and isinstance(node.args[0], fx.Node) and node.args[0].op == "placeholder"


_CPU_IN_CUDA_GRAPH_REASON = (
    "a CPU computation in a graph that runs on cuda (a partition compiles for "
    "one device; the CPU side, constants and index set-up, runs in eager)")


def _node_devices(node: fx.Node) -> set:
    """The device types ("cpu", "cuda") of `node`'s tensor values and its
    tensor inputs."""
    return {v.device.type for v in lowerings.node_tensors(node)}


_MEMORY_READERS = (aten.as_strided.default, aten.as_strided_scatter.default)
_MEMORY_READER_INPUT_REASON = (
    "computes the input of an as_strided that runs in eager: it reads eager's memory "
    "layout of that input, which a compiled partition's contiguous result does not have")


def _keep_memory_readers_inputs_eager(supported: set, reasons: dict):
    """An as_strided left to eager (its input a view with gaps or an
    offset: lowerings.LAYOUT_REASON) reads its input's memory, so the
    input must be the tensor eager would have made: everything it is
    computed from stays in eager too (rare; the dense layouts compile)."""
    stack = [n.args[0] for n, why in reasons.items()
             if n.target in _MEMORY_READERS and lowerings.LAYOUT_REASON in why]
    seen = set()
    while stack:
        node = stack.pop()
        if not isinstance(node, fx.Node) or node.op != "call_function" or node in seen \
                or _is_shape_node(node):
            continue
        seen.add(node)
        if node in supported:
            supported.discard(node)
            reasons[node] = _MEMORY_READER_INPUT_REASON
        stack.extend(node.all_input_nodes)


def _classify(gm: fx.GraphModule):
    supported, reasons = set(), {}
    shape_nodes = []
    _duplicate_shape_nodes(gm)
    input_views = _views_at_outputs(gm)
    # A graph with cuda tensors compiles its cuda nodes; its CPU-only nodes
    # (a constant lifted on the CPU, an arange before .to("cuda")) stay in
    # eager. Otherwise the partitioner, which merges independent supported
    # nodes too, would put both in one partition, which then ran whole in
    # eager (the GraphNet yolo11n-pose: 1015 nodes, 44 convolutions).
    devices = {n: _node_devices(n) for n in gm.graph.nodes
               if n.op in ("placeholder", "call_function")}
    on_cuda = any("cuda" in d for d in devices.values())
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if _is_input_mutation(node):
            reasons[node] = _INPUT_MUTATION_REASON  # see _fold_input_mutations
            continue
        if node in input_views:
            if node.target is not operator.getitem:
                reasons[node] = _INPUT_VIEW_REASON
            continue
        if node.target is operator.getitem:
            if node.args[0] in supported:
                supported.add(node)
            continue
        if _is_shape_node(node):
            shape_nodes.append(node)
            continue
        reason = lowerings.unsupported_reason(node)
        if reason is None and on_cuda and devices[node] == {"cpu"}:
            reason = _CPU_IN_CUDA_GRAPH_REASON
        if reason is None:
            supported.add(node)
        else:
            reasons[node] = reason
    _keep_memory_readers_inputs_eager(supported, reasons)
    # Host shape arithmetic (sym_size of an intermediate, size products...)
    # whose users are all compiled goes into their partition: the importer
    # computes it from the symbolic expression. Left outside, it would sit
    # between a partition's producer and its consumer and cut the partition
    # in two. Assertions stay in Python.
    for node in reversed(shape_nodes):
        if _importable_shape_node(node) and all(u in supported for u in node.users):
            supported.add(node)
    # A multi-output node is only compiled if all its used outputs are
    # tensors that the importer produces (getitem of supported nodes).
    return supported, reasons


def _op_name(node: fx.Node) -> str:
    t = node.target
    return str(t) if not hasattr(t, "__name__") else getattr(t, "__qualname__", t.__name__) \
        if not isinstance(t, torch._ops.OpOverload) else str(t)


class VerificationError(AssertionError):
    """DISC_VERIFY=1 found a compiled partition whose result differs from
    running the same FX graph in eager."""


def _draw_seed() -> int:
    """The key of a partition's random ops for one call, from PyTorch's
    default generator (torch.manual_seed repeats a run; every call differs):
    63 bits, the size of an empty carrier tensor (symint_carrier)."""
    return int(torch.randint(0, 2 ** 63 - 1, (), dtype=torch.int64))


def _cpu_scalar_inputs(eager: fx.GraphModule, plan) -> list:
    """Positions among a partition's executable inputs (`plan`) that are
    0-dim CPU tensors or SymFloat/SymBool values (rank-0 CPU tensors at the
    call)."""
    placeholders = [n for n in eager.graph.nodes if n.op == "placeholder"]
    positions = []
    for i, p in enumerate(plan):
        if p.kind in ("symfloat", "symbool"):
            positions.append(i)
        elif p.kind == "tensor":
            val = placeholders[p.placeholder].meta.get("val")
            if lowerings.is_host_scalar(val):
                positions.append(i)
    return positions


class DiscPartition(torch.nn.Module):
    """Runs one compiled partition: graph inputs in, tensors out."""

    def __init__(self, executable, plan, num_outputs: int, single_output: bool, name: str,
                 eager: fx.GraphModule, verify: bool = False, dump_dir: Optional[str] = None):
        super().__init__()
        # The partition's FX graph: run in eager when the compiled code
        # rejects a call (below), and the reference when verifying.
        self.eager = eager
        self.reference = eager if verify else None
        self.dump_dir = dump_dir  # where a failed verification saves its inputs
        self.executable = executable
        self.plan = plan
        self.num_outputs = num_outputs
        self.single_output = single_output
        self.partition_name = name
        # (output index, placeholder index, executable input index): outputs
        # written into an input when the call returns (_fold_input_mutations).
        self.results_into = []
        # Outputs the FX graph returns as views of one base may share memory;
        # the runtime gives any other output that overlaps an earlier one a
        # copy (two equal bias gradients merged into one buffer would
        # otherwise be one tensor to autograd, and accumulating into one
        # changes the other).
        self.share_groups = _output_share_groups(eager, num_outputs)
        # Every executable input a graph input as it is (no seed, no size
        # converted to a tensor): the call gathers them with one list.
        self.placeholders = [p.placeholder for p in plan] \
            if all(p.kind == "tensor" for p in plan) else None
        # Executable inputs that are host scalars of a cuda partition (0-dim
        # CPU tensors, which eager takes as scalars, and SymFloat/SymBool
        # values): each call moves them to the device.
        self.host_scalars = _cpu_scalar_inputs(eager, plan) \
            if executable.target == "cuda" else []
        self._update_plain_call()

    def _update_plain_call(self) -> None:
        """Whether a call is the plain one (forward's short path): inputs
        passed as they are, none moved to the device, none written in
        place, no verification."""
        self.plain_call = (self.placeholders is not None and not self.host_scalars
                           and not self.results_into and self.reference is None)

    def write_result_into(self, output: int, placeholder: int) -> None:
        """Output `output` is no longer returned: each call writes it into
        its argument `placeholder` (an input mutation)."""
        inputs = [i for i, p in enumerate(self.plan)
                  if p.kind == "tensor" and p.placeholder == placeholder]
        if len(inputs) != 1:
            raise AssertionError(f"{self.partition_name}: placeholder {placeholder} is not "
                                 f"one executable input")
        self.results_into.append((output, placeholder, inputs[0]))
        self._update_plain_call()

    def _apply_in_eager(self, args, outs, pairs):
        """The input mutations `pairs` done with copy_ (the runtime did
        not write them)."""
        for output, placeholder, _ in pairs:
            args[placeholder].copy_(outs[output])
            outs[output] = None
        return outs

    def forward(self, *args):
        if self.plain_call:
            # The common call, kept short (it is per-call overhead): every
            # executable input a graph input as it is, nothing to move to
            # the device, nothing written in place, no verification.
            exe = self.executable
            try:
                outs = exe._run(_disc._as_arguments([args[i] for i in self.placeholders]),
                                [], exe._cuda_device(), self.share_groups)
            except _disc.InvocationError as e:
                return self._rejected(args, e)
            return outs[0] if self.single_output else outs
        expected = self.reference(*args) if self.reference is not None else None
        inputs = [args[i] for i in self.placeholders] if self.placeholders is not None else []
        exe = self.executable
        device = exe._cuda_device()  # -1 on the CPU
        for p in self.plan if self.placeholders is None else ():
            if p.kind in ("seed", "symint"):
                carrier_device = "cpu" if device < 0 else torch.device("cuda", device)
                value = _draw_seed() if p.kind == "seed" else args[p.placeholder]
                inputs.append(symint_carrier(value, carrier_device))
                continue
            a = args[p.placeholder]
            if p.kind == "symfloat":
                a = torch.tensor(float(a), dtype=torch.float64)
            elif p.kind == "symbool":
                a = torch.tensor(bool(a))
            inputs.append(a)
        if self.host_scalars:
            on_device = torch.device("cuda", device)
            for i in self.host_scalars:
                inputs[i] = inputs[i].to(on_device, non_blocking=True)
        try:
            arguments = _disc._as_arguments(inputs)
            # The runtime writes into an input only when the call reads it in
            # place; any other (a non-contiguous parameter, say) is updated
            # here from the returned result.
            into, in_eager = [], []
            if self.results_into:
                into = [-1] * self.num_outputs
                for pair in self.results_into:
                    if _disc._is_zero_copy(arguments[pair[2]]):
                        into[pair[0]] = pair[2]
                    else:
                        in_eager.append(pair)
            outs = list(exe._run(arguments, into, device, self.share_groups))
        except _disc.InvocationError as e:
            return self._rejected(args, e)
        self._apply_in_eager(args, outs, in_eager)
        if expected is not None:
            self._verify(args, inputs, outs, expected)
        return outs[0] if self.single_output else tuple(outs)

    def _rejected(self, args, error):
        """The compiled code checks every relation it relies on before it
        runs (dims that must agree, sizes read from data, index bounds). A
        call that breaks one is not the user's error when eager PyTorch
        accepts it (a relation the trace assumed but the model does not
        need): this call runs the partition's FX graph in eager instead,
        loudly. Eager raises its own error when the inputs are wrong for the
        model too. DISC_STRICT=1 raises instead (tests, bug reports)."""
        if os.environ.get("DISC_STRICT") == "1":
            raise error
        _count(eager_calls=1)
        message = (f"{self.partition_name}: the compiled code rejected this call "
                   f"({str(error).splitlines()[0]}); it runs in eager PyTorch")
        _log.log("fallback", message)
        if not _log.enabled("fallback"):
            _warn_once(message)
        outs = self.eager(*args)
        outs = [outs] if self.single_output else list(outs)
        self._apply_in_eager(args, outs, self.results_into)
        return outs[0] if self.single_output else tuple(outs)

    def _verify(self, args, inputs, outs, expected) -> None:
        expected = [expected] if self.single_output else list(expected)
        outs = list(outs)
        for output, placeholder, _ in self.results_into:
            outs[output] = args[placeholder]  # written in place
        problems = []
        for i, (want, got) in enumerate(zip(expected, outs)):
            if not isinstance(want, torch.Tensor):
                continue
            what = f"output {i} ({want.dtype}{list(want.shape)})"
            if want.shape != got.shape or want.dtype != got.dtype:
                problems.append(f"{what}: DISC gives {got.dtype}{list(got.shape)}")
                continue
            if want.is_floating_point() or want.is_complex():
                tol = 1e-2 if want.dtype in (torch.float16, torch.bfloat16) else 1e-3
                scale = max(1.0, want.abs().max().item()) if want.numel() else 1.0
                ok = torch.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True)
            else:
                ok = torch.equal(got, want)
            if not ok:
                err = (got.double() - want.double()).abs().nan_to_num(float("inf"))
                where = tuple(int(v) for v in torch.unravel_index(err.argmax(), err.shape))
                problems.append(
                    f"{what}: max abs error {err.max().item():.3g} at {where} (DISC "
                    f"{got[where].item():.6g}, eager {want[where].item():.6g}), "
                    f"{int((err > tol * scale).sum())} of {err.numel()} elements off")
        if problems:
            saved = ""
            if self.dump_dir:
                path = os.path.join(self.dump_dir, "inputs.pt")
                torch.save(inputs, path)
                saved = (f"\n  the executable's inputs are saved in {path} (run "
                         f"000-input.mlir on them with disc.compile_mlir, see docs/debugging.md)")
            raise VerificationError(f"{self.partition_name} differs from eager:\n  "
                                    + "\n  ".join(problems) + saved)
        _log.log("verify", f"{self.partition_name}: {len(outs)} output(s) match eager")


def _dump(opts: Options, graph_id: int, name: str, text: Callable[[], str]) -> Optional[str]:
    """Writes text() to the graph's dump directory, if any. `text` is only
    called then: printing a large graph with symbolic shapes takes seconds
    (sympy prints every size), which a compilation without a dump must not
    pay."""
    if not opts.dump_dir:
        return None
    d = os.path.join(opts.dump_dir, f"graph-{os.getpid()}-{graph_id:03d}")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text())
    return d


def compile_aten_graph(gm: fx.GraphModule, graph_id: int, opts: Options, role: str = ""):
    """Partitions an ATen graph, compiles each supported partition with
    DISC and returns the callable AOTAutograd runs. `role` names a training
    graph's half ("forward" or "backward") in logs, dumps and reports."""
    from torch.fx.passes.utils.fuser_utils import fuse_by_partitions

    import disc

    report = GraphReport(graph_id)
    prefix = f"{role}-" if role else ""
    _dump(opts, graph_id, f"{prefix}aten_graph.txt",
          lambda: gm.print_readable(print_output=False))
    supported, reasons = _classify(gm)
    partitions = propose_partitions(gm, supported, graph_id=graph_id)
    kept = []
    for partition in partitions:
        nodes = list(partition.nodes)
        compute = [n for n in nodes if n.target is not operator.getitem
                   and n.target not in lowerings.NO_COMPUTE and not _is_shape_node(n)]
        if opts.skip_view_only_partitions and not compute:
            for n in nodes:
                if n.target is not operator.getitem and not _is_shape_node(n):
                    reasons[n] = "view-only partition (free in eager)"
            continue
        kept.append(partition)
    _place_shape_nodes(gm, kept)
    kept = [p for p in kept if p.nodes]
    partition_nodes = {n: i for i, p in enumerate(kept) for n in p.nodes}
    fused = fuse_by_partitions(gm, [p.nodes for p in kept], prefix="fused_") if kept else gm

    compiled_nodes, fallback_nodes, kernels = 0, 0, 0
    mutations = _input_mutations_to_fold(fused)
    for node in list(fused.graph.nodes):
        if node.op != "call_module" or not node.target.startswith("fused_"):
            continue
        sub: fx.GraphModule = getattr(fused, node.target)
        _propagate_placeholder_meta(sub, node)
        _supply_symbols(fused, sub, node)
        name = f"{prefix}partition-{node.target.split('_')[-1]}"
        n_nodes = sum(1 for n in sub.graph.nodes if n.op == "call_function"
                      and n.target is not operator.getitem and not _is_shape_node(n))
        # {output: placeholder} the call writes into its inputs, known
        # before compiling: the code computes them in the inputs' memory.
        results_into = {m.output: node.args.index(m.dst) for m in mutations.get(node, ())}
        try:
            target, device = _partition_target(sub)
            imported = import_graph(sub, results_into=results_into)
            _log.log("import", f"graph {graph_id} {name}:\n{imported.text}")
            dump_root = _dump(opts, graph_id, f"{name}/fx_graph.txt",
                              lambda: sub.print_readable(print_output=False))
            try:
                exe = disc.compile_mlir(imported.text, dump_dir=os.path.join(dump_root, name)
                                        if dump_root else None,
                                        source_name=f"graph{graph_id}-{name}.mlir",
                                        target=target, cuda_chips=_cuda_chips(device),
                                        _exact_dump_dir=True)
            except ValueError as e:
                # An invalid setting (a DISC_* variable's value, a target):
                # the user's to fix, raised rather than run in eager.
                e.disc_invalid_setting = True
                raise
        except Exception as e:
            if getattr(e, "disc_invalid_setting", False):
                raise
            # ImportError_ (an op pattern the importer does not handle) and
            # CompileError are expected; anything else is a bug in the
            # importer, reported as such, and the partition still runs.
            if os.environ.get("DISC_STRICT") == "1" and \
                    not isinstance(e, (ImportError_, disc.CompileError)):
                raise
            kind = ("cannot import" if isinstance(e, ImportError_) else
                    "compile error" if isinstance(e, disc.CompileError) else
                    f"internal error in the importer ({type(e).__name__})")
            lines = str(e).strip().splitlines()
            errors = [l.split("error: ", 1)[1] for l in lines if "error: " in l]
            reason = f"{kind}: {errors[0] if errors else (lines[0] if lines else e)}"
            _log.log("fallback", f"graph {graph_id} {name} ({n_nodes} nodes) runs in eager: "
                     + "\n  ".join(str(e).strip().splitlines()[:20]))
            for n in sub.graph.nodes:
                if n.op == "call_function" and n.target is not operator.getitem \
                        and not _is_shape_node(n):
                    report.fallbacks.append(Fallback(n.name, _op_name(n), reason))
                    with _lock:
                        _fallback_ops[f"{_op_name(n)}: {reason}"] += 1
            fallback_nodes += n_nodes
            continue
        out_node = next(n for n in sub.graph.nodes if n.op == "output")
        single = not isinstance(out_node.args[0], (tuple, list))
        wrapper = DiscPartition(exe, imported.args, imported.num_outputs, single,
                                f"graph {graph_id} {name}", sub, opts.verify,
                                os.path.join(dump_root, name) if dump_root else None)
        setattr(fused, node.target, wrapper)
        counts = exe.kernel_counts
        kernels += sum(counts.values())
        _log.log("partition", f"graph {graph_id} {name}: {n_nodes} ATen nodes -> "
                 f"{counts['loops']} loop kernels, {counts['library_calls']} library "
                 f"calls, {counts['copies']} copies")
        compiled_nodes += n_nodes
        report.partitions += 1

    folded = _fold_input_mutations(fused, graph_id, mutations)
    written_by_kernels = 0
    for module in fused.children():
        if isinstance(module, DiscPartition) and module.results_into:
            tied = module.executable.results_into_arguments
            written_by_kernels += sum(tied.get(output) == k for output, _, k in module.results_into)
    eager_views = 0
    for node, reason in reasons.items():
        if node in partition_nodes or node.name in folded:
            continue
        if reason == _INPUT_MUTATION_REASON:
            # Not a fallback either: AOTAutograd applies such a copy in
            # eager when the backend does not keep it in the graph.
            _log.log("partition", f"graph {graph_id}: {node.name} ({node.args[0].name} <- "
                     f"{node.args[1]}) stays in eager: {reason}")
            continue
        if reason == _INPUT_VIEW_REASON:
            # Not a fallback: a view is free in eager and must stay a real
            # view of its base (see _views_at_outputs).
            eager_views += 1
            _log.log("partition", f"graph {graph_id}: {_op_name(node)} ({node.name}) stays "
                     f"in eager: {reason}")
            continue
        fallback_nodes += 1
        report.fallbacks.append(Fallback(node.name, _op_name(node), reason))
        with _lock:
            _fallback_ops[f"{_op_name(node)}: {reason}"] += 1
        _log.log("fallback", f"graph {graph_id}: {_op_name(node)} ({node.name}) runs in eager: {reason}")

    report.compiled_nodes, report.fallback_nodes = compiled_nodes, fallback_nodes
    _count(compiled_nodes=compiled_nodes, fallback_nodes=fallback_nodes, eager_views=eager_views,
           partitions=report.partitions, kernels=kernels, inputs_updated_in_place=len(folded),
           inputs_written_by_kernels=written_by_kernels)
    _log.log("partition", f"graph {graph_id}: {report.partitions} compiled partition(s), "
             f"{compiled_nodes} compiled nodes, {fallback_nodes} fallback nodes")
    _emit_report(report)
    _realign_eager_attention_masks(fused, graph_id)
    _call_partitions_directly(fused)
    fused.recompile()
    return fused.forward


def _call_partitions_directly(gm: fx.GraphModule) -> None:
    """Each compiled partition's node calls its forward as a function: the
    generated code skips nn.Module.__call__ (hook checks, about 0.6 us a
    partition per call). The module stays a child of `gm` (what
    introspection and the tests look up)."""
    for node in gm.graph.nodes:
        if node.op == "call_module":
            module = gm.get_submodule(node.target)
            if isinstance(module, DiscPartition):
                node.op, node.target = "call_function", module.forward


# PyTorch's efficient-attention ops and the position of their mask.
_ATTENTION_MASK_ARGUMENT = {
    aten._scaled_dot_product_efficient_attention.default: 3,
    aten._scaled_dot_product_efficient_attention_backward.default: 4,
}


def _aligned_attention_bias(bias):
    """`bias` with its rows 16 elements apart, as eager's SDPA composite
    prepares an efficient-attention mask (pad the last dim, slice it back):
    the kernel rejects a row stride that is not a multiple of 4, and a
    DISC output is packed."""
    if bias is None or bias.dim() < 2 or (bias.stride(-2) % 16 == 0 and bias.stride(-1) == 1):
        return bias
    size = bias.shape[-1]
    return torch.nn.functional.pad(bias, (0, -size % 16))[..., :size]


def _realign_eager_attention_masks(gm: fx.GraphModule, graph_id: int) -> None:
    """An efficient-attention op left in eager (cuda_attention declines
    dropout and grouped-query heads) reads its mask through
    _aligned_attention_bias: the mask may be a DISC partition's output."""
    for node in list(gm.graph.nodes):
        index = _ATTENTION_MASK_ARGUMENT.get(node.target) if node.op == "call_function" else None
        if index is None or len(node.args) <= index or not isinstance(node.args[index], fx.Node):
            continue
        with gm.graph.inserting_before(node):
            aligned = gm.graph.call_function(_aligned_attention_bias, (node.args[index],))
        node.update_arg(index, aligned)
        _log.log("partition", f"graph {graph_id}: {_op_name(node)} ({node.name}) reads its mask "
                 "with rows 16 elements apart, as eager's composite passes it")


@dataclass
class _InputMutation:
    copy: fx.Node    # copy_(dst, src)
    dst: fx.Node     # the graph input updated
    src: fx.Node     # the partition's output (the call, or a getitem of it)
    call: fx.Node    # the partition's call
    output: int      # which output of the call


def _input_mutations_to_fold(gm: fx.GraphModule) -> dict:
    """AOTAutograd's input mutations that the compiled calls can do. With
    keep_inference_input_mutations, an inference graph (an optimizer step,
    a batch-norm statistics update under no_grad) ends in `copy_(input,
    value)` nodes. One folds when `value` is an output of a partition call
    that nothing else uses, `input` is an argument of that call that no
    later node reads, and both have one dtype, device and shape. Returns
    {call node: [_InputMutation]}; known before the partitions compile, so
    that their code writes these outputs into the inputs' memory
    (`disc.result_into`)."""
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    mutations = [n for n in gm.graph.nodes if _is_input_mutation(n)]
    per_input = collections.Counter(n.args[0] for n in mutations)
    found = collections.defaultdict(list)
    for node in mutations:
        dst, src = node.args[0], node.args[1]
        if per_input[dst] != 1 or not isinstance(src, fx.Node) or len(src.users) != 1:
            continue
        if src.op == "call_module":
            call, index = src, 0
        elif src.target is operator.getitem and isinstance(src.args[0], fx.Node) \
                and src.args[0].op == "call_module":
            call, index = src.args[0], src.args[1]
        else:
            continue
        if not call.target.startswith("fused_") or dst not in call.args:
            continue
        # The call reads the input and writes it when it returns: any other
        # reader after the call would see the new value too early.
        if any(u is not node and u is not call and u.op != "output"
               and order[u] > order[call] for u in dst.users):
            continue
        want, got = fake_value(dst), fake_value(src)
        if not (isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor)
                and want.dtype == got.dtype and want.device == got.device
                and shape_of(want) == shape_of(got)):
            continue
        found[call].append(_InputMutation(node, dst, src, call, index))
    return found


def _fold_input_mutations(gm: fx.GraphModule, graph_id: int, mutations: dict) -> set:
    """Moves the input mutations `mutations` (_input_mutations_to_fold) of
    the partitions that compiled into their calls: the call writes the
    output into the input (computed there by the code, or copied by the
    runtime after the call; Executable's results_into): no output tensor
    is made and no copy_ dispatched. Every other copy_ stays an eager node,
    as AOTAutograd's own epilogue would have run it. Returns the names of
    the folded nodes (now erased)."""
    folded = set()
    for call, found in mutations.items():
        wrapper = getattr(gm, call.target, None)
        if not isinstance(wrapper, DiscPartition):
            continue
        for m in found:
            wrapper.write_result_into(m.output, call.args.index(m.dst))
            gm.graph.erase_node(m.copy)
            if m.src is not call:
                gm.graph.erase_node(m.src)
            folded.add(m.copy.name)
            _log.log("partition", f"graph {graph_id}: {m.dst.name} is updated in place by "
                     f"{call.target}'s call (output {m.output})")
    return folded


def _partition_target(sub: fx.GraphModule) -> tuple[str, str | None]:
    """("cuda", the device) when the partition's tensors live on a CUDA
    device, else (the CPU target (disc.default_target(): DISC_TARGET),
    None)."""
    import disc
    devices, host_scalars = set(), False
    for n in sub.graph.nodes:
        # Every value, not only the inputs: a partition of factory ops
        # (arange, full on a cuda device) has no tensor input, and its
        # outputs must be made where eager makes them.
        vals = n.meta.get("val") if n.op in ("placeholder", "call_function") else None
        for val in (vals if isinstance(vals, (list, tuple)) else [vals]):
            if isinstance(val, torch.Tensor):
                if n.op == "placeholder" and lowerings.is_host_scalar(val):
                    host_scalars = True  # a scalar of a cuda partition (_cpu_scalar_inputs)
                    continue
                devices.add(str(val.device) if val.device.type == "cuda" else "cpu")
    cuda = {d for d in devices if d.startswith("cuda")}
    if host_scalars and not cuda:
        devices.add("cpu")
    if cuda:
        if len(devices) > 1:
            raise ImportError_(f"the partition's inputs are on several devices "
                               f"({', '.join(sorted(devices))})")
        return "cuda", cuda.pop()
    return disc.default_target(), None


def _cuda_chips(device: str | None) -> list[str] | None:
    """The chip a partition on `device` compiles for: of the cuda target's
    two (sm_80, sm_90), the one whose cubin that GPU loads (sm_80 for
    compute capability 8.x; sm_90 for 9.x, and for newer GPUs through its
    PTX). One ptxas run per kernel module instead of two, as Triton compiles
    for the current GPU only. None (compile_mlir's default: DISC_CUDA_CHIPS,
    else both) when DISC_CUDA_CHIPS is set, for a GPU older than sm_80 (the
    call then fails naming the chips it has), or without a GPU to ask."""
    if device is None or os.environ.get("DISC_CUDA_CHIPS") or \
            not torch.cuda.is_available():
        return None
    major, _ = torch.cuda.get_device_capability(torch.device(device))
    return ["sm_80"] if major == 8 else ["sm_90"] if major >= 9 else None


def _propagate_placeholder_meta(sub: fx.GraphModule, call: fx.Node) -> None:
    """Placeholders of a fused submodule get the metadata of the values the
    parent passes in."""
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    for ph, arg in zip(placeholders, call.args):
        if "val" not in ph.meta and isinstance(arg, fx.Node) and "val" in arg.meta:
            ph.meta["val"] = arg.meta["val"]


def _free_symbols(value) -> set:
    out = set()
    if isinstance(value, torch.Tensor):
        for d in value.shape:
            if isinstance(d, torch.SymInt):
                out |= d.node.expr.free_symbols
    elif isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        out |= value.node.expr.free_symbols
    elif isinstance(value, (list, tuple)):
        for v in value:
            out |= _free_symbols(v)
    return out


def _supply_symbols(parent: fx.GraphModule, sub: fx.GraphModule, call: fx.Node) -> None:
    """Makes every size symbol the partition needs readable inside it: a
    symbol that is no input dim and no SymInt input of the partition is
    passed in as an extra SymInt argument, read in the parent graph from a
    graph input that carries it."""
    import sympy

    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    available = set()
    for ph in placeholders:
        val = fake_value(ph)
        if isinstance(val, torch.Tensor):
            available |= {d.node.expr for d in val.shape if isinstance(d, torch.SymInt)
                          and isinstance(d.node.expr, sympy.Symbol)}
        elif isinstance(val, torch.SymInt) and isinstance(val.node.expr, sympy.Symbol):
            available.add(val.node.expr)
    needed = set()
    for n in sub.graph.nodes:
        needed |= _free_symbols(fake_value(n))
    missing = needed - available
    if not missing:
        return
    providers = {}
    for n in parent.graph.nodes:
        if n.op != "placeholder":
            continue
        val = fake_value(n)
        if isinstance(val, torch.SymInt) and val.node.expr in missing and val.node.expr not in providers:
            providers[val.node.expr] = (n, None, val)
        elif isinstance(val, torch.Tensor):
            for d, size in enumerate(val.shape):
                if isinstance(size, torch.SymInt) and size.node.expr in missing \
                        and size.node.expr not in providers:
                    providers[size.node.expr] = (n, d, size)
    new_args = list(call.args)
    last = placeholders[-1] if placeholders else None
    for sym in sorted(missing, key=str):
        if sym not in providers:
            continue  # the importer reports it
        source, dim, size = providers[sym]
        if dim is None:
            arg = source
        else:
            with parent.graph.inserting_before(call):
                arg = parent.graph.call_function(aten.sym_size.int, (source, dim))
                arg.meta["val"] = size
        new_args.append(arg)
        if last is None:
            with sub.graph.inserting_before(next(iter(sub.graph.nodes))):
                ph = sub.graph.placeholder(f"sym_{sym}")
        else:
            with sub.graph.inserting_after(last):
                ph = sub.graph.placeholder(f"sym_{sym}")
        ph.meta["val"] = size
        last = ph
    call.args = tuple(new_args)
    sub.recompile()
