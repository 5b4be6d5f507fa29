"""Constants, iota, broadcast, reshape, transpose, slice, concatenate and
pad (static and dynamic forms) against PyTorch at several shapes."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from conftest import (ALL_DTYPES, compile_once, dtype_id, rand, run_shapes,
                      tensor_type)

DIMS = """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
"""


def test_constant_plus_argument():
    exe = compile_once("""
func.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c = disc.constant dense<[1.0, -2.0, 0.5]> : tensor<3xf32>
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x3xf32>
  %c3 = arith.constant 3 : index
  %shape = tensor.from_elements %d0, %c3 : tensor<2xindex>
  %b = disc.dynamic_broadcast_in_dim %c, %shape, dims = [1] : (tensor<3xf32>, tensor<2xindex>) -> tensor<?x3xf32>
  %0 = disc.add %x, %b : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}""")
    c = torch.tensor([1.0, -2.0, 0.5])
    run_shapes(exe, lambda n: rand((n, 3), torch.float32), lambda x: x + c, [1, 4, 100])


def test_constant_only_result():
    """A result that is a constant is copied out (never handed out as the
    program's read-only memory)."""
    exe = compile_once("""
func.func @main(%x: tensor<?xf32>) -> (tensor<2x2xi32>, tensor<?xf32>) {
  %c = disc.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  return %c, %x : tensor<2x2xi32>, tensor<?xf32>
}""")
    def reference(x):
        return torch.tensor([[1, 2], [3, 4]], dtype=torch.int32), x

    run_shapes(exe, lambda n: rand((n,), torch.float32), reference, [1, 5, 9])
    a, _ = exe(torch.zeros(3))
    a += 10  # results are independent buffers
    b, _ = exe(torch.zeros(3))
    assert b.tolist() == [[1, 2], [3, 4]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32, torch.bfloat16],
                         ids=dtype_id)
def test_dynamic_iota(dtype):
    t = tensor_type((None, None), dtype)
    exe = compile_once(f"""
func.func @main(%x: {t}) -> ({t}, {t}) {{
  {DIMS}
  %d0 = tensor.dim %x, %c0 : {t}
  %d1 = tensor.dim %x, %c1 : {t}
  %shape = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %i0 = disc.dynamic_iota %shape, dim = 0 : (tensor<2xindex>) -> {t}
  %i1 = disc.dynamic_iota %shape, dim = 1 : (tensor<2xindex>) -> {t}
  return %i0, %i1 : {t}, {t}
}}""")

    def reference(x):
        n, m = x.shape
        return (torch.arange(n, dtype=dtype)[:, None].expand(n, m).contiguous(),
                torch.arange(m, dtype=dtype)[None, :].expand(n, m).contiguous())

    run_shapes(exe, lambda s: torch.empty(s, dtype=dtype), reference, [(1, 1), (3, 7), (40, 2)])


def test_static_iota():
    exe = compile_once("""
func.func @main(%x: tensor<?x4xi64>) -> tensor<?x4xi64> {
  %i = disc.iota dim = 0 : tensor<4xi64>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x4xi64>
  %shape = tensor.from_elements %d0, %c4 : tensor<2xindex>
  %b = disc.dynamic_broadcast_in_dim %i, %shape, dims = [1] : (tensor<4xi64>, tensor<2xindex>) -> tensor<?x4xi64>
  %0 = disc.add %x, %b : tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}""")
    run_shapes(exe, lambda n: rand((n, 4), torch.int64), lambda x: x + torch.arange(4),
               [1, 2, 33])


def test_broadcast_in_dim_static():
    exe = compile_once("""
func.func @main(%x: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0 = disc.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}""")
    exe_ref = lambda x: x[None, :, None].expand(2, 3, 4).contiguous()
    # Static program: the same shape three times with fresh data.
    run_shapes(exe, lambda _: rand((3,), torch.float32), exe_ref, [0, 1, 2])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_dynamic_broadcast_bias(dtype):
    """x[N, C] + b[C] with N, C dynamic (PyTorch bias add)."""
    t = tensor_type((None, None), dtype)
    v = tensor_type((None,), dtype)
    op = "or" if dtype == torch.bool else "add"
    exe = compile_once(f"""
func.func @main(%x: {t}, %b: {v}) -> {t} {{
  {DIMS}
  %d0 = tensor.dim %x, %c0 : {t}
  %d1 = tensor.dim %x, %c1 : {t}
  %shape = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %bb = disc.dynamic_broadcast_in_dim %b, %shape, dims = [1] : ({v}, tensor<2xindex>) -> {t}
  %0 = disc.{op} %x, %bb : {t}
  return %0 : {t}
}}""")
    reference = (lambda x, b: x | b) if dtype == torch.bool else (lambda x, b: x + b)
    run_shapes(exe, lambda s: (rand(s, dtype), rand((s[1],), dtype)), reference,
               [(1, 1), (4, 3), (17, 64)])


def test_dynamic_broadcast_runtime_size_one():
    """NumPy-style broadcasting decided at run time: an operand dim that is
    1 at run time expands; one equal to the output dim is copied."""
    t = "tensor<?x?xf32>"
    exe = compile_once(f"""
func.func @main(%a: {t}, %b: {t}) -> {t} {{
  {DIMS}
  %a0 = tensor.dim %a, %c0 : {t}
  %a1 = tensor.dim %a, %c1 : {t}
  %b0 = tensor.dim %b, %c0 : {t}
  %b1 = tensor.dim %b, %c1 : {t}
  %d0 = arith.maxui %a0, %b0 : index
  %d1 = arith.maxui %a1, %b1 : index
  %shape = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %ab = disc.dynamic_broadcast_in_dim %a, %shape, dims = [0, 1] : ({t}, tensor<2xindex>) -> {t}
  %bb = disc.dynamic_broadcast_in_dim %b, %shape, dims = [0, 1] : ({t}, tensor<2xindex>) -> {t}
  %0 = disc.multiply %ab, %bb : {t}
  return %0 : {t}
}}""")
    cases = iter([((3, 1), (1, 4)), ((5, 6), (5, 6)), ((1, 7), (2, 7)), ((4, 1), (4, 1))])

    def make(_):
        sa, sb = next(cases)
        return rand(sa, torch.float32), rand(sb, torch.float32)

    run_shapes(exe, make, lambda a, b: a * b, [0, 1, 2, 3])


def test_dynamic_broadcast_incompatible_raises():
    import disc

    t = "tensor<?xf32>"
    exe = compile_once(f"""
func.func @main(%a: {t}, %like: tensor<?x?xf32>) -> tensor<?x?xf32> {{
  {DIMS}
  %d0 = tensor.dim %like, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %like, %c1 : tensor<?x?xf32>
  %shape = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %0 = disc.dynamic_broadcast_in_dim %a, %shape, dims = [1] : ({t}, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}}""")
    with pytest.raises(disc.InvocationError, match="dynamic_broadcast_in_dim.*operand dim 0"):
        exe(torch.ones(3), torch.ones(2, 5))
    out, = exe(torch.ones(5), torch.ones(2, 5))  # still usable afterwards
    assert out.shape == (2, 5)


def test_reshape_static():
    exe = compile_once("""
func.func @main(%x: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %0 = disc.reshape %x : (tensor<2x6xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}""")
    run_shapes(exe, lambda _: rand((2, 6), torch.float32), lambda x: x.reshape(3, 4), [0, 1, 2])


def test_dynamic_reshape_flatten_and_split():
    """[B, S, H] -> [B*S, H] -> [B, S*H]: sizes computed from the inputs."""
    t3 = "tensor<?x?x?xf32>"
    exe = compile_once(f"""
func.func @main(%x: {t3}) -> (tensor<?x?xf32>, tensor<?x?xf32>) {{
  {DIMS}
  %b = tensor.dim %x, %c0 : {t3}
  %s = tensor.dim %x, %c1 : {t3}
  %h = tensor.dim %x, %c2 : {t3}
  %bs = arith.muli %b, %s : index
  %sh = arith.muli %s, %h : index
  %shape1 = tensor.from_elements %bs, %h : tensor<2xindex>
  %shape2 = tensor.from_elements %b, %sh : tensor<2xindex>
  %0 = disc.dynamic_reshape %x, %shape1 : ({t3}, tensor<2xindex>) -> tensor<?x?xf32>
  %1 = disc.dynamic_reshape %x, %shape2 : ({t3}, tensor<2xindex>) -> tensor<?x?xf32>
  %2 = disc.exponential %0 : tensor<?x?xf32>
  return %2, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}}""")
    run_shapes(exe, lambda s: rand(s, torch.float32),
               lambda x: (x.reshape(-1, x.shape[2]).exp(), x.reshape(x.shape[0], -1)),
               [(1, 1, 1), (2, 3, 4), (5, 7, 16)])


def test_dynamic_reshape_shape_from_argument():
    """The target shape is an i64 tensor argument read at run time; a shape
    with the wrong element count raises instead of reading out of bounds."""
    import disc

    exe = compile_once("""
func.func @main(%x: tensor<?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = disc.dynamic_reshape %x, %shape : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}""")
    shapes = iter([(2, 3), (4, 5), (1, 7)])

    def make(n):
        a, b = next(shapes)
        return rand((a * b,), torch.float32), torch.tensor([a, b])

    run_shapes(exe, make, lambda x, s: x.reshape(*s.tolist()), [0, 1, 2])
    with pytest.raises(disc.InvocationError, match="number of elements"):
        exe(torch.ones(6), torch.tensor([4, 2]))


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (0, 2, 1), (2, 1, 0)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool],
                         ids=dtype_id)
def test_transpose(perm, dtype):
    t = tensor_type((None, None, None), dtype)
    exe = compile_once(f"""
func.func @main(%x: {t}) -> {t} {{
  %0 = disc.transpose %x, dims = [{", ".join(map(str, perm))}] : ({t}) -> {t}
  return %0 : {t}
}}""")
    run_shapes(exe, lambda s: rand(s, dtype), lambda x: x.permute(*perm).contiguous(),
               [(1, 2, 3), (4, 5, 6), (9, 1, 33)])


def test_slice_static_bounds_dynamic_operand():
    import disc

    exe = compile_once("""
func.func @main(%x: tensor<?x8xf32>) -> tensor<2x3xf32> {
  %0 = disc.slice %x, start = [1, 0], limit = [5, 8], strides = [2, 3] : (tensor<?x8xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}""")
    run_shapes(exe, lambda n: rand((n, 8), torch.float32), lambda x: x[1:5:2, 0:8:3].contiguous(),
               [5, 6, 40])
    with pytest.raises(disc.InvocationError, match=r"disc.slice at input.mlir:3:\d+: limit 5 of dim 0"):
        exe(torch.ones(4, 8))


def test_real_dynamic_slice():
    """x[:, 1:d1-1:2] with d1 known only at run time."""
    t = "tensor<?x?xf32>"
    exe = compile_once(f"""
func.func @main(%x: {t}) -> {t} {{
  {DIMS}
  %d0 = tensor.dim %x, %c0 : {t}
  %d1 = tensor.dim %x, %c1 : {t}
  %end = arith.subi %d1, %c1 : index
  %start = tensor.from_elements %c0, %c1 : tensor<2xindex>
  %limit = tensor.from_elements %d0, %end : tensor<2xindex>
  %strides = tensor.from_elements %c1, %c2 : tensor<2xindex>
  %0 = disc.real_dynamic_slice %x, %start, %limit, %strides : ({t}, tensor<2xindex>, tensor<2xindex>, tensor<2xindex>) -> {t}
  return %0 : {t}
}}""")
    run_shapes(exe, lambda s: rand(s, torch.float32), lambda x: x[:, 1:-1:2].contiguous(),
               [(1, 2), (3, 7), (10, 64)])


def test_real_dynamic_slice_out_of_bounds_raises():
    import disc

    exe = compile_once("""
func.func @main(%x: tensor<?xf32>, %start: tensor<1xi64>, %limit: tensor<1xi64>) -> tensor<?xf32> {
  %one = arith.constant dense<1> : tensor<1xi64>
  %0 = disc.real_dynamic_slice %x, %start, %limit, %one : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}""")
    x = torch.arange(10.0)
    out, = exe(x, torch.tensor([2]), torch.tensor([5]))
    assert out.tolist() == [2.0, 3.0, 4.0]
    with pytest.raises(disc.InvocationError, match=r"real_dynamic_slice at input.mlir:4:8: dim 0"):
        exe(x, torch.tensor([2]), torch.tensor([11]))
    with pytest.raises(disc.InvocationError, match=r"real_dynamic_slice at input.mlir:4:8: dim 0"):
        exe(x, torch.tensor([-1]), torch.tensor([3]))


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.bool],
                         ids=dtype_id)
def test_concatenate(dim, dtype):
    t = tensor_type((None, None), dtype)
    exe = compile_once(f"""
func.func @main(%a: {t}, %b: {t}, %c: {t}) -> {t} {{
  %0 = disc.concatenate %a, %b, %c dim = {dim} : ({t}, {t}, {t}) -> {t}
  return %0 : {t}
}}""")

    def make(s):
        other = list(s)
        sizes = [s[dim], s[dim] + 2, 1]
        parts = []
        for size in sizes:
            other[dim] = size
            parts.append(rand(tuple(other), dtype))
        return tuple(parts)

    run_shapes(exe, make, lambda a, b, c: torch.cat([a, b, c], dim), [(1, 1), (3, 4), (9, 17)])


def test_concatenate_mismatch_raises():
    import disc

    t = "tensor<?x?xf32>"
    exe = compile_once(f"""
func.func @main(%a: {t}, %b: {t}) -> {t} {{
  %0 = disc.concatenate %a, %b dim = 0 : ({t}, {t}) -> {t}
  return %0 : {t}
}}""")
    with pytest.raises(disc.InvocationError, match="dim 1"):
        exe(torch.ones(2, 3), torch.ones(2, 4))


def test_pad_static_edge_interior_and_crop():
    t = "tensor<?x?xf32>"
    exe = compile_once(f"""
func.func @main(%x: {t}, %v: tensor<f32>) -> ({t}, {t}) {{
  %0 = disc.pad %x, %v, low = [1, 2], high = [0, 3], interior = [1, 0] : ({t}, tensor<f32>) -> {t}
  %1 = disc.pad %x, %v, low = [-1, 1], high = [2, -2], interior = [0, 0] : ({t}, tensor<f32>) -> {t}
  return %0, %1 : {t}, {t}
}}""")

    def reference(x, v):
        n, m = x.shape
        a = torch.full((n + (n - 1) + 1, m + 5), float(v))
        a[1::2, 2:2 + m] = x
        b = F.pad(x, (1, -2, -1, 2), value=float(v))
        return a, b

    run_shapes(exe, lambda s: (rand(s, torch.float32), torch.tensor(0.5)), reference,
               [(2, 3), (5, 4), (8, 9)])


def test_dynamic_pad():
    """Padding amounts computed at run time (here: pad to a multiple of 4)."""
    t = "tensor<?x?xf32>"
    exe = compile_once(f"""
func.func @main(%x: {t}) -> {t} {{
  {DIMS}
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %d1 = tensor.dim %x, %c1 : {t}
  %r = arith.remui %d1, %c4 : index
  %p = arith.subi %c4, %r : index
  %hi1 = arith.remui %p, %c4 : index
  %zero = disc.constant dense<0.0> : tensor<f32>
  %lo = tensor.from_elements %c1, %c0 : tensor<2xindex>
  %hi = tensor.from_elements %c0, %hi1 : tensor<2xindex>
  %in = tensor.from_elements %c0, %c0 : tensor<2xindex>
  %0 = disc.dynamic_pad %x, %zero, %lo, %hi, %in : ({t}, tensor<f32>, tensor<2xindex>, tensor<2xindex>, tensor<2xindex>) -> {t}
  return %0 : {t}
}}""")
    run_shapes(exe, lambda s: rand(s, torch.float32),
               lambda x: F.pad(x, (0, (-x.shape[1]) % 4, 1, 0)), [(1, 1), (3, 4), (6, 13)])
