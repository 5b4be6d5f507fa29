"""disc.reduce, gather (embedding / index_select) and scatter (index_add /
scatter_add) against PyTorch at several shapes."""
from __future__ import annotations

import pytest
import torch

import disc
from conftest import (FLOAT_DTYPES, INT_DTYPES, compilations, compile_once, dtype_id, rand,
                      run_shapes, tensor_type)

REDUCE_SHAPES = [(1, 1, 1), (3, 5, 7), (4, 33, 130)]


def reduce_program(kind, dims, dtype, rank=3):
    t = tensor_type((None,) * rank, dtype)
    r = tensor_type((None,) * (rank - len(dims)), dtype)
    dims_text = ", ".join(map(str, dims))
    return f"""
func.func @main(%x: {t}) -> {r} {{
  %0 = disc.reduce %x, dims = [{dims_text}], kind = {kind} : ({t}) -> {r}
  return %0 : {r}
}}"""


FLOAT_REDUCE = {
    "sum": lambda x, d: x.sum(dim=d) if d else x.sum(),
    "max": lambda x, d: x.amax(dim=d),
    "min": lambda x, d: x.amin(dim=d),
    "prod": lambda x, d: x.prod(dim=d[0]) if len(d) == 1 else x.flatten().prod(),
}


@pytest.mark.parametrize("dims", [(2,), (1,), (0,), (0, 2), (0, 1, 2)],
                         ids=lambda d: "dims" + "".join(map(str, d)))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_float_reduce(kind, dtype, dims):
    exe = compile_once(reduce_program(kind, dims, dtype))
    # PyTorch sums low precision in f32 too (but in another order).
    tol = {torch.float32: dict(rtol=1e-5, atol=1e-4),
           torch.float16: dict(rtol=2e-3, atol=2e-3),
           torch.bfloat16: dict(rtol=1e-2, atol=1e-2)}[dtype] if kind == "sum" else {}
    reference = (lambda x: x.float().sum(dim=dims).to(dtype)) if kind == "sum" else (
        lambda x: FLOAT_REDUCE[kind](x, dims))
    run_shapes(exe, lambda s: rand(s, dtype), reference, REDUCE_SHAPES, **tol)


@pytest.mark.parametrize("dims", [(0,), (0, 1), (1, 2), (0, 1, 2)],
                         ids=lambda d: "dims" + "".join(map(str, d)))
def test_long_column_sums_are_as_accurate_as_eager(dims):
    """A column sum adds each output's elements one after another: in f32
    over 32768 rows its error against float64 was 50x eager's (whose
    cascade sums keep it near log n). It accumulates in f64, as does a sum
    over the innermost dim and others (each vector lane adds a long run)."""
    exe = compile_once(reduce_program("sum", dims, torch.float32))
    errors = []
    for shape in [(32768, 2, 16), (1, 16384, 64), (9000, 3, 5)]:
        x = torch.rand(shape) + 0.5
        exact = x.double().sum(dim=dims)
        got, = exe(x)
        eager = x.sum(dim=dims)
        rms = lambda v: float(((v.double() - exact) ** 2).mean().sqrt())  # noqa: E731
        errors.append((rms(got), rms(eager)))
        assert rms(got) <= 2 * rms(eager) + 1e-9 * float(exact.abs().max()), (shape, errors)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_prod(dtype):
    exe = compile_once(reduce_program("prod", (1,), dtype))
    run_shapes(exe, lambda s: rand(s, dtype, low=0.5, high=1.5),
               lambda x: x.float().prod(dim=1).to(dtype), REDUCE_SHAPES,
               rtol=1e-4 if dtype == torch.float32 else 1e-2, atol=1e-5)


def test_reduce_empty_dim_gives_identity():
    exe = compile_once(reduce_program("sum", (1,), torch.float32, rank=2))
    exe_max = compile_once(reduce_program("max", (1,), torch.float32, rank=2))
    x = torch.empty(3, 0)
    assert exe(x)[0].tolist() == [0.0, 0.0, 0.0]
    assert exe_max(x)[0].tolist() == [float("-inf")] * 3


def test_reduce_max_propagates_nan():
    exe = compile_once(reduce_program("max", (1,), torch.float32, rank=2))
    x = torch.tensor([[1.0, float("nan"), 3.0], [1.0, 2.0, 3.0]])
    out, = exe(x)
    assert torch.isnan(out[0]) and out[1] == 3.0


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("kind", ["sum", "max", "min", "prod"])
def test_int_reduce(kind, dtype):
    exe = compile_once(reduce_program(kind, (1,), dtype))
    ops = {"sum": lambda x: x.sum(dim=1, dtype=dtype), "max": lambda x: x.amax(dim=1),
           "min": lambda x: x.amin(dim=1), "prod": lambda x: x.prod(dim=1, dtype=dtype)}
    low, high = (-2, 3) if kind == "prod" else (None, None)
    run_shapes(exe, lambda s: rand(s, dtype, low=low, high=high), ops[kind], REDUCE_SHAPES)


@pytest.mark.parametrize("kind,reference", [("and", lambda x: x.all(dim=2)),
                                            ("or", lambda x: x.any(dim=2))])
def test_bool_reduce(kind, reference):
    exe = compile_once(reduce_program(kind, (2,), torch.bool))

    def make(shape):
        return torch.rand(shape) < 0.9 if kind == "and" else torch.rand(shape) < 0.1

    run_shapes(exe, make, reference, REDUCE_SHAPES)


def test_mean_and_softmax_from_reductions():
    """A row softmax built from reduce/broadcast/elementwise ops."""
    t = "tensor<?x?xf32>"
    exe = compile_once(f"""
func.func @main(%x: {t}) -> {t} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : {t}
  %m = tensor.dim %x, %c1 : {t}
  %shape = tensor.from_elements %n, %m : tensor<2xindex>
  %max = disc.reduce %x, dims = [1], kind = max : ({t}) -> tensor<?xf32>
  %maxb = disc.dynamic_broadcast_in_dim %max, %shape, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> {t}
  %sub = disc.subtract %x, %maxb : {t}
  %e = disc.exponential %sub : {t}
  %sum = disc.reduce %e, dims = [1], kind = sum : ({t}) -> tensor<?xf32>
  %sumb = disc.dynamic_broadcast_in_dim %sum, %shape, dims = [0] : (tensor<?xf32>, tensor<2xindex>) -> {t}
  %0 = disc.divide %e, %sumb : {t}
  return %0 : {t}
}}""")
    run_shapes(exe, lambda s: rand(s, torch.float32) * 5, lambda x: torch.softmax(x, dim=1),
               [(1, 1), (4, 10), (33, 1000)], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64], ids=dtype_id)
def test_embedding(dtype):
    """table[V, D] indexed by ids[B, S] -> [B, S, D] (V, D, B, S dynamic)."""
    tab = tensor_type((None, None), dtype)
    res = tensor_type((None, None, None), dtype)
    exe = compile_once(f"""
func.func @main(%table: {tab}, %ids: tensor<?x?xi64>) -> {res} {{
  %c1 = arith.constant 1 : index
  %d = tensor.dim %table, %c1 : {tab}
  %sizes = tensor.from_elements %c1, %d : tensor<2xindex>
  %0 = disc.dynamic_gather %table[%ids], %sizes, offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2 : ({tab}, tensor<?x?xi64>, tensor<2xindex>) -> {res}
  return %0 : {res}
}}""")
    cases = iter([(10, 4, 1, 1), (100, 16, 2, 7), (1000, 64, 3, 50)])

    def make(_):
        v, d, b, s = next(cases)
        return rand((v, d), dtype), torch.randint(0, v, (b, s))

    run_shapes(exe, make, lambda table, ids: torch.nn.functional.embedding(ids, table), [0, 1, 2])


def test_index_select_dim1():
    """x.index_select(1, idx) with i32 indices: a gather over dim 1."""
    exe = compile_once("""
func.func @main(%x: tensor<?x?xf32>, %idx: tensor<?xi32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %sizes = tensor.from_elements %n, %c1 : tensor<2xindex>
  %0 = disc.dynamic_gather %x[%idx], %sizes, offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?xi32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}""")
    cases = iter([((1, 1), 1), ((3, 8), 5), ((16, 40), 100)])

    def make(_):
        shape, k = next(cases)
        return rand(shape, torch.float32), torch.randint(0, shape[1], (k,), dtype=torch.int32)

    run_shapes(exe, make, lambda x, i: x.index_select(1, i), [0, 1, 2])


def test_gather_static_slice_sizes():
    exe = compile_once("""
func.func @main(%x: tensor<?x8xf32>, %idx: tensor<?xi64>) -> tensor<?x8xf32> {
  %0 = disc.gather %x[%idx] slice_sizes = [1, 8], offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1 : (tensor<?x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}""")
    cases = iter([(1, 1), (5, 9), (50, 200)])

    def make(_):
        n, k = next(cases)
        return rand((n, 8), torch.float32), torch.randint(0, n, (k,))

    run_shapes(exe, make, lambda x, i: x[i], [0, 1, 2])


SCATTER_INDEX_ADD = """
func.func @main(%x: {t}, %idx: tensor<?x1xi64>, %u: {t}) -> {t} {{
  %0 = disc.scatter %x[%idx], %u, kind = {kind}, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : ({t}, tensor<?x1xi64>, {t}) -> {t}
  return %0 : {t}
}}"""


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=dtype_id)
def test_index_add_rows(dtype):
    """x.index_add(0, idx, u): repeated indices accumulate."""
    t = tensor_type((None, None), dtype)
    exe = compile_once(SCATTER_INDEX_ADD.format(t=t, kind="add"))
    cases = iter([(1, 1, 1), (5, 3, 12), (40, 16, 300)])

    def make(_):
        n, d, k = next(cases)
        return rand((n, d), dtype), torch.randint(0, n, (k, 1)), rand((k, d), dtype)

    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else {}
    run_shapes(exe, make, lambda x, i, u: x.index_add(0, i[:, 0], u), [0, 1, 2], **tol)


def test_index_copy_and_out_of_bounds_skipped():
    """kind = replace writes rows; updates whose index is out of bounds are
    skipped (StableHLO semantics), never written out of the buffer."""
    t = "tensor<?x?xf32>"
    exe = compile_once(SCATTER_INDEX_ADD.format(t=t, kind="replace"))
    x = torch.zeros(4, 3)
    idx = torch.tensor([[1], [7], [-1], [3]])
    u = torch.arange(12.0).reshape(4, 3)
    out, = exe(x, idx, u)
    expected = torch.zeros(4, 3)
    expected[1] = u[0]
    expected[3] = u[3]
    assert torch.equal(out, expected)
    assert torch.equal(x, torch.zeros(4, 3)), "the operand is not modified"


@pytest.mark.parametrize("kind", ["add", "max", "min", "mul"])
def test_scatter_elementwise(kind):
    """torch.scatter_reduce(dim=0) with full coordinates (index_vector_dim = 2)."""
    t = "tensor<?x?xf32>"
    exe = compile_once(f"""
func.func @main(%x: {t}, %coords: tensor<?x?x2xi64>, %u: {t}) -> {t} {{
  %0 = disc.scatter %x[%coords], %u, kind = {kind}, update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 2 : ({t}, tensor<?x?x2xi64>, {t}) -> {t}
  return %0 : {t}
}}""")
    cases = iter([(2, 2, 1), (6, 5, 9), (30, 8, 64)])
    reduce = {"add": "sum", "max": "amax", "min": "amin", "mul": "prod"}[kind]

    def make(_):
        n, d, k = next(cases)
        index = torch.randint(0, n, (k, d))
        coords = torch.stack([index, torch.arange(d).expand(k, d)], dim=2)
        return rand((n, d), torch.float32), coords, rand((k, d), torch.float32)

    def reference(x, coords, u):
        return x.scatter_reduce(0, coords[..., 0], u, reduce=reduce)

    run_shapes(exe, make, reference, [0, 1, 2], rtol=1e-5, atol=1e-5)


def test_window_partly_out_of_bounds_is_skipped_whole():
    """An update window that does not fit the operand from its start is
    skipped whole (StableHLO), not written in part: updates [k, 5] into rows
    of 3 columns leave the operand as it is, at every shape."""
    t = "tensor<?x?xf32>"
    exe = compile_once(SCATTER_INDEX_ADD.format(t=t, kind="add"))
    cases = iter([(4, 1), (6, 3), (9, 12)])

    def make(_):
        n, k = next(cases)
        return rand((n, 3), torch.float32), torch.randint(0, n, (k, 1)), rand((k, 5), torch.float32)

    run_shapes(exe, make, lambda x, i, u: x.clone(), [0, 1, 2])


# PyTorch Geometric's message aggregation: a row index expanded over the
# feature dims (`idx.view(-1, 1).expand_as(src)`). disc-scatter-window-indices
# turns the per-element coordinates into one row index per message.

def _compiled_with_dump(fn, tmp_path):
    import functools
    return torch.compile(fn, backend=functools.partial(disc.backend, dump_dir=str(tmp_path)),
                         dynamic=True)


def _scatters_after_window_pass(tmp_path):
    """The disc.scatter lines of every partition after the pass."""
    files = sorted(tmp_path.rglob("*-disc-scatter-window-indices.mlir"))
    assert files, f"no dump of disc-scatter-window-indices under {tmp_path}"
    return [line for f in files for line in f.read_text().splitlines() if "disc.scatter" in line]


def _run_graph_shapes(fn, compiled, inputs_per_shape, **tol):
    before = compilations()
    for args in inputs_per_shape:
        torch.testing.assert_close(compiled(*args), fn(*args), equal_nan=True, **tol)
    assert compilations() - before == 1, "one compilation for every shape"


NODES = 40


@pytest.mark.parametrize("reduce,include_self", [
    ("sum", True), ("amax", False), ("amin", False), ("amax", True), ("mean", False),
    ("prod", False)])
def test_message_aggregation_scatters_rows(reduce, include_self, tmp_path):
    """scatter_reduce over edges into NODES rows (some never hit, so
    include_self=False keeps their base value): correct at 3 edge counts and
    feature widths, one compilation, and every scatter addresses rows (a
    window of features), with no per-element coordinate tensor."""
    def fn(src, idx):
        base = torch.arange(NODES * src.shape[1], dtype=src.dtype).view(NODES, -1) * 0.01
        index = idx.view(-1, 1).expand_as(src)
        return base.scatter_reduce(0, index, src, reduce=reduce, include_self=include_self)

    compiled = _compiled_with_dump(fn, tmp_path)
    inputs = [(rand((e, f), torch.float32), torch.randint(0, NODES // 2, (e,)))
              for e, f in [(7, 3), (33, 16), (120, 9)]]
    _run_graph_shapes(fn, compiled, inputs, rtol=1e-5, atol=1e-5)
    scatters = _scatters_after_window_pass(tmp_path)
    assert scatters and all("update_window_dims = [1]" in s and "tensor<?x1xi64>" in s
                            for s in scatters), scatters


def test_amax_without_self_propagates_nan_and_keeps_inf():
    """include_self=False amax/amin (stored once, then reduced): NaN in a
    message reaches its row, -inf messages give -inf, as in eager."""
    def fn(src, idx):
        index = idx.view(-1, 1).expand_as(src)
        zeros = torch.zeros(5, src.shape[1])
        return (zeros.scatter_reduce(0, index, src, "amax", include_self=False),
                zeros.scatter_reduce(0, index, src, "amin", include_self=False))

    compiled = torch.compile(fn, backend="disc", dynamic=True)

    def make(e, f):
        src = rand((e, f), torch.float32)
        src[0, 0] = float("nan")
        src[1, :] = float("-inf")
        return src, torch.tensor([0, 3] + [1] * (e - 2))

    before = compilations()
    for e, f in [(3, 2), (6, 5), (11, 7)]:
        args = make(e, f)
        for got, want in zip(compiled(*args), fn(*args)):
            torch.testing.assert_close(got, want, equal_nan=True)
    assert compilations() - before == 1


def test_attention_heads_aggregation_rank3(tmp_path):
    """GAT: messages [E, heads, channels] scattered by `idx.view(-1, 1, 1)`:
    heads and channels both become window dims."""
    def fn(src, idx):
        index = idx.view(-1, 1, 1).expand_as(src)
        return torch.zeros(NODES, src.shape[1], src.shape[2]).scatter_add_(0, index, src)

    compiled = _compiled_with_dump(fn, tmp_path)
    inputs = [(rand((e, h, c), torch.float32), torch.randint(0, NODES, (e,)))
              for e, h, c in [(5, 2, 3), (40, 4, 8), (111, 3, 16)]]
    _run_graph_shapes(fn, compiled, inputs, rtol=1e-5, atol=1e-5)
    scatters = _scatters_after_window_pass(tmp_path)
    assert scatters and all("update_window_dims = [1, 2]" in s for s in scatters), scatters


def test_scatter_along_dim1_with_column_index(tmp_path):
    """torch.scatter_add along dim 1 with a column index shared by every row
    (`idx.view(1, -1).expand(rows, -1)`): the rows become the window."""
    def fn(x, src, idx):
        return x.scatter_add(1, idx.view(1, -1).expand(src.shape[0], -1), src)

    compiled = _compiled_with_dump(fn, tmp_path)
    inputs = [(rand((r, 12), torch.float32), rand((r, k), torch.float32), torch.randint(0, 12, (k,)))
              for r, k in [(2, 3), (7, 10), (30, 25)]]
    _run_graph_shapes(fn, compiled, inputs, rtol=1e-5, atol=1e-5)
    scatters = _scatters_after_window_pass(tmp_path)
    assert scatters and all("update_window_dims = [0]" in s for s in scatters), scatters


def test_general_index_keeps_element_coordinates(tmp_path):
    """An index that varies along every dim cannot address rows: the
    scatter keeps one coordinate vector per element and stays correct."""
    def fn(x, src, idx):
        return x.scatter_add(0, idx, src)

    compiled = _compiled_with_dump(fn, tmp_path)
    inputs = [(rand((9, f), torch.float32), rand((k, f), torch.float32), torch.randint(0, 9, (k, f)))
              for k, f in [(2, 3), (5, 8), (13, 4)]]
    _run_graph_shapes(fn, compiled, inputs, rtol=1e-5, atol=1e-5)
    scatters = _scatters_after_window_pass(tmp_path)
    assert scatters and all("update_window_dims = []" in s for s in scatters), scatters


def test_bilinear_upsample_gathers_through_noalias_buffers(tmp_path):
    """F.interpolate(bilinear) gathers from the input with computed
    indices: correct at 3 shapes with one compilation, and its parallel
    bodies reach LLVM with `noalias` on their buffers
    (disc-mark-noalias-args, disc-apply-noalias-args), which lets LLVM
    hoist the row's loads out of the column loop (about 2x on this kernel)."""
    def fn(x):
        return torch.nn.functional.interpolate(x, scale_factor=2.0, mode="bilinear",
                                               align_corners=False)

    compiled = _compiled_with_dump(fn, tmp_path)
    inputs = [(rand(s, torch.float32),) for s in [(2, 3, 5, 7), (3, 4, 16, 9), (2, 2, 33, 40)]]
    _run_graph_shapes(fn, compiled, inputs, rtol=1e-5, atol=1e-5)
    llvm = [line for f in sorted(tmp_path.rglob("1000-llvm-ir*.ll"))
            for line in f.read_text().splitlines() if line.startswith("define")]
    bodies = [line for line in llvm if "_par" in line and "_packed" not in line]
    assert bodies and any("ptr noalias" in line for line in bodies), "\n".join(llvm)


def _imported(tmp_path):
    files = sorted(tmp_path.rglob("000-input.mlir"))
    assert files, f"no imported partition under {tmp_path}"
    return "\n".join(f.read_text() for f in files)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "reflect", "replicate"])
def test_decompositions_unsafe_index_gathers_without_a_range_check(mode, tmp_path):
    """PyTorch decomposes upsampling and reflection/replication padding into
    aten._unsafe_index with indices in range by construction (clamped, or
    bounded by Dynamo's guards): DISC, like Inductor, emits no range check
    for them (no cf.assert in the imported partition); results as eager's
    at 3 shapes, one compilation."""
    def fn(x):
        if mode in ("reflect", "replicate"):
            return torch.nn.functional.pad(x, (2, 3, 1, 2), mode=mode) * 2
        return torch.nn.functional.interpolate(x, scale_factor=2.0, mode=mode)

    compiled = _compiled_with_dump(fn, tmp_path)
    inputs = [(rand(s, torch.float32),) for s in [(2, 3, 5, 7), (3, 4, 16, 9), (2, 2, 9, 12)]]
    _run_graph_shapes(fn, compiled, inputs, rtol=1e-5, atol=1e-5)
    text = _imported(tmp_path)
    assert "_gather" in text and "cf.assert" not in text, text


def test_user_index_keeps_its_range_check(tmp_path):
    """aten.index with the caller's indices is checked: the imported
    partition holds the assertion, and an index out of range raises eager's
    IndexError (the call reruns in eager) instead of a clamped gather."""
    def fn(x, i):
        return x[i] * 2

    compiled = _compiled_with_dump(fn, tmp_path)
    inputs = [(rand((n, 3), torch.float32), torch.randint(-n, n, (k,)))
              for n, k in [(7, 4), (9, 11), (12, 2)]]
    _run_graph_shapes(fn, compiled, inputs, rtol=0, atol=0)
    assert "cf.assert" in _imported(tmp_path)
    with pytest.raises(IndexError):
        compiled(rand((7, 3), torch.float32), torch.tensor([0, 7]))


def test_unsafe_index_out_of_range_stays_inside_the_operand():
    """aten._unsafe_index called directly with an index out of range breaks
    its contract (the caller keeps indices in range; eager happens to
    check, Inductor does not): DISC's gather clamps the index, so the call
    reads inside the operand and returns the clamped row, and
    _unsafe_index_put's scatter skips the update: never memory past the
    operand."""
    def fn(x, i):
        return torch.ops.aten._unsafe_index(x, [i]) + 1

    before = compilations()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    x = rand((5, 4), torch.float32)  # no dim equal to an index count
    torch.testing.assert_close(compiled(x, torch.tensor([0, 4, -1])),
                               x[torch.tensor([0, 4, -1])] + 1)
    clamped = compiled(x, torch.tensor([1, 9]))
    torch.testing.assert_close(clamped, x[torch.tensor([1, 4])] + 1)

    def add_rows(x, i, v):
        return torch.ops.aten._unsafe_index_put(x, [i], v, True) * 2

    compiled = torch.compile(add_rows, backend="disc", dynamic=True)
    v = rand((3, 4), torch.float32)
    i = torch.tensor([0, 4, 4])
    torch.testing.assert_close(compiled(x, i, v), add_rows(x, i, v))
    # The update at row 7 is skipped; the others land.
    skipped = compiled(x, torch.tensor([0, 7, 4]), v)
    expected = x.clone()
    expected[0] += v[0]
    expected[4] += v[2]
    torch.testing.assert_close(skipped, expected * 2)
    assert compilations() - before == 2, "one compilation for each function"
