"""Issue 28: inputs a hostile (or just unusual) user passes, through
disc.compile_mlir executables and torch.compile(backend="disc"). Each case
is compared with eager PyTorch at several shapes with the compile count
asserted, or checked to raise disc.InvocationError naming the argument."""
from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F

import disc
from frontend.harness import check_compiled

NEGATE = """
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.negate %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}"""


@pytest.fixture(scope="module")
def negate():
    return disc.compile_mlir(NEGATE)


# A gather typed with a static batch dim (4) that its `?` start indices give
# at run time: other index counts must raise, not read past the indices (0
# rows read through a null buffer: a segfault found by the mutation fuzzer,
# seed 20785; 2 rows read past their end).
GATHER_STATIC_BATCH = """
func.func @main(%x: tensor<3x5x7xf32>, %coords: tensor<?x6x2xi64>) -> tensor<3x4x6xf32> {
  %0 = disc.gather %x[%coords] slice_sizes = [3, 1, 1], offset_dims = [0], collapsed_slice_dims = [1, 2], start_index_map = [1, 2], index_vector_dim = 2 : (tensor<3x5x7xf32>, tensor<?x6x2xi64>) -> tensor<3x4x6xf32>
  return %0 : tensor<3x4x6xf32>
}"""


def test_static_result_dim_given_by_dynamic_indices():
    exe = disc.compile_mlir(GATHER_STATIC_BATCH)
    x = torch.randn(3, 5, 7)
    rows = torch.randint(0, 5, (4, 6))
    cols = torch.randint(0, 7, (4, 6))
    (got,) = exe(x, torch.stack([rows, cols], -1))
    torch.testing.assert_close(got, x[:, rows, cols])
    for n in (0, 2, 13):
        with pytest.raises(disc.InvocationError, match="disc.gather: result dim 1 is 4"):
            exe(x, torch.zeros(n, 6, 2, dtype=torch.int64))


REDUCE_AND_TRANSPOSE_TYPED_STATIC = """
func.func @main(%x: tensor<?x?xf32>) -> (tensor<5xf32>, tensor<3x?xf32>) {
  %0 = disc.reduce %x, dims = [1], kind = sum : (tensor<?x?xf32>) -> tensor<5xf32>
  %1 = disc.transpose %x, dims = [1, 0] : (tensor<?x?xf32>) -> tensor<3x?xf32>
  return %0, %1 : tensor<5xf32>, tensor<3x?xf32>
}"""


def test_static_result_dims_of_a_reduce_and_a_transpose_of_dynamic_dims():
    """Typed with static result dims that the operand's `?` dims give:
    compiled (upstream's linalg verifier rejected the types before), right
    where the sizes agree, an InvocationError naming the op where not."""
    exe = disc.compile_mlir(REDUCE_AND_TRANSPOSE_TYPED_STATIC)
    x = torch.randn(5, 3)
    total, transposed = exe(x)
    torch.testing.assert_close(total, x.sum(1))
    torch.testing.assert_close(transposed, x.t())
    for shape, message in (((6, 3), r"dim 0 is 6, expected 5 \(required by disc.reduce"),
                           ((5, 4), r"dim 1 is 4, expected 3 \(required by disc.transpose"),
                           ((0, 3), r"dim 0 is 0, expected 5 \(required by disc.reduce")):
        with pytest.raises(disc.InvocationError, match=message):
            exe(torch.randn(*shape))


# ------------------------------------------------ tensors of exotic kinds

@pytest.mark.parametrize("make, fragment", [
    (lambda: torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.qint8), "quantized"),
    (lambda: torch.randn(4).to_sparse(), "layout torch.sparse_coo"),
    (lambda: torch.randn(4).to_mkldnn(), "mkldnn"),
    (lambda: torch.randn(1).expand(2**40), "cannot be made contiguous"),
], ids=["quantized", "sparse", "mkldnn", "huge_broadcast_view"])
def test_exotic_tensors_raise_invocation_error(negate, make, fragment):
    with pytest.raises(disc.InvocationError, match=f"argument 0.*{fragment}"):
        negate(make())


def test_negative_bit_is_resolved(negate):
    """torch.conj(x).imag is a view with the negative bit set: its memory
    holds the values before negation. Read as they are, the sign is lost."""
    for n in (3, 8, 1):
        z = torch.randn(n, dtype=torch.complex64)
        imag = torch.conj(z).imag
        assert imag.is_neg()
        (out,) = negate(imag)
        torch.testing.assert_close(out, -imag.resolve_neg())
    neg_view = torch._neg_view(torch.arange(5.0))
    torch.testing.assert_close(negate(neg_view)[0], torch.arange(5.0))


def test_negative_bit_through_torch_compile():
    def fn(z):
        return torch.conj(z).imag * 2 + 1

    # The conj/imag views of a complex input run in eager; the
    # arithmetic on the resulting negative-bit view is compiled.
    check_compiled(fn, [(torch.randn(n, 3, dtype=torch.complex64),) for n in (2, 5, 7)],
                   max_fallback=4)


# --------------------------------------------------- silent wrong results

def test_chunk_of_an_input_under_dynamic_shapes():
    """Outputs that are views of an input stay views in eager: AOTAutograd
    rebuilds them from the input with the compiled output's offset."""
    for dim in (0, 1):
        fn = lambda x: torch.chunk(x, 3, dim=dim)  # noqa: E731
        before = disc.stats()["eager_views"]
        # (not fallback nodes: they are counted apart, as eager_views)
        check_compiled(fn, [(torch.randn(n, n + 2),) for n in (8, 10, 14)], compiles=0)
        assert disc.stats()["eager_views"] > before
    # Computed outputs that are chunked are compiled, and right.
    fn = lambda x: [c * 1 for c in torch.chunk(x + 1, 3)]  # noqa: E731
    check_compiled(fn, [(torch.randn(n, 4),) for n in (8, 10, 14)])


def _projection_halves(x, w1, w2, b2):
    """Two slices of one computed tensor, both returned: each aliases it,
    so AOTAutograd returns that tensor and rebuilds the slices from it.
    The projection's width equals the first dim (duck sizing gives both
    one symbol), as in the pigu_hybrid GraphNet sample."""
    y = F.linear(F.silu(x @ w1), w2, b2)
    return y[..., :4], y[..., 4:]


def _projection_inputs(h, requires_grad=False):
    g = torch.Generator().manual_seed(h)
    shapes = [(1, h, 5, 2), (2, 6), (h, 6), (h,)]
    return tuple(torch.randn(s, generator=g).requires_grad_(requires_grad) for s in shapes)


def test_views_of_a_computed_tensor_returned_as_outputs():
    """A slice or transpose of a computed tensor returned as an output
    stays a view in eager (a compiled contiguous copy, rebuilt by
    AOTAutograd with its own strides from the base, read the wrong
    elements); a reshape of one is compiled."""
    before = disc.stats()["eager_views"]
    check_compiled(_projection_halves, [_projection_inputs(h) for h in (8, 12, 16)])
    assert disc.stats()["eager_views"] > before
    fn = lambda x: (torch.sigmoid(x) * 2).view(-1)  # noqa: E731
    before = disc.stats()["eager_views"]
    check_compiled(fn, [(torch.randn(n, 3),) for n in (2, 5, 7)])
    assert disc.stats()["eager_views"] == before


def test_views_of_a_computed_tensor_returned_as_outputs_under_autograd():
    torch._dynamo.reset()
    compiled = torch.compile(_projection_halves, backend="disc", dynamic=True)
    before = disc.stats()["compilations"]
    for h in (8, 12, 16):
        args = _projection_inputs(h, requires_grad=True)
        expected, actual = _projection_halves(*args), compiled(*args)
        for e, a in zip(expected, actual):
            torch.testing.assert_close(a, e)
        g = torch.Generator().manual_seed(0)
        weights = [torch.randn(e.shape, generator=g) for e in expected]
        grads = [torch.autograd.grad(sum((o * w).sum() for o, w in zip(outs, weights)), args)
                 for outs in (expected, actual)]
        for e, a in zip(*grads):
            torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4)
    # one forward and one backward graph for every size
    assert disc.stats()["compilations"] - before == 2


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("correction", [1, 2])
def test_variance_over_nothing_is_nan(op, correction):
    fn = lambda x: getattr(torch, op)(x, dim=1, correction=correction)  # noqa: E731
    check_compiled(fn, [(torch.randn(n, 0),) for n in (2, 3, 5)], dynamic=False, compiles=None)
    # fewer elements than the correction: NaN (0/0) or inf, as eager
    check_compiled(fn, [(torch.randn(n, 1) + 1,) for n in (2, 3, 5)])


def test_integer_power_of_zero_with_negative_exponent():
    fn = lambda a, b: a ** b  # noqa: E731
    inputs = []
    for n in (5, 8, 13):
        a = torch.randint(-3, 4, (n,))
        a[0] = 0
        b = torch.randint(-3, 4, (n,))
        b[0] = -1
        inputs.append((a, b))
    check_compiled(fn, inputs)


def test_attention_with_fully_masked_rows_gives_zero():
    """Left padding: a row whose mask hides every key is 0, not NaN."""
    def make(b, l):
        q = torch.randn(b, 4, l, 8)
        mask = torch.ones(b, 1, l, l, dtype=torch.bool)
        mask[0, :, 1, :] = False
        return q, mask

    # (sizes all distinct and none 0 or 1: PyTorch's duck sizing and 0/1
    # specialisation would otherwise add guards and compile again)
    fn = lambda q, m: F.scaled_dot_product_attention(q, q, q, attn_mask=m)  # noqa: E731
    check_compiled(fn, [make(2, 5), make(3, 7), make(5, 11)])


# ------------------------------------------------ grouped-query attention

@pytest.mark.parametrize("dynamic", [False, True])
def test_grouped_query_attention(dynamic):
    def make(b, l, s):
        return torch.randn(b, 8, l, 16), torch.randn(b, 2, s, 16), torch.randn(b, 2, s, 16)

    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # noqa: E731
    shapes = [make(3, 5, 7), make(4, 6, 9), make(5, 3, 12)]
    check_compiled(fn, shapes if dynamic else [make(3, 5, 7)] * 3, dynamic=dynamic)


# -------------------------------------- compile where eager runs: 0-d, 0-size

@pytest.mark.parametrize("name, fn, make", [
    ("index_select", lambda a, i: torch.index_select(a, 0, i) * 2,
     lambda: (torch.randn(()), torch.tensor(0))),
    ("gather", lambda a, i: torch.gather(a, 0, i) * 2, lambda: (torch.randn(()), torch.tensor(0))),
    ("scatter", lambda a, i, s: torch.scatter(a, 0, i, s),
     lambda: (torch.randn(()), torch.tensor(0), torch.randn(()))),
    ("argmax", lambda a: torch.argmax(a, 0), lambda: (torch.randn(()),)),
    ("max_dim", lambda a: torch.max(a, 0), lambda: (torch.randn(()),)),
])
def test_zero_dim_inputs_compile(name, fn, make):
    check_compiled(fn, [make() for _ in range(3)], dynamic=False)


@pytest.mark.parametrize("name, fn, shapes", [
    ("softmax_no_rows", lambda a: torch.softmax(a, 1), [(0, 5)] * 3),
    ("log_softmax_empty_rows", lambda a: torch.log_softmax(a, 1), [(3, 0)] * 3),
    ("diff", lambda a: torch.diff(a, dim=0), [(3, 0)] * 3),
    ("split", lambda a: [t * 2 for t in torch.split(a, 2, dim=1)], [(0, 4)] * 3),
    ("stack", lambda a: torch.stack([a, a * 2], 1), [(0, 4)] * 3),
    ("max_pool", lambda a: F.max_pool2d(a, 2), [(0, 3, 8, 8)] * 3),
    ("batch_of_zero", lambda a: (a * 2).flatten(1, 2).sum(1), [(0, 3, 4, 8)] * 3),
    ("cat_with_empty_last", lambda a, b: torch.cat([a * 2, b], 0), None),
])
def test_zero_size_dims_compile(name, fn, shapes):
    if shapes is None:
        inputs = [(torch.randn(n, 4), torch.randn(0, 4)) for n in (3, 3, 3)]
    else:
        inputs = [(torch.randn(*s),) for s in shapes]
    check_compiled(fn, inputs, dynamic=False)


@pytest.mark.parametrize("op", [torch.floor, torch.ceil, torch.round, torch.trunc])
def test_rounding_integers_is_identity(op):
    check_compiled(lambda a: op(a) * 3, [(torch.randint(-9, 9, (n,)),) for n in (4, 7, 10)])


def test_sign_of_bool():
    check_compiled(torch.sign, [(torch.rand(n) > 0.5,) for n in (4, 7, 10)])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_batch_norm_training_low_precision(dtype):
    """Training-mode batch norm (running statistics updated) in bf16/f16."""
    torch.manual_seed(0)
    model = torch.nn.BatchNorm2d(3).to(dtype).train()
    reference = torch.nn.BatchNorm2d(3).to(dtype).train()
    reference.load_state_dict(model.state_dict())
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="disc", dynamic=True)
    before = disc.stats()
    with torch.no_grad():
        for n in (2, 4, 5):
            x = torch.randn(n, 3, 6, 6).to(dtype)
            torch.testing.assert_close(compiled(x), reference(x), rtol=2e-2, atol=2e-2)
            torch.testing.assert_close(model.running_mean, reference.running_mean,
                                       rtol=2e-2, atol=2e-2)
            torch.testing.assert_close(model.running_var, reference.running_var,
                                       rtol=2e-2, atol=2e-2)
    after = disc.stats()
    assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]
    assert after["eager_calls"] == before["eager_calls"]


# ------------------------------------------- a rejected call runs in eager

class _Rejecting:
    """An Executable whose every call is rejected (DiscPartition reads its
    target and calls _cuda_device and _run)."""

    target = "cpu"

    def _cuda_device(self):
        return -1

    def _run(self, arguments, into, device, share_groups=()):
        raise disc.InvocationError("argument 0 (%arg0) dim 0 is 3, expected 4")


def test_rejected_partition_call_runs_in_eager():
    """A partition whose compiled code rejects a call (InvocationError)
    never reaches the user as an error: that call runs the partition's FX
    graph in eager, counted in eager_calls and warned about."""
    import torch.fx as fx

    from disc.frontend.backend import DiscPartition
    from disc.frontend.importer import ArgPlan

    graph = fx.symbolic_trace(lambda x: x * 2 + 1)
    plan = [ArgPlan("tensor", 0)]
    part = DiscPartition(_Rejecting(), plan, 1, True, "graph 9 partition-0", graph)
    before = disc.stats()["eager_calls"]
    x = torch.randn(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.testing.assert_close(part(x), x * 2 + 1)
    assert disc.stats()["eager_calls"] == before + 1
    assert any("rejected this call" in str(w.message) for w in caught)

    class Failing(_Rejecting):  # anything else is a bug and propagates
        def _run(self, arguments, into, device, share_groups=()):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        DiscPartition(Failing(), plan, 1, True, "p", graph)(x)


def test_rejected_partition_call_raises_under_disc_strict(monkeypatch):
    """DISC_STRICT=1: the InvocationError reaches the caller (for tests and
    bug reports), nothing is counted."""
    import torch.fx as fx

    from disc.frontend.backend import DiscPartition
    from disc.frontend.importer import ArgPlan

    monkeypatch.setenv("DISC_STRICT", "1")
    graph = fx.symbolic_trace(lambda x: x * 2 + 1)
    part = DiscPartition(_Rejecting(), [ArgPlan("tensor", 0)], 1, True, "p", graph)
    before = disc.stats()["eager_calls"]
    with pytest.raises(disc.InvocationError, match="dim 0 is 3"):
        part(torch.randn(3))
    assert disc.stats()["eager_calls"] == before
