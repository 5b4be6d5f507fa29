"""The cuda target on a machine without a GPU (CI is one): programs compile
to kernels for sm_80 and sm_90 (ptxas accepts each one), the block/thread
mapping's index arithmetic runs on the CPU (target cuda-emulated) against
PyTorch, and using a cuda executable without a GPU is a clear error.

GPU runs are in test_cuda_gpu.py (`pytest -m cuda`)."""
from __future__ import annotations

import copy
import functools
import os
import re
import subprocess
import sys
import threading

import pytest
import torch
import torch.fx as fx

import disc
from conftest import compilations, compile_once, run_shapes

# Row softmax numerator (row max, subtract, exp) and the sum of everything:
# a row reduction, a loop kernel and a whole-tensor reduction (strided
# partial sums combined with atomics, after a one-thread grid for the
# initial value).
PROGRAM = """
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = disc.reduce %x, dims = [1], kind = max : (tensor<?x?xf32>) -> tensor<?xf32>
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %s = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %mb = disc.dynamic_broadcast_in_dim %m, %s, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  %y = disc.subtract %x, %mb : tensor<?x?xf32>
  %e = disc.exponential %y : tensor<?x?xf32>
  %t = disc.reduce %x, dims = [0, 1], kind = sum : (tensor<?x?xf32>) -> tensor<f32>
  return %e, %t : tensor<?x?xf32>, tensor<f32>
}
"""


def reference(x):
    return torch.exp(x - x.amax(1, keepdim=True)), x.sum()


FATBIN_MAGIC = bytes.fromhex("50ed55ba")

# Compiling for cuda needs the CUDA toolkit's ptxas (not a GPU).
needs_toolkit = pytest.mark.skipif(not disc._compiler().cuda_toolkit_path(),
                                   reason="no CUDA toolkit (ptxas): set DISC_CUDA_TOOLKIT")


@needs_toolkit
def test_compiles_to_fatbins_for_sm80_and_sm90(tmp_path):
    before = compilations()
    exe = disc.compile_mlir(PROGRAM, target="cuda", dump_dir=str(tmp_path),
                            _exact_dump_dir=True)
    assert compilations() == before + 1
    assert exe.target == "cuda"
    # row max (and its initial value), exp, the whole sum and its initial
    # value: one gpu.launch each, plus a kernel per run-time variant (the
    # row max's warp- and block-per-row variants, the elementwise grids'
    # vector variant; a call runs one of them, counted once). Each
    # variant's choice is an scf.if marked disc.row_variants (a row
    # kernel's two: long rows or not, then a warp or a block per row).
    loops = exe.kernel_counts["loops"]
    assert loops >= 3
    (mapped,) = tmp_path.glob("*disc-map-loops-to-gpu.mlir")
    mapped_text = mapped.read_text()
    variants = mapped_text.count("{disc.row_variants}")
    assert variants >= 3 and "disc.row_warp" in mapped_text
    (merged,) = tmp_path.glob("*disc-merge-gpu-modules.mlir")
    # (A kernel with a constant grid carries attributes: `kernel attributes
    # {known_grid_size ...}`.)
    assert len(re.findall(r"gpu\.func @\w+\([^)]*\) kernel\b", merged.read_text())) == \
        loops + variants
    # Every kernel in one module (disc-merge-gpu-modules): one fatbin per
    # chip, each with ptxas's cubin and the PTX for newer GPUs.
    fatbins = sorted(p.name for p in tmp_path.glob("*.fatbin"))
    modules = {name.split(".")[0] for name in fatbins}
    assert len(modules) == 1, fatbins
    assert fatbins == sorted(f"{m}.{chip}.fatbin" for m in modules for chip in ("sm_80", "sm_90"))
    for name in fatbins:
        data = (tmp_path / name).read_bytes()
        assert data[:4] == FATBIN_MAGIC, name
        assert len(data) > 256, name


@needs_toolkit
def test_cuda_chips_choose_the_cubins(tmp_path, monkeypatch):
    """cuda_chips (else DISC_CUDA_CHIPS, else sm_80 and sm_90) are the
    chips with a fatbin, recorded in the artifact; they are part of the
    compile cache's key."""
    monkeypatch.setenv("DISC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DISC_CACHE", raising=False)
    monkeypatch.delenv("DISC_CUDA_CHIPS", raising=False)

    def fatbin_chips(exe_dump):
        return sorted(p.name.split(".")[1] for p in exe_dump.glob("*.fatbin"))

    cases = [({}, None, ["sm_80", "sm_90"]),
             ({"cuda_chips": ["sm_90"]}, None, ["sm_90"]),
             ({"cuda_chips": ("sm_90", "sm_86", "sm_90")}, None, ["sm_86", "sm_90"]),
             ({}, "sm_89", ["sm_89"]),
             ({}, " sm_90 , sm_80", ["sm_80", "sm_90"]),
             ({"cuda_chips": ["sm_80"]}, "sm_89", ["sm_80"])]  # the argument wins
    for i, (kwargs, env, chips) in enumerate(cases):
        if env:
            monkeypatch.setenv("DISC_CUDA_CHIPS", env)
        else:
            monkeypatch.delenv("DISC_CUDA_CHIPS", raising=False)
        dump = tmp_path / str(i)
        exe = disc.compile_mlir(PROGRAM, target="cuda", dump_dir=str(dump),
                                _exact_dump_dir=True, **kwargs)
        assert fatbin_chips(dump) == chips, (kwargs, env)
        assert exe.metadata["cuda.chips"] == ",".join(chips)
        # The same program through the cache: one compile per chip set.
        before = compilations()
        again = disc.compile_mlir(PROGRAM, target="cuda", **kwargs)
        again_twice = disc.compile_mlir(PROGRAM, target="cuda", **kwargs)
        assert again.metadata["cuda.chips"] == ",".join(chips)
        assert again_twice.from_cache and compilations() == before + 1
    monkeypatch.delenv("DISC_CUDA_CHIPS")
    assert disc.compile_mlir(PROGRAM, target="cuda").metadata["cuda.chips"] == "sm_80,sm_90"


@needs_toolkit
def test_the_compile_log_names_the_chips(monkeypatch, capfd):
    monkeypatch.setenv("DISC_CACHE", "0")
    monkeypatch.setenv("DISC_LOG", "compile")
    disc.compile_mlir(PROGRAM, target="cuda", cuda_chips=["sm_90"])
    disc.compile_mlir(PROGRAM, target="cuda-emulated")
    lines = [l for l in capfd.readouterr().err.splitlines() if l.startswith("[disc] compile")]
    assert len(lines) == 2, lines
    assert lines[0].startswith("[disc] compile (cuda sm_90) context=")
    assert lines[1].startswith("[disc] compile context=")


def test_cuda_chips_are_checked(monkeypatch):
    monkeypatch.setenv("DISC_CACHE", "0")
    with pytest.raises(ValueError, match="cuda_chips is for target 'cuda', not 'cpu'"):
        disc.compile_mlir(PROGRAM, target="cpu", cuda_chips=["sm_90"])
    for bad in ("sm_90", [], [90]):
        with pytest.raises(ValueError, match="cuda_chips must be a non-empty list"):
            disc.compile_mlir(PROGRAM, target="cuda", cuda_chips=bad)
    if not disc._compiler().cuda_toolkit_path():
        return
    with pytest.raises(ValueError, match=r"cuda_chips: .* got 'sm_100'"):
        disc.compile_mlir(PROGRAM, target="cuda", cuda_chips=["sm_90", "sm_100"])
    for setting, bad in (("sm_90,compute_90", "compute_90"), ("sm_90,", ""),
                         ("sm_80 sm_90", "sm_80 sm_90")):
        monkeypatch.setenv("DISC_CUDA_CHIPS", setting)
        with pytest.raises(ValueError, match=rf"DISC_CUDA_CHIPS: .* got '{bad}'"):
            disc.compile_mlir(PROGRAM, target="cuda")


@pytest.mark.parametrize("capability, chips", [((9, 0), ["sm_90"]), ((8, 0), ["sm_80"]),
                                               ((8, 9), ["sm_80"]), ((10, 0), ["sm_90"]),
                                               ((12, 0), ["sm_90"]), ((7, 5), None)])
def test_torch_compile_compiles_for_the_gpu_it_runs_on(capability, chips, monkeypatch):
    """A partition on a cuda device compiles for the one of sm_80 and sm_90
    whose cubin that GPU loads (Hopper and newer: sm_90, whose PTX the
    driver compiles for newer chips); DISC_CUDA_CHIPS overrides; no GPU,
    or one older than sm_80: the default set (which then fails by name)."""
    from disc.frontend import backend

    monkeypatch.delenv("DISC_CUDA_CHIPS", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_capability",
                        lambda device=None: asked.append(device) or capability)
    assert backend._cuda_chips("cuda:1") == chips
    assert asked == [torch.device("cuda:1")]
    assert backend._cuda_chips(None) is None  # a CPU partition
    monkeypatch.setenv("DISC_CUDA_CHIPS", "sm_80,sm_90")
    assert backend._cuda_chips("cuda:1") is None
    monkeypatch.delenv("DISC_CUDA_CHIPS")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert backend._cuda_chips("cuda:0") is None


def test_torch_compiles_cuda_partition_passes_the_gpus_chip(monkeypatch):
    """The backend hands a cuda partition's compile the chip of the GPU
    its tensors are on, and a CPU partition none."""
    from disc.frontend import backend

    monkeypatch.delenv("DISC_CUDA_CHIPS", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    calls = []

    def recording(text, **kwargs):
        calls.append((kwargs.get("target"), kwargs.get("cuda_chips")))
        raise disc.CompileError("recorded")  # the partition then stays eager

    monkeypatch.setattr(disc, "compile_mlir", recording)
    gm = _fake_cuda_graph(lambda x: torch.relu(x) * 2, (3, 4))
    backend.compile_aten_graph(gm, 0, backend.Options())
    with torch._subclasses.fake_tensor.FakeTensorMode():
        from torch.fx.experimental.proxy_tensor import make_fx
        cpu = make_fx(lambda x: torch.relu(x) * 2, tracing_mode="fake")(torch.empty(3, 4))
    backend.compile_aten_graph(cpu, 1, backend.Options())
    assert calls == [("cuda", ["sm_90"]), (disc.default_target(), None)]


@needs_toolkit
def test_calling_without_a_gpu_is_a_clear_error():
    exe = disc.compile_mlir(PROGRAM, target="cuda")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(disc.DiscError, match="compiled for target cuda, but PyTorch sees no CUDA device"):
        exe(torch.randn(4, 8))


@needs_toolkit
def test_cpu_tensors_are_rejected_by_a_cuda_executable():
    exe = disc.compile_mlir(PROGRAM, target="cuda")
    x = torch.randn(4, 8)
    with pytest.raises(disc.InvocationError, match="argument 0 is not on the executable's CUDA device"):
        exe._impl.run([torch._C._to_dlpack(x)])


def test_missing_driver_is_reported_not_crashed():
    """A process with no driver (DISC_CUDA_DRIVER points nowhere) says why."""
    code = ("import disc; ok, why = disc._runtime.cuda_driver_available(); "
            "print(ok); print(why)")
    env = dict(os.environ, DISC_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "False"
    assert "the cuda target needs the NVIDIA driver" in lines[1]
    assert "/nonexistent/libcuda.so.1" in lines[1]


@needs_toolkit
def test_unsupported_library_call_is_a_compile_error_naming_it():
    text = """
func.func @main(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [1, 1], pad_high = [2, 2], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}"""
    with pytest.raises(disc.CompileError,
                       match=r"(?s)input.mlir:3:8: error: .*calls @disc_ral_conv_f32 with padding "
                             r"that differs between the low and high side \(1 and 2\), "
                             r"which the cuda target does not support yet"):
        disc.compile_mlir(text, target="cuda")
    # The CPU target is unaffected.
    assert disc.compile_mlir(text).target == "cpu"


@needs_toolkit
def test_convolution_compiles_to_a_cudnn_call():
    text = """
func.func @main(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}"""
    exe = disc.compile_mlir(text, target="cuda")
    assert exe.kernel_counts["library_calls"] == 1


# Two blocks alike, a library call apart: tanh of [?, 8], a matmul, tanh
# of [?, 8], a matmul. The two tanh grids are the same code.
REPEATED_BLOCKS = """
func.func @main(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %0 = disc.tanh %x : tensor<?x8xf32>
  %1 = disc.dot_general %0, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %2 = disc.tanh %1 : tensor<?x8xf32>
  %3 = disc.dot_general %2, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %3 : tensor<?x8xf32>
}"""


@needs_toolkit
def test_repeated_blocks_compile_their_kernels_once(tmp_path, monkeypatch):
    monkeypatch.setenv("DISC_CACHE", "0")
    counts = {}
    for dedup in ("0", "1"):
        monkeypatch.setenv("DISC_CUDA_DEDUP_KERNELS", dedup)
        dump = tmp_path / dedup
        exe = disc.compile_mlir(REPEATED_BLOCKS, target="cuda", dump_dir=str(dump),
                                _exact_dump_dir=True)
        assert exe.kernel_counts == {"loops": 2, "library_calls": 2, "copies": 0}
        counts[dedup] = int(exe.metadata["cuda.device_kernels"])
        (merged,) = dump.glob("*disc-merge-gpu-modules.mlir")
        text = merged.read_text()
        kernels = set(re.findall(r"gpu\.func @(\w+)\(", text))
        launched = re.findall(r"gpu\.launch_func\s+@\w+::@(\w+)\s", text)
        assert len(kernels) == counts[dedup]
        assert set(launched) == kernels  # every kernel launched, none missing
        # The grid and its vector variant, per tanh: a call launches one.
        assert len(launched) == 4
    # Each tanh is a grid and its vector variant: 4 kernels, 2 kinds.
    assert counts == {"0": 4, "1": 2}


@needs_toolkit
def test_matmul_compiles_to_a_cublaslt_call():
    text = """
func.func @main(%a: tensor<?x8xf32>, %b: tensor<8x4xf32>) -> tensor<?x4xf32> {
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}"""
    exe = disc.compile_mlir(text, target="cuda")
    assert exe.kernel_counts["library_calls"] == 1


@pytest.fixture
def saved_tf32_settings():
    """Lets the test set PyTorch's float32 precision settings and puts them
    back after it: the per-op strings hold the whole state, the legacy
    flags included. (PyTorch's test utilities, which other test files
    import, freeze the flags outside their `flags()` context managers.)"""
    backends = torch.backends
    nodes = [backends, backends.cudnn, backends.cudnn.conv, backends.cudnn.rnn,
             backends.cuda.matmul]
    with getattr(backends, "__allow_nonbracketed_mutation")():
        saved = [node.fp32_precision for node in nodes]
        legacy = backends.cudnn.allow_tf32, backends.cuda.matmul.allow_tf32
        try:
            yield
        finally:
            # The legacy flags first (PyTorch keeps them apart from the
            # strings and refuses to answer when the two disagree), then the
            # per-op strings.
            backends.cudnn.allow_tf32, backends.cuda.matmul.allow_tf32 = legacy
            for node, precision in zip(nodes, saved):
                node.fp32_precision = precision
            assert (torch._C._get_cudnn_allow_tf32(),
                    torch._C._get_cublas_allow_tf32()) == legacy


def test_tf32_settings_follow_pytorch(saved_tf32_settings):
    """What a cuda call passes its library calls: whether f32 matmuls and
    convolutions may use TF32, from PyTorch's settings at the call, each on
    its own; with the per-op API, convolutions' setting alone (PyTorch
    refuses the legacy question when cuDNN's convolution and RNN settings
    differ)."""
    from disc import _tf32_settings
    for matmul, conv in ((False, False), (True, False), (False, True), (True, True)):
        torch.backends.cuda.matmul.allow_tf32 = matmul
        torch.backends.cudnn.allow_tf32 = conv
        assert _tf32_settings(torch) == (matmul, conv)
    torch.set_float32_matmul_precision("high")
    assert _tf32_settings(torch)[0] is True
    torch.set_float32_matmul_precision("highest")
    assert _tf32_settings(torch)[0] is False
    torch.backends.cudnn.rnn.fp32_precision = "tf32"
    torch.backends.cudnn.conv.fp32_precision = "ieee"
    assert _tf32_settings(torch)[1] is False
    torch.backends.cudnn.rnn.fp32_precision = "ieee"
    torch.backends.cudnn.conv.fp32_precision = "tf32"
    assert _tf32_settings(torch)[1] is True
    # Unset for convolutions: cuDNN's setting, then the global one.
    torch.backends.cudnn.conv.fp32_precision = "none"
    torch.backends.cudnn.fp32_precision = "tf32"
    assert _tf32_settings(torch)[1] is True
    torch.backends.cudnn.fp32_precision = "none"
    torch.backends.fp32_precision = "tf32"
    assert _tf32_settings(torch)[1] is True


def test_a_cuda_call_passes_the_tf32_settings_of_the_moment(monkeypatch, saved_tf32_settings):
    """Each call of a cuda executable reads the settings anew (a program is
    compiled once and run under whatever the caller sets later), with the
    caller's current stream. The program is a stand-in: no GPU here."""
    calls = []

    class Recorder:
        target = "cuda"

        def run(self, arguments, stream, device, into, share_groups, tf32_matmul,
                tf32_convolution, allocator):
            calls.append((stream, device, tf32_matmul, tf32_convolution))
            allocators.append(allocator)
            return []

    allocators = []
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 0x5157 + device,
                        raising=False)
    _fake_caching_allocator(monkeypatch, {})
    exe = disc.Executable(Recorder())
    for matmul, conv in ((False, True), (True, False)):
        torch.backends.cuda.matmul.allow_tf32 = matmul
        torch.backends.cudnn.allow_tf32 = conv
        exe._run([], [], 1)
    assert calls == [(0x5158, 1, False, True), (0x5158, 1, True, False)]
    # PyTorch's caching allocator, one object for the process.
    assert isinstance(allocators[0], disc._runtime.DeviceAllocator)
    assert allocators[1] is allocators[0]


def _fake_caching_allocator(monkeypatch, blocks, fail=None):
    """torch._C's caching-allocator entry points (absent from a CPU build),
    handing out fake addresses recorded in `blocks` (address -> (bytes,
    stream)); `fail`: an exception raised by the next allocations. The
    process's resolved allocator is forgotten."""
    addresses = iter(range(0x10000, 1 << 40, 0x1000))

    def raw_alloc(size, stream):
        if fail is not None:
            raise fail
        address = next(addresses)
        blocks[address] = (size, stream)
        return address

    def raw_delete(address):
        del blocks[address]

    monkeypatch.setattr(torch._C, "_cuda_cudaCachingAllocator_raw_alloc", raw_alloc,
                        raising=False)
    monkeypatch.setattr(torch._C, "_cuda_cudaCachingAllocator_raw_delete", raw_delete,
                        raising=False)
    monkeypatch.setattr(disc, "_cuda_allocator_resolved", [])


def test_cuda_calls_allocate_through_pytorchs_caching_allocator(monkeypatch, capfd):
    """The allocator a cuda call gets: PyTorch's caching allocator through
    the Python entry points torch.cuda.caching_allocator_alloc uses, called
    as the runtime calls it (without the GIL, which each use takes again)."""
    blocks = {}
    _fake_caching_allocator(monkeypatch, blocks)
    monkeypatch.setenv("DISC_LOG", "memory")
    allocator = disc._cuda_allocator(torch)
    assert "through PyTorch's CUDA caching allocator" in capfd.readouterr().err
    assert disc._cuda_allocator(torch) is allocator  # resolved once
    a = allocator.allocate(100, 0x5157)
    b = allocator.allocate(4096, 0x5157)
    assert blocks == {a: (100, 0x5157), b: (4096, 0x5157)}
    assert (allocator.allocations, allocator.frees) == (2, 0)
    # A result dropped on another thread (autograd's) frees it there.
    freeing = threading.Thread(target=allocator.deallocate, args=(a, 0x5157))
    freeing.start()
    freeing.join()
    allocator.deallocate(b, 0x5157)
    assert blocks == {}
    assert (allocator.allocations, allocator.frees) == (2, 2)


def test_the_device_pool_is_chosen_by_setting_or_by_an_older_pytorch(monkeypatch, capfd):
    monkeypatch.setenv("DISC_LOG", "memory")
    _fake_caching_allocator(monkeypatch, {})
    monkeypatch.setenv("DISC_CUDA_ALLOCATOR", "pool")
    assert disc._cuda_allocator(torch) is None
    assert "stream-ordered pool (DISC_CUDA_ALLOCATOR=pool)" in capfd.readouterr().err
    # Read once per process, until reset (bench/env_ab.py's A/B).
    monkeypatch.setenv("DISC_CUDA_ALLOCATOR", "torch")
    assert disc._cuda_allocator(torch) is None
    disc._reset_runtime_settings()
    assert isinstance(disc._cuda_allocator(torch), disc._runtime.DeviceAllocator)
    disc._reset_runtime_settings()
    monkeypatch.setenv("DISC_CUDA_ALLOCATOR", "cudaMalloc")
    with pytest.raises(disc.DiscError, match="DISC_CUDA_ALLOCATOR='cudaMalloc': expected"):
        disc._cuda_allocator(torch)
    monkeypatch.delenv("DISC_CUDA_ALLOCATOR")
    monkeypatch.delattr(torch._C, "_cuda_cudaCachingAllocator_raw_alloc")
    assert disc._cuda_allocator(torch) is None
    assert "no caching-allocator entry points" in capfd.readouterr().err


def test_a_failing_caching_allocator_is_a_disc_error_naming_it(monkeypatch):
    """PyTorch's out-of-memory error reaches the caller as a DiscError that
    names the allocator, the size and PyTorch's message (the runtime then
    frees the call's other buffers: CudaHost.CallersAllocatorFailingIs...)."""
    _fake_caching_allocator(
        monkeypatch, {}, fail=torch.OutOfMemoryError("CUDA out of memory. Tried to allocate"))
    allocator = disc._cuda_allocator(torch)
    with pytest.raises(disc.DiscError, match=r"PyTorch's CUDA caching allocator \(1024 bytes\): "
                                             r"OutOfMemoryError: CUDA out of memory"):
        allocator.allocate(1024, 0)
    monkeypatch.setattr(torch._C, "_cuda_cudaCachingAllocator_raw_alloc",
                        lambda size, stream: 0)
    monkeypatch.setattr(disc, "_cuda_allocator_resolved", [])
    with pytest.raises(disc.DiscError, match="returned no memory for 8 bytes"):
        disc._cuda_allocator(torch).allocate(8, 0)
    monkeypatch.setattr(torch._C, "_cuda_cudaCachingAllocator_raw_alloc",
                        lambda size, stream: "0x1000")
    monkeypatch.setattr(disc, "_cuda_allocator_resolved", [])
    with pytest.raises(disc.DiscError, match="returned something other than an address"):
        disc._cuda_allocator(torch).allocate(8, 0)


def test_a_failing_free_is_reported_as_unraisable_not_a_crash(monkeypatch):
    def raw_delete(address):
        raise RuntimeError(f"unknown block {address:#x}")

    _fake_caching_allocator(monkeypatch, {})
    monkeypatch.setattr(torch._C, "_cuda_cudaCachingAllocator_raw_delete", raw_delete)
    allocator = disc._cuda_allocator(torch)
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    allocator.deallocate(0x1234, 0)
    assert len(seen) == 1 and "unknown block 0x1234" in str(seen[0].exc_value)
    assert allocator.frees == 0


@needs_toolkit
def test_shape_read_from_tensor_data_is_a_compile_error():
    text = """
func.func @main(%x: tensor<?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = disc.dynamic_reshape %x, %shape : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}"""
    with pytest.raises(disc.CompileError, match="host code reads from device memory"):
        disc.compile_mlir(text, target="cuda")


def test_target_names_are_checked(monkeypatch):
    with pytest.raises(ValueError, match="target must be"):
        disc.compile_mlir(PROGRAM, target="gpu")
    monkeypatch.setenv("DISC_TARGET", "cuda")
    with pytest.raises(ValueError, match="DISC_TARGET must be 'cpu' or 'cuda-emulated'"):
        disc.compile_mlir(PROGRAM)


# Totals around the block size (256) and its multiples: the guard of the
# last, partial block, one-element and empty tensors.
EMULATED_SHAPES = [(1, 1), (3, 5), (16, 16), (1, 257), (257, 3), (64, 129), (0, 7), (5, 0)]


def test_emulated_grid_mapping_matches_pytorch():
    exe = disc.compile_mlir(PROGRAM, target="cuda-emulated")
    before = compilations()
    for shape in EMULATED_SHAPES:
        x = torch.randn(shape)
        got = exe(x)
        if x.numel() == 0:  # amax of an empty row is an error in PyTorch
            assert got[0].shape == x.shape
            assert got[1].item() == 0
            continue
        want = reference(x)
        torch.testing.assert_close(got[0], want[0])
        torch.testing.assert_close(got[1], want[1], rtol=1e-5, atol=1e-4)
    assert compilations() == before


WHOLE_REDUCTIONS = """
func.func @main(%x: tensor<?xf32>, %i: tensor<?xi32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %s = disc.reduce %x, dims = [0], kind = sum : (tensor<?xf32>) -> tensor<f32>
  %m = disc.reduce %i, dims = [0], kind = max : (tensor<?xi32>) -> tensor<i32>
  %o = disc.reduce %i, dims = [0], kind = or : (tensor<?xi32>) -> tensor<i32>
  return %s, %m, %o : tensor<f32>, tensor<i32>, tensor<i32>
}
"""


def test_reduction_slots_setting(monkeypatch):
    """DISC_CUDA_REDUCTION_SLOTS (to compare on a GPU): the most parts a
    whole-range reduction is cut into (default 4096; 3 makes parts longer
    than 4096 elements here), or 0: threads whose atomics go to the result
    (same values); anything but an integer from 0 to 65536 is an error
    naming the variable."""
    monkeypatch.setenv("DISC_CACHE", "0")
    g = torch.Generator().manual_seed(6)
    x = torch.randn(64 * 300 + 5, generator=g)
    i = torch.randint(-1000, 1000, (x.numel(),), generator=g, dtype=torch.int32)
    counts = {}
    for value in ("0", "4096", "3"):
        monkeypatch.setenv("DISC_CUDA_REDUCTION_SLOTS", value)
        exe = disc.compile_mlir(WHOLE_REDUCTIONS, target="cuda-emulated")
        counts[value] = exe.kernel_counts["loops"]
        s, m, o = exe(x, i)
        torch.testing.assert_close(s, x.double().sum().float(), rtol=1e-5, atol=1e-4)
        assert m.item() == i.max().item()
        assert o.item() == _bitwise_or(i)
    # Two kernels per reduction (3) either way: the parts' and the slots'
    # row kernel, or the atomics' and the initial value's one-thread store
    # (forwarded into the slots' kernel otherwise).
    assert counts["0"] == counts["4096"] == counts["3"] == 6, counts
    monkeypatch.setenv("DISC_CUDA_REDUCTION_SLOTS", "many")
    with pytest.raises(Exception, match="DISC_CUDA_REDUCTION_SLOTS must be an integer from 0 to 65536, got 'many'"):
        disc.compile_mlir(WHOLE_REDUCTIONS, target="cuda-emulated")


def _bitwise_or(values: torch.Tensor) -> int:
    """The bitwise or of every element of an int32 tensor (0 when empty)."""
    bits = [(values >> b) & 1 for b in range(32)]
    out = 0
    for b, column in enumerate(bits):
        if bool(column.any()):
            out |= 1 << b
    return out - (1 << 32) if out >= 1 << 31 else out


def test_emulated_small_static_whole_reductions_skip_the_slots():
    """A range of static length at most 2048 (an index tensor's bounds
    check) combines its threads straight into the result: right, and no
    slot buffer (one kernel for the threads, one thread for the initial
    value)."""
    text = """
func.func @main(%i: tensor<16xi64>, %j: tensor<2048xi32>) -> (tensor<i64>, tensor<i32>) {
  %m = disc.reduce %i, dims = [0], kind = min : (tensor<16xi64>) -> tensor<i64>
  %s = disc.reduce %j, dims = [0], kind = sum : (tensor<2048xi32>) -> tensor<i32>
  return %m, %s : tensor<i64>, tensor<i32>
}
"""
    exe = disc.compile_mlir(text, target="cuda-emulated")
    g = torch.Generator().manual_seed(5)
    for _ in range(3):
        i = torch.randint(-10**12, 10**12, (16,), generator=g)
        j = torch.randint(-1000, 1000, (2048,), generator=g, dtype=torch.int32)
        m, s = exe(i, j)
        assert m.item() == i.min().item() and s.item() == j.sum().item()
    assert disc.compile_mlir(text, target="cuda").kernel_counts["loops"] <= 4


def test_emulated_whole_reductions_combine_through_slots():
    """Whole-range reductions: parts of `chunk` elements (the larger of
    4096 and ceil(n / 4096), rounded up to a multiple of 4), each reduced
    by a block into a slot of its own, then the slots and the last elements
    (fewer than a chunk) go into the result (MapLoopsToGpu.cpp). Sizes give
    no element, one, no part (4095), one part exactly, one and one element,
    several parts and a rest, 4096 parts of 4096 exactly, and the first
    size with longer parts (4092 parts of 4100 and a rest of 17), against
    PyTorch with one compilation; then the parts' vector loads and, for a
    view one element into its buffer, their scalar path."""
    exe = disc.compile_mlir(WHOLE_REDUCTIONS, target="cuda-emulated")
    before = compilations()
    g = torch.Generator().manual_seed(4)
    for n in (0, 1, 4095, 4096, 4097, 4096 * 5 + 7, 4096 * 4096,
              4096 * 4096 + 1):
        x = torch.randn(n, generator=g)
        i = torch.randint(-1000, 1000, (n,), generator=g, dtype=torch.int32)
        s, m, o = exe(x, i)
        torch.testing.assert_close(s, x.double().sum().float(), rtol=1e-5, atol=1e-3)
        want_max = i.max() if n else torch.tensor(torch.iinfo(torch.int32).min, dtype=torch.int32)
        assert m.item() == want_max.item(), n
        assert o.item() == _bitwise_or(i), n
    # Each part reads its row with 4-element vector loads when the input is
    # 16-byte aligned (the chunk is a multiple of 4), else one element at a
    # time: a view one element into its buffer takes the scalar path.
    for offset in (0, 1):
        x = torch.randn(4096 * 5 + 8, generator=g)[offset:]
        i = torch.randint(-1000, 1000, (x.numel(),), generator=g, dtype=torch.int32)
        stats = disc.stats()
        s, m, o = exe(x, i)
        torch.testing.assert_close(s, x.double().sum().float(), rtol=1e-5, atol=1e-3)
        assert m.item() == i.max().item() and o.item() == _bitwise_or(i)
        taken = {k: disc.stats()[k] - stats[k] for k in ("vector_rows", "scalar_rows")}
        assert taken["scalar_rows"] == (1 if offset else 0), (offset, taken)
        assert taken["vector_rows"] >= 2, (offset, taken)
    assert compilations() == before


def test_emulated_group_norm_of_one_sample(monkeypatch):
    """A group norm of batch 1 (poolformer's: one group over C * H * W) is
    whole-range reductions whose zero fills the host forwards
    (disc-forward-host-scalars) and whose mean and rounding run in the
    combining kernel: against PyTorch at three spatial sizes (no part of
    4096 elements, and 49 and 100 of them), with one compilation, for one
    group and for four.""" 
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    g = torch.Generator().manual_seed(12)
    for groups in (1, 4):
        norm = torch.nn.GroupNorm(groups, 64)
        with torch.no_grad():
            norm.weight.copy_(torch.randn(64, generator=g))
            norm.bias.copy_(torch.randn(64, generator=g))
        torch._dynamo.reset()
        compiled = torch.compile(norm, backend="disc", dynamic=True)
        before = disc.stats()
        with torch.no_grad():
            for size in (7, 56, 80):  # 3136, 200704, 409600 elements
                x = torch.randn(1, 64, size, size, generator=g) * 3 + 1
                torch.testing.assert_close(compiled(x), norm(x), rtol=1e-4, atol=1e-4)
        after = disc.stats()
        assert after["compilations"] - before["compilations"] == 1, groups
        assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]


@pytest.mark.parametrize("dynamic", [False, True])
def test_emulated_index_bounds_check_runs_in_the_reductions_kernel(dynamic, monkeypatch):
    """An index tensor's bounds check (each index against both bounds, an
    `and` reduction, then the assertion) runs inside the reduction's
    one-row kernel (one kernel for a static index length, MapLoopsToGpu.cpp
    finishOneRowKernels): indices in
    range, negative ones included, give eager's result; one out of range is
    still caught, and the call runs in eager, which raises its IndexError."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")

    def take(x, i):
        return x[i] * 2

    torch._dynamo.reset()
    compiled = torch.compile(take, backend="disc", dynamic=dynamic)
    x = torch.randn(7, 3)
    for i in ([0, 6, -7, 3], [1, 1, -1, 5]):
        i = torch.tensor(i)
        torch.testing.assert_close(compiled(x, i), take(x, i))
    before = disc.stats()["eager_calls"]
    with pytest.raises(IndexError):
        compiled(x, torch.tensor([0, 7, 1, 2]))
    assert disc.stats()["eager_calls"] == before + 1


def test_emulated_whole_float_max_and_min_split_without_atomics():
    """A whole-range float max or min (no atomic has its NaN rule) splits
    like a sum: parts of 4096 elements or more, each into a slot of its
    own (a block per part), then a one-row row kernel combines the slots
    and the last elements. Sizes give no element, one, no part, and 70
    parts and a rest of 3; NaN in the rest, in a part, or nowhere gives
    eager's result; f32, f64, bf16; one compilation."""
    text = """
func.func @main(%x: tensor<?xf32>, %y: tensor<?xf64>, %z: tensor<?xbf16>)
    -> (tensor<f32>, tensor<f32>, tensor<f64>, tensor<bf16>) {
  %mx = disc.reduce %x, dims = [0], kind = max : (tensor<?xf32>) -> tensor<f32>
  %mn = disc.reduce %x, dims = [0], kind = min : (tensor<?xf32>) -> tensor<f32>
  %my = disc.reduce %y, dims = [0], kind = max : (tensor<?xf64>) -> tensor<f64>
  %mz = disc.reduce %z, dims = [0], kind = min : (tensor<?xbf16>) -> tensor<bf16>
  return %mx, %mn, %my, %mz : tensor<f32>, tensor<f32>, tensor<f64>, tensor<bf16>
}
"""
    before = compilations()
    exe = disc.compile_mlir(text, target="cuda-emulated")
    stats = disc.stats()
    g = torch.Generator().manual_seed(9)
    for n, nan in ((0, None), (1, None), (64 * 20 + 5, None), (64 * 40, 77),
                   (4096 * 70 + 3, 4096 * 70 + 2), (4096 * 70 + 3, 5000),
                   (4096 * 70 + 3, None)):
        x = torch.randn(n, generator=g) * 100
        if nan is not None:
            x[nan] = float("nan")
        y, z = x.double(), x.to(torch.bfloat16)
        got = exe(x, y, z)
        if n == 0:
            want = [torch.tensor(float("-inf")), torch.tensor(float("inf")),
                    torch.tensor(float("-inf"), dtype=torch.float64),
                    torch.tensor(float("inf"), dtype=torch.bfloat16)]
        else:
            want = [x.max(), x.min(), y.max(), z.min()]
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, equal_nan=True, rtol=0, atol=0)
    assert compilations() == before + 1
    assert disc.stats()["rows_per_block"] > stats["rows_per_block"]
    # Per reduction: the parts and the slots' row kernel (its per-thread
    # variant, which kernel counts take), which starts from the initial
    # value (forwarded by disc-forward-host-scalars: no kernel of its own);
    # ptxas accepts them.
    assert disc.compile_mlir(text, target="cuda-emulated").kernel_counts["loops"] == 2 * 4
    if disc._compiler().cuda_toolkit_path():
        assert disc.compile_mlir(text, target="cuda").kernel_counts["loops"] == 2 * 4


@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 300, 1), (7, 1, 513)])
def test_emulated_3d_delinearisation(shape):
    """A 3-d elementwise nest with a transpose: each thread's linear index
    delinearised into three induction variables."""
    text = """
func.func @main(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = disc.transpose %x, dims = [2, 0, 1] : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %1 = disc.tanh %0 : tensor<?x?x?xf32>
  return %1 : tensor<?x?x?xf32>
}"""
    exe = disc.compile_mlir(text, target="cuda-emulated")
    x = torch.randn(shape)
    (got,) = exe(x)
    torch.testing.assert_close(got, torch.tanh(x.permute(2, 0, 1)))


# ---------------------------------------------------------------- front end
# What torch.compile does with tensors on a cuda device, checked on fake
# cuda tensors (FakeTensorMode needs no GPU): the first GPU run found every
# cuda node rejected, factory-only partitions compiled for the CPU and
# PyTorch's CUDA attention kernels left in eager.


def _fake_cuda_graph(fn, *shapes):
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    with FakeTensorMode():
        args = [torch.empty(s, device="cuda") for s in shapes]
        return make_fx(fn, tracing_mode="fake")(*args)


def test_cuda_nodes_with_library_calls_are_supported():
    from disc.frontend.lowerings import unsupported_reason

    def fn(x, w, wt):
        y = torch.relu(torch.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1))
        z = torch.convolution(y, wt, None, [1, 1], [1, 1], [1, 1], True, [0, 0], 1)
        t = torch.convolution(z, wt, None, [2, 2], [1, 1], [1, 1], True, [1, 1], 1) + 1
        return torch.sort(t, dim=-1).values

    gm = _fake_cuda_graph(fn, (1, 2, 5, 5), (3, 2, 3, 3), (3, 3, 3, 3))
    reasons = [(n.target, tuple(n.args[3]) if n.target == torch.ops.aten.convolution.default
                else None, unsupported_reason(n))
               for n in gm.graph.nodes if n.op == "call_function"]
    aten = torch.ops.aten
    by_kind = {(t, stride): r for t, stride, r in reasons}
    # cuDNN: a direct convolution, a stride-1 transposed one (a direct one
    # of the flipped kernel) and a strided transposed one with output
    # padding (backward data) are compiled; so is sort (generated code).
    assert [r for t, stride, r in reasons if t == aten.convolution.default] == [None] * 3
    assert by_kind[(aten.relu.default, None)] is None
    assert by_kind[(aten.add.Tensor, None)] is None
    assert by_kind[(aten.sort.default, None)] is None


def test_a_device_transfer_stays_in_eager():
    from disc.frontend.lowerings import unsupported_reason

    gm = _fake_cuda_graph(lambda x: x.to("cpu") * 2, (3, 4))
    copy = next(n for n in gm.graph.nodes if n.target == torch.ops.aten._to_copy.default)
    assert unsupported_reason(copy) == "tensors on several devices (cpu, cuda:0)"


def test_cpu_nodes_of_a_cuda_graph_stay_in_eager_and_partitions_hold_one_device():
    """A graph on cuda with CPU-side computations (a constant made on the
    CPU, moved to the device later): the CPU nodes stay in eager with their
    reason, the cuda nodes are compiled, and no partition mixes devices.
    The partitioner merges independent nodes too, and a mixed partition
    ran whole in eager (the GraphNet yolo11n-pose on an H200: 1015 nodes,
    44 convolutions)."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupportBase

    from disc.frontend.backend import _CPU_IN_CUDA_GRAPH_REASON, _classify, _node_devices

    def fn(x):
        c = torch.arange(4) * 2                    # CPU
        y = torch.relu(x * 3) + 1                  # cuda
        shift = (c.float() + 0.5).to(x.device)     # CPU, then the transfer
        return y + shift, c.float().sum()

    gm = _fake_cuda_graph(fn, (3, 4))
    supported, reasons = _classify(gm)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    aten = torch.ops.aten
    for n in calls:
        devices = _node_devices(n)
        if devices == {"cpu"}:
            assert n not in supported and reasons[n] == _CPU_IN_CUDA_GRAPH_REASON, n
        elif devices == {"cuda"}:
            assert n in supported, (n, reasons.get(n))
        else:
            assert n.target == aten._to_copy.default and "several devices" in reasons[n]
    assert any(_node_devices(n) == {"cuda"} for n in supported)

    class Support(OperatorSupportBase):
        def is_node_supported(self, submodules, node):
            return node in supported

    partitions = CapabilityBasedPartitioner(gm, Support(), allows_single_node_partition=True
                                            ).propose_partitions()
    assert partitions
    for partition in partitions:
        kinds = set().union(*(_node_devices(n) for n in partition.nodes))
        assert kinds == {"cuda"}, kinds


def _fake_graph_with_a_cpu_scalar(fn, shape):
    """`fn(x, s)` traced with x a fake cuda tensor of `shape` and s a 0-dim
    CPU tensor (a graph input, as GraphNet's pigu passes its time step)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    with FakeTensorMode():
        x, s = torch.empty(shape, device="cuda"), torch.empty((), device="cpu")
        return make_fx(fn, tracing_mode="fake")(x, s)


def test_a_cpu_scalar_of_a_cuda_node_joins_its_partition():
    """x_cuda * s with s a 0-dim CPU tensor: eager takes s as a scalar. The
    node is compiled (it stayed in eager, "tensors on several devices",
    cutting pigu's and bert's partitions on the H200), the partition is a
    cuda one, and its call moves s to the device. A CPU tensor of rank 1,
    and a CPU scalar beside CPU tensors only, keep their devices."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupportBase

    from disc.frontend.backend import _classify, _cpu_scalar_inputs, _partition_target
    from disc.frontend.importer import ArgPlan
    from disc.frontend.lowerings import unsupported_reason

    gm = _fake_graph_with_a_cpu_scalar(lambda x, s: torch.relu(x * s) + s, (3, 4))
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert [unsupported_reason(n) for n in calls] == [None] * len(calls)
    supported, reasons = _classify(gm)
    assert not reasons and set(calls) <= supported

    class Support(OperatorSupportBase):
        def is_node_supported(self, submodules, node):
            return node in supported

    (partition,) = CapabilityBasedPartitioner(gm, Support()).propose_partitions()
    assert set(partition.nodes) == set(calls)
    target, device = _partition_target(gm)
    assert target == "cuda" and device.startswith("cuda"), (target, device)
    plan = [ArgPlan("tensor", 0), ArgPlan("tensor", 1), ArgPlan("symfloat", 2)]
    assert _cpu_scalar_inputs(gm, plan) == [1, 2]

    # Transfers stay in eager, the 0-dim one's too (its own node).
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    with FakeTensorMode():
        x, v = torch.empty((3, 4), device="cuda"), torch.empty((1,), device="cpu")
        mixed = make_fx(lambda x, v: x + v.to(x.device) + v.sum().to(x.device))(x, v)
    adds = [n for n in mixed.graph.nodes if n.target == torch.ops.aten.add.Tensor]
    assert all(unsupported_reason(n) is None for n in adds)
    copies = [n for n in mixed.graph.nodes if n.target == torch.ops.aten._to_copy.default]
    assert [unsupported_reason(n) for n in copies] == [
        "tensors on several devices (cpu, cuda:0)",
        "a copy from cpu to cuda:0 (a device transfer)"]  # a 0-dim one: still a transfer
    # A 0-dim CPU tensor with CPU tensors only is a CPU node.
    cpu = make_fx(lambda a, s: a * s)(torch.randn(3), torch.tensor(2.0))
    (mul,) = [n for n in cpu.graph.nodes if n.op == "call_function"]
    assert unsupported_reason(mul) is None
    assert _partition_target(cpu) == (disc.default_target(), None)


@needs_toolkit
def test_a_cpu_scalar_of_a_cuda_partition_compiles_for_cuda():
    """The partition of x_cuda * s (s a 0-dim CPU tensor) imports with s
    a rank-0 argument and compiles for target cuda into one kernel."""
    from disc.frontend.importer import import_graph

    gm = _fake_graph_with_a_cpu_scalar(lambda x, s: torch.relu(x * s) + s, (3, 4))
    imported = import_graph(gm)
    assert [p.kind for p in imported.args] == ["tensor", "tensor"]
    exe = disc.compile_mlir(imported.text, target="cuda")
    assert exe.target == "cuda"
    assert exe.kernel_counts == {"loops": 1, "library_calls": 0, "copies": 0}


def test_a_cpu_graph_keeps_its_cpu_nodes():
    """Without cuda tensors nothing changes: the CPU nodes are compiled."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from disc.frontend.backend import _classify

    gm = make_fx(lambda x: (torch.arange(4) * 2).float().sum() + x.relu().sum())(torch.randn(3))
    supported, reasons = _classify(gm)
    assert not reasons, reasons
    assert len(supported) >= 5


def test_a_partition_of_factory_ops_compiles_for_the_device_of_its_outputs():
    """arange on a cuda device has no tensor input: the partition's target
    comes from its outputs (it compiled for the CPU, and eager then met a
    CPU tensor beside cuda ones)."""
    from disc.frontend.backend import _partition_target

    gm = _fake_cuda_graph(lambda x: torch.arange(7, device=x.device) * 2, (3,))
    for n in list(gm.graph.nodes):
        if n.op == "placeholder":  # the partition would not take x
            n.replace_all_uses_with(n.graph.call_function(torch.ops.aten.empty.memory_format,
                                                          ([1],)))
    target, device = _partition_target(gm)
    assert target == "cuda" and device.startswith("cuda"), (target, device)


@pytest.mark.parametrize("mask", ["none", "float", "bool", "causal"])
@pytest.mark.parametrize("op", ["efficient", "flash", "cudnn"])
def test_cuda_attention_kernels_as_math_match_sdpa(op, mask):
    """The math that replaces PyTorch's CUDA attention kernels in inference
    graphs (cuda_attention.py), run on CPU tensors against SDPA, with a
    14-key mask (a row stride the efficient kernel rejects)."""
    from disc.frontend import cuda_attention

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5 if i == 0 else 14, 8, generator=g) for i in range(3))
    attn = None
    if mask == "float":
        attn = torch.randn(2, 1, 5, 14, generator=g)
    elif mask == "bool":
        attn = torch.rand(2, 3, 5, 14, generator=g) > 0.3
        attn[..., 0] = True
    causal = mask == "causal"
    if op == "flash" and attn is not None:
        pytest.skip("flash attention takes no mask")
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn,
                                                                is_causal=causal)
    if op == "efficient":
        out = cuda_attention.efficient_attention(q, k, v, attn, True, 0.0, causal)
    elif op == "flash":
        out = cuda_attention.flash_attention(q, k, v, 0.0, causal)
    else:
        out = cuda_attention.cudnn_attention(q, k, v, attn, True, 0.0, causal)
    torch.testing.assert_close(out[0], expected, rtol=1e-5, atol=1e-5)
    scores = (q @ k.transpose(-2, -1)) / 8 ** 0.5
    if causal:
        scores = scores.masked_fill(~torch.ones(5, 14, dtype=torch.bool).tril(), float("-inf"))
    elif attn is not None:
        scores = scores + attn if attn.dtype != torch.bool else scores.masked_fill(~attn, float("-inf"))
    torch.testing.assert_close(out[1], scores.logsumexp(-1), rtol=1e-5, atol=1e-5)
    assert cuda_attention.efficient_attention(q, k, v, attn, True, 0.1, causal) is NotImplemented


# Constants live in host memory: a kernel reading one, or a constant
# returned as it is, made the first GPU run fail (an illegal address, and
# cuMemcpyDtoD from a host pointer). They become device buffers filled by
# copy grids that read the global inside the kernel.
# %y = x * table, the table a constant broadcast over the rows.
_TABLE_TIMES_X = """
  %t = disc.constant dense<[1.0, -2.0, 3.5, 4.0]> : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x4xf32>
  %s = tensor.from_elements %d0, %c4 : tensor<2xindex>
  %tb = disc.dynamic_broadcast_in_dim %t, %s, dims = [1] : (tensor<4xf32>, tensor<2xindex>) -> tensor<?x4xf32>
  %y = disc.multiply %x, %tb : tensor<?x4xf32>
"""
CONSTANTS = """
func.func @main(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<f32>, tensor<4xf32>) {
  %k = disc.constant dense<7.0> : tensor<f32>""" + _TABLE_TIMES_X + """
  return %y, %k, %t : tensor<?x4xf32>, tensor<f32>, tensor<4xf32>
}
"""


def test_emulated_constants_read_by_kernels_and_returned():
    exe = disc.compile_mlir(CONSTANTS, target="cuda-emulated")
    table = torch.tensor([1.0, -2.0, 3.5, 4.0])
    for rows in (1, 5, 300):
        x = torch.randn(rows, 4)
        y, k, t = exe(x)
        torch.testing.assert_close(y, x * table)
        assert k.item() == 7.0
        torch.testing.assert_close(t, table)


@needs_toolkit
def test_constants_compile_into_the_kernels_modules(tmp_path):
    exe = disc.compile_mlir(CONSTANTS, target="cuda", dump_dir=str(tmp_path),
                            _exact_dump_dir=True)
    assert exe.target == "cuda"
    # The host code has no constant left: each is read inside a kernel
    # whose module holds a copy of the global.
    outlined = next(tmp_path.glob("*-gpu-kernel-outlining.mlir")).read_text()
    host, kernels = outlined.split("gpu.module", 1)
    assert "memref.get_global" not in host
    for name in ("@__constant_4xf32", "@__constant_xf32"):
        assert f"memref.get_global {name}" in kernels
        assert f"memref.global \"private\" constant {name}" in kernels


@needs_toolkit
def test_a_symint_input_is_read_from_a_shape_not_from_memory(tmp_path):
    """A SymInt graph input that no tensor size gives (a slice start) is
    the shape of an empty [s, 0, 0] argument ([0, -s, 0] for a negative
    s): host code reads it from the
    shape. As a rank-0 tensor it was read from memory, which the cuda
    target's host code cannot do (GraphNet's eva02 on the GPU: the whole
    graph fell back), and a CPU tensor could not reach a cuda program."""
    def f(x, n):
        return (x[:, n:] * 2).sum(1) + n

    torch._dynamo.reset()
    import functools

    from disc.frontend.backend import backend

    compiled = torch.compile(f, backend=functools.partial(backend, dump_dir=str(tmp_path)),
                             dynamic=True)
    before = disc.stats()
    # A negative value is carried as [0, -s, 0] (the first, two-dim form
    # raised a negative size), and x[:, s:] takes size - out_size first
    # (a symbolic s may count from the end).
    # (Dynamo guards the sign: negative values get graphs of their own.)
    for rows, cols, n in ((3, 9, 2), (5, 17, 4), (2, 30, 11)):
        x = torch.randn(rows, cols)
        torch.testing.assert_close(compiled(x, n), f(x, n))
    assert disc.stats()["compilations"] - before["compilations"] == 1
    for rows, cols, n in ((4, 12, -3), (3, 7, -7), (5, 9, -9)):
        x = torch.randn(rows, cols)
        torch.testing.assert_close(compiled(x, n), f(x, n))
    assert disc.stats()["fallback_nodes"] == before["fallback_nodes"]
    inputs = sorted(tmp_path.rglob("000-input.mlir"))
    assert inputs, "no partition was dumped"
    text = inputs[0].read_text()
    assert "tensor<?x?x0xi8>" in text and "tensor.extract" not in text
    assert disc.compile_mlir(text, target="cuda").target == "cuda"


@needs_toolkit
def test_the_random_seed_is_read_from_a_shape_not_from_memory(tmp_path):
    """The key of a partition's random ops travels like a SymInt, as the
    shape of an empty [seed, 0, 0] argument: a rank-0 CPU tensor could not
    reach a cuda program (dropout on cuda tensors)."""
    import functools

    from disc.frontend.backend import backend

    def f(x):
        return torch.nn.functional.dropout(x, p=0.5, training=True) * 3

    torch._dynamo.reset()
    compiled = torch.compile(f, backend=functools.partial(backend, dump_dir=str(tmp_path)),
                             dynamic=True)
    before = disc.stats()
    for n in (64, 1000, 4097):
        x = torch.rand(n) + 1
        y = compiled(x)
        kept = y != 0
        torch.testing.assert_close(y[kept], x[kept] * 6)
        assert 0.3 < kept.float().mean().item() < 0.7
    assert disc.stats()["compilations"] - before["compilations"] == 1
    assert disc.stats()["fallback_nodes"] == before["fallback_nodes"]
    torch.manual_seed(3)
    first = compiled(torch.ones(4097))
    torch.manual_seed(3)
    assert torch.equal(compiled(torch.ones(4097)), first)
    assert not torch.equal(compiled(torch.ones(4097)), first)
    (text,) = [p.read_text() for p in tmp_path.rglob("000-input.mlir")]
    assert "tensor<?x?x0xi8>" in text
    assert disc.compile_mlir(text, target="cuda").target == "cuda"


# A constant only kernels read (a broadcast table multiplied in): read in
# place by the kernel, no device buffer and no copy grid (a launch per
# constant and call).
CONSTANT_IN_KERNEL = """
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {""" + _TABLE_TIMES_X + """
  return %y : tensor<?x4xf32>
}
"""


def test_emulated_constant_read_in_place_by_its_kernel():
    exe = disc.compile_mlir(CONSTANT_IN_KERNEL, target="cuda-emulated")
    table = torch.tensor([1.0, -2.0, 3.5, 4.0])
    for rows in (1, 6, 257):
        x = torch.randn(rows, 4)
        (y,) = exe(x)
        torch.testing.assert_close(y, x * table)


@needs_toolkit
def test_constant_read_only_by_kernels_needs_no_copy_grid(tmp_path):
    exe = disc.compile_mlir(CONSTANT_IN_KERNEL, target="cuda", dump_dir=str(tmp_path),
                            _exact_dump_dir=True)
    outlined = next(tmp_path.glob("*-gpu-kernel-outlining.mlir")).read_text()
    host, kernels = outlined.split("gpu.module", 1)
    assert "memref.get_global" not in host
    assert "memref.alloc() : memref<4xf32>" not in host, "no device copy of the table"
    assert "memref.get_global @__constant_4xf32" in kernels
    # Every kernel is the multiply (its scalar and vector variants): none
    # copies the table.
    for kernel in kernels.split("gpu.func")[1:]:
        assert "arith.mulf" in kernel, kernel[:400]


# An update computed in its argument's memory (`disc.result_into`), and one
# copied there at the end because a reduction reads the old value.
TIED_UPDATES = """
func.func @main(%w: tensor<?xf32> {disc.result_into = 0 : i64}, %m: tensor<?xf32> {disc.result_into = 1 : i64},
                %g: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<f32>) {
  %m2 = disc.multiply %m, %g : tensor<?xf32>
  %w2 = disc.subtract %w, %m2 : tensor<?xf32>
  %s = disc.multiply %m, %m : tensor<?xf32>
  %sum = disc.reduce %s, dims = [0], kind = sum : (tensor<?xf32>) -> tensor<f32>
  return %w2, %m2, %sum : tensor<?xf32>, tensor<?xf32>, tensor<f32>
}
"""


def test_emulated_results_written_into_arguments():
    exe = disc.compile_mlir(TIED_UPDATES, target="cuda-emulated")
    assert exe.results_into_arguments == {0: 0, 1: 1}
    for n in (1, 33, 4099):
        w, m, g = torch.randn(n), torch.randn(n), torch.randn(n)
        w0, m0 = w.clone(), m.clone()
        new_w, new_m, total = exe(w, m, g, results_into={0: 0, 1: 1})
        assert new_w is None and new_m is None
        torch.testing.assert_close(m, m0 * g)
        torch.testing.assert_close(w, w0 - m0 * g)
        torch.testing.assert_close(total, (m0 * m0).sum())


@needs_toolkit
def test_results_written_into_arguments_compile_for_cuda():
    exe = disc.compile_mlir(TIED_UPDATES, target="cuda")
    assert exe.target == "cuda" and exe.results_into_arguments == {0: 0, 1: 1}


def _efficient_attention(q, k, v, bias, causal):
    """PyTorch's efficient-attention op as a training graph holds it (its
    backward op from autograd's formula)."""
    return torch.ops.aten._scaled_dot_product_efficient_attention.default(q, k, v, bias, True,
                                                                          0.0, causal)[0]


def _sdpa(q, k, v, bias, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias,
                                                            is_causal=causal)


def _attention_steps(attend, q, k, v, bias, causal):
    """attend's output and its (q, k, v, bias) gradients under a loss that
    weighs every output element differently."""
    out = attend(q, k, v, bias, causal)
    weight = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).reshape(out.shape)
    leaves = [t for t in (q, k, v, bias) if t is not None and t.requires_grad]
    return (out, *torch.autograd.grad((out * weight).sum(), leaves))


@pytest.mark.parametrize("mask", ["none", "float", "learned", "causal"])
def test_cuda_attention_training_decompositions_give_sdpa_gradients(mask):
    """In training graphs the CUDA attention ops and their backward ops
    are math (cuda_attention.training_table): traced together the way
    AOTAutograd traces a joint graph, the backward op reads the decomposed
    forward's logsumexp. On CPU tensors (the kernels are CUDA-only, the
    table applies before dispatch), against SDPA's own gradients. Before,
    they stayed in eager, and the efficient kernel rejected DISC's 14-key
    mask on the GPU."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from disc.frontend import cuda_attention

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5 if i == 0 else 14, 8, generator=g, requires_grad=True)
               for i in range(3))
    bias = None
    if mask in ("float", "learned"):
        bias = torch.randn(2, 3, 5, 14, generator=g, requires_grad=mask == "learned")
    causal = mask == "causal"
    gm = make_fx(functools.partial(_attention_steps, _efficient_attention),
                 decomposition_table=cuda_attention.training_table())(q, k, v, bias, causal)
    left = [n.target for n in gm.graph.nodes if "attention" in str(n.target)]
    assert not left, f"attention ops left whole: {left}"
    got = gm(q, k, v, bias, causal)

    double = [None if t is None else t.detach().double().requires_grad_(t.requires_grad)
              for t in (q, k, v, bias)]
    want = _attention_steps(_sdpa, *double, causal)
    assert len(got) == len(want) == (5 if mask == "learned" else 4)
    for a, b in zip(got, want):
        torch.testing.assert_close(a.double(), b, rtol=1e-4, atol=1e-5)


def test_cuda_attention_backward_declines_what_its_forward_declines():
    """A forward kept whole (dropout) must keep its backward whole: the
    backward decomposition reads attention_math's logsumexp layout."""
    from disc.frontend import cuda_attention

    q, k, v = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8)
    out, lse = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4)
    seed = torch.empty(0, dtype=torch.int64)
    assert cuda_attention.efficient_attention(q, k, v, None, True, 0.1) is NotImplemented
    assert cuda_attention.efficient_attention_backward(
        out, q, k, v, None, out, lse, seed, seed, 0.1, [True] * 4) is NotImplemented
    assert cuda_attention.flash_attention_backward(
        out, q, k, v, out, lse, seed, seed, 4, 6, 0.1, False, seed, seed) is NotImplemented
    gqa_k = torch.randn(1, 1, 6, 8)
    assert cuda_attention.efficient_attention(q, gqa_k, gqa_k, None, True) is NotImplemented
    assert cuda_attention.efficient_attention_backward(
        out, q, gqa_k, gqa_k, None, out, lse, seed, seed, 0.0, [True] * 4) is NotImplemented


def test_an_efficient_attention_op_left_in_eager_reads_an_aligned_mask():
    """Kept whole (dropout), the efficient kernel receives its mask from a
    DISC partition, packed: the graph realigns it as eager's composite
    does (rows 16 elements apart), and leaves an aligned one alone."""
    from disc.frontend.backend import _aligned_attention_bias, _realign_eager_attention_masks

    packed = torch.randn(2, 3, 5, 14)
    aligned = _aligned_attention_bias(packed)
    assert aligned.stride(-2) == 16 and aligned.stride(-1) == 1
    assert torch.equal(aligned, packed)
    assert _aligned_attention_bias(aligned) is aligned
    assert _aligned_attention_bias(None) is None
    row = torch.randn(14)
    assert _aligned_attention_bias(row) is row  # no rows to align

    aten = torch.ops.aten
    graph = fx.Graph()
    q, bias, grad = (graph.placeholder(n) for n in ("q", "bias", "grad"))
    fwd = graph.call_function(aten._scaled_dot_product_efficient_attention.default,
                              (q, q, q, bias, True, 0.1))
    bwd = graph.call_function(aten._scaled_dot_product_efficient_attention_backward.default,
                              (grad, q, q, q, bias, grad, grad, grad, grad, 0.1,
                               [True, True, True, False]))
    unmasked = graph.call_function(aten._scaled_dot_product_efficient_attention.default,
                                   (q, q, q, None, True, 0.1))
    graph.output((fwd, bwd, unmasked))
    gm = fx.GraphModule(torch.nn.Module(), graph)
    _realign_eager_attention_masks(gm, 0)
    for node, index in ((fwd, 3), (bwd, 4)):
        assert node.args[index].target is _aligned_attention_bias, node
        assert node.args[index].args == (bias,)
    assert unmasked.args[3] is None


def test_efficient_attention_in_a_training_graph_compiles_with_its_backward():
    """The efficient-attention op as a cuda training graph holds it, here on
    CPU tensors (its meta function traces anywhere): forward and backward
    compile into DISC with no node in eager, one compilation each for two
    query lengths, gradients as SDPA's."""
    aten = torch.ops.aten

    def f(q, k, v, bias):
        return aten._scaled_dot_product_efficient_attention.default(q, k, v, bias, True)[0]

    torch._dynamo.reset()
    compiled = torch.compile(f, backend="disc", dynamic=True)
    before, compiles = disc.stats(), None
    g = torch.Generator().manual_seed(0)
    for length in (5, 9):
        q, k, v = (torch.randn(2, 3, length if i == 0 else 14, 8, generator=g, requires_grad=True)
                   for i in range(3))
        bias = torch.randn(2, 3, length, 14, generator=g)
        out = compiled(q, k, v, bias)
        grads = torch.autograd.grad((out * out).sum(), (q, k, v))
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        want = torch.nn.functional.scaled_dot_product_attention(*leaves, attn_mask=bias)
        want_grads = torch.autograd.grad((want * want).sum(), leaves)
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
        for a, b in zip(grads, want_grads):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
        if compiles is None:
            compiles = disc.stats()["compilations"]
            assert compiles - before["compilations"] == 2  # forward and backward
    assert disc.stats()["compilations"] == compiles
    assert disc.stats()["fallback_nodes"] == before["fallback_nodes"], disc.stats()["fallback_ops"]


@needs_toolkit
def test_transposed_convolutions_compile_for_cuda(tmp_path):
    """A stride-1 transposed convolution (the input gradient of every
    stride-1 convolution in training) is imported as a direct one of the
    flipped kernel with equal padding: cuDNN's forward. A strided one with
    output padding keeps its input dilation: cuDNN's backward data
    (CudaHost.TransposedConvolutionThroughCudnnBackwardData checks the
    numbers against the fake cuDNN). Each is right on the CPU at several
    sizes with one compilation, and its partition compiles for cuda into
    one library call."""
    import functools

    from disc.frontend.backend import backend

    for stride, output_padding in ((1, 0), (2, 1)):
        conv = torch.nn.ConvTranspose2d(3, 4, 3, stride=stride, padding=1,
                                        output_padding=output_padding)
        dump = tmp_path / f"stride{stride}"
        torch._dynamo.reset()
        compiled = torch.compile(conv, backend=functools.partial(backend, dump_dir=str(dump)),
                                 dynamic=True)
        before = disc.stats()
        with torch.no_grad():
            for size in (5, 8, 11):
                x = torch.randn(2, 3, size, size + 1)
                torch.testing.assert_close(compiled(x), conv(x), rtol=1e-4, atol=1e-4)
        assert disc.stats()["compilations"] - before["compilations"] == 1
        assert disc.stats()["fallback_nodes"] == before["fallback_nodes"]
        (text,) = [p.read_text() for p in dump.rglob("000-input.mlir")]
        assert ("lhs_dilation" in text) == (stride != 1)
        exe = disc.compile_mlir(text, target="cuda")
        assert exe.target == "cuda" and exe.kernel_counts["library_calls"] == 1


def test_a_kernel_gradient_on_cuda_is_one_library_call():
    """On cuda tensors the convolution's kernel gradient is kept whole
    (backward._library_weight_gradient: cuDNN's backward filter), depthwise
    and dilated ones too, and the front end compiles the node."""
    from disc.frontend.backward import _library_weight_gradient
    from disc.frontend.lowerings import unsupported_reason

    aten = torch.ops.aten

    def weight_gradient(x, dy, w):
        return aten.convolution_backward.default(dy, x, w, None, [1, 1], [2, 2], [2, 2], False,
                                                 [0, 0], 4, [False, True, False])[1]

    gm = _fake_cuda_graph(weight_gradient, (2, 4, 9, 9), (2, 4, 9, 9), (4, 1, 3, 3))
    (node,) = [n for n in gm.graph.nodes if n.target == aten.convolution_backward.default]
    assert unsupported_reason(node) is None
    x, w = (node.args[1].meta["val"], node.args[2].meta["val"])
    assert x.device.type == "cuda"
    assert _library_weight_gradient(x, w, [2, 2], 4)  # depthwise, dilated: cuDNN
    assert not _library_weight_gradient(x.to("cpu"), w.to("cpu"), [2, 2], 4)  # oneDNN: windows


@needs_toolkit
def test_a_kernel_gradient_compiles_for_cuda(tmp_path):
    """The backward graph of a convolution whose input needs no gradient
    is the kernel's and the bias's gradients: right on the CPU at several
    sizes with one compilation, and its partition (a
    disc.convolution_backward_weights call) compiles for cuda, where it is
    cuDNN's backward filter."""
    import functools

    from disc.frontend.backend import backend

    conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
    ref = copy.deepcopy(conv)
    torch._dynamo.reset()
    compiled = torch.compile(conv, backend=functools.partial(backend, dump_dir=str(tmp_path)),
                             dynamic=True)
    before = disc.stats()
    for size in (7, 10, 13):
        x = torch.randn(2, 3, size, size + 2)
        compiled(x).square().sum().backward()
        ref(x).square().sum().backward()
        for p, q in zip(conv.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4)
            p.grad = q.grad = None
    assert disc.stats()["compilations"] - before["compilations"] == 2  # forward, backward
    assert disc.stats()["fallback_nodes"] == before["fallback_nodes"]
    texts = [p.read_text() for p in tmp_path.rglob("000-input.mlir")]
    (backward_text,) = [t for t in texts if "disc.convolution_backward_weights" in t]
    exe = disc.compile_mlir(backward_text, target="cuda")
    assert exe.target == "cuda" and exe.kernel_counts["library_calls"] == 1
