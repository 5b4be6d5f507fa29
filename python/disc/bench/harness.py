"""The GraphNet benchmark: DISC side by side with eager PyTorch and
TorchInductor.

    python -m disc.bench graphnet PATH [PATH ...] [--compilers eager,inductor,disc]
        [--device cpu|cuda] [--threads N] [--warmup W] [--trials T] [--min-time S]
        [--timeout S] [--shapes K] [--generalize]
        [--dynamic auto|true|false|marked|unbacked] [--size-oblivious]
        [--capture-scalars] [--timing-lock FILE] [--out DIR]

Each sample runs in its own subprocess (a crash or hang is recorded, never
fatal); inside it every contender runs in the same process with the same
thread count. Per (sample, contender, shape) one JSON record goes to
DIR/results.jsonl; DIR/summary.md and the PNG plots are made from those
records (`python -m disc.bench report DIR/results.jsonl` makes them again).
docs/graphnet.md describes every field and figure.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import statistics
import shutil
import subprocess
import sys
import time

# The outcomes of one (sample, contender, shape), each counted separately.
OUTCOMES = ("correct", "wrong", "compile_error", "error", "timeout", "crash",
            "shape_unsupported", "eager_error")

# torch.compile's dynamic= per --dynamic; "marked" and "unbacked" are None
# with the dims the sample's input_tensor_constraints.py names marked dynamic
# (_mark_dynamic: backed symbols, or unbacked ones that are never specialised).
_DYNAMIC = {"auto": None, "true": True, "false": False, "marked": None, "unbacked": None}


# ---------------------------------------------------------------- worker


# Seconds a process waits for --timing-lock's lock before it times without
# it (the wait counts against the sample's --timeout).
TIMING_LOCK_MAX_WAIT_S = 30.0


@contextlib.contextmanager
def exclusive_timing(lock_path, max_wait_s: float = TIMING_LOCK_MAX_WAIT_S):
    """Holds an exclusive flock on `lock_path` (None: no lock) while the
    block runs; yields (seconds spent waiting, whether it holds the lock).
    Harness processes run side by side (sharded runs on a GPU machine)
    share one lock file so that only one of them times calls at a time:
    their compiles and correctness checks still overlap, but a timed call
    never shares the GPU with another process's kernels (the GPU
    time-slices between processes' contexts, which made every sharded
    figure a measure of the neighbours). After `max_wait_s` the block runs
    without the lock (a holder whose call hangs until its sample's timeout
    must not make every other shard time out too); the record says so."""
    if not lock_path:
        yield 0.0, False
        return
    import fcntl

    with open(lock_path, "a") as f:
        start = time.perf_counter()
        held = False
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if time.perf_counter() - start > max_wait_s:
                    break
                time.sleep(0.005)
        try:
            yield time.perf_counter() - start, held
        finally:
            if held:
                fcntl.flock(f, fcntl.LOCK_UN)


def _sync_fn(device: str):
    import torch

    if device.startswith("cuda"):
        return torch.cuda.synchronize
    return lambda: None


def time_calls(fn, inputs, device: str, warmup: int, trials: int,
               budget_s: float = 30.0, min_time_s: float = 0.0, paired=None,
               max_trials: int = 1000):
    """Seconds per call: `warmup` untimed calls, then timed ones: at least
    `trials` (and at least 3) and, for fast calls, more until they add up
    to `min_time_s` (at most `max_trials`); fewer than `trials` when they
    exceed `budget_s`. On CUDA each call is timed with events after a
    synchronisation.

    With `paired` (another callable on the same inputs, eager PyTorch) the
    two are timed in alternation (time_interleaved) and (times,
    paired_times) is returned: both medians then come from the same stretch
    of time, so a machine whose speed drifts (a shared VM) moves both
    alike. Without it, the list of times."""
    fns = [fn] if paired is None else [fn, paired]
    times = time_interleaved(fns, inputs, device, warmup, trials, budget_s, min_time_s,
                             max_trials)
    return times[0] if paired is None else (times[0], times[1])


def time_interleaved(fns, inputs, device: str, warmup: int, trials: int,
                     budget_s: float = 30.0, min_time_s: float = 0.0,
                     max_trials: int = 1000) -> list:
    """One list of seconds per call for each of `fns`, all on `inputs`,
    timed in alternation call by call with the order reversed every round
    (trial counts as in time_calls, counted on the first callable)."""
    import torch

    sync = _sync_fn(device)
    for f in fns:
        for _ in range(warmup):
            f(*inputs)
    sync()
    times = [[] for _ in fns]

    def timed(f):
        if device.startswith("cuda"):
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            f(*inputs)
            end.record()
            torch.cuda.synchronize()
            return begin.elapsed_time(end) / 1000.0
        t0 = time.perf_counter()
        f(*inputs)
        return time.perf_counter() - t0

    start_all = time.perf_counter()
    first_total = 0.0
    rounds = 0
    while True:
        order = range(len(fns)) if rounds % 2 == 0 else reversed(range(len(fns)))
        for k in order:
            times[k].append(timed(fns[k]))
        first_total += times[0][-1]
        rounds += 1
        if rounds >= 3 and time.perf_counter() - start_all > budget_s:
            break
        if rounds >= trials and (first_total >= min_time_s or rounds >= max_trials):
            break
    return times


def error_figures(expected, actual) -> dict:
    """max_abs_error, max_rel_error and tol_needed (the smallest tolerance t
    at which `outputs_match` with rtol t would accept the output; inf when no
    tolerance would: NaN/inf misplaced, shapes, dtypes or integers differ)."""
    import torch

    from .correctness import float_errors, outputs_match

    def leaves(x):
        if isinstance(x, (tuple, list)):
            for y in x:
                yield from leaves(y)
        else:
            yield x

    unusable = {"max_abs_error": float("inf"), "max_rel_error": float("inf"),
                "tol_needed": float("inf")}
    exp, act = list(leaves(expected)), list(leaves(actual))
    if len(exp) != len(act):
        return unusable
    abs_err = rel_err = tol = 0.0
    for e, a in zip(exp, act):
        floating = (isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor)
                    and e.shape == a.shape and e.dtype == a.dtype
                    and (e.is_floating_point() or e.is_complex()))
        if not floating:  # exact comparisons: equal or unusable
            if not outputs_match(e, a)[0]:
                return unusable
            continue
        errors = float_errors(e, a)
        if errors is None:
            return unusable
        err, magnitude, ratio, _ = errors
        if err.numel() == 0:
            continue
        abs_err = max(abs_err, err.max().item())
        nonzero = magnitude > 0
        if nonzero.any():
            rel_err = max(rel_err, (err[nonzero] / magnitude[nonzero]).max().item())
        tol = max(tol, ratio.max().item())
    return {"max_abs_error": abs_err, "max_rel_error": rel_err, "tol_needed": tol}


def _shape_summary(inputs) -> list:
    import torch

    return [list(x.shape) if isinstance(x, torch.Tensor) else x for x in inputs][:8]


def _dynamo_counts() -> dict:
    import torch

    counters = torch._dynamo.utils.counters
    return {"graphs": int(counters["stats"]["unique_graphs"]),
            "graph_breaks": int(sum(counters["graph_break"].values()))}


def _classify_exception(exc: BaseException) -> str:
    import torch

    if isinstance(exc, torch._dynamo.exc.BackendCompilerFailed):
        return "compile_error"
    return "error"


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text[:1500]


def _mark_dynamic(sample, constraints, inputs, unbacked: bool = False) -> list:
    """--dynamic marked: every dim that input_tensor_constraints.py gives as
    a symbolic expression is marked dynamic on the example inputs (what a
    user does with torch._dynamo.mark_dynamic); every other dim, weights
    included, stays static. --dynamic unbacked marks the same dims with
    torch._dynamo.decorators.mark_unbacked: their symbols have no example
    value to guard on, so PyTorch never specialises them (a batch of 1 is
    not pinned to 1, and no meta kernel installs a guard such as
    `batch <= 1`). Returns "name[dim]" of the marked dims."""
    import torch
    from torch._dynamo.decorators import mark_unbacked

    marked = []
    if constraints is None:
        return marked
    for name, tensor in zip(sample.arg_names, inputs):
        shape = constraints.input_shapes.get(name)
        if not isinstance(tensor, torch.Tensor) or shape is None:
            continue
        for d, size in enumerate(shape):
            if not isinstance(size, int) and getattr(size, "free_symbols", None):
                if unbacked:
                    mark_unbacked(tensor, d)
                else:
                    torch._dynamo.mark_dynamic(tensor, d)
                marked.append(f"{name}[{d}]")
    return marked


def _disc_call_peak_mib(runner, inputs):
    """MiB the runtime's allocator had in use at most during one call,
    beyond what was in use before it (DISC's buffers only: outside a
    partition PyTorch allocates as usual)."""
    import disc

    disc.reset_peak_memory()
    before = disc.memory_stats()["bytes_in_use"]
    outputs = runner(*inputs)
    peak = disc.memory_stats()["peak_bytes_in_use"] - before
    del outputs
    return peak / 2 ** 20


def _export_dynamic_shapes(sample, constraints, inputs):
    """disc-export's dynamic_shapes: the dims input_tensor_constraints.py
    gives as symbolic expressions (as --dynamic marked marks them), every
    other dim static; None (every dim dynamic) without constraints."""
    import torch

    if constraints is None:
        return None
    shapes = []
    for name, tensor in zip(sample.arg_names, inputs):
        shape = constraints.input_shapes.get(name)
        dims = {}
        if isinstance(tensor, torch.Tensor) and shape is not None:
            dims = {d: torch.export.Dim.AUTO for d, size in enumerate(shape)
                    if not isinstance(size, int) and getattr(size, "free_symbols", None)}
        shapes.append(dims or None)
    return tuple(shapes)


def trainable_inputs(arg_names) -> list:
    """Per forward argument of a GraphNet sample, whether a training step
    differentiates it: every float input but the modules' buffers (batch
    norm's running statistics are state, not weights: PyTorch refuses to
    differentiate them)."""
    return [not ("_buffers_" in name or "running_mean" in name or "running_var" in name)
            for name in arg_names]


def training_step(fn, trainable=None):
    """--mode train: a call of `fn` becomes a training step. Every float
    tensor input requires grad (a GraphNet sample's weights are inputs)
    unless `trainable` says otherwise, loss = the sum of the float outputs,
    and the step returns the inputs' gradients (zeros for an input the loss
    does not reach)."""
    import torch
    import torch.utils._pytree as pytree

    def step(*args):
        with torch.enable_grad():
            leaves, call = [], []
            for i, a in enumerate(args):
                if isinstance(a, torch.Tensor) and a.is_floating_point() and \
                        (trainable is None or trainable[i]):
                    a = a.detach().requires_grad_()
                    leaves.append(a)
                call.append(a)
            outs = [o for o in pytree.tree_leaves(fn(*call))
                    if isinstance(o, torch.Tensor) and o.requires_grad]
            if not outs:
                raise RuntimeError("no output depends on a float input: nothing to train")
            loss = sum(o.float().sum() for o in outs)
            grads = torch.autograd.grad(loss, leaves, allow_unused=True)
            return [torch.zeros_like(x) if g is None else g for g, x in zip(grads, leaves)]

    return step


# torch._dynamo.utils.same's float64 criterion (TorchBench's accuracy
# check): a result off eager's by more than the tolerance is still right when
# its RMS error against a float64 run is at most this multiple of eager's
# (plus a tenth of the tolerance).
FLOAT64_MULTIPLIER = 2.0
# ... and, as `same` has it, this multiple where rounding noise dominates
# the RMS: float16/bfloat16 results, tensors of fewer than 1000 elements (a
# bias or norm-weight gradient, a PReLU scalar), 4-d tensors whose last two
# dims are 1 (1x1 convolution kernels).
NOISY_FLOAT64_MULTIPLIER = 3.0
# Where that fails, eager is run again on inputs perturbed by at most one
# rounding (each float element times 1 + u, |u| <= the dtype's unit
# roundoff) this many times: eager's own error under such perturbations is
# how far float arithmetic alone can move the result, and the compiled
# result is right within the multiple of the largest of them.
PERTURBED_RUNS = 3


def perturbed_inputs(args, seed: int):
    """`args` with every float tensor's elements multiplied by 1 + u, u
    uniform in [-r, r], r the dtype's unit roundoff (2^-24 for float32):
    inputs that differ from `args` by at most one rounding."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel():
            roundoff = torch.finfo(a.dtype).eps / 2
            noise = (torch.rand(a.shape, generator=generator, dtype=torch.float64) * 2 - 1) * roundoff
            a = (a.double() * (1 + noise.to(a.device))).to(a.dtype)
        out.append(a)
    return out


def float64_args(args):
    """`args` with every float tensor converted to float64 (the reference
    run's inputs)."""
    import torch

    return [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in args]


def rms_error(x, reference64) -> float:
    """RMS of x - reference64, in float64."""
    return (x.double() - reference64).pow(2).mean().sqrt().item()


def float64_multiplier(dtype, shape=None) -> float:
    """How many times eager's error against float64 a result may have:
    torch._dynamo.utils.same's multiplier (its defaults) for a result of
    `dtype` and `shape` (None: not known, FLOAT64_MULTIPLIER)."""
    import math

    if str(dtype).replace("torch.", "") in ("float16", "bfloat16"):
        return NOISY_FLOAT64_MULTIPLIER
    if shape is not None:
        shape = tuple(shape)
        if math.prod(shape) < 1000 or (len(shape) == 4 and shape[-1] == shape[-2] == 1):
            return NOISY_FLOAT64_MULTIPLIER
    return FLOAT64_MULTIPLIER


def within_float64_criterion(error: float, eager_error: float, spread: float, dtype,
                             shape=None) -> bool:
    """Whether an output of `dtype` and `shape` whose RMS error against
    float64 is `error` passes: at most float64_multiplier times the larger
    of eager's error and `spread` (eager's largest on inputs one rounding
    away; 0 when not measured), plus a tenth of the dtype's tolerance."""
    from .correctness import RTOL

    tol = RTOL.get(str(dtype).replace("torch.", ""), 1e-3)
    return error <= float64_multiplier(dtype, shape) * max(eager_error, spread) + tol / 10


# Said in a verdict's `why` when eager's own float64 run was set aside for
# some outputs (float64_verdict: it disagrees with PyTorch's decompositions).
EAGER_DISPUTED = "eager disputed"


def run_decomposed(fn, *call_args):
    """`fn(*call_args)` with every ATen op that PyTorch's core-ATen
    decomposition table (torch._decomp, none of DISC's own entries) covers
    run as its decomposition, in eager, forward and backward alike: the same
    math without eager's fused kernels. A second reference for the rare op
    whose eager kernel is wrong (RTMO-s in training: PyTorch 2.13's CPU
    batch-norm backward with running statistics, batch 1 and a permuted
    incoming gradient, in float32 and float64 alike)."""
    from torch._decomp import core_aten_decompositions
    from torch.utils._python_dispatch import TorchDispatchMode

    table = dict(core_aten_decompositions())

    class Decomposed(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            decomposition = table.get(func)
            if decomposition is not None:
                with self:  # the decomposition's own ops decompose too
                    result = decomposition(*args, **kwargs)
                if result is not NotImplemented:
                    return result
            return func(*args, **kwargs)

    with Decomposed():
        return fn(*call_args)


def float64_verdict(module, args, expected, actual, trainable=None):
    """(ok, why) from comparing `actual` and eager's `expected` with the same
    step run in float64 (a training step when `trainable` is given), or None
    when float64 does not run. Float32 is ill-conditioned for some graphs
    (gradients of 1e12-1e15: eager itself is as far from float64 as the
    compiled result), and eager's answer is then no reference.

    An output whose error is above float64_multiplier times eager's is
    compared with eager's errors on inputs perturbed by one rounding
    (perturbed_inputs) too: some graphs are so sensitive to rounding that
    eager's own error is a matter of luck (Fast-SCNN's GraphNet sample in
    training: a ReLU whose input cancels to within rounding of zero passes
    or blocks a gradient of 1e14; eager on inputs one rounding away fails
    the plain criterion on 54-103 of its 135 gradients, by up to 167x).
    Passing that way is said in `why`.

    Eager's float64 run is a reference only where eager's kernels are
    right. So an output that still fails is compared with the step run in
    float64 once more, every op that PyTorch decomposes replaced by its
    decomposition (run_decomposed). Where the two float64 runs are further
    apart than the criterion allows a float32 result (one of eager's kernels
    disagrees with its own decomposition by more than rounding), the output
    is correct when it meets the criterion against the decomposed run; `why`
    then names those outputs and says EAGER_DISPUTED."""
    import copy

    import torch
    import torch.utils._pytree as pytree

    def run(m, call_args):
        if trainable is not None:
            return training_step(m, trainable)(*call_args)
        with torch.no_grad():
            return m(*call_args)

    try:
        reference = run(_float64_copy(module), float64_args(args))
    except Exception:
        return None
    refs, exps, acts = (pytree.tree_leaves(v) for v in (reference, expected, actual))
    if not (len(refs) == len(exps) == len(acts)):
        return None
    perturbed = []  # eager's outputs on perturbed inputs, computed when needed
    decomposed = []  # the decomposed float64 run's outputs, computed when needed
    worst, sensitive, disputed, apart_most = "", [], [], 0.0
    for i, (r, e, a) in enumerate(zip(refs, exps, acts)):
        if not (isinstance(e, torch.Tensor) and e.is_floating_point()) or e.numel() == 0:
            continue
        r64 = r.double()
        ours, eagers = rms_error(a, r64), rms_error(e, r64)
        if not within_float64_criterion(ours, eagers, 0.0, e.dtype, e.shape):
            if not perturbed:
                try:
                    for seed in range(PERTURBED_RUNS):
                        outs = pytree.tree_leaves(run(copy.deepcopy(module),
                                                      perturbed_inputs(args, seed)))
                        if len(outs) != len(refs):
                            raise ValueError("a different number of outputs")
                        perturbed.append(outs)
                except Exception:
                    perturbed = [None]
            spread = max((rms_error(p[i], r64) for p in perturbed if p is not None),
                         default=0.0)
            if within_float64_criterion(ours, eagers, spread, e.dtype, e.shape):
                sensitive.append(i)
            else:
                if not decomposed:
                    decomposed = _decomposed_float64_outputs(run, module, args, len(refs))
                d64 = decomposed[i].double() if decomposed[0] is not None else None
                apart = rms_error(r64, d64) if d64 is not None else 0.0
                # Eager's float64 run is disputed when it would fail the
                # criterion as a float32 result against the decomposed run.
                eager_disputed = d64 is not None and not within_float64_criterion(
                    apart, eagers, spread, e.dtype, e.shape)
                ours_decomposed = rms_error(a, d64) if eager_disputed else 0.0
                if not (eager_disputed and within_float64_criterion(
                        ours_decomposed, eagers, spread, e.dtype, e.shape)):
                    return False, (f"against float64, output {i}: RMS error {ours:.3g}, "
                                   f"eager's {eagers:.3g}, eager's on inputs one rounding "
                                   f"away up to {spread:.3g}" + (
                                       f"; eager's float64 run is {apart:.3g} off PyTorch's "
                                       f"decompositions run in float64 ({EAGER_DISPUTED}), "
                                       f"and the result {ours_decomposed:.3g} off that run"
                                       if eager_disputed else ""))
                disputed.append(i)
                apart_most = max(apart_most, apart)
        worst = worst or f"against float64: RMS error {ours:.3g}, eager's {eagers:.3g}"

    def listed(outputs):
        return f"{', '.join(map(str, outputs[:5]))}{', ...' if len(outputs) > 5 else ''}"

    if not (sensitive or disputed):
        return True, worst + " (as close to float64 as eager: correct)"
    parts = [worst]
    if sensitive:
        parts.append(f"{len(sensitive)} output(s) ({listed(sensitive)}) within the criterion "
                     f"of eager's error on inputs one rounding away, not eager's own "
                     f"(rounding-sensitive: correct)")
    if disputed:
        parts.append(f"{len(disputed)} output(s) ({listed(disputed)}) where eager's float64 run "
                     f"is itself further from PyTorch's decompositions of its ops run in float64 "
                     f"(RMS up to {apart_most:.3g}) than the criterion allows a float32 result, "
                     f"and within it against that decomposed run ({EAGER_DISPUTED}: correct)")
    return True, "; ".join(parts)


def _float64_copy(module):
    """A copy of `module` in float64 (each float64 run starts from the
    module's own state: a training step may update buffers in place)."""
    import copy

    import torch

    module64 = copy.deepcopy(module)
    if isinstance(module64, torch.nn.Module):
        module64 = module64.double()
    return module64


def _decomposed_float64_outputs(run, module, args, count: int) -> list:
    """The outputs of `run` on `module` and `args` in float64 under
    run_decomposed; [None] when that fails or gives other than `count`
    outputs."""
    import torch.utils._pytree as pytree

    try:
        outs = pytree.tree_leaves(run_decomposed(run, _float64_copy(module),
                                                 float64_args(args)))
    except Exception:
        return [None]
    return outs if len(outs) == count else [None]


def _make_contender(name: str, module, dynamic, export_shapes=None):
    import torch

    import disc

    if name == "eager":
        return module
    if name == "inductor":
        return torch.compile(module, backend="inductor", dynamic=dynamic)
    if name == "disc":
        return torch.compile(module, backend="disc", dynamic=dynamic)
    if name == "disc-export":
        # One graph for every shape: disc.compile(mode="export").
        return disc.compile(module, mode="export", dynamic_shapes=export_shapes)
    raise ValueError(f"unknown compiler {name!r} (eager, inductor, disc, disc-export)")


def _variant_inputs_and_references(module, sample, constraints, variants, expected, config):
    """Inputs of every variant and eager's outputs there (into `expected`);
    {variant: why} for those eager cannot run."""
    from .shapes import variant_inputs

    inputs, unsupported = [sample.inputs], {}
    for i, values in enumerate(variants[1:], start=1):
        try:
            x = variant_inputs(sample, constraints, values, seed=config["seed"] + i,
                               device=config["device"])
            expected[i] = module(*x)
            inputs.append(x)
        except Exception as e:
            inputs.append(None)
            unsupported[i] = ("eager PyTorch cannot run the sample at this shape "
                              f"(sizes pinned in model.py): {_describe(e)[:400]}")
    return inputs, unsupported


def _untraceable_by_dynamo(path: str):
    """Why Dynamo cannot capture the sample as written, or None. A model.py
    that calls functorch's vmap internals (`_vmap_increment_nesting`: Dynamo's
    own flattening of a torch.vmap, e.g. whisper's causal mask) breaks the
    graph at that call, and the rest of the frame then runs inside the
    pushed vmap layer, which Dynamo refuses to trace: every contender would
    run the whole sample in eager."""
    try:
        with open(os.path.join(path, "model.py")) as f:
            source = f.read()
    except OSError:
        return None
    if "_vmap_increment_nesting" in source:
        return ("model.py calls torch._C._functorch._vmap_increment_nesting, which Dynamo "
                "cannot trace: every contender and eager run the torch.fx trace (the vmap "
                "folded at trace time)")
    return None


def _generalized(sample, constraints, variants, expected, config, base, notes, best,
                 prefer=False):
    """--generalize: the module with its pinned sizes rewritten (recording
    factory calls, then without), kept when it gives the example's result
    and runs more variants in eager than `best` (module, inputs,
    unsupported), or as many with `prefer` (the sample as written cannot
    be captured by Dynamo)."""
    from .correctness import outputs_match
    from .shapes import generalize

    reasons = []
    for record_factories in (True, False):
        try:
            gm, report = generalize(sample.module, constraints, record_factories)
            gm.eval()
            ok, _, why = outputs_match(expected[0], gm(*sample.inputs))
        except Exception as e:  # an untraceable sample keeps its pinned sizes
            reasons.append(f"could not trace the sample: {_describe(e)[:300]}")
            continue
        if not ok:
            reasons.append(f"changed the example's result ({why})")
            continue
        trial = list(expected)
        inputs, unsupported = _variant_inputs_and_references(gm, sample, constraints, variants,
                                                             trial, config)
        if len(unsupported) < len(best[2]) or (prefer and len(unsupported) <= len(best[2])):
            expected[:] = trial
            best = (gm, inputs, unsupported)
            base["generalized"] = True
            base["generalize_report"] = str(report)
        if not unsupported:
            break
    if not base["generalized"]:
        notes.append("--generalize did not help: " + "; ".join(reasons) if reasons else
                     "--generalize did not help: the rewritten module fails at the same shapes")
    return best


def run_sample(path: str, config: dict, emit) -> None:
    """Runs every contender on every shape variant of one sample, calling
    `emit(record)` for each (sample, contender, shape)."""
    import torch

    import disc

    from .correctness import disc_stats_delta, outputs_match
    from .graphnet import load_sample
    from .shapes import derive_variants, read_constraints

    device = config["device"]
    threads = config["threads"]
    torch.set_num_threads(threads)
    dynamic = _DYNAMIC[config["dynamic"]]
    if config.get("size_oblivious"):
        # PyTorch's switches: dynamic sizes seen as 0 or 1 stay symbolic
        # instead of being specialised (a batch of 1 then 2 is one graph),
        # and dims that happen to be equal in the example (a weight dim of 1
        # and a batch of 1) get symbols of their own. Every contender alike.
        import torch.fx.experimental._config as fx_config

        fx_config.backed_size_oblivious = True
        fx_config.use_duck_shape = False
    if device.startswith("cuda"):
        # Full float32 for every contender: with TF32 (PyTorch's default for
        # cuDNN convolutions) the same graph run op by op after
        # decomposition differs from eager by more than the tolerance on
        # deep convolutional stacks (rtmpose-t and convtasnet were "wrong"
        # under DISC with every node in eager, and under Inductor, on an
        # H100), so the check would measure TF32, not the compiler.
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    if config.get("capture_scalars"):
        # Dynamo's switch: Tensor.item() stays in the graph (a data-dependent
        # symbol) instead of breaking it; a break passes the batch size to
        # the resumed frame as a Python int, specialised to its first value.
        torch._dynamo.config.capture_scalar_outputs = True
    sample = load_sample(path, device=device, seed=config["seed"])
    constraints = read_constraints(path)
    variants = derive_variants(constraints, config["shapes"])
    base = {"sample": sample.name, "category": sample.name.split("/")[0], "device": device,
            "threads": threads, "dynamic": config["dynamic"], "generalized": False}
    module = sample.module
    notes = []
    if config["shapes"] > 1 and constraints is None:
        notes.append("input_tensor_constraints.py declares no dynamic dimension: "
                     "the example shape only")
    with torch.no_grad():
        expected = [None] * len(variants)
        expected[0] = sample.module(*sample.inputs)
        inputs, unsupported = _variant_inputs_and_references(
            module, sample, constraints, variants, expected, config)
        untraceable = _untraceable_by_dynamo(path) if config["generalize"] else None
        if config["generalize"] and ((constraints is not None and unsupported) or untraceable):
            module, inputs, unsupported = _generalized(sample, constraints, variants, expected,
                                                       config, base, notes,
                                                       (module, inputs, unsupported),
                                                       prefer=bool(untraceable))
            if untraceable and base["generalized"]:
                notes.append(untraceable)
        if config["dynamic"] in ("marked", "unbacked"):
            marked = _mark_dynamic(sample, constraints, inputs[0],
                                   unbacked=config["dynamic"] == "unbacked")
            notes.append("dynamic dims: " + (", ".join(marked) or "none"))
        training = config.get("mode") == "train"
        if training:
            base["mode"] = "train"
            trainable = trainable_inputs(sample.arg_names)
            eager_step = training_step(module, trainable)
            for i, x in enumerate(inputs):
                if x is None:
                    continue
                try:
                    expected[i] = eager_step(*x)
                except Exception as e:
                    unsupported[i] = f"eager's backward fails: {_describe(e)[:300]}"
        for name in config["compilers"]:
            torch._dynamo.reset()
            torch._dynamo.utils.counters.clear()
            before = disc.stats()
            failed = None
            traces_before = 0
            try:
                runner = _make_contender(
                    name, module, dynamic,
                    _export_dynamic_shapes(sample, constraints, inputs[0])
                    if name == "disc-export" else None)
                if training:
                    runner = training_step(runner, trainable)
            except Exception as e:
                failed = ("compile_error", _describe(e))
            for i, values in enumerate(variants):
                record = dict(base, contender=name, shape_index=i, symbols=values, notes=notes)
                if i in unsupported:
                    emit(dict(record, outcome="shape_unsupported", detail=unsupported[i]))
                    continue
                record["input_shapes"] = _shape_summary(inputs[i])
                if failed is not None:
                    emit(dict(record, outcome=failed[0], detail=failed[1]))
                    continue
                counts_before = _dynamo_counts()
                try:
                    sync = _sync_fn(device)
                    t0 = time.perf_counter()
                    actual = runner(*inputs[i])
                    sync()
                    first = time.perf_counter() - t0
                    paired = None if name == "eager" else (eager_step if training else module)
                    with exclusive_timing(config.get("timing_lock")) as (waited, held):
                        timing = time_calls(runner, inputs[i], device, config["warmup"],
                                            config["trials"], config["budget"],
                                            config.get("min_time", 0.0), paired=paired)
                    if config.get("timing_lock"):
                        record["timing_lock_wait_s"] = round(waited, 3)
                        if not held:
                            record["notes"] = notes + [
                                "timed without --timing-lock's lock (another process held "
                                f"it past {TIMING_LOCK_MAX_WAIT_S:g} s)"]
                    times, eager_times = timing if paired is not None else (timing, None)
                except Exception as e:
                    outcome = _classify_exception(e)
                    emit(dict(record, outcome=outcome, detail=_describe(e)))
                    if i == 0:
                        failed = (outcome, "failed at the example shape: " + _describe(e)[:300])
                    continue
                counts_after = _dynamo_counts()
                ok, _, why = outputs_match(expected[i], actual)
                if not ok and name != "eager":
                    verdict = float64_verdict(module, inputs[i], expected[i], actual,
                                              trainable if training else None)
                    if verdict is not None:
                        ok, why = verdict[0], f"{why}; {verdict[1]}"
                        record["checked_against"] = (
                            "float64, and PyTorch's decompositions in float64"
                            if EAGER_DISPUTED in why else "float64")
                median = statistics.median(times)
                record.update(
                    outcome="correct" if ok else "wrong", detail=why,
                    median_ms=median * 1e3, min_ms=min(times) * 1e3, trials=len(times),
                    first_call_s=first,
                    eager_paired_ms=(statistics.median(eager_times) * 1e3
                                     if eager_times else None),
                    compile_s=max(0.0, first - median) if name != "eager" else 0.0,
                    graphs_compiled=counts_after["graphs"] - counts_before["graphs"],
                    graph_breaks=counts_after["graph_breaks"],
                    **error_figures(expected[i], actual))
                if name in ("disc", "disc-export"):
                    record.update(disc_stats_delta(before, disc.stats()))
                    record["peak_mib"] = _disc_call_peak_mib(runner, inputs[i])
                if name == "disc-export":
                    # Traces, not Dynamo graphs: this contender bypasses Dynamo.
                    record["graphs_compiled"] = runner.traces - traces_before
                    traces_before = runner.traces
                    record["traces"] = runner.traces
                    # What disc.load does with an artifact of these programs
                    # (weights aside: this mode passes them per call).
                    t0 = time.perf_counter()
                    for entry in runner.entries:
                        disc._runtime.load_program(entry.executable._artifact, "bench")
                    record["artifact_load_ms"] = (time.perf_counter() - t0) * 1e3
                    record["artifact_mb"] = sum(len(e.executable._artifact)
                                                for e in runner.entries) / 1e6
                emit(record)


def _worker(path: str, config: dict, out_file: str) -> int:
    def emit(record):
        with open(out_file, "a") as f:
            f.write(json.dumps(record) + "\n")

    try:
        run_sample(path, config, emit)
    except Exception as e:  # loading the sample itself failed
        from .graphnet import sample_name

        emit({"sample": sample_name(path), "category": sample_name(path).split("/")[0],
              "contender": "*", "shape_index": 0, "outcome": "eager_error",
              "detail": f"the sample does not load or run in eager: {_describe(e)}"})
    return 0


# ---------------------------------------------------------------- driver


def run_isolated(path: str, config: dict, timeout: float) -> list:
    """run_sample in a subprocess; what it reports before a crash or timeout
    is kept, and the (contender, shape) pairs it did not reach are recorded
    as "crash" or "timeout"."""
    import tempfile

    from .graphnet import sample_name
    from .isolation import run_child

    fd, out_file = tempfile.mkstemp(prefix="disc-bench-", suffix=".jsonl")
    os.close(fd)
    # Compile times are cold for every contender: Inductor's on-disk caches
    # (FX graph, AOTAutograd, kernels) would otherwise turn a repeated run's
    # compile into a cache lookup (21 s -> 3 s median on the shared set).
    cache_dir = tempfile.mkdtemp(prefix="disc-bench-inductor-")
    env = dict(os.environ, OMP_NUM_THREADS=str(config["threads"]),
               MKL_NUM_THREADS=str(config["threads"]),
               TORCHINDUCTOR_CACHE_DIR=cache_dir,
               TORCHINDUCTOR_FX_GRAPH_CACHE="0",
               TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    start = time.time()
    child = run_child("disc.bench.harness",
                      ["--worker", path, "--config", json.dumps(config), "--worker-out", out_file],
                      timeout, env=env, tail_lines=8)
    outcome, detail = child.outcome, child.detail
    with open(out_file) as f:
        records = [json.loads(line) for line in f if line.strip()]
    os.unlink(out_file)
    shutil.rmtree(cache_dir, ignore_errors=True)
    name = sample_name(path)
    done = {(r["contender"], r["shape_index"]) for r in records}
    if outcome is not None:
        count = max(1, len({r["shape_index"] for r in records}))
        for c in config["compilers"]:
            for i in range(count):
                if (c, i) not in done and ("*", 0) not in done:
                    records.append({"sample": name, "category": name.split("/")[0],
                                    "contender": c, "shape_index": i, "outcome": outcome,
                                    "detail": detail})
    for r in records:
        r.setdefault("sample_seconds", round(time.time() - start, 1))
    return records


def machine_description(threads: int, device: str) -> dict:
    import torch

    cpu, flags = platform.processor() or "unknown", ""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        for line in text.splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        flags = " ".join(x for x in ("avx2", "avx512f", "fma") if f" {x}" in text)
    except OSError:
        pass
    info = {"cpu": cpu, "cpu_flags": flags, "cores": os.cpu_count(), "threads": threads,
            "torch": torch.__version__, "python": platform.python_version(),
            "device": device, "date": datetime.date.today().isoformat()}
    if device.startswith("cuda") and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name()
    try:
        import disc

        info["disc"] = disc.__version__ if hasattr(disc, "__version__") else "dev"
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=os.path.dirname(__file__))
        if rev.returncode == 0:
            info["disc"] += f" ({rev.stdout.strip()})"
    except Exception:
        pass
    return info


def _progress(total: int):
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="sample", file=sys.stderr, dynamic_ncols=True)
    except ImportError:  # a plain counter
        class Plain:
            n = 0

            def update(self, k=1):
                self.n += k
                print(f"[{self.n}/{total}]", file=sys.stderr, flush=True)

            def set_postfix_str(self, s):
                print(s, file=sys.stderr, flush=True)

            def close(self):
                pass

        return Plain()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m disc.bench graphnet", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="sample directories or folders of them")
    parser.add_argument("--compilers", default="eager,inductor,disc",
                        help="comma-separated, from eager, inductor, disc, disc-export "
                        "(disc.compile(mode=\"export\"): one traced graph; default: the first three)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="threads for every contender (default: all cores)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--min-time", type=float, default=1.0,
                        help="seconds of timed calls at least, for fast calls (more trials)")
    parser.add_argument("--budget", type=float, default=30.0,
                        help="seconds of timed calls per measurement (at least 3 trials)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per sample")
    parser.add_argument("--shapes", type=int, default=1,
                        help="shape variants per sample, the example first (see --generalize)")
    parser.add_argument("--generalize", action="store_true",
                        help="rewrite model.py's pinned sizes into input sizes (FX pass)")
    parser.add_argument("--dynamic", choices=sorted(_DYNAMIC), default="auto",
                        help="torch.compile's dynamic= for the compilers (auto: None, "
                             "PyTorch's default: static first, dynamic on a recompile; "
                             "marked: None with the sample's constrained dims marked "
                             "dynamic, weights static; unbacked: the same dims marked "
                             "unbacked, never specialised)")
    parser.add_argument("--size-oblivious", action="store_true",
                        help="trace sizes 0/1 symbolically for every compiler "
                             "(torch.fx.experimental._config.backed_size_oblivious)")
    parser.add_argument("--capture-scalars", action="store_true",
                        help="keep Tensor.item() in the graph for every compiler "
                             "(torch._dynamo.config.capture_scalar_outputs)")
    parser.add_argument("--mode", choices=("infer", "train"), default="infer",
                        help="infer: the forward under torch.no_grad(); train: a training "
                             "step, loss = sum of the float outputs, gradients of every "
                             "float input (the samples' weights are inputs) against eager's")
    parser.add_argument("--timing-lock", metavar="FILE",
                        help="time calls only while holding an exclusive lock on FILE: "
                             "harness runs side by side (shards) that share FILE compile "
                             "and check in parallel but time one at a time")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--penalty", type=float, default=0.1,
                        help="score of a failed sample in S(t) (see docs/graphnet.md)")
    parser.add_argument("--out", default="bench-out", help="output folder")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args.worker, json.loads(args.config), args.worker_out)

    from .graphnet import find_samples
    from .report import write_report

    compilers = [c.strip() for c in args.compilers.split(",") if c.strip()]
    for c in compilers:
        if c not in ("eager", "inductor", "disc", "disc-export"):
            parser.error(f"unknown compiler {c!r}: choose from eager, inductor, disc, "
                         "disc-export")
    if "eager" not in compilers:
        compilers.insert(0, "eager")  # the baseline of every speedup
    if args.mode == "train" and "disc-export" in compilers:
        parser.error("--mode train: disc-export compiles inference only")
    if args.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            parser.error("--device cuda: this PyTorch sees no CUDA device")
    paths = find_samples(args.paths)
    if not paths:
        parser.error("no samples (directories with model.py) under " + " ".join(args.paths))
    config = {"compilers": compilers, "device": args.device, "threads": args.threads,
              "warmup": args.warmup, "trials": args.trials, "budget": args.budget,
              "min_time": args.min_time,
              "shapes": max(1, args.shapes), "generalize": args.generalize,
              "dynamic": args.dynamic, "size_oblivious": args.size_oblivious,
              "capture_scalars": args.capture_scalars, "seed": args.seed,
              "mode": args.mode, "timing_lock": args.timing_lock}
    os.makedirs(args.out, exist_ok=True)
    results = os.path.join(args.out, "results.jsonl")
    meta = {"machine": machine_description(args.threads, args.device), "config": config,
            "command": "python -m disc.bench graphnet " + " ".join(argv if argv is not None
                                                                   else sys.argv[1:]),
            "penalty": args.penalty}
    with open(results, "w") as f:
        f.write(json.dumps({"meta": meta}) + "\n")
    bar = _progress(len(paths))
    start = time.time()
    for path in paths:
        records = run_isolated(path, config, args.timeout)
        with open(results, "a") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
        first = {r["contender"]: r["outcome"] for r in records if r["shape_index"] == 0}
        bar.set_postfix_str(f"{records[0]['sample'] if records else path}: "
                            + " ".join(f"{k}={v}" for k, v in first.items()))
        bar.update(1)
    bar.close()
    meta["wall_s"] = round(time.time() - start, 1)
    summary = write_report(results, args.out, meta_override={"wall_s": meta["wall_s"]})
    print(summary)
    print(f"\nrecords: {results}\nreport: {os.path.join(args.out, 'summary.md')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
