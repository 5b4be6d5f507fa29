"""Ops the OpInfo suite found falling back (issue 28), each now compiled:
integer matmul and convolution (loop nests, no library), max pooling with
its indices, sort (a runtime call), topk, cummax and cummin (found by
fuzz/torch_fuzz.py), the legacy scatter `reduce=`, fmax /
fmin / copysign / hypot / log2 / log10 / exp2, variance with a fractional
correction, sizes computed in Python floats, integer linspace. Each runs
through torch.compile(dynamic=True) at 3 shapes against eager, asserting
one compilation and no fallback."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import disc

from .harness import check_compiled
from .test_aten_ops import FLOATS, SHAPES, ids, rnd

INTS = [torch.int32, torch.int64]


# ------------------------------------------------ integer matmul and conv

INT_MATMULS = {
    # (Fixed sizes PyTorch would not duck-size with n: 29, 31, 37.)
    "mm": (lambda a, b: a @ b, lambda n: ((n, n + 3), (n + 3, 29))),
    "bmm": (torch.bmm, lambda n: ((3, n, 4), (3, 4, n + 3))),
    "matmul_broadcast": (torch.matmul, lambda n: ((2, n, 6), (6, 3))),
    "addmm": (lambda c, a, b: torch.addmm(c, a, b, beta=2, alpha=3),
              lambda n: ((n, 31), (n, 37), (37, 31))),
    "mv": (torch.mv, lambda n: ((n, 9), (9,))),
}


@pytest.mark.parametrize("dtype", INTS, ids=ids(INTS))
@pytest.mark.parametrize("name", sorted(INT_MATMULS))
def test_integer_matmul(name, dtype):
    fn, shapes = INT_MATMULS[name]
    check_compiled(fn, [tuple(rnd(s, dtype) for s in shapes(n)) for n in (5, 7, 12)])


def test_integer_matmul_wraps_around_like_eager():
    big = torch.full((3, 4), 2 ** 62, dtype=torch.int64)
    check_compiled(lambda a, b: a @ b, [(big[:n] + 1, big.T.contiguous() - 3) for n in (3, 2, 3)]
                   + [(big[:3] * 0 + 7, big.T.contiguous())], compiles=None)


INT_CONVS = {
    "conv2d_stride_pad": lambda x, w: F.conv2d(x, w, stride=2, padding=1),
    "conv2d_dilation": lambda x, w: F.conv2d(x, w, dilation=2, padding=2),
    "conv2d_groups": lambda x, w: F.conv2d(x, w[:, :2], groups=2),
    "conv2d_bias": lambda x, w: F.conv2d(x, w, torch.arange(6, dtype=x.dtype), padding=(0, 1)),
    "conv_transpose2d": lambda x, w: F.conv_transpose2d(x, w.transpose(0, 1)[:, :4], stride=2,
                                                         padding=1, output_padding=1),
}


@pytest.mark.parametrize("name", sorted(INT_CONVS))
def test_integer_convolution(name):
    w = rnd((6, 4, 3, 3), torch.int64, -3, 4)
    # (Sizes that avoid PyTorch's conv guards and duck sizing, as in
    # test_aten_ops.IMAGE_SHAPES.)
    check_compiled(INT_CONVS[name], [(rnd((b, 4, h + 2, h + 3), torch.int64, -5, 6), w)
                                     for b, h in ((5, 11), (7, 13), (9, 17))])


def test_integer_conv1d_and_conv3d():
    # (Sizes distinct from the weights': duck sizing would tie them.)
    w1, w3 = rnd((5, 2, 3), torch.int64), rnd((3, 2, 2, 3, 2), torch.int64)
    check_compiled(lambda x: F.conv1d(x, w1, stride=2, padding=1),
                   [(rnd((n, 2, 4 * n), torch.int64),) for n in (4, 6, 7)])
    check_compiled(lambda x: F.conv3d(x, w3, padding=1),
                   [(rnd((7, 2, n, n + 1, 4), torch.int64),) for n in (5, 8, 9)])


# ------------------------------------------------------ max pool indices

POOLS = {
    "2d": lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True),
    "2d_dilated_ceil": lambda x: F.max_pool2d(x, (2, 3), (2, 1), (1, 1), dilation=(2, 1),
                                              ceil_mode=True, return_indices=True),
    "1d": lambda x: F.max_pool1d(x.flatten(2), 4, 3, 2, return_indices=True),
    "3d": lambda x: F.max_pool3d(x.unsqueeze(1), 2, (1, 2, 2), 1, return_indices=True),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_max_pool_indices(name):
    def make(b, h):
        x = rnd((b, 3, h, h + 2))
        x[0, 0, 0, :3] = float("nan")    # NaN wins, the last NaN of a window
        x[0, 1] = torch.randint(0, 3, (h, h + 2)).float()  # ties: the first max
        x[1, 2, 1, 1] = float("-inf")
        return (x,)
    check_compiled(POOLS[name], [make(b, h) for b, h in ((4, 7), (5, 9), (6, 12))])


def test_max_pool_indices_all_minus_inf_window():
    # Nothing beats -inf: the index is the window's first in-bounds position.
    check_compiled(lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True),
                   [(torch.full((2, 1, h, h), -math.inf),) for h in (5, 7, 9)])


# ------------------------------------------------------------------- sort

SORT_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool]


@pytest.mark.parametrize("dtype", SORT_DTYPES, ids=ids(SORT_DTYPES))
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sort(dtype, descending, dim):
    def make(s):
        x = rnd(s, dtype, -3, 3) if not dtype.is_floating_point else \
            torch.randint(-4, 4, s).to(dtype) * 0.5  # ties: the stable order
        if dtype.is_floating_point:
            x[0, 0], x[-1, 1] = float("nan"), float("-inf")
        return (x.transpose(0, 1).contiguous().transpose(0, 1),)  # strided input
    check_compiled(lambda x: torch.sort(x, dim=dim, descending=descending, stable=True),
                   [make(s) for s in SHAPES])


def test_sort_unstable_argsort_and_3d():
    check_compiled(lambda x: (torch.sort(x, 1)[0], torch.argsort(x, -1, descending=True)),
                   [(rnd((3, n, 5)),) for n in (4, 7, 9)])


# ------------------------------------------------------ topk and cummax
# (found falling back by fuzz/torch_fuzz.py; topk is the sort's first k)

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64],
                         ids=ids([torch.float32, torch.bfloat16, torch.int64]))
@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dim", [0, -1])
def test_cummax_cummin_ties_nan_and_inf(op, dim, dtype):
    """Eager moves the index on every tie and on every NaN (which then stays
    the running value): values and indices both compared exactly."""
    def make(s):
        x = torch.randint(-3, 3, s).to(dtype)  # many ties
        if dtype.is_floating_point:
            x[1, 2], x[-1, 0], x[2, -1] = float("nan"), float("-inf"), float("inf")
            x[-2, 1] = float("nan")
        return (x.t().contiguous().t(),)  # strided
    check_compiled(lambda x: getattr(torch, op)(x, dim), [make(s) for s in SHAPES])


def test_cummax_of_bools_and_a_3d_middle_dim():
    check_compiled(lambda b, x: (torch.cummax(b, 1), torch.cummin(x, 1)),
                   [(torch.rand(3, n, 29) < 0.3, rnd((2, n, 31))) for n in (5, 7, 9)])


@pytest.mark.parametrize("largest", [True, False])
def test_topk_with_nan_and_a_size_dependent_k(largest):
    """NaN counts as the largest value (first in the largest k, last in the
    smallest); k = a third of a symbolic size."""
    def make(n):
        x = rnd((3, n))
        x[0, 1], x[2, 0] = float("nan"), float("inf")
        return (x,)
    def fn(x):
        values, indices = torch.topk(x, x.shape[1] // 3, largest=largest)
        return values, indices, torch.topk(x, 2, dim=0, largest=largest).values
    check_compiled(fn, [make(n) for n in (6, 9, 13)])


# --------------------------------------------------------- scatter reduce

@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_legacy_reduce(reduce):
    def make(n):
        return rnd((n, 6)), torch.randint(0, 6, (n, 4)), rnd((n, 4))
    check_compiled(lambda x, i, s: torch.scatter(x, 1, i, s, reduce=reduce),
                   [make(n) for n in (3, 5, 9)])
    check_compiled(lambda x, i, s: torch.scatter(x, 0, i % x.shape[0], 1.5, reduce=reduce),
                   [make(n) for n in (3, 5, 9)])


# ------------------------------------------------------- pointwise math

@pytest.mark.parametrize("dtype", FLOATS, ids=ids(FLOATS))
@pytest.mark.parametrize("name", ["fmax", "fmin", "copysign", "hypot"])
def test_nan_aware_binary(name, dtype):
    fn = getattr(torch, name)

    def make(s):
        a, b = rnd(s, dtype), rnd(s, dtype)
        a[0, :2], b[0, 1:3] = float("nan"), float("nan")
        a[1, 0], b[1, 1] = float("inf"), float("-inf")
        b[2, 0], b[2, 1] = -0.0, 0.0
        return a, b
    check_compiled(fn, [make(s) for s in SHAPES])


def test_hypot_does_not_overflow():
    check_compiled(torch.hypot, [(torch.full(s, 3e30), torch.full(s, 4e30)) for s in SHAPES])


@pytest.mark.parametrize("dtype", INTS, ids=ids(INTS))
def test_integer_fmax_copysign(dtype):
    check_compiled(lambda a, b: (torch.fmax(a, b), torch.fmin(a, b), torch.copysign(a, b)),
                   [(rnd(s, dtype), rnd(s, dtype)) for s in SHAPES])


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64], ids=ids(FLOATS + [torch.int64]))
def test_log2_log10_exp2(dtype):
    def make(s):
        x = rnd(s, dtype, 1, 40) if not dtype.is_floating_point else rnd(s, dtype).abs() * 20
        return (x,)
    check_compiled(lambda x: (torch.log2(x), torch.log10(x), torch.exp2(x.float() * 0.1)),
                   [make(s) for s in SHAPES], tol=None)


# ------------------------------------------------------------ reductions

@pytest.mark.parametrize("correction", [0.5, 1.3, 7])
def test_var_fractional_correction(correction):
    check_compiled(lambda x: (torch.var(x, 1, correction=correction),
                              torch.std(x, correction=correction)),
                   [(rnd(s),) for s in SHAPES])


# --------------------------------------------- sizes from Python floats

def test_size_computed_in_floats():
    def fn(x):
        n = int(x.shape[0] * 1.7)
        m = math.ceil(x.shape[1] / 3.0)
        return torch.arange(n, dtype=torch.float32) + 1, x[:, :m] * 2
    check_compiled(fn, [(rnd(s),) for s in SHAPES])


def test_slice_scatter_symbolic_step():
    def fn(x, src):
        return torch.slice_scatter(x, src, 1, 0, None, x.shape[1] // src.shape[1])
    check_compiled(fn, [(rnd((4, 6 * k)), rnd((4, 6))) for k in (3, 5, 7)])


def test_roll_of_an_empty_dim():
    check_compiled(lambda x: torch.roll(x, 3, 1) + 1, [(rnd((n, 0)),) for n in (3, 5, 7)],
                   compiles=None)


# ---------------------------------------------------------------- linspace

def test_integer_linspace_whole_step_compiles():
    check_compiled(lambda x: torch.linspace(-4, 46, 26, dtype=torch.int64) + x,
                   [(rnd((n, 26), torch.int64),) for n in (3, 5, 7)])


def test_integer_linspace_fractional_step_stays_eager():
    # Eager's integer values depend on its vector width: left to eager,
    # with a logged reason, and equal to eager.
    stats = check_compiled(lambda x: torch.linspace(4.3, -3, 50, dtype=torch.int64) + x,
                           [(rnd((n, 50), torch.int64),) for n in (3, 5, 7)], max_fallback=1)
    assert any("integer linspace with a fractional step" in k for k in stats["fallback_ops"])


# ------------------------------------------------------------ index_reduce

@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=ids([torch.float32, torch.int64]))
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(reduce, include_self, dtype):
    def make(n):
        # Small integers: products stay exact; repeated indices collide.
        return (rnd((n, 6), dtype, -4, 5), torch.randint(0, 6, (4,)), rnd((n, 4), dtype, -4, 5))
    check_compiled(lambda x, i, s: x.index_reduce(1, i, s, reduce, include_self=include_self),
                   [make(n) for n in (3, 5, 9)])


def test_integer_convolution_output_width_one():
    # An output dim of 1 (OpInfo's conv2d sample 8): unit-loop folding must
    # still see operand sizes that agree (the input is cut to the window).
    w = rnd((4, 2, 3, 4), torch.int64)
    check_compiled(lambda x: F.conv2d(x, w, stride=2, padding=1),
                   [(rnd((1, 2, h, 3), torch.int64),) for h in (4, 6, 8)],
                   dynamic=False, compiles=None)
