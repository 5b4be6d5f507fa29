"""disc.export / disc.load: one shape-polymorphic artifact per model, run at
several shapes against eager, saved, loaded in a fresh process without the
compiler, and every bad-artifact case a clear disc.ArtifactError."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import disc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import zoo  # noqa: E402


def _compilations() -> int:
    return disc.stats()["compilations"]


def _close(got, want, tol=1e-4):
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["mlp", "resnet", "transformer", "audio"])
def test_zoo_model_exports_once_and_runs_at_every_size(name):
    entry = zoo.ZOO[name]
    model = zoo.build(name).eval()
    g = torch.Generator().manual_seed(0)
    before = _compilations()
    artifact = disc.export(model, entry.inputs(entry.sizes[0], g))
    assert _compilations() - before == 1
    with torch.no_grad():
        for size in entry.sizes:
            inputs = entry.inputs(size, g)
            got, want = artifact(*inputs), model(*inputs)
            for a, b in zip(pytree_leaves(got), pytree_leaves(want)):
                _close(a, b, 2e-4)
    assert _compilations() - before == 1, "one compilation for every size"


def pytree_leaves(value):
    import torch.utils._pytree as pytree

    return pytree.tree_leaves(value)


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 8)
        self.register_buffer("shift", torch.linspace(-1, 1, 8))

    def forward(self, x, y):
        return {"sum": torch.tanh(self.fc(x)) + self.shift, "y2": y * 2}


def _small_inputs(batch, n):
    return torch.randn(batch, 16), torch.randn(n, 3)


def test_batch_of_one_shares_the_artifact_and_structure_is_kept():
    model = Small().eval()
    artifact = disc.export(model, _small_inputs(4, 5))
    for batch, n in [(1, 1), (2, 7), (9, 1)]:
        x, y = _small_inputs(batch, n)
        got, want = artifact(x, y), model(x, y)
        assert set(got) == {"sum", "y2"}
        _close(got["sum"], want["sum"])
        _close(got["y2"], want["y2"])
    assert [a[0] for a in artifact.signature[0]] == ["x", "y"]


def test_wrong_inputs_are_invocation_errors_naming_the_input():
    artifact = disc.export(Small().eval(), _small_inputs(4, 5))
    with pytest.raises(disc.InvocationError, match=r"argument 0 \(x\) dim 1 is 15, expected 16"):
        artifact(torch.randn(3, 15), torch.randn(2, 3))
    with pytest.raises(disc.InvocationError, match=r"\(y\) has dtype f64"):
        artifact(torch.randn(3, 16), torch.randn(2, 3, dtype=torch.float64))
    with pytest.raises(disc.InvocationError, match="structured as"):
        artifact(torch.randn(3, 16))


def test_dim_ranges_from_dynamic_shapes_are_checked():
    model = Small().eval()
    batch = torch.export.Dim("batch", min=2, max=64)
    artifact = disc.export(model, _small_inputs(4, 5),
                           dynamic_shapes={"x": {0: batch}, "y": {0: torch.export.Dim.AUTO}})
    for b in (2, 64):
        inputs = _small_inputs(b, 3)
        _close(artifact(*inputs)["sum"], model(*inputs)["sum"])
    with pytest.raises(disc.InvocationError, match=r"\(x\) dim 0 is 65, above its maximum 64"):
        artifact(*_small_inputs(65, 2))
    with pytest.raises(disc.InvocationError, match=r"\(x\) dim 0 is 1, below its minimum 2"):
        artifact(*_small_inputs(1, 2))


def test_unsupported_op_is_a_compile_error_naming_it():
    class Fft(torch.nn.Module):
        def forward(self, x):
            return torch.fft.rfft(x).abs()

    with pytest.raises(disc.CompileError, match="cannot compile"):
        disc.export(Fft(), (torch.randn(4, 8),))


def test_saved_artifact_loads_in_a_fresh_process_without_the_compiler(tmp_path):
    model = zoo.build("mlp").eval()
    x = torch.randn(5, 64)
    artifact = disc.export(model, (x,))
    path = tmp_path / "mlp.disc"
    artifact.save(path)
    inputs = [torch.randn(b, 64) for b in (1, 7, 33)]
    torch.save({"inputs": inputs, "outputs": [artifact(t) for t in inputs]}, tmp_path / "io.pt")
    code = textwrap.dedent(f"""
        import sys, time
        import torch
        import disc
        start = time.perf_counter()
        run = disc.load({str(path)!r})
        load_ms = (time.perf_counter() - start) * 1e3
        io = torch.load({str(tmp_path / 'io.pt')!r})
        for x, want in zip(io["inputs"], io["outputs"]):
            torch.testing.assert_close(run(x), want, rtol=0, atol=0)
        maps = open("/proc/self/maps").read()
        assert "disc._C" not in sys.modules, "the compiler module was imported"
        assert "libMLIR" not in maps and "libLLVM" not in maps, "MLIR/LLVM were loaded"
        assert disc.stats()["compilations"] == 0
        print(f"ok {{load_ms:.1f}}")
    """)
    env = dict(os.environ, DISC_CACHE="0")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("ok")


def _artifact_bytes(tmp_path) -> bytes:
    artifact = disc.export(Small().eval(), _small_inputs(4, 5))
    path = tmp_path / "small.disc"
    artifact.save(path)
    return path.read_bytes()


def test_bad_artifacts_are_artifact_errors(tmp_path):
    data = _artifact_bytes(tmp_path)
    cases = {
        "empty": (b"", "truncated"),
        "foreign": (b"\x7fELF" + b"\0" * 200, "not a DISC artifact"),
        "truncated": (data[: len(data) // 2], "truncated"),
        "extended": (data + b"\0" * 64, "truncated or extended"),
        "flipped code byte": (data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:],
                              "checksum mismatch"),
        "flipped header byte": (data[:30] + bytes([data[30] ^ 0x01]) + data[31:],
                                "corrupted|outside|truncated"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / f"{name}.disc"
        path.write_bytes(content)
        with pytest.raises(disc.ArtifactError, match=message):
            disc.load(path)
    with pytest.raises(disc.ArtifactError, match="cannot read"):
        disc.load(tmp_path / "missing.disc")


def test_every_truncation_and_byte_flip_is_detected(tmp_path):
    """No prefix of an artifact loads, and no single flipped byte goes
    unnoticed (sampled): a clear error, never a crash."""
    data = _artifact_bytes(tmp_path)
    step = max(1, len(data) // 300)
    for n in list(range(0, len(data), step)) + [len(data) - 1]:
        with pytest.raises(disc.ArtifactError):
            disc._runtime.load_program(data[:n], "prefix")
    for i in range(0, len(data), step):
        flipped = data[:i] + bytes([data[i] ^ 0x5A]) + data[i + 1:]
        try:
            disc._runtime.load_program(flipped, "flipped")
        except disc.ArtifactError:
            continue
        # Only alignment padding may change without being noticed.
        assert data[i] == 0, f"byte {i} flipped without an error"


def test_cpu_without_the_features_is_a_clear_error(tmp_path):
    data = _artifact_bytes(tmp_path)
    needs_more = disc._runtime.bind_artifact(
        data, {"cpu.features": "avx2,disc-test-feature"}, [], [], [])
    with pytest.raises(disc.ArtifactError, match="lacks features.*disc-test-feature"):
        disc._runtime.load_program(needs_more, "test")
    other = disc._runtime.bind_artifact(data, {"target": "tpu"}, [], [], [])
    with pytest.raises(disc.ArtifactError, match="target is 'tpu'"):
        disc._runtime.load_program(other, "test")


class ChannelsLastNorm(torch.nn.Module):
    """ConvNeXt's LayerNorm2d (permute, layer norm, permute back) leaves a
    channels-last tensor; the next op then asks eager's layout questions of
    the batch size: a convolution picks its backend and memory format, a
    group norm and a 1x1 adaptive pool their suggested memory format. At a
    batch of 1 those answers must not become guards that bound the batch."""

    def __init__(self, tail):
        super().__init__()
        self.tail = tail
        self.stem = torch.nn.Conv2d(3, 8, 4, stride=4)
        self.norm = torch.nn.LayerNorm(8)
        self.dw = torch.nn.Conv2d(8, 8, 7, padding=3, groups=8)
        self.gn = torch.nn.GroupNorm(2, 8)

    def forward(self, x):
        y = self.norm(self.stem(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        if self.tail == "conv":
            return self.dw(y)
        return torch.nn.functional.adaptive_avg_pool2d(self.gn(y), 1).flatten(1)


@pytest.mark.parametrize("tail", ["conv", "group_norm_pool"])
def test_layout_choices_made_at_a_batch_of_one_do_not_bound_the_batch(tail):
    model = ChannelsLastNorm(tail).eval()
    auto = torch.export.Dim.AUTO
    before = _compilations()
    artifact = disc.export(model, (torch.randn(1, 3, 32, 32),),
                           dynamic_shapes=({0: auto, 2: auto, 3: auto},))
    with torch.no_grad():
        for batch, size in [(1, 32), (4, 32), (3, 20), (16, 36)]:
            x = torch.randn(batch, 3, size, size)
            _close(artifact(x), model(x))
    assert _compilations() - before == 1


class Grid(torch.nn.Module):
    """ultralytics' anchor grid: meshgrid (both indexings) and a fill value
    read from a tensor (`torch.full(shape, stride[0])`)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("stride", torch.tensor([8.0, 16.0]))

    def forward(self, x):
        h, w = x.shape[-2], x.shape[-1]
        sy = torch.arange(h, dtype=torch.float32) + 0.5
        sx = torch.arange(w, dtype=torch.float32) + 0.5
        gy, gx = torch.meshgrid(sy, sx, indexing="ij")
        xy_x, xy_y = torch.meshgrid(sx, sy, indexing="xy")
        anchors = torch.stack((gx, gy, xy_x, xy_y), -1).view(-1, 4)
        scale = torch.full((h * w, 1), self.stride[1])
        return x.flatten(2).transpose(1, 2) * 2 + anchors[None, :, :2] * scale


def test_meshgrid_and_a_fill_value_read_from_a_tensor_export():
    model = Grid().eval()
    artifact = disc.export(model, (torch.randn(2, 2, 5, 7),))
    for shape in [(2, 2, 5, 7), (1, 2, 3, 9), (3, 2, 8, 8)]:
        x = torch.randn(shape)
        _close(artifact(x), model(x))


class DropSelfLoops(torch.nn.Module):
    """torch_geometric's remove/add self loops (GAT): a boolean-mask index,
    whose size depends on the data (an unbacked symbol in the exported
    graph), then every later shape built on that size."""

    def forward(self, edge_index, x):
        e = edge_index[:, edge_index[0] != edge_index[1]]
        loops = torch.arange(x.shape[0]).unsqueeze(0).repeat(2, 1)
        e = torch.cat([e, loops], 1)
        return x.index_select(0, e[0]) * 2 + x.index_select(0, e[1]), x[x[:, 0] > 0]


def _edges(nodes, edges, seed):
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, nodes, (2, edges), generator=g)
    edge_index[:, ::3] = edge_index[0, ::3]  # self loops to drop
    return edge_index, torch.randn(nodes, 4, generator=g)


def test_boolean_mask_index_exports_with_a_data_dependent_size():
    model = DropSelfLoops()
    artifact = disc.export(model, _edges(6, 20, 0))
    # Nothing selected by the second mask: a size of 0 flows through.
    empty = (torch.zeros(2, 4, dtype=torch.int64), -torch.ones(3, 4))
    cases = [_edges(n, e, i) for i, (n, e) in enumerate([(6, 20), (9, 31), (2, 5), (40, 3)])]
    for args in cases + [empty]:
        for got, want in zip(artifact(*args), model(*args)):
            _close(got, want)


class BatchSecondAttention(torch.nn.Module):
    """RTMO-s and SegFormer_B0's pattern: features as [L, N, E] into
    batch-second multi-head attention, whose PyTorch code asks whether a
    transposed tensor is contiguous; at a batch of 1 the answer holds for 1
    only (a guard N == 1)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.mha = torch.nn.MultiheadAttention(16, 4)

    def forward(self, img):
        h = self.conv(img).flatten(2).permute(2, 0, 1)
        return self.mha(h, h, h, need_weights=False)[0]


def test_example_batch_of_one_is_traced_at_another_size():
    torch.manual_seed(0)
    model = BatchSecondAttention().eval()
    artifact = disc.export(model, (torch.randn(1, 3, 6, 6),))
    for n, hw in [(1, 6), (2, 6), (5, 4)]:
        x = torch.randn(n, 3, hw, hw)
        _close(artifact(x), model(x))
    compiled = disc.compile(model, mode="export")
    with torch.no_grad():
        for n in (1, 2, 3):
            x = torch.randn(n, 3, 5, 5)
            _close(compiled(x), model(x))
    assert compiled.traces == 1


class NeedsUnitBatch(torch.nn.Module):
    def forward(self, x):
        return x.view(x.shape[1], x.shape[2]) * 2  # only a batch of 1 fits


def test_a_model_that_needs_the_size_of_one_is_traced_at_one():
    model = NeedsUnitBatch()
    artifact = disc.export(model, (torch.randn(1, 3, 4),))
    x = torch.randn(1, 5, 2)
    _close(artifact(x), model(x))
