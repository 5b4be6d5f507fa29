"""OpInfo-style suite: each PyTorch op through torch.compile(backend="disc",
dynamic=True) against eager, at 3 shapes on one compiled graph, in the
dtypes it applies to, with the compile count and zero fallbacks asserted."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import disc

from .harness import check_compiled

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
SHAPES = [(4, 7), (6, 9), (16, 33)]  # avoid sizes PyTorch specialises (0, 1, 2)


def rnd(shape, dtype=torch.float32, low=None, high=None):
    if dtype == torch.bool:
        return torch.rand(shape) < 0.5
    if not dtype.is_floating_point:
        return torch.randint(-20 if low is None else low, 20 if high is None else high, shape, dtype=dtype)
    if low is not None:
        return (torch.rand(shape) * (high - low) + low).to(dtype)
    return torch.randn(shape).to(dtype)


def ids(dtypes):
    return [str(d).replace("torch.", "") for d in dtypes]


UNARY = {
    "abs": torch.abs, "neg": torch.neg, "exp": torch.exp, "log": lambda x: torch.log(x.abs() + 0.1),
    "sqrt": lambda x: torch.sqrt(x.abs()), "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.1),
    "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "relu": torch.relu, "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu, "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid,
    "hardtanh": F.hardtanh, "leaky_relu": lambda x: F.leaky_relu(x, 0.2), "elu": F.elu,
    "erf": torch.erf, "floor": torch.floor, "ceil": torch.ceil, "round": torch.round,
    "trunc": torch.trunc, "sign": torch.sign, "reciprocal": lambda x: torch.reciprocal(x + 5),
    "softplus": F.softplus, "mish": F.mish, "log1p": lambda x: torch.log1p(x.abs()),
    "expm1": torch.expm1, "square": torch.square, "pow3": lambda x: x ** 3,
    "pow_half": lambda x: x.abs() ** 0.5, "clamp": lambda x: x.clamp(-0.5, 0.7),
    "clamp_min": lambda x: x.clamp(min=0.1), "relu6": F.relu6, "logsigmoid": F.logsigmoid,
    "isnan": torch.isnan, "isinf": torch.isinf, "nan_to_num": torch.nan_to_num,
}


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    fn = UNARY[name]
    tol = None
    if dtype == torch.float32 and name in ("mish", "softplus", "logsigmoid", "expm1", "gelu_tanh"):
        tol = dict(rtol=1e-4, atol=1e-5)
    check_compiled(fn, [(rnd(s, dtype),) for s in SHAPES], tol=tol)


BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "add_alpha": lambda a, b: torch.add(a, b, alpha=2.5), "maximum": torch.maximum,
    "minimum": torch.minimum, "pow": lambda a, b: torch.pow(a.abs() + 0.5, b),
    "atan2": torch.atan2, "remainder": lambda a, b: torch.remainder(a, b.abs() + 0.5),
    "fmod": lambda a, b: torch.fmod(a, b.abs() + 0.5),
    "floor_divide": lambda a, b: torch.floor_divide(a, b.abs() + 0.5),
    "div_trunc": lambda a, b: torch.div(a, b.abs() + 0.5, rounding_mode="trunc"),
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": torch.lt, "le": torch.le,
    "gt": torch.gt, "ge": torch.ge, "where": lambda a, b: torch.where(a > b, a, b),
    "masked_fill": lambda a, b: a.masked_fill(a > b, -1.5),
    "lerp": lambda a, b: torch.lerp(a, b, 0.3), "hypot_like": lambda a, b: torch.sqrt(a * a + b * b),
    "rsub": lambda a, b: 1 - a, "bias_row": lambda a, b: a + b[0],
}


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name, dtype):
    check_compiled(BINARY[name], [(rnd(s, dtype), rnd(s, dtype)) for s in SHAPES])


INT_DTYPES = [torch.int32, torch.int64]
INT_BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "maximum": torch.maximum,
    "floor_divide": lambda a, b: torch.floor_divide(a, torch.where(b == 0, 1, b)),
    "remainder": lambda a, b: torch.remainder(a, torch.where(b == 0, 1, b)),
    "div_trunc": lambda a, b: torch.div(a, torch.where(b == 0, 1, b), rounding_mode="trunc"),
    "true_div": lambda a, b: a / torch.where(b == 0, 1, b),
    "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor, "eq": torch.eq, "lt": torch.lt,
    "mixed_float": lambda a, b: a * 0.5 + b, "abs": lambda a, b: torch.abs(a) - b,
    "neg": lambda a, b: -a, "bitwise_not": lambda a, b: ~a,
}


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=ids(INT_DTYPES))
@pytest.mark.parametrize("name", sorted(INT_BINARY))
def test_int_binary(name, dtype):
    check_compiled(INT_BINARY[name], [(rnd(s, dtype), rnd(s, dtype)) for s in SHAPES])


BOOL_OPS = {
    "logical_and": torch.logical_and, "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor, "logical_not": lambda a, b: torch.logical_not(a),
    "bitwise_not": lambda a, b: ~a, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
    "any": lambda a, b: (a | b).any(dim=1), "all": lambda a, b: a.all(dim=0),
    "to_float": lambda a, b: a.float() + b.float(), "where": lambda a, b: torch.where(a, 1.0, 2.0),
}


@pytest.mark.parametrize("name", sorted(BOOL_OPS))
def test_bool_ops(name):
    check_compiled(BOOL_OPS[name], [(rnd(s, torch.bool), rnd(s, torch.bool)) for s in SHAPES])


CONVERSIONS = [(torch.float32, torch.float16), (torch.float32, torch.bfloat16),
               (torch.bfloat16, torch.float32), (torch.float32, torch.int64),
               (torch.int64, torch.float32), (torch.int32, torch.int64), (torch.float32, torch.bool),
               (torch.bool, torch.float32), (torch.float16, torch.float64)]


@pytest.mark.parametrize("src,dst", CONVERSIONS, ids=[f"{a}-{b}".replace("torch.", "") for a, b in CONVERSIONS])
def test_to_dtype(src, dst):
    check_compiled(lambda x: x.to(dst) if dst != torch.bool else x.to(dst).logical_not(),
                   [(rnd(s, src) * (3 if src.is_floating_point else 1),) for s in SHAPES])


REDUCTIONS = {
    "sum": lambda x: x.sum(dim=-1), "sum_keep": lambda x: x.sum(dim=0, keepdim=True),
    "sum_all": lambda x: x.sum(), "mean": lambda x: x.mean(dim=-1), "mean_all": torch.mean,
    "amax": lambda x: x.amax(dim=1), "amin": lambda x: x.amin(dim=0), "max_all": torch.max,
    "max_dim": lambda x: x.max(dim=1), "min_dim": lambda x: x.min(dim=0, keepdim=True),
    "argmax": lambda x: x.argmax(dim=1), "argmin": lambda x: x.argmin(dim=0),
    "argmax_all": lambda x: x.argmax(), "prod": lambda x: (x * 0.2 + 1).prod(dim=1),
    "var": lambda x: x.var(dim=1), "std": lambda x: x.std(dim=0),
    "var_mean": lambda x: torch.var_mean(x, dim=1, correction=0),
    "norm": lambda x: x.norm(dim=-1), "logsumexp": lambda x: torch.logsumexp(x, dim=1),
    "softmax": lambda x: torch.softmax(x, dim=-1), "log_softmax": lambda x: F.log_softmax(x, dim=0),
    "cumsum": lambda x: torch.cumsum(x, dim=1),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, dtype):
    tol = None
    if dtype == torch.float32:
        tol = dict(rtol=1e-4, atol=1e-4)
    check_compiled(REDUCTIONS[name], [(rnd(s, dtype),) for s in SHAPES], tol=tol)


VIEWS = {
    "view": lambda x: x.view(-1) * 2, "reshape_split": lambda x: x.reshape(x.shape[0], -1, 1) + 1,
    "transpose": lambda x: x.t() + 1, "permute3": lambda x: x.unsqueeze(0).permute(2, 0, 1) * 2,
    "expand": lambda x: x[:, :1].expand(-1, x.shape[1]) + x, "unsqueeze": lambda x: x.unsqueeze(1) * 3,
    "squeeze": lambda x: x[:1].squeeze(0) + 1, "flatten": lambda x: torch.flatten(x.unsqueeze(0), 1) + 1,
    "slice": lambda x: x[1:, ::2] * 2, "slice_neg": lambda x: x[:, -2:] + x[:, :2],
    "select": lambda x: x[:, 0:1] + x[-1], "narrow": lambda x: x.narrow(1, 1, 2) * 2,
    "cat": lambda x: torch.cat([x, x * 2, x[:, :1]], dim=1),
    "cat0": lambda x: torch.cat([x, x[:1]], dim=0), "stack": lambda x: torch.stack([x, -x], dim=1),
    "split": lambda x: torch.split(x[:, :6], 2, dim=1)[1] + 1, "chunk": lambda x: x.chunk(2, dim=0)[1] * 2,
    "unbind": lambda x: x[:, :2].unbind(1)[1] + 1, "repeat": lambda x: x.repeat(2, 3),
    "flip": lambda x: torch.flip(x, [0, 1]) + 1, "roll": lambda x: torch.roll(x, 1, 1),
    "pad": lambda x: F.pad(x, (1, 2, 0, 3), value=0.5), "pad_crop": lambda x: F.pad(x, (-1, 1)),
    # symbolic amounts, positive at one shape and negative (a crop) at others,
    # with and without a constant crop beside them
    "pad_to_8": lambda x: F.pad(x, (0, 8 - x.shape[1])) + 1,
    "pad_crop_to_9": lambda x: F.pad(x, (-1, 10 - x.shape[1]), value=2.0),
    "pad_reflect": lambda x: F.pad(x.unsqueeze(0), (2, 2), mode="reflect"),
    "triu": lambda x: torch.triu(x), "tril": lambda x: torch.tril(x, -1),
    "contiguous": lambda x: x.t().contiguous() * 1.5, "clone": lambda x: x.clone() + 1,
    "masked_assign": lambda x: _assign(x), "inplace": lambda x: _inplace(x),
    "arange": lambda x: x + torch.arange(x.shape[1], dtype=x.dtype),
    "full_like": lambda x: torch.full_like(x, 3.0) + x, "zeros": lambda x: torch.zeros(x.shape[0], 2) + x[:, :1],
    "ones_like": lambda x: torch.ones_like(x) * x, "new_zeros": lambda x: x.new_zeros(x.shape) - x,
    "meshgrid": lambda x: torch.meshgrid(x[:, 0], x[0], indexing="ij")[0] + 1,
}


def _assign(x):
    y = x.clone()
    y[:, 0] = 5.0
    y[1:, 1:] = x[1:, 1:] * 2
    return y


def _inplace(x):
    y = x * 1
    y += 1
    y.mul_(2)
    y[0] += 3
    return y


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_and_data_movement(name):
    check_compiled(VIEWS[name], [(rnd(s),) for s in SHAPES])


def test_views_bf16():
    check_compiled(lambda x: torch.cat([x.t().reshape(-1), x.flatten()]) * 2,
                   [(rnd(s, torch.bfloat16),) for s in SHAPES])


INDEXING = {
    "embedding": (lambda w, i: F.embedding(i, w), lambda s: (rnd((s[0] * 3, 8)), torch.randint(0, s[0] * 3, (s[1], 2)))),
    "index_select": (lambda x, i: x.index_select(0, i), lambda s: (rnd(s), torch.randint(0, s[0], (s[1],)))),
    "index_tensor": (lambda x, i: x[i], lambda s: (rnd(s), torch.randint(-s[0], s[0], (s[1],)))),
    "index_2d": (lambda x, i: x[:, i], lambda s: (rnd(s), torch.randint(0, s[1], (3, s[0])))),
    "index_pair": (lambda x, i: x[i, i % x.shape[1]], lambda s: (rnd(s), torch.randint(0, min(s), (s[1],)))),
    "gather": (lambda x, i: torch.gather(x, 1, i), lambda s: (rnd(s), torch.randint(0, s[1], (s[0], 3)))),
    "scatter_add": (lambda x, i: torch.zeros(x.shape[0], 10).scatter_add(1, i, x),
                    lambda s: (rnd(s), torch.randint(0, 10, s))),
    "scatter": (lambda x, i: torch.zeros(x.shape[0] + 3, x.shape[1]).scatter(0, i, x),
                lambda s: (rnd(s), torch.stack([torch.randperm(s[0] + 3)[:s[0]] for _ in range(s[1])], 1))),
    "scatter_reduce_amax": (lambda x, i: torch.zeros(4, x.shape[1]).scatter_reduce(0, i, x, "amax"),
                            lambda s: (rnd(s), torch.randint(0, 4, s))),
    # include_self=False: rows no index hits keep the base (0.5 + row); 10
    # target rows, fewer source rows, so some are never hit.
    **{f"scatter_reduce_{r}_{'self' if inc else 'noself'}": (
        (lambda r, inc: lambda x, i: (torch.arange(10.0)[:, None] + 0.5).expand(10, x.shape[1])
         .scatter_reduce(0, i, x, r, include_self=inc))(r, inc),
        lambda s: (rnd(s), torch.randint(0, 10, s)))
       for r in ("sum", "prod", "amax", "amin", "mean") for inc in (True, False)},
    "index_add": (lambda x, i: torch.zeros(7, x.shape[1]).index_add(0, i, x),
                  lambda s: (rnd(s), torch.randint(0, 7, (s[0],)))),
    "index_put": (lambda x, i: x.index_put((i,), torch.tensor(9.0)),
                  lambda s: (rnd(s), torch.randint(0, s[0], (2,)))),
    "index_put_acc": (lambda x, i: torch.zeros(5, x.shape[1]).index_put((i,), x, accumulate=True),
                      lambda s: (rnd(s), torch.randint(0, 5, (s[0],)))),
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_indexing(name):
    fn, make = INDEXING[name]
    check_compiled(fn, [make(s) for s in SHAPES])


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_linear_and_matmuls(dtype):
    w = rnd((16, 8), dtype)
    b = rnd((16,), dtype)

    def fn(x, y):
        h = F.linear(x, w, b)
        return h @ h.transpose(-1, -2), torch.bmm(h, y), torch.einsum("bij,bjk->bik", h, y)

    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else None
    check_compiled(fn, [(rnd((s[0], s[1], 8), dtype), rnd((s[0], 16, 3), dtype)) for s in SHAPES], tol=tol)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_sdpa(dtype):
    def fn(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    def make(s):
        b, l = s[0], s[1]
        return (rnd((b, 2, l, 8), dtype), rnd((b, 2, l, 8), dtype), rnd((b, 2, l, 8), dtype),
                torch.rand(l, l) < 0.8)

    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else None
    check_compiled(fn, [make(s) for s in SHAPES], tol=tol)


@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
def test_norms(dtype):
    ln_w, ln_b = rnd((12,), dtype), rnd((12,), dtype)
    gn_w, gn_b = rnd((6,), dtype), rnd((6,), dtype)
    bn = [rnd((6,), dtype), rnd((6,), dtype).abs() + 0.5, rnd((6,), dtype), rnd((6,), dtype)]

    def fn(x, y):
        a = F.layer_norm(x, (12,), ln_w, ln_b)
        g = F.group_norm(y, 3, gn_w, gn_b)
        n = F.batch_norm(y, bn[0], bn[1], bn[2], bn[3], training=False)
        r = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)  # RMS norm
        i = F.instance_norm(y)
        return a, g, n, r, i

    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=3e-2, atol=3e-2)
    check_compiled(fn, [(rnd((s[0], s[1], 12), dtype), rnd((s[0], 6, s[1], 5), dtype)) for s in SHAPES],
                   tol=tol)


CONV_CASES = {
    "conv2d": lambda x, w: F.conv2d(x, w, padding=1),
    "conv2d_stride": lambda x, w: F.conv2d(x, w, stride=2, padding=1, dilation=1),
    "conv2d_dilation": lambda x, w: F.conv2d(x, w, padding=2, dilation=2),
    "conv2d_groups": lambda x, w: F.conv2d(x, w[:, :2], groups=2, padding=1),
    "conv_transpose2d": lambda x, w: F.conv_transpose2d(x, w.transpose(0, 1)[:4], stride=2, padding=1,
                                                        output_padding=1),
    # groups, kernel dilation and a bias (the weight is an input here, its
    # kernel size symbolic: the padding is a dynamic operand)
    "conv_transpose2d_groups_dilation": lambda x, w: F.conv_transpose2d(
        x, w.transpose(0, 1)[:, :3], torch.linspace(-1, 1, 6), stride=2, padding=2,
        output_padding=1, groups=2, dilation=2),
    "max_pool": lambda x, w: F.max_pool2d(x, 3, 2, 1),
    "max_pool_ceil": lambda x, w: F.max_pool2d(x, 2, 2, ceil_mode=True),
    "avg_pool": lambda x, w: F.avg_pool2d(x, 3, 2, 1),
    "avg_pool_nopad": lambda x, w: F.avg_pool2d(x, 2, 2, count_include_pad=False, ceil_mode=True),
    "adaptive_avg": lambda x, w: F.adaptive_avg_pool2d(x, 1),
    # windows of different sizes, bounds computed from the run-time size
    "adaptive_avg_7x5": lambda x, w: F.adaptive_avg_pool2d(x, (7, 5)),
    "adaptive_max_3x4": lambda x, w: F.adaptive_max_pool2d(x, (3, 4)),
    # wide windows: one slice per offset per dim (separable)
    "max_pool_wide": lambda x, w: F.max_pool2d(x, (9, 13), 1, (4, 6)),
    "avg_pool_wide": lambda x, w: F.avg_pool2d(x, (9, 5), (1, 2), (4, 2), count_include_pad=False),
    "upsample_nearest": lambda x, w: F.interpolate(x, scale_factor=2, mode="nearest"),
    "upsample_bilinear": lambda x, w: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "upsample_bilinear_ac": lambda x, w: F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True),
    "pixel_shuffle": lambda x, w: F.pixel_shuffle(x, 2),
}


# PyTorch's convolution guards the batch size to 2..15 (its own kernel
# selection), and equal sizes at the first call share a symbol ("duck
# sizing"): these shapes avoid both.
IMAGE_SHAPES = [(5, 11), (7, 13), (9, 17)]


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_conv_and_pooling(name):
    w = rnd((6, 4, 3, 3)) * 0.3
    check_compiled(CONV_CASES[name], [(rnd((s[0], 4, s[1] + 2, s[1] + 3)), w) for s in IMAGE_SHAPES],
                   tol=dict(rtol=1e-4, atol=1e-4))


def test_conv1d():
    w = rnd((8, 4, 3)) * 0.3
    check_compiled(lambda x: F.conv1d(x, w, stride=2, padding=1).relu(),
                   [(rnd((s[0], 4, s[1] * 4)),) for s in IMAGE_SHAPES], tol=dict(rtol=1e-4, atol=1e-4))


# Transposed convolutions of modules (static kernel sizes: parameters keep
# their shapes under dynamic=True): the stride becomes the convolution's
# lhs_dilation, which the library runs as oneDNN's deconvolution (no
# multiplications by inserted zeros), the bias its epilogue. Where
# output_padding exceeds padding the deconvolution would need a negative
# padding, and a pad op dilates the input instead.
CONV_TRANSPOSE_MODULES = {
    # convtasnet's decoder: kernel 16, stride 8
    "1d_stride8": (lambda: torch.nn.ConvTranspose1d(4, 2, 16, stride=8), 1, True),
    "2d_pad_output_pad": (lambda: torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                           output_padding=1), 2, True),
    "2d_groups_dilation": (lambda: torch.nn.ConvTranspose2d(4, 6, 3, stride=(2, 3), padding=2,
                                                            output_padding=(1, 2), groups=2,
                                                            dilation=(2, 3)), 2, True),
    "2d_output_pad_past_padding": (lambda: torch.nn.ConvTranspose2d(4, 6, 3, stride=2,
                                                                    output_padding=1), 2, False),
}


@pytest.mark.parametrize("name", sorted(CONV_TRANSPOSE_MODULES))
def test_conv_transpose_module(name, tmp_path):
    import functools
    make, spatial, deconvolution = CONV_TRANSPOSE_MODULES[name]
    torch.manual_seed(0)
    module = make().eval()
    torch._dynamo.reset()
    compiled = torch.compile(module, dynamic=True,
                             backend=functools.partial(disc.backend, dump_dir=str(tmp_path)))
    before = disc.stats()["compilations"]
    with torch.no_grad():
        for s in IMAGE_SHAPES:
            x = rnd((s[0], 4) + (s[1],) * spatial)
            torch.testing.assert_close(compiled(x), module(x), rtol=1e-4, atol=1e-4)
    assert disc.stats()["compilations"] - before == 1
    # The convolution as the library call gets it (its bias fused).
    convs = [line for f in tmp_path.rglob("*-disc-fuse-library-epilogues.mlir")
             for line in f.read_text().splitlines() if "disc.convolution" in line]
    assert convs and all(("lhs_dilation" in c) == deconvolution for c in convs), convs


# A transposed convolution whose kernel is an input (GraphNet's graphs take
# parameters as inputs, so with dynamic=True the kernel size is a symbol):
# its padding d * (k - 1) - p is computed at run time and stays a
# deconvolution (lhs_dilation), with no pad op, for any kernel size.
CONV_TRANSPOSE_KERNEL_INPUTS = {
    # convtasnet's decoder: stride 8, padding 8, kernels 16 / 12 / 20
    "1d_convtasnet": (lambda x, w: F.conv_transpose1d(x, w, stride=8, padding=8),
                      [((3, 4, 50), (4, 2, 16)), ((2, 4, 37), (4, 2, 12)), ((5, 4, 23), (4, 2, 20))]),
    "2d_output_pad_groups_dilation": (
        lambda x, w: F.conv_transpose2d(x, w, stride=(2, 3), padding=(2, 1), output_padding=(1, 0),
                                        groups=2, dilation=(2, 1)),
        [((2, 4, 9, 11), (4, 3, 5, 6)), ((3, 4, 7, 5), (4, 3, 6, 4)), ((5, 4, 6, 8), (4, 3, 4, 2))]),
}


@pytest.mark.parametrize("name", sorted(CONV_TRANSPOSE_KERNEL_INPUTS))
def test_conv_transpose_with_a_kernel_input(name, tmp_path):
    import functools
    fn, shapes = CONV_TRANSPOSE_KERNEL_INPUTS[name]
    torch.manual_seed(0)
    torch._dynamo.reset()
    compiled = torch.compile(fn, dynamic=True,
                             backend=functools.partial(disc.backend, dump_dir=str(tmp_path)))
    before = disc.stats()["compilations"]
    with torch.no_grad():
        for xs, ws in shapes:
            x, w = rnd(xs), rnd(ws) * 0.3
            torch.testing.assert_close(compiled(x, w), fn(x, w), rtol=1e-4, atol=1e-4)
    assert disc.stats()["compilations"] - before == 1
    text = "\n".join(f.read_text() for f in tmp_path.rglob("*-disc-fuse-library-epilogues.mlir"))
    convs = [line for line in text.splitlines() if "disc.convolution" in line]
    assert convs and all("lhs_dilation" in c and "index" in c for c in convs), convs
    assert "disc.dynamic_pad" not in text and "disc.pad" not in text


def test_conv_transpose_kernel_input_too_small_for_its_padding():
    """Compiled where d * (k - 1) >= p, called with a kernel whose padding
    crops (k - 1 < p): PyTorch's own guard (k >= p + 1, from its fake
    convolution) recompiles, and that graph's cropping transposed
    convolution with a symbolic kernel stays in eager, counted with its
    reason. The results are right at every call."""
    fn = lambda x, w: F.conv_transpose1d(x, w, stride=4, padding=3)
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="disc", dynamic=True)
    before = disc.stats()
    with torch.no_grad():
        for n, t, k in ((3, 9, 8), (5, 11, 6), (2, 9, 3)):
            x, w = rnd((n, 4, t)), rnd((4, 2, k))
            torch.testing.assert_close(compiled(x, w), fn(x, w), rtol=1e-4, atol=1e-4)
    after = disc.stats()
    assert after["compilations"] - before["compilations"] == 1
    reason = ("aten.convolution.default: cannot import: transposed convolution whose "
              "padding crops, with a dynamic kernel")
    assert after["fallback_ops"].get(reason, 0) - before["fallback_ops"].get(reason, 0) == 1


def test_conv_bf16():
    w = (rnd((6, 4, 3, 3)) * 0.3).bfloat16()
    check_compiled(lambda x: F.conv2d(x, w, padding=1).relu(),
                   [(rnd((s[0], 4, s[1] + 2, s[1] + 3), torch.bfloat16),) for s in IMAGE_SHAPES])


def test_library_call_inputs_are_not_overwritten():
    """Regression (yolo11n-pose): one tensor read by two library calls with
    an elementwise op in between that could reuse its buffer in place. When
    CSE merged the two calls' to_buffer ops, bufferization saw only the first
    read and let `h + 1` overwrite h before the second conv/matmul read it."""
    w1, w2 = rnd((8, 8, 1, 1)), rnd((8, 8, 3, 3))
    m1, m2 = rnd((8, 11)), rnd((8, 13))

    def fn(x):
        h = F.silu(x * 2.0)
        a = F.conv2d(h, w1)
        g = h + 1.0
        b = F.conv2d(h, w2, padding=1)
        flat = h.flatten(2).transpose(1, 2)  # [N, HW, 8]
        c = flat @ m1
        g2 = g * 3.0
        d = flat @ m2
        return a, b, g2, c, d

    check_compiled(fn, [(rnd((n, 8, hw, hw + 1)),) for n, hw in [(2, 5), (3, 7), (4, 4)]])


@pytest.mark.parametrize("where", ["rows", "columns", "2d"])
def test_boolean_mask_index_has_a_data_dependent_size(where):
    """x[mask]: the count of true elements is a size read from the data
    (Dynamo keeps the op with capture_dynamic_output_shape_ops); later ops
    use it. One compilation for every shape and mask, none in eager."""
    def fn(x):
        if where == "rows":
            picked = x[x[:, 0] > 0]
        elif where == "columns":
            picked = x[:, x[0] > 0]
        else:
            picked = x[x > 0.5]
        return picked * 2 + picked.sum()

    inputs = [(rnd((n, m)),) for n, m in [(5, 4), (17, 9), (3, 2)]]
    inputs.append((-torch.ones(4, 3),))  # nothing selected
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        check_compiled(fn, inputs)


def test_boolean_mask_with_other_indices_stays_in_eager():
    if disc.default_target() != "cpu":
        pytest.skip("boolean masks stay in eager on the cuda targets")
    idx = torch.tensor([0, 2])

    def fn(x):
        return x[x[:, 0] > 0][:, idx] + 1, x[idx.unsqueeze(1), x[0] > 0]

    inputs = [(rnd((n, 4)),) for n in (5, 9, 13)]
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        after = check_compiled(fn, inputs, max_fallback=1)
    assert any("a boolean mask combined with other index tensors" in k
               for k in after["fallback_ops"])


def test_new_empty_strided_with_any_strides_is_compiled():
    """AOTAutograd's clone in backward graphs: new_empty_strided, then a
    copy into it (t5 and Flaubert training; with a transposed layout,
    circular padding's backward). A DISC value is its elements, so the
    strides do not matter unless an as_strided reads the memory, which is
    tested below."""
    def fn(x):
        y = torch.ops.aten.new_empty_strided.default(x, x.shape, x.stride())
        return torch.ops.aten.copy.default(y, x * 2) + 1

    check_compiled(fn, [(rnd(s),) for s in SHAPES])

    def transposed(x):
        n, m = x.shape
        y = torch.ops.aten.new_empty_strided.default(x, (m, n), (1, m))
        return torch.ops.aten.copy.default(y, x.t() * 2) + 1

    check_compiled(transposed, [(rnd(s),) for s in SHAPES])


def test_as_strided_reads_a_permuted_layout_as_eager_lays_it_out():
    """as_strided reads memory: of x.t() * 2 (TensorIterator keeps the
    transposed layout) or of a transposed clone it reads the columns.
    Before, it ran in eager on DISC's contiguous result and read rows:
    a wrong answer."""
    def of_a_product(x):
        y = x.t() * 2
        return torch.ops.aten.as_strided.default(y, (y.numel() - 3,), (1,), 2) + 1

    def of_a_clone(x):
        n, m = x.shape
        y = torch.ops.aten.new_empty_strided.default(x, (m, n), (1, m))
        z = torch.ops.aten.copy.default(y, x.t() * 2)
        return torch.ops.aten.as_strided.default(z, (n, 2), (2, 1)) + 1

    def scatter_into(x, src):  # the rest of x keeps its (permuted) order
        y = x.permute(2, 0, 1) * 2
        return torch.as_strided_scatter(y, src, (src.shape[0],), (3,), 1) - 1

    for fn in (of_a_product, of_a_clone):
        check_compiled(fn, [(rnd(s),) for s in SHAPES])
    check_compiled(scatter_into, [(rnd((n, 3, 4)), rnd((n,))) for n in (5, 7, 9)])


def test_as_strided_of_a_view_with_an_offset_runs_in_eager_with_its_inputs():
    """An as_strided of a slice reads the sliced tensor's memory from the
    slice's offset: DISC leaves it to eager, and with it everything its
    input is computed from (a compiled result would be a contiguous copy);
    the rest of the graph compiles."""
    def fn(x):
        y = x * 2
        n, m = x.shape
        return torch.ops.aten.as_strided.default(y[:, 1:], (n - 1, 2), (m, 1)) + 1, y.sin()

    torch._dynamo.reset()
    after = check_compiled(fn, [(rnd(s),) for s in SHAPES], max_fallback=4)
    reasons = [k for k in after["fallback_ops"] if "computes the input of an as_strided" in k]
    assert {k.split(":")[0] for k in reasons} >= {"aten.mul.Tensor", "aten.slice.Tensor"}

    def of_an_input(x):  # x is a slice the caller made: eager reads its base
        return torch.ops.aten.as_strided.default(x, (4,), (2,), 1) * 3

    torch._dynamo.reset()
    check_compiled(of_an_input, [(rnd((n, n + 2))[:, 1:],) for n in (5, 7, 9)], max_fallback=1)


def test_as_strided_scatter():
    """AOTAutograd's backward of a view it cannot replay (convnext's
    adaptive pooling): the whole tensor in order, and a strided part."""
    def whole(x, src):
        return torch.ops.aten.as_strided_scatter.default(x, src * 2, x.shape, x.stride()) + 1

    check_compiled(whole, [(rnd(s), rnd(s)) for s in SHAPES])

    def every_other_row(x, src):
        rows, cols = x.shape
        return torch.as_strided_scatter(x, src, (rows // 2, cols), (2 * cols, 1), cols)

    check_compiled(every_other_row,
                   [(rnd((2 * r, c)), rnd((r, c))) for r, c in [(3, 5), (4, 7), (9, 6)]])
