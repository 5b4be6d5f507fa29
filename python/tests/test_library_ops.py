"""disc.dot_general and disc.convolution (library calls into oneDNN) against
PyTorch at several shapes and in f32, f16 and bf16."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import disc

from conftest import FLOAT_DTYPES, compilations, compile_once, dtype_id, rand, run_shapes, tensor_type

# Accumulation order differs from PyTorch's; low precision rounds the result.
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4),
       torch.float16: dict(rtol=1e-2, atol=1e-2),
       torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


def reference_matmul(a, b):
    return (a.float() @ b.float()).to(a.dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_matmul_2d(dtype):
    t = tensor_type((None, None), dtype)
    exe = compile_once(f"""
func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : ({t}, {t}) -> {t}
  return %0 : {t}
}}""")
    cases = iter([(1, 1, 1), (7, 13, 5), (64, 256, 96)])

    def make(_):
        m, k, n = next(cases)
        return rand((m, k), dtype), rand((k, n), dtype)

    run_shapes(exe, make, reference_matmul, [0, 1, 2], **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_linear_with_bias(dtype):
    """F.linear: x[B, S, K] @ W[N, K]^T + b, with B and S dynamic."""
    x = tensor_type((None, None, 32), dtype)
    w = tensor_type((16, 32), dtype)
    y = tensor_type((None, None, 16), dtype)
    exe = compile_once(f"""
func.func @main(%x: {x}, %w: {w}, %bias: {tensor_type((16,), dtype)}) -> {y} {{
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [2] x [1] : ({x}, {w}) -> {y}
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %b = tensor.dim %x, %c0 : {x}
  %s = tensor.dim %x, %c1 : {x}
  %shape = tensor.from_elements %b, %s, %c16 : tensor<3xindex>
  %bb = disc.dynamic_broadcast_in_dim %bias, %shape, dims = [2] : ({tensor_type((16,), dtype)}, tensor<3xindex>) -> {y}
  %1 = disc.add %0, %bb : {y}
  return %1 : {y}
}}""")
    weight, bias = rand((16, 32), dtype), rand((16,), dtype)
    run_shapes(exe, lambda s: (rand((*s, 32), dtype), weight, bias),
               lambda x, w, b: (x.float() @ w.float().T + b.float()).to(dtype),
               [(1, 1), (2, 9), (4, 100)], **TOL[dtype])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_bmm(dtype):
    t = tensor_type((None, None, None), dtype)
    exe = compile_once(f"""
func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = disc.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : ({t}, {t}) -> {t}
  return %0 : {t}
}}""")
    cases = iter([(1, 1, 1, 1), (3, 5, 7, 2), (8, 33, 64, 17)])

    def make(_):
        bs, m, k, n = next(cases)
        return rand((bs, m, k), dtype), rand((bs, k, n), dtype)

    run_shapes(exe, make, reference_matmul, [0, 1, 2], **TOL[dtype])


def test_attention_scores_batch_heads():
    """q[B, H, S, D] x k[B, H, S, D] contracting D: two batching dims and a
    transposed rhs."""
    t = "tensor<?x?x?x?xf32>"
    exe = compile_once(f"""
func.func @main(%q: {t}, %k: {t}) -> {t} {{
  %0 = disc.dot_general %q, %k, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : ({t}, {t}) -> {t}
  return %0 : {t}
}}""")
    run_shapes(exe, lambda s: (rand(s, torch.float32), rand(s, torch.float32)),
               lambda q, k: q @ k.transpose(-1, -2), [(1, 1, 1, 4), (2, 3, 5, 8), (2, 4, 40, 16)],
               **TOL[torch.float32])


def test_transposed_weight_is_read_not_copied():
    """x @ w.t() (every nn.Linear): the transpose folds into the library
    call, which reads w transposed; no loop kernel copies it per call."""
    x = tensor_type((None, 32), torch.float32)
    w = tensor_type((None, 32), torch.float32)
    wt = tensor_type((32, None), torch.float32)
    y = tensor_type((None, None), torch.float32)
    exe = compile_once(f"""
func.func @main(%x: {x}, %w: {w}) -> {y} {{
  %t = disc.transpose %w, dims = [1, 0] : ({w}) -> {wt}
  %0 = disc.dot_general %x, %t, batching_dims = [] x [], contracting_dims = [1] x [0] : ({x}, {wt}) -> {y}
  return %0 : {y}
}}""")
    assert exe.kernel_counts == {"loops": 0, "library_calls": 1, "copies": 0}, exe.kernel_counts
    run_shapes(exe, lambda s: (rand((s, 32), torch.float32), rand((s + 3, 32), torch.float32)),
               lambda x, w: x @ w.T, [1, 7, 130], **TOL[torch.float32])


class _TwoLayers(torch.nn.Module):
    """A small Linear + GELU (its bias and activation an epilogue) and a
    batched product whose size follows the input."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(16, 32)

    def forward(self, x, y):
        h = torch.nn.functional.gelu(self.layer(x))  # [n, 32]
        return h, torch.bmm(y, y.transpose(1, 2))  # [b, s, s]


@pytest.mark.parametrize("case", [
    # (x rows, bmm input): the layer is always small; the bmm is small,
    # then past the limit (8 x 96 x 95 x 96 > 524288 multiply-adds).
    [(9, (2, 5, 7)), (40, (3, 33, 17)), (3, (8, 96, 95))],
])
def test_small_matmuls_skip_the_primitive(case):
    """f32 products of at most DISC_SMALL_MATMUL_MACS multiply-adds run as
    dnnl_sgemm on the calling thread (disc.stats()["small_matmuls"]), the
    rest as oneDNN matmul primitives; both match eager, one compilation."""
    torch.manual_seed(0)
    model = _TwoLayers()
    compiled = torch.compile(model, backend="disc", dynamic=True)
    expected_small = [2, 2, 1]  # the layer and the bmm; then the layer only
    counts = []
    for (rows, bmm_shape), small in zip(case, expected_small):
        x, y = torch.randn(rows, 16), torch.randn(*bmm_shape)
        calls = disc.stats()["small_matmuls"]
        got = compiled(x, y)
        assert disc.stats()["small_matmuls"] - calls == small, (rows, bmm_shape)
        want = model(x, y)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, **TOL[torch.float32])
        counts.append(compilations())
    assert counts[0] > 0 and counts == [counts[0]] * len(counts), counts  # compiled once


@pytest.mark.parametrize("setting,small", [("0", 0), ("not-a-number", 1)])
def test_small_matmul_limit_setting(setting, small):
    """DISC_SMALL_MATMUL_MACS=0 sends every product to the primitive; a value
    that is not a non-negative integer is reported and the default kept."""
    code = ("import torch, disc\n"
            "f = torch.compile(lambda a, b: a @ b, backend='disc', dynamic=True)\n"
            "a, b = torch.randn(9, 16), torch.randn(16, 32)\n"
            "torch.testing.assert_close(f(a, b), a @ b, rtol=1e-4, atol=1e-4)\n"
            "print('small', disc.stats()['small_matmuls'])\n")
    env = dict(os.environ, DISC_SMALL_MATMUL_MACS=setting, DISC_CACHE="0")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"small {small}" in done.stdout
    if setting != "0":
        assert "DISC_SMALL_MATMUL_MACS=not-a-number is not a non-negative integer" in done.stderr


def test_attention_key_transpose_is_read_not_copied():
    """q @ k.transpose(-2, -1) on [B, H, S, D] reaches DISC as a transpose of
    k, then a reshape merging B and H for a batched matmul. The reshape
    moves before the transpose (disc-transpose-after-collapse), which then
    folds into the library call: no loop kernel copies k per call."""
    q = tensor_type((None, None, 32), torch.float32)
    k = tensor_type((None, None, None, 32), torch.float32)
    kt = tensor_type((None, None, 32, None), torch.float32)
    r = tensor_type((None, 32, None), torch.float32)
    y = tensor_type((None, None, None), torch.float32)
    exe = compile_once(f"""
func.func @main(%q: {q} {{disc.dims = ["s0*s1", "s2", "32"]}},
                %k: {k} {{disc.dims = ["s0", "s1", "s2", "32"]}}) -> {y} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %b = tensor.dim %k, %c0 : {k}
  %h = tensor.dim %k, %c1 : {k}
  %s = tensor.dim %k, %c2 : {k}
  %bh = arith.muli %b, %h : index
  %shape = tensor.from_elements %bh, %c32, %s : tensor<3xindex>
  %t = disc.transpose %k, dims = [0, 1, 3, 2] {{disc.dims = ["s0", "s1", "32", "s2"]}} : ({k}) -> {kt}
  %kr = disc.dynamic_reshape %t, %shape {{disc.dims = ["s0*s1", "32", "s2"]}} : ({kt}, tensor<3xindex>) -> {r}
  %0 = disc.dot_general %q, %kr, batching_dims = [0] x [0], contracting_dims = [2] x [1] {{disc.dims = ["s0*s1", "s2", "s2"]}} : ({q}, {r}) -> {y}
  return %0 : {y}
}}""")
    assert exe.kernel_counts == {"loops": 0, "library_calls": 1, "copies": 0}, exe.kernel_counts

    def make(shape):
        b, h, s = shape
        return rand((b * h, s, 32), torch.float32), rand((b, h, s, 32), torch.float32)

    def reference(q, k):
        return q @ k.transpose(-2, -1).reshape(q.shape[0], 32, q.shape[1])

    run_shapes(exe, make, reference, [(1, 1, 1), (2, 3, 7), (3, 4, 65)], **TOL[torch.float32])


def test_dot_general_unusual_layout():
    """Batch dim last on the lhs: DISC transposes before the library call."""
    exe = compile_once("""
func.func @main(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = disc.dot_general %a, %b, batching_dims = [2] x [0], contracting_dims = [1] x [1] : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}""")
    cases = iter([(1, 1, 1, 1), (2, 3, 4, 5), (5, 17, 9, 6)])

    def make(_):
        m, k, bs, n = next(cases)
        return rand((m, k, bs), torch.float32), rand((bs, k, n), torch.float32)

    run_shapes(exe, make, lambda a, b: torch.einsum("mkb,bkn->bmn", a, b), [0, 1, 2],
               **TOL[torch.float32])


def test_matmul_empty_contraction_gives_zeros():
    t = "tensor<?x?xf32>"
    exe = compile_once(f"""
func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : ({t}, {t}) -> {t}
  return %0 : {t}
}}""")
    out, = exe(torch.ones(3, 0), torch.ones(0, 2))
    assert torch.equal(out, torch.zeros(3, 2))


def conv_program(dtype, in_dims, w_shape, strides, pad, dilation, groups):
    x = tensor_type(in_dims, dtype)
    w = tensor_type(w_shape, dtype)
    out_dims = (None, w_shape[0]) + (None,) * (len(in_dims) - 2)
    y = tensor_type(out_dims, dtype)
    join = lambda v: ", ".join(map(str, v))
    attr = f" {{feature_group_count = {groups} : i64}}" if groups != 1 else ""
    return f"""
func.func @main(%x: {x}, %w: {w}) -> {y} {{
  %0 = disc.convolution %x, %w, strides = [{join(strides)}], pad_low = [{join(pad)}], pad_high = [{join(pad)}], dilation = [{join(dilation)}]{attr} : ({x}, {w}) -> {y}
  return %0 : {y}
}}"""


CONV2D_CASES = {
    "3x3": dict(cin=3, cout=8, k=3, stride=1, pad=1, dilation=1, groups=1),
    "strided": dict(cin=4, cout=6, k=3, stride=2, pad=1, dilation=1, groups=1),
    "dilated": dict(cin=4, cout=4, k=3, stride=1, pad=2, dilation=2, groups=1),
    "grouped": dict(cin=8, cout=8, k=3, stride=1, pad=0, dilation=1, groups=2),
    "depthwise": dict(cin=6, cout=6, k=5, stride=2, pad=2, dilation=1, groups=6),
    "pointwise": dict(cin=16, cout=32, k=1, stride=1, pad=0, dilation=1, groups=1),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("case", sorted(CONV2D_CASES))
def test_conv2d(case, dtype):
    c = CONV2D_CASES[case]
    w_shape = (c["cout"], c["cin"] // c["groups"], c["k"], c["k"])
    exe = compile_once(conv_program(dtype, (None, c["cin"], None, None), w_shape,
                                    [c["stride"]] * 2, [c["pad"]] * 2, [c["dilation"]] * 2,
                                    c["groups"]))
    weight = rand(w_shape, dtype) * 0.3

    def reference(x, w):
        return F.conv2d(x.float(), w.float(), stride=c["stride"], padding=c["pad"],
                        dilation=c["dilation"], groups=c["groups"]).to(dtype)

    run_shapes(exe, lambda s: (rand((s[0], c["cin"], s[1], s[2]), dtype), weight), reference,
               [(1, 5, 5), (2, 8, 11), (3, 32, 17)], **TOL[dtype])


def test_conv1d_audio_block():
    exe = compile_once(conv_program(torch.float32, (None, 4, None), (8, 4, 7), [2], [3], [1], 1))
    w = rand((8, 4, 7), torch.float32)
    run_shapes(exe, lambda s: (rand((s[0], 4, s[1]), torch.float32), w),
               lambda x, w: F.conv1d(x, w, stride=2, padding=3), [(1, 7), (2, 50), (3, 1000)],
               **TOL[torch.float32])


def test_conv3d():
    exe = compile_once(conv_program(torch.float32, (None, 2, None, None, None), (4, 2, 3, 3, 3),
                                    [1, 2, 1], [1, 1, 0], [1, 1, 2], 1))
    w = rand((4, 2, 3, 3, 3), torch.float32)

    def reference(x, w):
        return F.conv3d(F.pad(x, (0, 0, 1, 1, 1, 1)), w, stride=(1, 2, 1), dilation=(1, 1, 2))

    run_shapes(exe, lambda s: (rand((s[0], 2, *s[1:]), torch.float32), w), reference,
               [(1, 3, 3, 5), (2, 4, 6, 8), (1, 8, 9, 10)], **TOL[torch.float32])


def test_conv_channel_mismatch_raises():
    import disc

    exe = compile_once(conv_program(torch.float32, (None, None, None, None), (8, 3, 3, 3),
                                    [1, 1], [1, 1], [1, 1], 1))
    with pytest.raises(disc.InvocationError, match="argument 0.*dim 1 is 4, expected 3|dim 1"):
        exe(torch.ones(1, 4, 5, 5), torch.ones(8, 3, 3, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32], ids=dtype_id)
@pytest.mark.parametrize("groups", [1, 4], ids=["dense", "depthwise"])
def test_conv_window_larger_than_padded_input_raises(dtype, groups):
    """PyTorch refuses a kernel (dilated) longer than the padded input; the
    result size span / stride + 1 used to round such a negative span up to
    one element, which the library call caught with an obscure message and
    the loop nests (integer convolutions, the cuda targets' depthwise ones)
    not at all: a made-up output. Found by fuzz/disc_fuzz.py --differential
    cuda-emulated. A window that fits exactly gives one element."""
    name = {torch.float32: "f32", torch.float16: "f16", torch.int32: "i32"}[dtype]
    x, w, y = f"tensor<2x4x?x{name}>", f"tensor<4x{4 // groups}x5x{name}>", f"tensor<2x4x?x{name}>"
    exe = compile_once(f"""
func.func @main(%x: {x}, %w: {w}) -> {y} {{
  %0 = disc.convolution %x, %w, strides = [3], pad_low = [2], pad_high = [1], dilation = [2] {{feature_group_count = {groups} : i64}} : ({x}, {w}) -> {y}
  return %0 : {y}
}}""")
    weight = torch.randint(-3, 4, (4, 4 // groups, 5)).to(dtype)
    # The window spans 9 inputs, the padding adds 3: 6 inputs fit exactly.
    for length in (6, 7, 13):
        inputs = torch.randint(-3, 4, (2, 4, length)).to(dtype)
        # Eager's padding is symmetric: pad (2, 1) first.
        expected = F.conv1d(F.pad(inputs.double(), (2, 1)), weight.double(), stride=3,
                            dilation=2, groups=groups)
        (out,) = exe(inputs, weight)
        assert out.shape == expected.shape
        torch.testing.assert_close(out.double(), expected, rtol=1e-2, atol=1e-2)
    for length in (5, 1, 0):
        with pytest.raises(disc.InvocationError,
                           match="disc.convolution: along spatial dim 0 the kernel "
                                 r"\(dilated\) is larger than the padded input"):
            exe(torch.ones(2, 4, length, dtype=dtype), weight)


def test_f64_matmul_is_a_clear_compile_error():
    """oneDNN has no f64 matmul: a CompileError naming the op, not a crash."""
    import disc

    t = "tensor<?x?xf64>"
    with pytest.raises(disc.CompileError, match=r"input.mlir:3:\d+.*disc.dot_general.*f64.*f32, f16 and bf16"):
        disc.compile_mlir(f"""
func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : ({t}, {t}) -> {t}
  return %0 : {t}
}}""")


def _conv_log(fn, inputs, monkeypatch, capfd):
    """Runs `fn` through torch.compile(backend="disc", dynamic=True) at each
    input (checked against eager) and returns the library log."""
    import disc  # noqa: F401

    monkeypatch.setenv("DISC_LOG", "library")
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    capfd.readouterr()
    with torch.no_grad():
        for args in inputs:
            torch.testing.assert_close(compiled(*args), fn(*args), rtol=1e-4, atol=1e-4)
    return capfd.readouterr().err


def test_pointwise_conv_runs_as_matmul(monkeypatch, capfd):
    """A 1x1 convolution on NCHW data is a matmul [O, C] x [C, H*W] per
    image, run on the buffers as they are (a oneDNN convolution reorders the
    activations twice per call); batch, bias and activation included."""
    torch.manual_seed(0)
    w, b = torch.randn(16, 8, 1, 1), torch.randn(16)
    fn = lambda x: F.relu(F.conv2d(x, w, b))  # noqa: E731
    log = _conv_log(fn, [(torch.randn(n, 8, 9, 5 + n),) for n in (1, 3, 4)], monkeypatch, capfd)
    assert "pointwise, as a matmul" in log, log
    assert "declined" not in log, log


def test_strided_1x1_conv_stays_a_convolution(monkeypatch, capfd):
    """Must NOT become a matmul: a 1x1 kernel with stride 2 (it subsamples).
    (A channels-last input, which the runtime also leaves to the
    convolution, never reaches it from compiled code: a permute is
    materialised first; the runtime's own test covers it.)"""
    torch.manual_seed(0)
    w = torch.randn(16, 8, 1, 1)
    strided = lambda x: F.conv2d(x, w, stride=2)  # noqa: E731
    log = _conv_log(strided, [(torch.randn(n, 8, 9, 7),) for n in (1, 2, 3)], monkeypatch, capfd)
    assert "library: convolution" in log, log
    assert "pointwise" not in log, log


@pytest.mark.parametrize("layout", ["blocked", "any"])
def test_conv_layouts_never_reference_code(layout, monkeypatch, capfd):
    """Convolutions compute in the blocked layout (nChw16c / nChw8c) where
    oneDNN has an optimised implementation for it, else in the layout
    oneDNN picks: a first layer of 3 channels has none in the blocked
    layout, and must NOT end in oneDNN's reference code (1.6 s on
    resnet18's stem). DISC_CONV_LAYOUT=any is the other policy."""
    monkeypatch.setenv("DISC_CONV_LAYOUT", layout)
    torch.manual_seed(0)
    # Channel counts differ per policy: primitives are cached per shape.
    c = 16 if layout == "blocked" else 24
    stem, w = torch.randn(c, 3, 7, 7) / 12, torch.randn(c, c, 3, 3) / (3 * c ** 0.5)
    dw = torch.randn(c, 1, 3, 3) / 3
    def fn(x):
        y = F.conv2d(F.conv2d(x, stem, stride=2, padding=3), w, padding=1)
        # Literal groups: a closure int would be a SymInt with dynamic=True.
        return F.conv2d(y, dw, padding=1, groups=16) if c == 16 else \
            F.conv2d(y, dw, padding=1, groups=24)

    log = _conv_log(fn, [(torch.randn(n, 3, 20 + n, 18),) for n in (1, 2, 3)], monkeypatch, capfd)
    convs = [line for line in log.splitlines() if "library: convolution" in line]
    assert convs, log
    assert not any(line.split(": ")[-1].startswith("ref") for line in convs), log


def test_symbolic_conv_groups_fall_back_with_a_reason(monkeypatch, capfd):
    """groups from a closure int is a SymInt under dynamic=True: the
    convolution runs in eager, logged with the reason, and the model's
    results are right (it used to crash the backend)."""
    import disc

    torch.manual_seed(0)
    groups = 4
    w = torch.randn(8, 2, 3, 3)
    fn = lambda x: torch.relu(F.conv2d(x, w, padding=1, groups=groups))  # noqa: E731
    monkeypatch.setenv("DISC_LOG", "fallback")
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    before = disc.stats()["fallback_nodes"]
    with torch.no_grad():
        for n in (1, 2, 3):
            x = torch.randn(n, 8, 6, 5 + n)
            torch.testing.assert_close(compiled(x), fn(x))
    err = capfd.readouterr().err
    assert disc.stats()["fallback_nodes"] > before
    assert "convolution with a symbolic groups" in err, err
