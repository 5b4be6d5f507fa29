"""Column reductions on the cuda target without a GPU (docs/cuda.md,
"Column reductions"): `x.sum(0)`, `x.mean(1)` of [B, S, H], the bias and
norm-weight gradients of training graphs. One thread per column carries its
sum in a register; with too few columns to fill a GPU, a variant chosen per
call splits each column's rows into parts (a thread per part and column)
and combines the parts per column in a second grid. Run through target
cuda-emulated (the grids executed on the CPU) against eager PyTorch;
disc.stats() counts the choice (`column_splits`, `columns_per_thread`)."""
import copy

import pytest
import torch
import torch.utils._pytree as pytree

import disc
from conftest import compilations


def _reductions(x, dy, ids):
    return (dy.sum(0), (dy * x).sum(0), x.amax(0), x.amin(0), ids.sum(0), ids.amax(0),
            x.mean(1), torch.var_mean(x, 0), x.to(torch.float16).sum(0),
            x.to(torch.bfloat16).sum(0), (x > 1).any(0))


def _inputs(shape, g):
    x = torch.randn(shape, generator=g)
    if x.numel() > 5:
        x.view(-1)[5] = float("nan")   # a max/min over a part with a NaN
        x.view(-1)[::11] *= 30         # sums with cancellation
    dy = torch.randn(shape, generator=g)
    ids = torch.randint(-1000, 1000, shape, generator=g, dtype=torch.int32)
    return x, dy, ids


def _run(calls, monkeypatch, threads=None):
    """Compiles _reductions once, runs it on each argument tuple and checks
    it against eager; returns each call's (splits, per-thread) counts."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    if threads is not None:
        monkeypatch.setenv("DISC_CUDA_COLUMN_THREADS", threads)
    torch._dynamo.reset()
    compiled = torch.compile(_reductions, backend="disc", dynamic=True)
    before = compilations()
    counts = []
    for args in calls:
        stats = disc.stats()
        got, want = compiled(*args), _reductions(*args)
        after = disc.stats()
        for a, b in zip(pytree.tree_leaves(got), pytree.tree_leaves(want)):
            assert a.dtype == b.dtype and a.shape == b.shape
            tol = 1e-2 if b.dtype in (torch.float16, torch.bfloat16) else 2e-5
            torch.testing.assert_close(a, b, rtol=tol, atol=tol, equal_nan=True)
        counts.append((after["column_splits"] - stats["column_splits"],
                       after["columns_per_thread"] - stats["columns_per_thread"]))
    assert compilations() == before + 1, "one compilation for every shape"
    return counts


def test_tall_columns_split_and_wide_ones_run_a_thread_each(monkeypatch):
    g = torch.Generator().manual_seed(0)
    calls = [_inputs((300, 4, 6), g),      # 24 columns of 300 rows: split
             _inputs((65, 7, 3), g),       # 65 rows: 3 parts, the last short
             _inputs((33, 5, 2), g),       # 33 rows: 2 parts of 17 and 16
             _inputs((20, 3, 5), g),       # 20 rows: one part, a thread each
             _inputs((3, 2, 40000), g)]    # 80000 columns: a thread each
    counts = _run(calls, monkeypatch)
    for splits, per_thread in counts[:3]:
        assert splits >= 10 and per_thread <= 1, counts  # x.mean(1): 4-7 rows
    assert counts[3][0] == 0 and counts[3][1] >= 10, counts
    assert counts[4][0] == 0 and counts[4][1] >= 10, counts


def test_empty_rows_and_columns(monkeypatch):
    """No rows: every column keeps the identity's result (a sum 0, a max
    INT_MIN); no columns: nothing to write. One compilation for every shape
    (compile_mlir: Dynamo would specialise a size of 0)."""
    monkeypatch.setenv("DISC_CACHE", "0")
    before = compilations()
    exe = disc.compile_mlir(EMPTY_COLUMNS, target="cuda-emulated")
    assert compilations() == before + 1
    g = torch.Generator().manual_seed(1)
    for shape in [(100, 3), (0, 3), (100, 0), (0, 0), (70, 2)]:
        x = torch.randn(shape, generator=g)
        ids = torch.randint(-9, 9, shape, generator=g, dtype=torch.int32)
        s, m = exe(x, ids)
        torch.testing.assert_close(s, x.double().sum(0).float(), rtol=1e-5, atol=1e-5)
        want = ids.amax(0) if shape[0] else torch.full((shape[1],), -2**31, dtype=torch.int32)
        assert torch.equal(m, want)
    assert compilations() == before + 1


EMPTY_COLUMNS = """
func.func @main(%x: tensor<?x?xf32>, %i: tensor<?x?xi32>) -> (tensor<?xf32>, tensor<?xi32>) {
  %s = disc.reduce %x, dims = [0], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  %m = disc.reduce %i, dims = [0], kind = max : (tensor<?x?xi32>) -> tensor<?xi32>
  return %s, %m : tensor<?xf32>, tensor<?xi32>
}
"""


def test_column_threads_zero_never_splits(monkeypatch):
    """DISC_CUDA_COLUMN_THREADS=0: one thread per column always (no
    choice, nothing counted), the same values."""
    g = torch.Generator().manual_seed(2)
    counts = _run([_inputs((300, 4, 6), g), _inputs((40, 2, 3), g)], monkeypatch,
                  threads="0")
    assert counts == [(0, 0), (0, 0)]


def test_a_small_thread_target_splits_less(monkeypatch):
    """DISC_CUDA_COLUMN_THREADS=48: 24 columns get 2 parts (48 threads),
    48 columns none."""
    g = torch.Generator().manual_seed(3)

    def colsum(x):
        return x.sum(0)

    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    monkeypatch.setenv("DISC_CUDA_COLUMN_THREADS", "48")
    torch._dynamo.reset()
    compiled = torch.compile(colsum, backend="disc", dynamic=True)
    got = []
    for cols in (24, 48):
        x = torch.randn(500, cols, generator=g)
        stats = disc.stats()
        torch.testing.assert_close(compiled(x), x.sum(0), rtol=1e-5, atol=1e-4)
        after = disc.stats()
        got.append((after["column_splits"] - stats["column_splits"],
                    after["columns_per_thread"] - stats["columns_per_thread"]))
    assert got == [(1, 0), (0, 1)]


@pytest.mark.parametrize("value", ["-1", "many", "16777217"])
def test_bad_column_threads_is_a_clear_error(value, monkeypatch):
    monkeypatch.setenv("DISC_CUDA_COLUMN_THREADS", value)
    monkeypatch.setenv("DISC_CACHE", "0")
    with pytest.raises(Exception, match="DISC_CUDA_COLUMN_THREADS must be an integer "
                                        f"from 0 to 16777216, got '{value}'"):
        disc.compile_mlir(COLUMN_SUM, target="cuda-emulated")


COLUMN_SUM = """
func.func @main(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %s = disc.reduce %x, dims = [0], kind = sum : (tensor<?x?xf32>) -> tensor<?xf32>
  return %s : tensor<?xf32>
}
"""


def test_training_gradients_of_biases_and_norm_weights(monkeypatch):
    """A training step's column sums (Linear bias, LayerNorm weight and bias
    gradients over [batch * tokens, hidden]) split on tall batches; the
    gradients match eager."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()
    torch.manual_seed(4)
    model = torch.nn.Sequential(torch.nn.Linear(16, 24), torch.nn.GELU(),
                                torch.nn.LayerNorm(24), torch.nn.Linear(24, 8))
    reference = [p.detach().clone() for p in model.parameters()]
    compiled = torch.compile(model, backend="disc", dynamic=True)
    before, stats = compilations(), disc.stats()
    for tokens in (400, 130, 900):
        x = torch.randn(tokens, 16)
        model.zero_grad()
        compiled(x).square().sum().backward()
        got = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        model(x).square().sum().backward()
        for a, b in zip(got, (p.grad for p in model.parameters())):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    assert all(torch.equal(p, r) for p, r in zip(model.parameters(), reference))
    assert compilations() - before == 2, "one forward and one backward graph"
    assert disc.stats()["column_splits"] - stats["column_splits"] >= 3 * 4


@pytest.mark.skipif(not disc._compiler().cuda_toolkit_path(),
                    reason="no CUDA toolkit (ptxas): set DISC_CUDA_TOOLKIT")
def test_split_variant_compiles_for_cuda(tmp_path):
    """ptxas accepts both variants' kernels for sm_80 and sm_90: the split's
    two grids and the one-thread-per-column grid (kernel counts take the
    latter: every run-time choice adds one kernel to the counted ones, the
    column split two)."""
    import re

    exe = disc.compile_mlir(COLUMN_SUM, target="cuda", dump_dir=str(tmp_path),
                            _exact_dump_dir=True)
    (mapped,) = tmp_path.glob("*disc-map-loops-to-gpu.mlir")
    text = mapped.read_text()
    assert "call @disc_ral_note_variant(%c4_i64)" in text
    assert "call @disc_ral_note_variant(%c5_i64)" in text
    (merged,) = tmp_path.glob("*disc-merge-gpu-modules.mlir")
    kernels = re.findall(r"gpu\.func @\w+\([^)]*\) kernel\b", merged.read_text())
    variants = text.count("{disc.row_variants}")
    assert len(kernels) == exe.kernel_counts["loops"] + variants + 1
    assert sorted(p.name.split(".")[1] for p in tmp_path.glob("*.fatbin")) == ["sm_80", "sm_90"]


def _channel_reductions(x, dy):
    mean, var = torch.var_mean(x, (0, 2, 3), correction=0)
    return (x.sum((0, 2, 3)), mean, var, (dy * x).sum((0, 2)), x.amax((0, 2, 3)),
            x.to(torch.bfloat16).sum((0, 3)))


def test_reductions_that_keep_a_middle_dim_run_a_warp_or_block_per_channel(monkeypatch):
    """Sums over N and H*W keeping C (batch norm's statistics and weight
    gradients) are a row kernel over the channels, each row the channel's
    N * H * W elements (ColumnLoops.h, collapseOuterReductionLoops), not
    one GPU thread for the whole reduction."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()
    compiled = torch.compile(_channel_reductions, backend="disc", dynamic=True)
    before = compilations()
    g = torch.Generator().manual_seed(5)
    for shape in [(4, 8, 5, 6), (2, 3, 7, 9), (2, 5, 2, 2), (6, 2, 3, 2)]:
        x = torch.randn(shape, generator=g)
        x.view(-1)[::7] *= 20
        dy = torch.randn(shape, generator=g)
        stats = disc.stats()
        for a, b in zip(compiled(x, dy), _channel_reductions(x, dy)):
            tol = 2e-2 if b.dtype == torch.bfloat16 else 2e-5
            torch.testing.assert_close(a, b, rtol=tol, atol=tol)
        after = disc.stats()
        rows = (after["rows_per_block"] - stats["rows_per_block"]
                + after["rows_per_warp"] - stats["rows_per_warp"],
                after["rows_per_thread"] - stats["rows_per_thread"])
        # Rows of 32 elements or more one per warp or block, shorter ones
        # one per thread.
        long_rows = shape[0] * shape[2] * shape[3] >= 32
        assert (rows[0] > 0) if long_rows else (rows[0] == 0 and rows[1] > 0), rows
    assert compilations() == before + 1


def test_batch_norm_training_on_the_emulated_target(monkeypatch):
    """A training step through batch norm and group norm (statistics,
    running-stat updates, weight and input gradients) against eager."""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    torch._dynamo.reset()
    torch.manual_seed(6)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),
                                torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 3),
                                torch.nn.GroupNorm(2, 4))
    twin = copy.deepcopy(model)
    compiled = torch.compile(model, backend="disc", dynamic=True)
    stats = disc.stats()
    for batch, size in ((4, 12), (3, 9), (5, 10)):
        x = torch.randn(batch, 3, size, size)
        for m, run in ((model, compiled), (twin, twin)):
            m.zero_grad()
            run(x).square().sum().backward()
        for (name, a), b in zip(model.named_parameters(), twin.parameters()):
            torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-4, msg=name)
        torch.testing.assert_close(model[1].running_mean, twin[1].running_mean)
        torch.testing.assert_close(model[1].running_var, twin[1].running_var)
    after = disc.stats()
    assert after["fallback_nodes"] == stats["fallback_nodes"]
    assert after["rows_per_block"] > stats["rows_per_block"]


def _no_serial_reductions(x):
    return (x[:, :, 1:-1].sum(), x.amax(), x.amin(), torch.var_mean(x, (0, 2, 3)),
            x.sum(0), x.sum((0, 3)), x.mean(-1))


def test_no_reduction_is_left_to_one_gpu_thread(monkeypatch, capfd):
    """Every reduction here once ran in a one-thread grid on the GPU (a
    strided whole sum, whole float max/min, sums keeping a middle dim);
    DISC_LOG=fusion names any loop left to one, and there is none. Values
    against eager at two shapes. (Still serial, and logged: a sum that keeps
    two dims apart, x.sum((0, 2)) of [N, C, H, W].)"""
    monkeypatch.setenv("DISC_TARGET", "cuda-emulated")
    monkeypatch.setenv("DISC_CACHE", "0")
    monkeypatch.setenv("DISC_LOG", "fusion")
    torch._dynamo.reset()
    compiled = torch.compile(_no_serial_reductions, backend="disc", dynamic=True)
    g = torch.Generator().manual_seed(8)
    for shape in [(4, 6, 9, 11), (3, 5, 20, 7)]:
        x = torch.randn(shape, generator=g)
        got, want = compiled(x), _no_serial_reductions(x)
        for a, b in zip(pytree.tree_leaves(got), pytree.tree_leaves(want)):
            torch.testing.assert_close(a, b, rtol=2e-5, atol=2e-5)
    err = capfd.readouterr().err
    assert "[disc] fusion" in err or "[disc]" in err, "the log is on"
    assert "one-thread grid" not in err, err[-2000:]


def test_the_log_names_a_loop_left_to_one_gpu_thread(monkeypatch, capfd):
    """What the log says when a loop does stay serial (a scan down the
    columns: each step reads the last)."""
    monkeypatch.setenv("DISC_CACHE", "0")
    monkeypatch.setenv("DISC_LOG", "fusion")
    disc.compile_mlir("""
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = disc.scan %x, dim = 0, kind = sum : tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}""", target="cuda-emulated")
    err = capfd.readouterr().err
    assert "[disc] cuda: a loop at" in err and "runs in a one-thread grid" in err, err
