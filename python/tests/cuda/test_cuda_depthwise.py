"""Depthwise convolutions on the cuda targets (docs/cuda.md, "Depthwise
convolutions"): float depthwise convolutions are generated kernels, one
thread per output element looping over the taps, fused with the batch norm
and activation after them, instead of cuDNN calls (whose f32 depthwise path
PyTorch itself avoids). Run through target cuda-emulated (the kernels
executed on the CPU) against PyTorch at several shapes with one
compilation; the same programs compile for target cuda with no library
call (ptxas accepting the kernels for sm_80 and sm_90)."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import disc
from conftest import compilations, rand, run_shapes, tensor_type

TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4),
       torch.float16: dict(rtol=1e-2, atol=1e-2),
       torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


def _has_cuda_toolkit() -> bool:
    return bool(disc._compiler().cuda_toolkit_path())


def _program(dtype, channels, spatial, kernel, strides, low, high, dilation, epilogue=False):
    """A depthwise convolution of [N, C, ?...] by a [C, 1, kernel...]
    kernel (None: a symbolic size), optionally followed by elementwise
    steps, max(2y * y, y) (where a batch norm and activation would be)."""
    x = tensor_type((None, channels) + (None,) * spatial, dtype)
    w = tensor_type((channels, 1) + tuple(kernel), dtype)
    y = tensor_type((None, channels) + (None,) * spatial, dtype)
    join = lambda v: ", ".join(map(str, v))  # noqa: E731
    conv = (f"%0 = disc.convolution %x, %w, strides = [{join(strides)}], pad_low = [{join(low)}], "
            f"pad_high = [{join(high)}], dilation = [{join(dilation)}] "
            f"{{feature_group_count = {channels} : i64}} : ({x}, {w}) -> {y}")
    if not epilogue:
        return f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n  {conv}\n  return %0 : {y}\n}}"
    return f"""func.func @main(%x: {x}, %w: {w}) -> {y} {{
  {conv}
  %1 = disc.add %0, %0 : {y}
  %2 = disc.multiply %1, %0 : {y}
  %3 = disc.maximum %2, %0 : {y}
  return %3 : {y}
}}"""


# name: channels, kernel sizes, strides, low / high padding, dilation
CASES = {
    "3x3": (16, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1)),
    "5x5_stride2": (8, (5, 5), (2, 2), (2, 2), (2, 2), (1, 1)),
    "7x7_convnext": (4, (7, 7), (1, 1), (3, 3), (3, 3), (1, 1)),
    "3x3_dilated": (6, (3, 3), (1, 1), (2, 2), (2, 2), (2, 2)),
    "unequal_padding": (4, (3, 4), (1, 2), (0, 2), (1, 1), (1, 1)),
    "1d_conformer": (8, (31,), (1,), (15,), (15,), (1,)),
    "3d": (3, (3, 3, 3), (1, 2, 1), (1, 1, 0), (1, 1, 0), (1, 1, 2)),
}
SHAPES = {1: [(1, 7), (2, 40), (3, 200)], 2: [(1, 5, 5), (2, 9, 12), (3, 32, 17)],
          3: [(1, 3, 4, 5), (2, 6, 5, 7), (1, 8, 8, 9)]}


def _reference(dims, strides, low, high, dilation, channels, epilogue):
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[dims]

    def run(x, w):
        pad = []
        for lo, hi in zip(reversed(low), reversed(high)):
            pad += [lo, hi]
        y = conv(F.pad(x.float(), pad), w.float(), stride=strides, dilation=dilation,
                 groups=channels)
        if epilogue:
            y = y.to(x.dtype).float()
            y = torch.maximum((y + y) * y, y)
        return y.to(x.dtype)
    return run


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16],
                         ids=lambda d: str(d).split(".")[1])
@pytest.mark.parametrize("case", sorted(CASES))
def test_depthwise_runs_as_a_generated_kernel(case, dtype, monkeypatch):
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.delenv("DISC_CUDA_DEPTHWISE", raising=False)
    channels, kernel, strides, low, high, dilation = CASES[case]
    epilogue = case in ("3x3", "1d_conformer")
    text = _program(dtype, channels, len(kernel), kernel, strides, low, high, dilation, epilogue)
    if _has_cuda_toolkit():
        counts = disc.compile_mlir(text, target="cuda").kernel_counts
        assert counts == {"loops": 1, "library_calls": 0, "copies": 0}, counts
    before = compilations()
    exe = disc.compile_mlir(text)
    assert exe.metadata["compile.target"] == "cuda-emulated"
    assert exe.kernel_counts["library_calls"] == 0
    assert compilations() == before + 1
    g = torch.Generator().manual_seed(0)
    weight = rand((channels, 1) + kernel, dtype, generator=g)
    run_shapes(exe, lambda s: (rand((s[0], channels) + s[1:], dtype, generator=g), weight),
               _reference(len(kernel), strides, low, high, dilation, channels, epilogue),
               SHAPES[len(kernel)], **TOL[dtype])


def test_symbolic_kernel_size_changes_between_calls(monkeypatch):
    """A kernel of symbolic size (as GraphNet's samples pass their weights
    under dynamic=True): the tap loops run to the call's kernel size."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    text = _program(torch.float32, 6, 2, (None, None), (1, 1), (1, 1), (1, 1), (1, 1))
    exe = disc.compile_mlir(text)
    g = torch.Generator().manual_seed(1)
    kernels = {(1, 5, 5): (3, 3), (2, 8, 9): (1, 1), (3, 16, 11): (3, 2)}

    def inputs(s):
        return (rand((s[0], 6) + s[1:], torch.float32, generator=g),
                rand((6, 1) + kernels[s], torch.float32, generator=g))

    run_shapes(exe, inputs, lambda x, w: F.conv2d(x, w, padding=1, groups=6),
               list(kernels), **TOL[torch.float32])


def test_padding_wider_than_the_window_reads_zeros(monkeypatch):
    """Padding larger than the kernel reach: whole output rows and columns
    lie in the padding (0 there), and an input of size 1 has no tap inside
    for most outputs."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    text = _program(torch.float32, 2, 2, (2, 2), (1, 1), (3, 3), (3, 3), (1, 1))
    exe = disc.compile_mlir(text)
    w = rand((2, 1, 2, 2), torch.float32)
    run_shapes(exe, lambda s: (rand((1, 2) + s, torch.float32), w),
               lambda x, w: F.conv2d(x, w, padding=3, groups=2), [(1, 1), (2, 5), (4, 3)],
               **TOL[torch.float32])


def test_an_input_with_an_empty_dim_is_never_read(monkeypatch):
    """An input whose spatial dim is 0, padded so that the output is not
    empty: every tap lies in the padding, the result is zeros, and the
    kernel never reads the (empty) input (the read is under an scf.if:
    lower-float-depthwise.mlir; on the CPU a stray read would not fault,
    on a GPU it could); a batch of 0 gives an empty result."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    exe = disc.compile_mlir(_program(torch.float32, 2, 2, (3, 3), (1, 1), (2, 2), (2, 2), (1, 1)))
    w = rand((2, 1, 3, 3), torch.float32)
    before = compilations()
    for shape, out in (((1, 2, 0, 5), (1, 2, 2, 7)), ((2, 2, 3, 0), (2, 2, 5, 2)),
                       ((0, 2, 3, 3), (0, 2, 5, 5))):
        (y,) = exe(torch.randn(shape), w)
        assert tuple(y.shape) == out
        assert torch.equal(y, torch.zeros(out))
    (y,) = exe(torch.ones(1, 2, 1, 1), w)  # and a real one after them
    torch.testing.assert_close(y, F.conv2d(torch.ones(1, 2, 1, 1), w, padding=2, groups=2))
    assert compilations() == before


class _DepthwiseBlock(torch.nn.Module):
    def __init__(self, channels=24, k=5, stride=2):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, k, stride, k // 2, groups=channels,
                                    bias=False)
        self.bn = torch.nn.BatchNorm2d(channels)

    def forward(self, x):
        return F.hardswish(self.bn(self.conv(x)))


def test_torch_compile_fuses_batch_norm_and_activation_into_one_kernel(monkeypatch):
    """MobileNet's block: depthwise convolution, batch norm (eval), hardswish
    compile to one kernel and one partition, at three sizes with one
    compilation and nothing in eager."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()
    g = torch.Generator().manual_seed(2)
    block = _DepthwiseBlock().eval()
    with torch.no_grad():
        block.bn.running_mean.uniform_(-1, 1, generator=g)
        block.bn.running_var.uniform_(0.5, 2, generator=g)
        block.bn.weight.uniform_(0.5, 1.5, generator=g)
    compiled = torch.compile(block, backend="disc", dynamic=True)
    stats = disc.stats()
    before = compilations()
    with torch.no_grad():
        for shape in [(2, 24, 17, 19), (3, 24, 32, 20), (4, 24, 9, 40)]:
            x = torch.randn(shape, generator=g)
            torch.testing.assert_close(compiled(x), block(x), **TOL[torch.float32])
    after = disc.stats()
    assert compilations() == before + 1, "one compilation for every shape"
    assert after["fallback_nodes"] == stats["fallback_nodes"]
    assert after["partitions"] - stats["partitions"] == 1
    assert after["kernels"] - stats["kernels"] == 1, "convolution, batch norm, hardswish: one kernel"


def test_cudnn_setting_keeps_the_library_call(monkeypatch):
    """DISC_CUDA_DEPTHWISE=cudnn (to compare on a GPU) leaves the
    convolution a library call; anything else but `generated` is an error
    naming the variable; the CPU target never generates it."""
    text = _program(torch.float32, 8, 2, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), epilogue=True)
    monkeypatch.setenv("DISC_CUDA_DEPTHWISE", "cudnn")
    monkeypatch.setenv("DISC_CACHE", "0")
    assert disc.compile_mlir(text, target="cuda-emulated").kernel_counts["library_calls"] == 1
    if _has_cuda_toolkit():
        assert disc.compile_mlir(text, target="cuda").kernel_counts["library_calls"] == 1
    monkeypatch.setenv("DISC_CUDA_DEPTHWISE", "loops")
    with pytest.raises(Exception, match="DISC_CUDA_DEPTHWISE must be generated or cudnn, got 'loops'"):
        disc.compile_mlir(text, target="cuda-emulated")
    monkeypatch.delenv("DISC_CUDA_DEPTHWISE")
    assert disc.compile_mlir(text, target="cpu").kernel_counts["library_calls"] == 1
