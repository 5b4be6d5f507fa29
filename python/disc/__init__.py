"""DISC: a dynamic-shape deep-learning compiler on MLIR.

    compiled = torch.compile(model, backend="disc")   # or disc.compile(model)
    y = compiled(x)                                    # any batch / length: compiled once

    exe = disc.compile_mlir(text)     # a program in the `disc` MLIR dialect
    y, = exe(x)

See README.md and docs/ for the architecture and the op table.
"""
from __future__ import annotations

import itertools
import os
import sys
import time

from . import _cache, _log, _runtime
from ._runtime import ArtifactError, CompileError, DiscError, InvocationError


def _compiler():
    """disc._C, the compiler (MLIR, LLVM): imported the first time
    something compiles, so that loading and running artifacts never loads
    it."""
    from . import _C

    return _C

__all__ = [
    "Artifact",
    "ArtifactError",
    "CompileError",
    "DiscError",
    "Executable",
    "InvocationError",
    "VerificationError",
    "backend",
    "compile",
    "compile_mlir",
    "explain",
    "export",
    "load",
    "memory_stats",
    "profile",
    "profile_table",
    "reset_peak_memory",
    "reset_profile",
    "runtime_dir",
    "stats",
]

_dump_counter = itertools.count()
_compile_seconds = [0.0]  # compile_mlir wall time in this process (stats())


def _as_tensor(value, index):
    import torch

    if isinstance(value, torch.Tensor):
        tensor = value
    elif hasattr(value, "__dlpack__"):
        try:
            tensor = torch.from_dlpack(value)
        except Exception as e:  # BufferError, RuntimeError, TypeError from the producer
            raise InvocationError(f"argument {index}: cannot read it through DLPack "
                                  f"({type(e).__name__}: {e})") from e
    else:
        raise InvocationError(
            f"argument {index} is a {type(value).__name__}; expected a tensor "
            "(a torch.Tensor or an object with __dlpack__)"
        )
    if tensor.device.type not in ("cpu", "cuda"):
        raise InvocationError(
            f"argument {index} is on {tensor.device}; DISC runs on the CPU and CUDA GPUs"
        )
    # Layouts whose memory is not a plain strided array of the dtype.
    if tensor.is_mkldnn:
        raise InvocationError(f"argument {index} is an mkldnn tensor; DISC takes dense "
                              "strided tensors (call .to_dense() first)")
    if tensor.layout != torch.strided:
        raise InvocationError(f"argument {index} has layout {tensor.layout}; DISC takes "
                              "dense strided tensors (call .to_dense() first)")
    if tensor.is_quantized:
        raise InvocationError(f"argument {index} is a quantized tensor ({tensor.dtype}); "
                              "DISC takes unquantized tensors (call .dequantize() first)")
    # The conjugate and negative bits are lazy: the memory holds the values
    # before conjugation/negation, so they are applied here (a copy).
    tensor = tensor.detach()
    if tensor.is_conj():
        tensor = tensor.resolve_conj()
    if tensor.is_neg():
        tensor = tensor.resolve_neg()
    # Zero-copy when the tensor is already contiguous.
    try:
        return tensor.contiguous()
    except RuntimeError as e:  # e.g. a broadcast (stride-0) view too large to materialise
        raise InvocationError(
            f"argument {index} (shape {list(tensor.shape)}, strides {list(tensor.stride())}) "
            f"cannot be made contiguous: {str(e).splitlines()[0]}") from e


def _as_argument(value, index):
    """What the C++ runtime takes for one argument. A contiguous tensor goes
    as a DLPack capsule straight from ATen; the runtime checks its device,
    dtype and layout and names the argument when one is wrong. The checks
    here are the fewest that keep that right (each tensor attribute costs
    0.2 us, and a partition has a tensor per weight and per optimizer
    state): a lazily negated tensor exports its memory as it is, so it and
    anything ATen will not export (sparse, quantized, meta tensors) go
    through _as_tensor, as do views (a contiguous copy). A complex tensor
    (conjugate bit) is rejected by its dtype either way."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor) and value.is_contiguous() \
            and not value.is_neg():
        try:
            return torch._C._to_dlpack(value)
        except (RuntimeError, BufferError):
            pass
    return _as_tensor(value, index)


def _as_arguments(values) -> list:
    """_as_argument of each value, with the common case (contiguous tensors,
    no negative bit) inline: a partition's call passes a tensor per weight
    and optimizer state, and a Python call per argument cost 0.2-0.3 us."""
    torch = sys.modules.get("torch")
    if torch is not None:
        to_dlpack = torch._C._to_dlpack
        try:
            return [to_dlpack(v) if v.is_contiguous() and not v.is_neg()
                    else _as_argument(v, i) for i, v in enumerate(values)]
        except (AttributeError, TypeError, RuntimeError, BufferError):
            pass  # not all tensors, or one ATen will not export: one at a time
    return [_as_argument(v, i) for i, v in enumerate(values)]


def _is_zero_copy(argument) -> bool:
    """Whether _as_argument passed the tensor's own memory (not a copy)."""
    return type(argument).__name__ == "PyCapsule"


def _fp32_precision(torch, backend: str, op: str) -> str:
    """PyTorch's float32 precision for `op` of `backend` ("tf32" or
    "ieee"), resolved as ATen does: the op's setting, else the backend's,
    else the global one; unset everywhere is "ieee"."""
    backends = torch.backends
    for holder in (getattr(getattr(backends, backend), op), getattr(backends, backend), backends):
        precision = getattr(holder, "fp32_precision", "none")
        if precision != "none":
            return precision
    return "ieee"


def _tf32_settings(torch) -> tuple:
    """(matmuls, convolutions): whether PyTorch lets f32 matmuls
    (torch.backends.cuda.matmul.allow_tf32, torch.set_float32_matmul_precision)
    and cuDNN convolutions (torch.backends.cudnn.allow_tf32, True by default)
    use TF32 now. A cuda program's library calls follow them, read on every
    call as eager's kernels read them."""
    # PyTorch 2.9+ refuses the legacy questions when the legacy flags and
    # the per-op settings (the newer API) disagree, or cuDNN's convolution
    # and RNN settings do: then the per-op setting answers, as it does for
    # eager's kernels.
    try:
        matmul = torch._C._get_cublas_allow_tf32()
    except RuntimeError:
        matmul = _fp32_precision(torch, "cuda", "matmul") == "tf32"
    try:
        convolution = torch._C._get_cudnn_allow_tf32()
    except RuntimeError:
        convolution = _fp32_precision(torch, "cudnn", "conv") == "tf32"
    return matmul, convolution


_cuda_allocator_resolved = []  # [allocator or None], once per process


def _reset_runtime_settings() -> None:
    """Forgets the settings read once per process when a call runs
    (DISC_CUDA_ALLOCATOR), so that the next call reads the environment
    again: bench/env_ab.py A/Bs them within one process."""
    _cuda_allocator_resolved.clear()


def _cuda_allocator(torch):
    """Where a cuda call's device memory comes from. By default PyTorch's
    caching allocator (torch.cuda.caching_allocator_alloc's entry points),
    so that DISC's buffers and PyTorch's share one pool and count in
    torch.cuda.memory_allocated(); DISC_CUDA_ALLOCATOR=pool: the device's
    own stream-ordered pool (cuMemAllocAsync), as a standalone program
    uses. None means the pool. Read once per process (the environment
    costs half a microsecond per look)."""
    if _cuda_allocator_resolved:
        return _cuda_allocator_resolved[0]
    choice = os.environ.get("DISC_CUDA_ALLOCATOR", "torch")
    if choice not in ("torch", "pool"):
        raise DiscError(f"DISC_CUDA_ALLOCATOR={choice!r}: expected 'torch' (PyTorch's "
                        f"caching allocator, the default) or 'pool' (the device's "
                        f"stream-ordered pool)")
    allocator = None
    allocate = getattr(torch._C, "_cuda_cudaCachingAllocator_raw_alloc", None)
    free = getattr(torch._C, "_cuda_cudaCachingAllocator_raw_delete", None)
    if choice == "pool":
        _log.log("memory", "cuda calls allocate from the device's stream-ordered pool "
                           "(DISC_CUDA_ALLOCATOR=pool)")
    elif allocate is None or free is None:
        _log.log("memory", "this PyTorch has no caching-allocator entry points "
                           "(torch._C._cuda_cudaCachingAllocator_raw_alloc): cuda calls "
                           "allocate from the device's stream-ordered pool")
    else:
        allocator = _runtime.DeviceAllocator(allocate, free, "PyTorch's CUDA caching allocator")
        _log.log("memory", "cuda calls allocate through PyTorch's CUDA caching allocator")
    _cuda_allocator_resolved.append(allocator)
    return allocator


class Executable:
    """A compiled program. Call it with tensors; it returns a tuple of tensors."""

    def __init__(self, impl, seconds: float = 0.0, cached: bool = False, artifact=None):
        self._impl = impl
        self._target = impl.target  # "cpu" or "cuda", read on every call
        self._cuda_seen = False  # PyTorch saw a CUDA device (checked once)
        self._seconds = seconds
        self._cached = cached
        self._artifact = artifact  # the artifact's bytes (what Artifact.save writes)

    def __call__(self, *args, results_into=None):
        """Runs the program. `results_into` ({result index: argument
        index}) updates arguments in place: each such result is written into
        its argument's memory once the whole call has run, and comes back as
        None. A destination must be a contiguous tensor of the result's
        dtype and shape (InvocationError otherwise; nothing is written then)."""
        device = self._cuda_device()
        arguments = _as_arguments(args)
        into = []
        if results_into:
            into = [-1] * (max(results_into) + 1)
            for r, k in results_into.items():
                if r < 0 or not 0 <= k < len(args):
                    raise InvocationError(f"results_into maps result {r} to argument {k}, "
                                          f"which does not exist")
                if not _is_zero_copy(arguments[k]):
                    raise InvocationError(
                        f"argument {k} is to receive result {r} but is not a contiguous "
                        f"tensor (a copy of it would be written)")
                into[r] = k
        return self._run(arguments, into, device)

    def _cuda_device(self) -> int:
        """-1 for a CPU program; for a cuda one, the caller's current device
        (a clear error when PyTorch sees none). Runs on every call: after
        the first successful check it is one ATen call."""
        if self._target != "cuda":
            return -1
        torch = sys.modules.get("torch")
        if not self._cuda_seen:
            if torch is None or not torch.cuda.is_available():
                why = _runtime.cuda_driver_available()[1]
                raise DiscError("this executable was compiled for target cuda, but "
                                "PyTorch sees no CUDA device" + (f" ({why})" if why else ""))
            torch.cuda.init()
            self._cuda_seen = True
        return torch._C._cuda_getDevice()

    def _run(self, arguments: list, into: list, device: int, share_groups=()) -> tuple:
        """Runs on arguments made by _as_argument. Results overlap in
        memory only within one `share_groups` group (a group number per
        result, -1 for none; by default no two results share)."""
        if device < 0:
            return tuple(self._impl.run(arguments, into=into, share_groups=share_groups))
        # The caller's current stream: the work is queued there,
        # asynchronously (nothing here synchronises the device). The raw
        # handle, as Inductor's code takes it: torch.cuda.current_stream()
        # builds a Stream object, microseconds per call.
        torch = sys.modules["torch"]
        stream = torch._C._cuda_getCurrentRawStream(device)
        return tuple(self._impl.run(arguments, stream, device, into, share_groups,
                                    *_tf32_settings(torch), _cuda_allocator(torch)))

    @property
    def target(self) -> str:
        """"cpu" or "cuda": where the program's inputs and outputs live."""
        return self._impl.target

    @property
    def entry_name(self) -> str:
        return self._impl.metadata.get("entry", "")

    @property
    def compile_seconds(self) -> float:
        """Seconds compile_mlir took for this program in this process
        (compiling and loading, or, on a compile-cache hit, reading and
        loading the cached artifact)."""
        return self._seconds

    @property
    def from_cache(self) -> bool:
        """Whether compile_mlir found the program in the compile cache."""
        return self._cached

    @property
    def load_seconds(self) -> float:
        """Seconds loading the compiled shared object took."""
        return self._impl.load_seconds

    @property
    def metadata(self) -> dict:
        """The artifact's metadata (target, cpu.features, compiler.version,
        kernel counts, ...; docs/artifacts.md)."""
        return dict(self._impl.metadata)

    @property
    def kernel_counts(self) -> dict:
        """What one call runs: {"loops": generated loop kernels (one per
        loop nest after fusion), "library_calls": oneDNN matmul/conv calls,
        "copies": whole-buffer copies}."""
        meta = self._impl.metadata
        return {"loops": int(meta.get("kernels.loops", 0)),
                "library_calls": int(meta.get("kernels.library_calls", 0)),
                "copies": int(meta.get("kernels.copies", 0))}

    @property
    def signature(self):
        """([(name, dtype, dims, dim_classes)], [(dtype, rank)]); dims -1 = dynamic."""
        args, results = self._impl.signature
        return [tuple(a[:4]) for a in args], list(results)

    @property
    def results_into_arguments(self) -> dict:
        """{result index: argument index} for the results the compiled code
        writes into an argument's memory (the entry argument's
        `disc.result_into`; docs/architecture.md, "In-place results"). A
        call updates those arguments whatever its results_into says; passing
        results_into={r: k} for them also skips returning the result."""
        return {r: k for r, k in enumerate(self._impl.results_into_arguments) if k >= 0}

    def __repr__(self):
        args, results = self.signature
        return f"<disc.Executable @{self.entry_name} args={args} results={results}>"


def default_target() -> str:
    """The target of CPU programs: DISC_TARGET ("cpu", the default, or
    "cuda-emulated", which runs every CPU program through the cuda target's
    block/thread mapping to test its index arithmetic without a GPU)."""
    value = os.environ.get("DISC_TARGET", "") or "cpu"
    if value not in ("cpu", "cuda-emulated"):
        raise ValueError(f"DISC_TARGET must be 'cpu' or 'cuda-emulated', got {value!r} "
                         "(CUDA tensors select the cuda target by themselves)")
    return value


def compile_mlir(text: str, *, dump_dir: str | None = None,
                 source_name: str = "input.mlir", target: str | None = None,
                 cuda_chips=None,
                 _exact_dump_dir: bool = False, _bind: dict | None = None) -> Executable:
    """Compiles the public function of an MLIR module (the one named `main`
    if there are several) to native code, once for all shapes.

    Raises CompileError with MLIR's diagnostics (source_name:line:column) when
    the module is malformed, does not verify, or cannot be lowered. With
    `dump_dir` (or the environment variable DISC_DUMP_DIR) the IR after every
    pass is written there, one sub-directory per compilation. DISC_LOG=compile
    prints the time of each compile phase to stderr, DISC_LOG=fusion the
    stitch kernels (row reductions fused with their elementwise stages).

    `target` is "cpu", "cuda" (kernels for NVIDIA GPUs, sm_80 and sm_90
    cubins plus PTX; compiling needs the CUDA toolkit's ptxas, not a GPU;
    calling needs one: docs/cuda.md) or "cuda-emulated" (the CPU program
    with the cuda target's block/thread mapping, to test it without a GPU).
    Without `target`, the environment variable DISC_TARGET picks "cpu"
    (the default) or "cuda-emulated" (docs/debugging.md).

    `cuda_chips` (target "cuda" only): the chips to make cubins for, e.g.
    ["sm_90"] (any of sm_80, sm_86, sm_87, sm_89, sm_90). Without it the
    environment variable DISC_CUDA_CHIPS (a comma list) decides, else
    sm_80 and sm_90. torch.compile compiles for the GPU the tensors are on
    (docs/cuda.md, "Chips").
    """
    if target is None:
        target = default_target()
    if target not in ("cpu", "cuda", "cuda-emulated"):
        raise ValueError(f"target must be 'cpu', 'cuda' or 'cuda-emulated', got {target!r}")
    if cuda_chips is not None:
        if target != "cuda":
            raise ValueError(f"cuda_chips is for target 'cuda', not {target!r}")
        if isinstance(cuda_chips, str) or not all(isinstance(c, str) for c in cuda_chips) \
                or not cuda_chips:
            raise ValueError("cuda_chips must be a non-empty list of chip names such as "
                             f"['sm_90'], got {cuda_chips!r}")
        cuda_chips = tuple(sorted(set(cuda_chips)))
    else:
        cuda_chips = ()
    if not isinstance(text, str):
        raise TypeError("compile_mlir expects the module as a str")
    if not _exact_dump_dir:
        dump_dir = dump_dir or os.environ.get("DISC_DUMP_DIR", "")
        if dump_dir:
            dump_dir = os.path.join(dump_dir, f"compile-{os.getpid()}-{next(_dump_counter):04d}")
    start = time.perf_counter()

    def load(raw: bytes, origin: str):
        # `_bind` (export paths): names, dim ranges, stored weights and
        # metadata added to the compiled artifact before it is loaded.
        data = _runtime.bind_artifact(raw, **_bind) if _bind else raw
        return data, _runtime.load_program(data, origin)

    # The compile cache (docs/artifacts.md), unless the IR is to be dumped
    # (a dump needs the compiler to run).
    cache_key = (_cache.key(text, target, source_name, cuda_chips)
                 if _cache.enabled() and not dump_dir else None)
    if cache_key is not None:
        found = _cache.lookup(cache_key, load)
        if found is not None:
            seconds = time.perf_counter() - start
            _compile_seconds[0] += seconds
            return Executable(found[1], seconds, cached=True, artifact=found[0])
    raw = _compiler().compile_mlir(text, dump_dir or "", source_name,
                                   _log.enabled("compile"), _log.enabled("fusion"), target,
                                   list(cuda_chips))
    data, program = load(raw, "the compiled artifact")
    if cache_key is not None:
        _cache.store(cache_key, raw)
    seconds = time.perf_counter() - start
    _compile_seconds[0] += seconds
    return Executable(program, seconds, artifact=data)


def stats() -> dict:
    """Process-wide counters.

    compilations    MLIR compilations (one per compiled partition)
    compile_seconds wall time in compile_mlir (compiling, or reading and
                    loading a cached artifact), not PyTorch's tracing
    compiled_nodes  ATen nodes compiled by DISC (torch.compile path)
    fallback_nodes  ATen nodes left to eager PyTorch
    graphs          graphs handed to the backend by Dynamo
    partitions      compiled partitions
    training_graphs graphs that needed autograd: AOTAutograd's joint graph,
                    split into a forward and a backward graph, both
                    compiled by DISC (docs/training.md)
    eager_calls     calls of a compiled partition that its compiled code
                    rejected (disc.InvocationError: a relation the trace
                    assumed does not hold) and that ran in eager instead,
                    logged under DISC_LOG=fallback
    eager_views     view ops (slice, reshape, chunk...) of graph inputs
                    returned as graph outputs: left to eager on purpose
                    (free there, and they must stay real views of the
                    input); not counted as fallback_nodes
    inputs_updated_in_place  input mutations of inference graphs (an
                    optimizer step's parameters and state) that compiled
                    calls write into the input's memory (Executable's
                    results_into); the others stay eager copy_ nodes, as
                    AOTAutograd would run them
    inputs_written_by_kernels  of inputs_updated_in_place, those the
                    compiled code itself writes (`disc.result_into`: the
                    fused loop computes the new value in the input's
                    memory, or copies it there at its end when a later op
                    reads the old value); the others the runtime copies in
                    after the call
    fallback_ops    {"op: reason": count} for the fallback nodes
    kernels         kernels of the compiled partitions (generated loop
                    kernels + library calls + copies; Executable.kernel_counts)
    parallel_launches  kernel loops the runtime split across threads
    serial_runs        kernel loops it ran on the calling thread (too little
                       work to pay for a parallel launch): the run-time
                       variant choice of every parallel loop
    small_matmuls      f32 matmuls the runtime computed itself on the
                       calling thread: too few multiply-adds (at most
                       DISC_SMALL_MATMUL_MACS, default 524288) to pay for a
                       oneDNN call (docs/debugging.md)
    rows_per_thread    calls of GPU row kernels (targets cuda and
                       cuda-emulated) that ran one row per thread
    rows_per_warp      ... that ran one row per warp (8 rows per block)
    rows_per_block     ... that ran one row per block: the run-time variant
                       choice of every row kernel (docs/cuda.md)
    vector_grids       calls of GPU elementwise grids that ran four elements
                       per thread with vector loads and stores
    linear_vector_grids  ... of them, calls whose four elements were
                       consecutive in the whole nest, not in one row: rows
                       of any length (docs/cuda.md, "Vector grids")
    scalar_grids       calls of such grids (ones that have the vector
                       variant) that ran one element per thread: the
                       extent not a multiple of 4, or a buffer not aligned
                       for the vector (docs/cuda.md)
    column_splits      calls of GPU column reductions (x.sum(0)) that split
                       each column's rows between threads: too few columns
                       to fill the GPU one thread each (docs/cuda.md)
    columns_per_thread ... that ran one thread per column
    index32_grids      calls of GPU elementwise grids over two or more dims
                       that delinearised in 32 bits (every thread's linear
                       index fits: DISC_CUDA_INDEX32_LIMIT; docs/cuda.md)
    index64_grids      ... that did so in 64 bits (too many elements)
    vector_rows        calls of GPU row kernels run one row per warp or
                       block whose loops over the row have a vector path
                       (docs/cuda.md) that ran it: four consecutive
                       elements per thread and step, vector loads/stores
    scalar_rows        ... that ran the scalar path: a row length not a
                       multiple of 4, or a buffer not aligned for the vector
    cached_rows        calls of GPU row kernels run one row per warp or
                       block that have row caches (docs/cuda.md) and kept
                       their rows in shared memory: a row read once
    uncached_rows      ... whose rows were too long for it
                       (DISC_CUDA_ROW_CACHE_BYTES)
    device_allocations device blocks cuda calls asked their allocator for
                       (PyTorch's caching allocator, or the stream-ordered
                       pool)
    device_blocks_reused  requests of cuda calls that a block the same call
                       had freed served instead: no allocator round trip
                       (DISC_CUDA_REUSE_BLOCKS, docs/cuda.md)
    cache_hits         compile_mlir calls served by the compile cache (local
                       or remote): nothing compiled (docs/artifacts.md)
    cache_misses       compile_mlir calls the cache could not serve
    cache_errors       cache entries found unusable (corrupt, truncated,
                       another build's): logged, removed, compiled again
    remote_cache_hits  hits served by DISC_REMOTE_CACHE
    remote_cache_errors  remote cache failures (logged; compiled locally)
    """
    from .frontend import backend as _backend

    launches, serial = _runtime.parallel_stats()
    (rows_per_thread, rows_per_block, vector_grids, scalar_grids, column_splits,
     columns_per_thread, rows_per_warp, index32_grids, index64_grids,
     vector_rows, scalar_rows, cached_rows, uncached_rows,
     linear_vector_grids) = _runtime.row_variant_stats()
    device_allocations, device_blocks_reused = _runtime.device_block_stats()
    compiler = sys.modules.get(__name__ + "._C")
    result = {"compilations": compiler.compilation_count() if compiler else 0,
              "compile_seconds": _compile_seconds[0],
              "parallel_launches": launches, "serial_runs": serial,
              "small_matmuls": _runtime.small_matmul_calls(),
              "rows_per_thread": rows_per_thread,
              "rows_per_warp": rows_per_warp,
              "rows_per_block": rows_per_block,
              "vector_grids": vector_grids,
              "linear_vector_grids": linear_vector_grids,
              "scalar_grids": scalar_grids,
              "column_splits": column_splits,
              "columns_per_thread": columns_per_thread,
              "index32_grids": index32_grids, "index64_grids": index64_grids,
              "vector_rows": vector_rows, "scalar_rows": scalar_rows,
              "cached_rows": cached_rows, "uncached_rows": uncached_rows,
              "device_allocations": device_allocations,
              "device_blocks_reused": device_blocks_reused}
    result.update(_backend.stats())
    result.update(_cache.stats())
    return result


def memory_stats() -> dict:
    """The runtime's caching allocator (process-wide, every executable).

    bytes_in_use           buffers handed out and not yet freed: the
                           intermediates of running calls and the outputs
                           the caller still holds
    peak_bytes_in_use      the most bytes_in_use since the process started
                           or reset_peak_memory()
    bytes_cached           freed blocks kept for reuse
    allocations            allocation requests
    allocation_cache_hits  requests served from a freed block
    thread_scratch_bytes   the per-thread scratch buffers of loop bodies
                           (a stitch kernel's row temporaries): outside the
                           allocator, kept for reuse until a thread exits

    Sizes are rounded up to the allocator's size buckets (at most 12.5%).
    Peak memory of one call: reset_peak_memory(), call, read the peak.
    """
    return _runtime.memory_stats()


def reset_peak_memory() -> None:
    """Starts a new peak: peak_bytes_in_use becomes bytes_in_use."""
    _runtime.reset_peak_memory()


def backend(gm, example_inputs, **options):
    """The torch.compile backend: `torch.compile(model, backend="disc")`,
    or `backend=functools.partial(disc.backend, dump_dir=...)`."""
    from .frontend.backend import backend as _backend

    return _backend(gm, example_inputs, **options)


def compile(model, *, dynamic: bool = True, fullgraph: bool = False, mode: str | None = None,
            dynamic_shapes=None, **options):
    """`torch.compile(model, backend="disc", dynamic=True)`: batch size,
    sequence length, image size or node counts may change between calls
    without recompiling. Sizes 0 and 1 are specialised by PyTorch (a call
    with such a size compiles once more) unless PyTorch's
    `torch.fx.experimental._config.backed_size_oblivious = True` is set
    before the first call: then a batch of 1 and one of 2 share a graph
    (a call needing a size-1 broadcast the trace did not see still fails a
    guard and compiles again). Options (`dump_dir=...`) go to the
    backend.

    mode="export": one graph for every shape the model's code allows. The
    model is traced through disc.export's path (torch.export, every dim
    dynamic, size-oblivious: no guards that only pick a kernel, no duck
    sizing, no 0/1 specialisation) and compiled whole, once; a call the
    program does not accept (a shape-dependent decision in the model's
    Python) traces again, logged under DISC_LOG=recompiles. Every op must be
    one DISC compiles (no eager fallback). Inference only. `dynamic_shapes`
    (torch.export's argument) narrows which dims are dynamic (default:
    every input dim)."""
    import functools

    import torch

    if mode == "export":
        from .frontend.one_graph import OneGraphModule

        if options:
            raise TypeError(f"mode='export' takes no backend options, got {sorted(options)}")
        return OneGraphModule(model, dynamic_shapes)
    if dynamic_shapes is not None:
        raise TypeError("dynamic_shapes is an argument of mode='export'")
    if mode is not None:
        raise ValueError(f"mode must be None or 'export', got {mode!r}")

    from .frontend.backend import Options

    Options.from_kwargs(**options)  # reject unknown options now
    be = functools.partial(backend, **options) if options else "disc"
    return torch.compile(model, backend=be, dynamic=dynamic, fullgraph=fullgraph)


def export(model, args, kwargs=None, dynamic_shapes=None, *, target: str = "cpu"):
    """One shape-polymorphic graph of `model` (torch.export; every input dim
    dynamic unless the model pins it or `dynamic_shapes` says otherwise),
    compiled once into a disc.Artifact: call it, `artifact.save(path)`,
    and `disc.load(path)` anywhere the runtime is (no compiler needed;
    docs/artifacts.md)."""
    from .frontend.export import export as _export

    return _export(model, args, kwargs, dynamic_shapes, target=target)


def load(path):
    """Loads an artifact written by `disc.export(...).save(path)`: a callable
    taking and returning torch tensors. Loads no compiler (MLIR, LLVM); a
    truncated, corrupted or foreign file raises disc.ArtifactError, a CPU
    without the features the code needs too."""
    from .frontend.export import load as _load

    return _load(path)


def runtime_dir() -> str:
    """The directory of the standalone runtime: libdisc_runtime.so, bin/disc-run
    and include/disc/disc_runtime.h(pp) (docs/deployment.md)."""
    return os.path.dirname(_runtime.__file__)


def explain(model, *inputs, dynamic: bool = True):
    """Compiles `model` (a fresh torch.compile, under torch.no_grad) on
    `inputs` and reports which ATen ops DISC compiles and which fall back to
    eager, and why. Returns an Explanation; print it for a summary."""
    from .frontend.explain import explain as _explain

    return _explain(model, *inputs, dynamic=dynamic)


def __getattr__(name):
    # Front-end names that need torch: imported on first use.
    if name == "Artifact":
        from .frontend.export import Artifact

        return Artifact
    if name == "VerificationError":
        from .frontend.backend import VerificationError

        return VerificationError
    raise AttributeError(f"module 'disc' has no attribute {name!r}")


def profile() -> list:
    """Per-kernel wall time of executables compiled with DISC_PROFILE=1.

    One dict per kernel, library call or copy, the most time first:
    {"name": "<kind> <callee> at <file:line:col>", "calls": n,
     "seconds": total}. kind is "loop" (a generated kernel: find the callee
    in a DISC_DUMP_DIR dump's *-disc-outline-loop-kernels.mlir), "library"
    (a oneDNN matmul/convolution) or "copy"; the location is the op's in
    the partition's imported MLIR (000-input.mlir of the dump). Process-wide,
    added up since the start or reset_profile(). Empty when nothing was
    compiled with DISC_PROFILE=1.
    """
    return [{"name": name, "calls": calls, "seconds": seconds}
            for name, calls, seconds in _runtime.profile_entries()]


def reset_profile() -> None:
    """Forgets the profile collected so far (before timing a call)."""
    _runtime.reset_profile()


def profile_table(limit: int = 25) -> str:
    """profile() as a text table: the `limit` entries with the most time,
    their share of the profiled total, calls and time per call."""
    rows = profile()
    total = sum(row["seconds"] for row in rows)
    lines = [f"{'ms':>10} {'share':>6} {'calls':>7} {'us/call':>9}  kernel"]
    for row in rows[:limit]:
        share = row["seconds"] / total if total else 0.0
        lines.append(f"{row['seconds'] * 1e3:10.2f} {share:6.1%} {row['calls']:7d} "
                     f"{row['seconds'] * 1e6 / max(row['calls'], 1):9.1f}  {row['name']}")
    if len(rows) > limit:
        rest = sum(row["seconds"] for row in rows[limit:])
        lines.append(f"{rest * 1e3:10.2f} {rest / total if total else 0:6.1%} "
                     f"{'':>7} {'':>9}  ({len(rows) - limit} more)")
    lines.append(f"{total * 1e3:10.2f} {'100.0%' if total else '':>6} "
                 f"{'':>7} {'':>9}  total ({len(rows)} kernel{'' if len(rows) == 1 else 's'})")
    return "\n".join(lines)


def _print_profile_at_exit() -> None:
    if profile():
        print("[disc] profile (DISC_PROFILE=1): wall time per kernel, "
              "process total\n" + profile_table(), file=sys.stderr)


if os.environ.get("DISC_PROFILE") == "1":
    import atexit

    atexit.register(_print_profile_at_exit)
