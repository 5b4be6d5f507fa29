"""disc.attention (the runtime's blocked attention) against PyTorch: the
dialect op compiled directly, and F.scaled_dot_product_attention through
torch.compile, where PyTorch's CPU SDPA kernel becomes one library call
instead of matmul + softmax + matmul."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import disc
from conftest import compile_once, rand, run_shapes, tensor_type

F32_TOL = dict(rtol=1e-4, atol=1e-5)

# Shapes as (B, H, L, S): one key block and one query block; several of
# each with partial last blocks (keys in blocks of 512, queries of 64); and
# a long query run (blocks of 256).
SHAPES = [(1, 2, 5, 7), (2, 3, 130, 600), (1, 1, 800, 33)]


def reference(q, k, v, mask=None, causal=False, scale=None):
    return F.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                          attn_mask=None if mask is None else mask.double(),
                                          is_causal=causal, scale=scale).float()


def random_qkv(shape, head_dim, value_dim):
    """f32 q, k, v for a (B, H, L, S) shape."""
    b, h, l, n = shape
    return rand((b, h, l, head_dim), torch.float32), rand((b, h, n, head_dim), torch.float32), \
        rand((b, h, n, value_dim), torch.float32)


def attention_module(head_dim, value_dim, *, mask=False, causal=False, scale=0.25):
    q = tensor_type((None, None, None, head_dim), torch.float32)
    k = tensor_type((None, None, None, head_dim), torch.float32)
    v = tensor_type((None, None, None, value_dim), torch.float32)
    out = tensor_type((None, None, None, value_dim), torch.float32)
    m = tensor_type((None, 1, None, None), torch.float32)
    args = f"%q: {q}, %k: {k}, %v: {v}" + (f", %m: {m}" if mask else "")
    mask_text = " mask(%m)" if mask else ""
    types = f"{q}, {k}, {v}" + (f", {m}" if mask else "")
    causal_text = " causal" if causal else ""
    return compile_once(f"""
func.func @main({args}) -> {out} {{
  %0 = disc.attention %q, %k, %v{mask_text} scale = {scale:.17e}{causal_text} : ({types}) -> {out}
  return %0 : {out}
}}""")


def assert_attention_kernels(exe):
    """The CPU runs disc.attention as one library call; the cuda targets
    decompose it (disc-decompose-attention): two batched products, the
    softmax in loop kernels."""
    counts = exe.kernel_counts
    if disc.default_target() == "cpu":
        assert counts == {"loops": 0, "library_calls": 1, "copies": 0}, counts
    else:
        assert counts["library_calls"] == 2 and counts["loops"] > 0, counts


def test_attention_op_at_several_shapes():
    exe = attention_module(16, 8)
    assert_attention_kernels(exe)

    def make(s):
        return random_qkv(s, 16, 8)

    run_shapes(exe, make, lambda q, k, v: reference(q, k, v, scale=0.25), SHAPES, **F32_TOL)


def test_attention_op_with_mask_and_causal():
    exe = attention_module(8, 8, mask=True, causal=True)

    def make(s):
        b, h, l, n = s
        mask = rand((b, 1, l, n), torch.float32)
        mask[..., 1::3] = -math.inf  # masked keys, never a whole row
        return *random_qkv(s, 8, 8), mask

    run_shapes(exe, make, lambda q, k, v, m: reference(q, k, v, m, causal=True, scale=0.25),
               SHAPES, **F32_TOL)


def test_attention_op_edge_rows():
    """Rows the softmax must not turn into garbage, one compilation: a row
    whose keys are all masked is 0 (as the CPU kernel and PyTorch's CPU
    attention give), a NaN score makes its row NaN (also where every other
    score is -inf, and where a NaN query makes every score NaN), no keys at
    all give 0,
    causal masking with fewer or more keys than queries (top-left)."""
    exe = attention_module(8, 4, mask=True, causal=True)
    shapes = [(1, 2, 5, 7), (2, 1, 9, 4), (1, 1, 3, 0)]

    def make(s):
        b, h, l, n = s
        q, k, v = random_qkv(s, 8, 4)
        mask = rand((b, 1, l, n), torch.float32)
        if n:
            mask[:, :, 1, :] = -math.inf  # row 1: every key masked
            mask[:, :, 2, 0] = math.nan  # row 2: a NaN score
            if l > 4:
                # Row 3: a NaN score, every other key masked; row 4: a NaN
                # query, so every score NaN. Both NaN rows (the CPU kernel
                # gave 0: it skipped NaN when looking for a finite score).
                mask[:, :, 3, :] = -math.inf
                mask[:, :, 3, 0] = math.nan
                q[:, :, 4, 0] = math.nan
        return q, k, v, mask

    def expected(q, k, v, mask):
        if k.shape[2] == 0:
            return torch.zeros(*q.shape[:3], v.shape[3])
        l, n = q.shape[2], k.shape[2]
        causal = torch.ones(l, n, dtype=torch.bool).triu(1)  # j > i
        additive = torch.nan_to_num(mask, nan=0.0).masked_fill(causal, -math.inf)
        out = reference(q, k, v, additive, scale=0.25)
        out[:, :, 1, :] = 0.0
        out[:, :, 2:5, :] = math.nan
        return out

    run_shapes(exe, make, expected, shapes, **F32_TOL)


def test_attention_op_non_finite_value_at_a_causally_hidden_key():
    """disc.attention is the definition's product of the weights and v, so
    a NaN or inf in v is NaN in its column even for the rows whose weight
    for that key is 0, causally hidden keys included (docs/ops.md). The CPU
    kernel never reads the keys past a query block's last row: it must
    still give NaN there, as the cuda targets' decomposition does
    (fuzz/disc_fuzz.py --differential found it finite). Keys 5 and 6 of 5
    queries are hidden from every row; with 40 and 600 queries, the query
    blocks (32 and 64 rows) skip the keys past theirs, and 610 keys make
    two key blocks (512 each)."""
    exe = attention_module(16, 8, mask=True, causal=True)
    shapes = [(2, 3, 5, 7), (1, 2, 40, 40), (1, 1, 600, 610)]

    def make(s):
        b, h, l, n = s
        q, k, v = random_qkv(s, 16, 8)
        v[:, :, n - 1, 0] = math.nan
        v[:, :, n - 1, 1] = math.inf  # NaN, or inf in a row attending key n - 1
        v[:, :, l - 2, 2] = -math.inf  # attended by rows l - 2 and l - 1 only
        return q, k, v, rand((b, 1, l, n), torch.float32)

    def expected(q, k, v, mask):
        scores = (q.double() @ k.double().transpose(-1, -2)) * 0.25 + mask.double()
        l, n = q.shape[2], k.shape[2]
        hidden = torch.ones(l, n, dtype=torch.bool).triu(1)  # j > i
        weights = torch.softmax(scores.masked_fill(hidden, -math.inf), dim=-1)
        out = (weights @ v.double()).float()
        # What the test is about: every row NaN in column 0; in column 2,
        # -inf in the rows that attend key l - 2, NaN in the others.
        assert out[..., 0].isnan().all() and out[:, :, :l - 2, 2].isnan().all()
        assert out[:, :, l - 2:, 2].isneginf().all() and out[..., 3:].isfinite().all()
        return out

    run_shapes(exe, make, expected, shapes, **F32_TOL)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_attention_op_low_precision(dtype):
    """f16/bf16 disc.attention: the cuda targets decompose it (products in
    the operands' type, the softmax in f32); the CPU kernel takes f32 only
    and says so at compile time."""
    t = tensor_type((None, 2, None, 8), dtype)
    m = tensor_type((None, 1, 1, None), dtype)
    text = f"""
func.func @main(%q: {t}, %k: {t}, %v: {t}, %m: {m}) -> {t} {{
  %0 = disc.attention %q, %k, %v mask(%m) : ({t}, {t}, {t}, {m}) -> {t}
  return %0 : {t}
}}"""
    if disc.default_target() == "cpu":
        with pytest.raises(disc.CompileError, match="the CPU attention kernel supports f32"):
            disc.compile_mlir(text)
        return
    exe = compile_once(text)

    def make(s):
        b, l, n = s
        mask = torch.zeros(b, 1, 1, n)
        mask[..., n // 2:] = -math.inf
        return rand((b, 2, l, 8), dtype), rand((b, 2, n, 8), dtype), rand((b, 2, n, 8), dtype), \
            mask.to(dtype)

    def expected(q, k, v, mask):
        return reference(q.float(), k.float(), v.float(), mask.float()).to(dtype)

    run_shapes(exe, make, expected, [(1, 5, 6), (2, 17, 9), (3, 4, 40)], rtol=2e-2, atol=2e-2)


def test_attention_op_static_grouped_heads():
    """Grouped-query heads of static counts (4 query heads over 2 key/value
    heads): query head h reads key/value head h // 2."""
    q_t, kv_t = tensor_type((None, 4, None, 8), torch.float32), \
        tensor_type((None, 2, None, 8), torch.float32)
    exe = compile_once(f"""
func.func @main(%q: {q_t}, %k: {kv_t}, %v: {kv_t}) -> {q_t} {{
  %0 = disc.attention %q, %k, %v causal : ({q_t}, {kv_t}, {kv_t}) -> {q_t}
  return %0 : {q_t}
}}""")

    def make(s):
        b, l, n = s
        return rand((b, 4, l, 8), torch.float32), rand((b, 2, n, 8), torch.float32), \
            rand((b, 2, n, 8), torch.float32)

    def expected(q, k, v):
        return reference(q, k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1),
                         causal=True)

    run_shapes(exe, make, expected, [(1, 5, 5), (2, 9, 12), (1, 30, 7)], **F32_TOL)


def test_attention_op_rejects_bad_shapes_at_run_time():
    """The call-time signature check knows attention's shape rules (the
    shape analysis joins the k/v heads, and q/k batch) and names the op;
    query heads that are no multiple of the key/value heads (grouped-query
    attention) are rejected by the runtime, naming the call."""
    exe = attention_module(16, 8)
    q = rand((1, 2, 5, 16), torch.float32)
    k = rand((1, 3, 7, 16), torch.float32)  # 3 heads vs 2
    v = rand((1, 3, 7, 8), torch.float32)
    # The CPU's library call checks it; the cuda targets' decomposition
    # (disc-decompose-attention) asserts it on the host, naming the op.
    with pytest.raises(disc.InvocationError,
                       match=r"(disc_ral_attention_f32|disc\.attention): the query head count "
                             r"must be a multiple"):
        exe(q, k, v)
    with pytest.raises(disc.InvocationError, match=r"dim 1 is 2, but must equal argument 1 "
                       r"\(%arg1\) dim 1 .*required by disc.attention"):
        exe(q, k, rand((1, 2, 7, 8), torch.float32))
    with pytest.raises(disc.InvocationError, match=r"dim 0 is 2, but must equal .*disc.attention"):
        exe(q, rand((2, 2, 7, 16), torch.float32), rand((2, 2, 7, 8), torch.float32))
    # grouped: 4 query heads over 2 key/value heads run
    q4 = rand((1, 4, 5, 16), torch.float32)
    k2, v2 = rand((1, 2, 7, 16), torch.float32), rand((1, 2, 7, 8), torch.float32)
    (out,) = exe(q4, k2, v2)
    expected = torch.nn.functional.scaled_dot_product_attention(q4, k2, v2, enable_gqa=True)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-5)


def _run_compiled(fn, inputs_per_shape, tol):
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    before = disc.stats()
    with torch.no_grad():
        for i, args in enumerate(inputs_per_shape):
            torch.testing.assert_close(compiled(*args), fn(*args), **tol,
                                       msg=lambda m: f"call {i}: {m}")
    after = disc.stats()
    assert after["compilations"] - before["compilations"] == 1
    assert after["fallback_nodes"] == before["fallback_nodes"], after["fallback_ops"]
    return {k: after[k] - before[k] for k in ("kernels", "compiled_nodes")}


def test_sdpa_is_one_library_call():
    """Plain SDPA compiles to the attention call alone on the CPU: with
    PyTorch's decomposition it would be two matmuls and softmax kernels.
    The cuda targets decompose disc.attention themselves into exactly
    that, with the softmax one stitch kernel: three kernels, not more."""
    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v)

    # No size 1: Dynamo specializes it (a recompile, not DISC's).
    shapes = [(2, 3, 9, 16), (4, 3, 130, 16), (3, 3, 70, 16)]
    inputs = [tuple(torch.randn(s) for _ in range(3)) for s in shapes]
    counts = _run_compiled(fn, inputs, dict(rtol=1e-4, atol=1e-5))
    # The cuda targets: two batched products and one stitch softmax.
    assert counts["kernels"] == (1 if disc.default_target() == "cpu" else 3), counts


@pytest.mark.parametrize("mask_kind", ["bool_2d", "float_padding", "none_causal"])
def test_hf_style_attention(mask_kind):
    """[B, L, H*E] projections split into heads (transposes), SDPA with a
    mask or causal, heads merged back: batch and length dynamic."""
    torch.manual_seed(0)
    heads, head_dim = 2, 8
    proj = torch.nn.Linear(heads * head_dim, 3 * heads * head_dim)

    def fn(x, mask):
        b, l, _ = x.shape
        q, k, v = proj(x).split(heads * head_dim, dim=-1)
        q, k, v = (t.view(b, l, heads, head_dim).transpose(1, 2) for t in (q, k, v))
        if mask_kind == "none_causal":
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return o.transpose(1, 2).reshape(b, l, heads * head_dim)

    def make(b, l):
        x = torch.randn(b, l, heads * head_dim)
        if mask_kind == "bool_2d":
            mask = torch.rand(l, l) < 0.8
            mask[:, 0] = True  # every row keeps a key
        else:
            mask = torch.zeros(b, 1, 1, l)
            mask[0, ..., l // 2:] = torch.finfo(torch.float32).min
        return x, mask

    _run_compiled(fn, [make(3, 7), make(4, 33), make(2, 70)], dict(rtol=1e-4, atol=1e-5))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_low_precision_sdpa_computes_in_f32(dtype):
    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v)

    shapes = [(2, 3, 9, 16), (4, 3, 30, 16), (3, 3, 17, 16)]
    inputs = [tuple(torch.randn(s).to(dtype) for _ in range(3)) for s in shapes]
    _run_compiled(fn, inputs, dict(rtol=2e-2, atol=2e-2))


def test_f64_sdpa_falls_back_with_a_reason():
    """f64 is not the attention kernel's: the node runs in eager PyTorch and
    the fallback names why."""
    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v)

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    before = disc.stats()
    with torch.no_grad():
        for s in [(2, 3, 9, 16), (4, 3, 30, 16), (3, 3, 17, 16)]:
            q, k, v = (torch.randn(s, dtype=torch.float64) for _ in range(3))
            torch.testing.assert_close(compiled(q, k, v), fn(q, k, v))
    reasons = {k: v - before["fallback_ops"].get(k, 0)
               for k, v in disc.stats()["fallback_ops"].items()}
    assert any("attention in torch.float64" in r and n > 0 for r, n in reasons.items()), reasons
