"""Library-call epilogues (disc-fuse-library-epilogues): the bias, batch
norm and activation after a convolution or matmul run as oneDNN post-ops.
By default only profitable chains are fused (a convolution with at most two
binary steps; DISC_LIBRARY_EPILOGUES=0 turns them off); =all fuses every
chain, which the correctness tests use. Each model is compiled once
with dynamic shapes and checked against eager PyTorch at several shapes;
the fusion log must show the expected epilogues (so a pass that fuses
nothing fails here)."""
from __future__ import annotations

import pytest
import torch

import disc
from conftest import compilations

TOL = dict(rtol=1e-4, atol=1e-4)


def _randomize_batch_norms(model: torch.nn.Module) -> None:
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 2 - 1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.rand(m.num_features, generator=g) - 0.5)


def _conv_bn(conv: torch.nn.Conv2d, act: torch.nn.Module) -> torch.nn.Module:
    return torch.nn.Sequential(conv, torch.nn.BatchNorm2d(conv.out_channels), act)


class Swish(torch.nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class LinearGeluResidual(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x))) + x


def _models():
    """name -> (model, input shape for a size n, epilogues in the fusion log)."""
    return {
        "conv_bn_relu": (
            _conv_bn(torch.nn.Conv2d(3, 8, 3, padding=1, bias=False), torch.nn.ReLU()),
            lambda n: (n, 3, 4 + n, 5 + n),
            ["convolution epilogue: subtract, multiply, multiply, add (stops: at disc.maximum: oneDNN"]),
        "depthwise_bn_hardswish": (
            _conv_bn(torch.nn.Conv2d(8, 8, 3, padding=1, groups=8), torch.nn.Hardswish()),
            lambda n: (n, 8, 6, 3 + n),
            ["convolution epilogue: add, subtract, multiply, multiply, add ("]),
        # x * sigmoid(x) is oneDNN's swish post-op. SiLU itself is
        # x / (1 + exp(-x)), as eager rounds it (decompositions()), which
        # the pass does not take: only the bias is fused.
        "conv_bias_swish": (
            torch.nn.Sequential(torch.nn.Conv2d(4, 6, 1), Swish()),
            lambda n: (n, 4, 2 * n + 3, 5),
            ["convolution epilogue: add, swish ("]),
        "conv_bias_silu": (
            torch.nn.Sequential(torch.nn.Conv2d(4, 6, 1), torch.nn.SiLU()),
            lambda n: (n, 4, 2 * n + 3, 5),
            ["convolution epilogue: add (stops: the value has several users)"]),
        "strided_conv_bn_relu6": (
            _conv_bn(torch.nn.Conv2d(4, 8, 3, stride=2, bias=False), torch.nn.ReLU6()),
            lambda n: (n, 4, 5 + n, 9),
            ["convolution epilogue: subtract, multiply, multiply, add (stops: at disc.maximum: oneDNN"]),
        "linear_gelu_residual": (
            LinearGeluResidual(), lambda n: (3 * n, 16),
            ["dot_general epilogue: add, gelu_erf (", "dot_general epilogue: add, add ("]),
        "linear_tanh": (
            torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.Tanh()),
            lambda n: (2 * n + 1, 16),
            ["dot_general epilogue: add, tanh ("]),
    }


def _compile_and_run(model, shapes, env: str, monkeypatch):
    monkeypatch.setenv("DISC_LIBRARY_EPILOGUES", env)
    # Depthwise convolutions stay library calls under DISC_TARGET=cuda-emulated
    # too (the cuda targets generate them by default: docs/cuda.md); this
    # file is about the calls' epilogues.
    monkeypatch.setenv("DISC_CUDA_DEPTHWISE", "cudnn")
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="disc", dynamic=True)
    kernels_before, compiles_before = disc.stats()["kernels"], compilations()
    outputs = []
    with torch.no_grad():
        for shape in shapes:
            x = torch.randn(shape)
            outputs.append((compiled(x), model(x), shape))
    return outputs, disc.stats()["kernels"] - kernels_before, compilations() - compiles_before


@pytest.mark.parametrize("name", list(_models()))
def test_epilogue_matches_eager(name, monkeypatch, capfd):
    torch.manual_seed(0)
    model, shape_of, expected_epilogues = _models()[name]
    model = model.eval()
    _randomize_batch_norms(model)
    shapes = [shape_of(n) for n in (2, 3, 5)]
    monkeypatch.setenv("DISC_LOG", "fusion")
    capfd.readouterr()

    outputs, _, compiles = _compile_and_run(model, shapes, "all", monkeypatch)
    log = capfd.readouterr().err
    assert compiles == 1, f"{name}: {compiles} compilations for {shapes}"
    for epilogue in expected_epilogues:
        assert epilogue in log, f"{name}: no '{epilogue}' in the fusion log:\n{log}"
    for actual, expected, shape in outputs:
        torch.testing.assert_close(actual, expected, **TOL, msg=lambda m: f"{name} {shape}: {m}")


def test_empty_reduction_still_applies_epilogue(monkeypatch):
    """K = 0: oneDNN is not called; the runtime writes zeros and applies
    the epilogue itself (tanh(0 + bias))."""
    model = torch.nn.Sequential(torch.nn.Linear(0, 4), torch.nn.Tanh()).eval()
    with torch.no_grad():
        model[0].bias.copy_(torch.tensor([-1.0, 2.0, -3.0, 4.0]))
    # (batches of 2+: a batch of 1 is a graph of its own, PyTorch's 0/1
    # specialisation)
    outputs, _, compiles = _compile_and_run(model, [(2, 0), (3, 0), (5, 0)], "all", monkeypatch)
    assert compiles == 1
    for actual, expected, _ in outputs:
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close(actual[0], torch.tanh(torch.tensor([-1.0, 2.0, -3.0, 4.0])))


NAN_ACTIVATIONS = {
    "relu": torch.nn.functional.relu,
    "relu6": torch.nn.functional.relu6,
    "hardtanh": lambda y: torch.nn.functional.hardtanh(y, -1.0, 1.0),
    "maximum": lambda y: torch.maximum(y, torch.linspace(-1, 1, 6).reshape(1, 6, 1)),
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "silu": torch.nn.functional.silu,
    "gelu": torch.nn.functional.gelu,
}


@pytest.mark.parametrize("name", list(NAN_ACTIVATIONS))
def test_nan_and_inf_propagate_as_in_eager(name, monkeypatch):
    """NaN and inf in a convolution's input reach the output where eager's
    do. oneDNN's relu/clip/max/min post-ops turn NaN into a number, so
    those steps are never fused (convtasnet with a NaN PReLU weight)."""
    torch.manual_seed(0)
    conv = torch.nn.Conv1d(4, 6, 3, padding=1).eval()
    act = NAN_ACTIVATIONS[name]
    model = lambda x: act(conv(x))  # noqa: E731
    shapes = [(2, 4, 20), (3, 4, 33)]
    monkeypatch.setenv("DISC_LIBRARY_EPILOGUES", "all")
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="disc", dynamic=True)
    before = compilations()
    with torch.no_grad():
        for shape in shapes:
            x = torch.randn(shape)
            x[0, 0, 3], x[0, 1, 9], x[-1, 2, 15] = float("nan"), float("inf"), -float("inf")
            actual = compiled(x)
            # The activation in float64: eager's vectorised float32 GELU
            # gives NaN at +inf on AVX-512 machines (its scalar path and
            # float64 give inf, as DISC does), so float32 eager is not the
            # reference for where inf turns into NaN.
            expected = act(conv(x).double()).float()
            assert torch.isnan(expected).any()
            torch.testing.assert_close(actual, expected, equal_nan=True, **TOL,
                                       msg=lambda m: f"{name} {shape}: {m}")
    assert compilations() - before == 1


def test_profitable_policy_fuses_only_cheap_convolution_epilogues(monkeypatch, capfd):
    """The default (DISC_LIBRARY_EPILOGUES unset, same as =1): a
    convolution's bias is fused (the ReLU is not: NaN), a batch norm chain and a matmul's epilogue are not
    (oneDNN's post-ops measured slower there, docs/architecture.md)."""
    monkeypatch.delenv("DISC_LIBRARY_EPILOGUES", raising=False)
    monkeypatch.setenv("DISC_LOG", "fusion")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 4, 3)
            self.conv2 = torch.nn.Conv2d(4, 4, 1, bias=False)
            self.bn = torch.nn.BatchNorm2d(4)
            self.fc = torch.nn.Linear(4, 2)

        def forward(self, x):
            y = self.bn(self.conv2(torch.relu(self.conv1(x))))
            return torch.relu(self.fc(y.mean(dim=(2, 3))))

    model = Net().eval()
    _randomize_batch_norms(model)
    capfd.readouterr()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="disc", dynamic=True)
    with torch.no_grad():
        for n in (2, 3):
            x = torch.randn(n, 3, 7 + n, 6)
            torch.testing.assert_close(compiled(x), model(x), **TOL)
    log = capfd.readouterr().err
    assert "convolution epilogue: add (stops: at disc.maximum" in log, log
    assert "convolution epilogue: none (not profitable: 4 binary steps" in log, log
    assert "dot_general epilogue: none (not profitable: matmul" in log, log


def test_zero_turns_epilogues_off(monkeypatch, capfd):
    """DISC_LIBRARY_EPILOGUES=0: the pass does not run; the bias + ReLU
    after the convolution stay one loop kernel."""
    monkeypatch.setenv("DISC_LIBRARY_EPILOGUES", "0")
    monkeypatch.setenv("DISC_LOG", "fusion")
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Tanh()).eval()
    capfd.readouterr()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="disc", dynamic=True)
    before = disc.stats()["kernels"]
    with torch.no_grad():
        x = torch.randn(2, 3, 8, 9)
        torch.testing.assert_close(compiled(x), model(x), **TOL)
    assert "epilogue" not in capfd.readouterr().err
    # The convolution, and the bias + tanh loop.
    assert disc.stats()["kernels"] - before == 2


def test_bad_setting_is_an_error(monkeypatch):
    monkeypatch.setenv("DISC_LIBRARY_EPILOGUES", "yes")
    with pytest.raises(Exception, match="DISC_LIBRARY_EPILOGUES must be 0, 1 or all, got 'yes'"):
        disc.compile_mlir("""
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = disc.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}""")


def test_transposing_broadcast_is_not_an_epilogue_operand(monkeypatch):
    """A matmul plus an operand broadcast with its dims transposed
    (disc.broadcast_in_dim dims = [1, 0]): the epilogue operand would be its
    source reshaped, read in the wrong order, so it stays a loop kernel;
    right against PyTorch with every chain fused (`all`)."""
    monkeypatch.setenv("DISC_LIBRARY_EPILOGUES", "all")
    exe = disc.compile_mlir("""
func.func @main(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %t: tensor<5x3xf32>) -> tensor<3x5xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = disc.broadcast_in_dim %t, dims = [1, 0] : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %2 = disc.add %0, %1 : tensor<3x5xf32>
  return %2 : tensor<3x5xf32>
}""")
    g = torch.Generator().manual_seed(5)
    x, w, t = (torch.randn(*s, generator=g) for s in ((3, 4), (4, 5), (5, 3)))
    (got,) = exe(x, w, t)
    torch.testing.assert_close(got, x @ w + t.T, rtol=1e-5, atol=1e-5)


def test_gemm_convolution_runs_binary_post_ops_separately(monkeypatch, capfd):
    """A depthwise dilated 1-d convolution is oneDNN's gemm-based kernel,
    which applies binary post-ops per element in reference code (12x slower
    on convtasnet). The runtime passes the bias as the convolution's bias
    argument and runs the rest of the epilogue as a separate in-place
    binary primitive; DISC_LOG=library says so."""

    class DepthwiseScaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv1d(16, 16, 3, padding=2, dilation=2, groups=16)
            self.scale = torch.nn.Parameter(torch.randn(16, 1))

        def forward(self, x):
            return torch.sigmoid(self.conv(x) * self.scale)

    torch.manual_seed(0)
    model = DepthwiseScaled().eval()
    monkeypatch.setenv("DISC_LOG", "library,fusion")
    capfd.readouterr()
    outputs, _, compiles = _compile_and_run(model, [(2, 16, 50), (3, 16, 71)], "1", monkeypatch)
    log = capfd.readouterr().err
    assert compiles == 1
    for actual, expected, shape in outputs:
        torch.testing.assert_close(actual, expected, **TOL, msg=lambda m: f"{shape}: {m}")
    assert "convolution epilogue: add, multiply, logistic (" in log, log
    separate = [line for line in log.splitlines()
                if "[disc] library: convolution" in line and "separate binary primitive" in line]
    assert len(separate) == 2, log  # one primitive per shape
    assert all("gemm" in line and "bias argument" in line for line in separate), log


@pytest.mark.parametrize("out_channels", [16, 1])
def test_bias_becomes_the_convolution_bias_argument(out_channels, monkeypatch, capfd):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(8, out_channels, 3), Swish()).eval()
    monkeypatch.setenv("DISC_LOG", "library")
    capfd.readouterr()
    outputs, _, _ = _compile_and_run(model, [(2, 8, 9, 10)], "1", monkeypatch)
    log = capfd.readouterr().err
    for actual, expected, _ in outputs:
        torch.testing.assert_close(actual, expected, **TOL)
    lines = [line for line in log.splitlines() if "[disc] library: convolution" in line]
    assert len(lines) == 1 and lines[0].endswith("bias argument, post-ops"), log
