"""The Python API: compile once / run at many shapes, the generic op form,
errors (CompileError with line:column, InvocationError naming the argument),
threads, IR dumps."""
from __future__ import annotations

import os
import threading

import pytest
import torch

import disc
from conftest import compile_once, compilations, rand, run_shapes

GENERIC_PROGRAM = """
"func.func"() <{function_type = (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>, sym_name = "main"}> ({
^bb0(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>):
  %0 = "disc.add"(%a, %b) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = "disc.tanh"(%0) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %2 = "disc.multiply"(%1, %b) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %3 = "disc.exponential"(%2) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  "func.return"(%3) : (tensor<?x?xf32>) -> ()
}) : () -> ()
"""


def test_generic_form_compiles_once_for_all_shapes():
    exe = compile_once(GENERIC_PROGRAM)
    run_shapes(exe, lambda s: (rand(s, torch.float32), rand(s, torch.float32)),
               lambda a, b: torch.exp(torch.tanh(a + b) * b),
               [(2, 3), (1, 1), (64, 7), (100, 1000), (513, 1024)], rtol=2e-6, atol=2e-6)


def test_stats_counts_compilations():
    before = disc.stats()["compilations"]
    disc.compile_mlir(GENERIC_PROGRAM)
    disc.compile_mlir(GENERIC_PROGRAM)
    assert disc.stats()["compilations"] == before + 2
    assert isinstance(disc.stats(), dict)


def test_public_function_is_main_among_several():
    exe = compile_once("""
func.func @helper(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.negate %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = func.call @helper(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = disc.exponential %0 : tensor<?xf32>
  return %1 : tensor<?xf32>
}""")
    assert exe.entry_name == "main"
    run_shapes(exe, lambda n: rand((n,), torch.float32), lambda x: torch.exp(-x), [1, 2, 300])


def test_single_public_function_any_name():
    exe = compile_once("""
func.func private @unused(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
func.func @forward(%x: tensor<?xi64>) -> tensor<?xi64> {
  %0 = disc.multiply %x, %x : tensor<?xi64>
  return %0 : tensor<?xi64>
}""")
    assert exe.entry_name == "forward"
    run_shapes(exe, lambda n: rand((n,), torch.int64), lambda x: x * x, [1, 2, 300])


def test_result_aliasing_an_input_is_a_copy():
    exe = compile_once("""
func.func @main(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = disc.negate %x : tensor<?xf32>
  return %x, %0 : tensor<?xf32>, tensor<?xf32>
}""")
    x = torch.arange(4.0)
    same, neg = exe(x)
    assert torch.equal(same, x) and torch.equal(neg, -x)
    same += 1
    assert torch.equal(x, torch.arange(4.0)), "the input must not be aliased"


def test_zero_copy_output_and_lifetime():
    """Outputs are ordinary torch tensors that own their memory."""
    exe = compile_once("""
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.add %x, %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}""")
    outs = [exe(torch.full((1000,), float(i)))[0] for i in range(20)]
    for i, o in enumerate(outs):
        assert o.is_contiguous() and torch.all(o == 2 * i)
    del exe  # outputs outlive the executable
    assert float(outs[3][0]) == 6.0


def test_non_contiguous_and_dlpack_inputs():
    import numpy as np

    exe = compile_once("""
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.multiply %x, %x : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}""")
    x = torch.randn(5, 3).t()  # non-contiguous
    assert torch.allclose(exe(x)[0], x * x)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)  # any __dlpack__ object
    assert exe(a)[0].tolist() == (a * a).tolist()
    # Tensors that take the direct DLPack path: a parameter that requires
    # grad, a slice with an offset, a size-1 dim with an odd stride, empty.
    w = torch.nn.Parameter(torch.randn(4, 3))
    assert torch.allclose(exe(w)[0], (w * w).detach())
    rows = torch.randn(6, 3)[2:5]
    assert torch.allclose(exe(rows)[0], rows * rows)
    column = torch.randn(3, 1).expand(3, 1)
    assert torch.allclose(exe(column)[0], column * column)
    assert exe(torch.empty(0, 3))[0].shape == (0, 3)


UPDATE = """func.func @main(%w: tensor<?xf32>, %g: tensor<?xf32>, %n: tensor<?xi64>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xi64>) {
  %0 = disc.subtract %w, %g : tensor<?xf32>
  %1 = disc.add %w, %g : tensor<?xf32>
  %2 = disc.add %n, %n : tensor<?xi64>
  return %0, %1, %2 : tensor<?xf32>, tensor<?xf32>, tensor<?xi64>
}"""


@pytest.fixture(scope="module")
def update_exe():
    return disc.compile_mlir(UPDATE)


def test_results_written_into_arguments(update_exe):
    """results_into: a result goes into an argument's memory once every
    result is computed, and comes back as None; at several sizes."""
    for n in (1, 7, 300):
        w, g = torch.randn(n), torch.randn(n)
        counts = torch.arange(n)
        w0, ptr = w.clone(), w.data_ptr()
        new_w, plus, doubled = update_exe(w, g, counts, results_into={0: 0, 2: 2})
        assert new_w is None and doubled is None
        assert w.data_ptr() == ptr and torch.equal(w, w0 - g)
        # Result 1 read the old w: results are computed before any write.
        assert torch.equal(plus, w0 + g)
        assert torch.equal(counts, 2 * torch.arange(n))


def test_results_into_swap_reads_old_values():
    """Writes into two arguments that each result reads: both results are
    computed from the old values (no write is seen by another result)."""
    exe = disc.compile_mlir("""
func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  return %b, %a : tensor<?xf32>, tensor<?xf32>
}""")
    a, b = torch.zeros(5), torch.ones(5)
    assert exe(a, b, results_into={0: 0, 1: 1}) == (None, None)
    assert torch.equal(a, torch.ones(5)) and torch.equal(b, torch.zeros(5))


def test_results_into_errors_leave_arguments_unchanged(update_exe):
    w, g, n = torch.randn(4), torch.randn(4), torch.arange(4)
    w0 = w.clone()
    with pytest.raises(disc.InvocationError, match=r"result 2 \(i64, rank 1\) cannot be "
                       r"written into argument 0 \(%arg0\) \(f32, rank 1\)"):
        update_exe(w, g, n, results_into={2: 0})
    with pytest.raises(disc.InvocationError, match="maps result 0 to argument 5"):
        update_exe(w, g, n, results_into={0: 5})
    with pytest.raises(disc.InvocationError, match="argument 0 is to receive result 0 but is "
                       "not a contiguous tensor"):
        update_exe(torch.randn(8)[::2], g, n, results_into={0: 0})
    with pytest.raises(disc.InvocationError, match="whose memory overlaps"):
        update_exe(w, w, n, results_into={0: 0, 1: 1})
    assert torch.equal(w, w0)


def test_results_into_shape_mismatch_is_checked_after_the_call():
    """A result whose size differs from its destination's (known only once
    the call ran) is an error, and no argument is written."""
    exe = disc.compile_mlir("""
func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = disc.negate %a : tensor<?xf32>
  %1 = disc.negate %b : tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}""")
    a, b = torch.ones(3), torch.ones(4)
    with pytest.raises(disc.InvocationError, match=r"result 0 has shape \[3\] and cannot be "
                       r"written into argument 1 \(%arg1\) of shape \[4\]"):
        exe(a, b, results_into={0: 1, 1: 0})
    assert torch.equal(a, torch.ones(3)) and torch.equal(b, torch.ones(4))


TIED_UPDATE = """func.func @main(%w: tensor<?xf32> {disc.result_into = 0 : i64},
                 %m: tensor<?xf32> {disc.result_into = 1 : i64}, %g: tensor<?xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %m2 = disc.multiply %m, %g : tensor<?xf32>
  %m3 = disc.add %m2, %g : tensor<?xf32>
  %w2 = disc.subtract %w, %m3 : tensor<?xf32>
  %gg = disc.multiply %g, %g : tensor<?xf32>
  return %w2, %m3, %gg : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}"""


def _allocations_of(call) -> int:
    before = disc.memory_stats()["allocations"]
    out = call()
    return disc.memory_stats()["allocations"] - before, out


def test_results_computed_in_the_arguments_memory():
    """`disc.result_into`: the code computes a momentum-SGD update in the
    parameter's and the momentum's own memory. With results_into naming
    them, a call allocates only its third result and copies nothing; at
    several sizes."""
    exe = disc.compile_mlir(TIED_UPDATE)
    untied = disc.compile_mlir(TIED_UPDATE.replace(" {disc.result_into = 0 : i64}", "")
                               .replace(" {disc.result_into = 1 : i64}", ""))
    assert exe.results_into_arguments == {0: 0, 1: 1}
    assert untied.results_into_arguments == {}
    assert exe.kernel_counts["copies"] == 0
    for n in (1, 7, 300, 4097):
        w, m, g = torch.randn(n), torch.randn(n), torch.randn(n)
        w0, m0 = w.clone(), m.clone()
        ptrs = (w.data_ptr(), m.data_ptr())
        allocations, (new_w, new_m, gg) = _allocations_of(
            lambda: exe(w, m, g, results_into={0: 0, 1: 1}))
        assert new_w is None and new_m is None
        assert allocations == 1  # the third result only
        assert (w.data_ptr(), m.data_ptr()) == ptrs
        m_expected = m0 * g + g
        torch.testing.assert_close(m, m_expected)
        torch.testing.assert_close(w, w0 - m_expected)
        torch.testing.assert_close(gg, g * g)
        # The untied program: the runtime copies its results in after the
        # call, into buffers of their own first.
        w1, m1 = w0.clone(), m0.clone()
        allocations, _ = _allocations_of(lambda: untied(w1, m1, g, results_into={0: 0, 1: 1}))
        assert allocations == 3
        assert torch.equal(w1, w) and torch.equal(m1, m)


def test_an_argument_written_in_place_cannot_share_memory_with_another():
    """The code reads g while it writes w: passing one tensor as both (or
    a view of it) is an InvocationError before anything is written."""
    exe = disc.compile_mlir(TIED_UPDATE)
    w, m = torch.randn(8), torch.randn(8)
    w0 = w.clone()
    with pytest.raises(disc.InvocationError, match=r"argument 0 \(%arg0\) is written in place "
                       r"by the compiled code and shares memory with argument 2 \(%arg2\)"):
        exe(w, m, w, results_into={0: 0, 1: 1})
    with pytest.raises(disc.InvocationError, match="shares memory"):
        exe(w[:4], m[:4], w[2:6], results_into={0: 0, 1: 1})
    assert torch.equal(w, w0)


def test_result_into_without_results_into_still_writes_and_returns_a_copy():
    """The program writes the tied argument on every call (it is part of
    the code); a caller that does not name it in results_into gets the
    result back too, as a tensor of its own."""
    exe = disc.compile_mlir(TIED_UPDATE)
    w, m, g = torch.randn(5), torch.randn(5), torch.randn(5)
    w0, m0 = w.clone(), m.clone()
    new_w, new_m, _ = exe(w, m, g)
    torch.testing.assert_close(new_w, w)
    assert new_w.data_ptr() != w.data_ptr()
    torch.testing.assert_close(w, w0 - (m0 * g + g))
    torch.testing.assert_close(new_m, m)


def test_result_into_an_argument_read_later_is_copied_at_the_end():
    """A later op reads the tied argument's old value (a reduction, which
    cannot be fused into the update): the update goes to a buffer of its
    own and is copied into the argument at the end, after that read."""
    exe = disc.compile_mlir("""
func.func @main(%w: tensor<?xf32> {disc.result_into = 0 : i64}, %g: tensor<?xf32>)
    -> (tensor<?xf32>, tensor<f32>) {
  %w2 = disc.subtract %w, %g : tensor<?xf32>
  %s = disc.multiply %w, %w2 : tensor<?xf32>
  %sum = disc.reduce %s, dims = [0], kind = sum : (tensor<?xf32>) -> tensor<f32>
  return %w2, %sum : tensor<?xf32>, tensor<f32>
}""")
    if disc.default_target() == "cpu":  # the cuda targets copy with a loop kernel
        assert exe.kernel_counts["copies"] == 1
    for n in (3, 1000):
        w, g = torch.randn(n), torch.randn(n)
        w0 = w.clone()
        new_w, total = exe(w, g, results_into={0: 0})
        assert new_w is None
        torch.testing.assert_close(w, w0 - g)
        torch.testing.assert_close(total, (w0 * (w0 - g)).sum())


def test_a_call_that_fails_after_writing_in_place_is_not_an_invocation_error():
    """A call rejected inside the compiled code (a slice out of bounds) may
    have written its tied arguments already: DiscError, which the front end
    does not retry in eager, instead of InvocationError."""
    exe = disc.compile_mlir("""
func.func @main(%w: tensor<?xf32> {disc.result_into = 0 : i64}, %g: tensor<?xf32>,
                %start: tensor<1xi64>, %limit: tensor<1xi64>) -> (tensor<?xf32>, tensor<?xf32>) {
  %one = arith.constant dense<1> : tensor<1xi64>
  %w2 = disc.subtract %w, %g : tensor<?xf32>
  %0 = disc.real_dynamic_slice %g, %start, %limit, %one : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %w2, %0 : tensor<?xf32>, tensor<?xf32>
}""")
    w, g = torch.zeros(10), torch.arange(10.0)
    _, part = exe(w, g, torch.tensor([2]), torch.tensor([5]), results_into={0: 0})
    assert part.tolist() == [2.0, 3.0, 4.0] and torch.equal(w, -g)
    with pytest.raises(disc.DiscError, match="real_dynamic_slice.*writes result 0 into argument 0 "
                       r"\(%arg0\) in place") as info:
        exe(w, g, torch.tensor([2]), torch.tensor([11]), results_into={0: 0})
    assert not isinstance(info.value, disc.InvocationError)


def test_result_into_malformed_is_a_compile_error():
    with pytest.raises(disc.CompileError, match="'disc.result_into' on argument 0: result 0 has "
                       "type 'tensor<4xf64>', the argument 'tensor<4xf32>'"):
        disc.compile_mlir("""
func.func @main(%p: tensor<4xf32> {disc.result_into = 0 : i64}) -> tensor<4xf64> {
  %0 = disc.convert %p : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}""")


def test_concurrent_calls_from_threads():
    """Compiled code is stateless: one executable serves many threads."""
    exe = compile_once("""
func.func @main(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = disc.tanh %0 : tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}""")
    errors = []

    def worker(seed):
        g = torch.Generator().manual_seed(seed)
        try:
            for i in range(20):
                n = 1 + (seed * 7 + i) % 40
                x, w = torch.randn(n, 16, generator=g), torch.randn(16, n + 1, generator=g)
                y, = exe(x, w)
                torch.testing.assert_close(y, torch.tanh(x @ w), rtol=1e-4, atol=1e-4)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# ---------------------------------------------------------------- compile errors


def test_parse_error_has_line_and_column():
    with pytest.raises(disc.CompileError) as info:
        disc.compile_mlir("func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
                          "  %0 = disc.add %x, : tensor<?xf32>\n"
                          "  return %0 : tensor<?xf32>\n}")
    assert "input.mlir:2:" in str(info.value)
    assert isinstance(info.value, disc.DiscError)


def test_verifier_error_names_op_and_location():
    with pytest.raises(disc.CompileError) as info:
        disc.compile_mlir("""func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.transpose %x, dims = [0, 0] : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}""")
    message = str(info.value)
    assert "input.mlir:2:8" in message and "disc.transpose" in message
    assert "appears twice" in message


def test_unknown_op():
    with pytest.raises(disc.CompileError, match=r"input.mlir:2:\d+.*disc.frobnicate"):
        disc.compile_mlir("""func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "disc.frobnicate"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}""")


def test_no_entry_function():
    with pytest.raises(disc.CompileError, match="several public functions and none is named 'main'"):
        disc.compile_mlir("""
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> { return %x : tensor<?xf32> }
func.func @g(%x: tensor<?xf32>) -> tensor<?xf32> { return %x : tensor<?xf32> }""")
    with pytest.raises(disc.CompileError, match="no public function"):
        disc.compile_mlir("module {}")


def test_unsupported_lowering_is_a_compile_error():
    """Verifies, but no lowering exists (negative edge + interior padding)."""
    with pytest.raises(disc.CompileError, match=r"input.mlir:2:\d+.*disc.pad"):
        disc.compile_mlir("""func.func @main(%x: tensor<?xf32>, %v: tensor<f32>) -> tensor<?xf32> {
  %0 = disc.pad %x, %v, low = [-1], high = [0], interior = [1] : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}""")


def test_non_tensor_entry_argument():
    with pytest.raises(disc.CompileError, match="only ranked tensors"):
        disc.compile_mlir("""func.func @main(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}""")


def test_failed_compilation_is_not_counted():
    before = compilations()
    with pytest.raises(disc.CompileError):
        disc.compile_mlir("not mlir")
    assert compilations() == before


def test_compile_mlir_needs_text():
    with pytest.raises(TypeError):
        disc.compile_mlir(b"func.func @main() { return }")


# ------------------------------------------------------------- invocation errors

ADD = """func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = disc.add %a, %b : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}"""


@pytest.fixture(scope="module")
def add_exe():
    return disc.compile_mlir(ADD)


def test_contradicting_shapes_raise_before_running(add_exe):
    with pytest.raises(disc.InvocationError) as info:
        add_exe(torch.ones(3, 4), torch.ones(5, 4))
    message = str(info.value)
    assert "argument 1" in message and "argument 0" in message
    assert "disc.add at input.mlir:2:8" in message


def test_wrong_static_dim(add_exe):
    with pytest.raises(disc.InvocationError, match=r"argument 0 \(%arg0\) dim 1 is 5, expected 4"):
        add_exe(torch.ones(3, 5), torch.ones(3, 5))


def test_wrong_rank(add_exe):
    with pytest.raises(disc.InvocationError, match=r"argument 1 \(%arg1\) has rank 1, expected 2"):
        add_exe(torch.ones(3, 4), torch.ones(4))


def test_wrong_dtype(add_exe):
    with pytest.raises(disc.InvocationError, match=r"argument 0 \(%arg0\) has dtype f64, expected f32"):
        add_exe(torch.ones(3, 4, dtype=torch.float64), torch.ones(3, 4))


def test_unsupported_dtype(add_exe):
    with pytest.raises(disc.InvocationError, match="argument 0 has a dtype DISC does not support"):
        add_exe(torch.ones(3, 4, dtype=torch.complex64), torch.ones(3, 4))


def test_wrong_argument_count(add_exe):
    with pytest.raises(disc.InvocationError, match="expected 2 inputs, got 1"):
        add_exe(torch.ones(3, 4))


def test_not_a_tensor(add_exe):
    with pytest.raises(disc.InvocationError, match="argument 1 is a list"):
        add_exe(torch.ones(3, 4), [[1.0] * 4])


def test_still_usable_after_errors(add_exe):
    with pytest.raises(disc.InvocationError):
        add_exe(torch.ones(3, 4), torch.ones(5, 4))
    y, = add_exe(torch.ones(2, 4), torch.ones(2, 4))
    assert torch.equal(y, torch.full((2, 4), 2.0))


def test_runtime_check_inside_program():
    """Equalities that only show inside the program (after a reshape) are
    checked by the compiled code and raised as InvocationError."""
    exe = disc.compile_mlir("""func.func @main(%a: tensor<?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %shape = tensor.from_elements %n, %c1 : tensor<2xindex>
  %r = disc.dynamic_reshape %a, %shape : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  %0 = disc.add %r, %b : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}""")
    y, = exe(torch.ones(3), torch.ones(3, 1))
    assert y.shape == (3, 1)
    with pytest.raises(disc.InvocationError, match=r"disc.add at input.mlir:7:\d+: operand 1 dim 0 does not match"):
        exe(torch.ones(3), torch.ones(4, 1))


# ------------------------------------------------------------------- IR dumps


def test_dump_dir_writes_ir_after_each_pass(tmp_path):
    disc.compile_mlir(ADD, dump_dir=str(tmp_path))
    (sub,) = list(tmp_path.iterdir())
    files = sorted(str(p.relative_to(sub)) for p in sub.rglob("*.mlir"))
    assert "000-input.mlir" in files and "999-llvm.mlir" in files
    passes = [f for f in files if "disc-legalize-to-linalg" in f]
    assert passes, files
    assert "disc.add" in (sub / "000-input.mlir").read_text()


def test_dump_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("DISC_DUMP_DIR", str(tmp_path))
    disc.compile_mlir(ADD)
    assert any(tmp_path.rglob("000-input.mlir"))


def _many_kernels_program(n: int) -> str:
    """`n` chained integer powers and sums: n loop nests (kernels) calling
    convert-math-to-funcs' linkonce_odr ipowi helper."""
    lines = ["func.func @main(%x: tensor<?x?xi32>, %e: tensor<?x?xi32>) -> tensor<?x?xi32> {"]
    prev = "%x"
    for i in range(n):
        lines.append(f"  %p{i} = disc.power {prev}, %e : tensor<?x?xi32>")
        lines.append(f"  %t{i} = disc.reverse %p{i}, dims = [{i % 2}] : tensor<?x?xi32>")
        prev = f"%t{i}"
    lines.append(f"  return {prev} : tensor<?x?xi32>")
    lines.append("}")
    return "\n".join(lines)


@pytest.mark.parametrize("parts", ["1", "3", ""])
def test_llvm_compiles_a_big_module_in_parallel_parts(parts, monkeypatch, tmp_path):
    """A module of many kernels is optimised and compiled in parts, one
    thread each (docs/architecture.md, "Compile time"); the result is the
    same program, helpers shared between parts included."""
    monkeypatch.setenv("DISC_LLVM_PARTS", parts)
    monkeypatch.setenv("DISC_CACHE", "0")
    before = compilations()
    exe = disc.compile_mlir(_many_kernels_program(60), dump_dir=str(tmp_path))
    assert compilations() == before + 1
    (dump,) = list(tmp_path.iterdir())
    split = sorted(p.name for p in dump.glob("1001-llvm-ir-optimized.part*.ll"))
    if parts:
        assert len(split) == (0 if parts == "1" else int(parts)), split
    else:  # one part per 24 defined functions (kernels and their bodies)
        assert 2 <= len(split) <= 8, split
    g = torch.Generator().manual_seed(0)
    for shape in [(3, 4), (1, 7), (5, 1)]:
        x = torch.randint(-3, 4, shape, generator=g, dtype=torch.int32)
        e = torch.randint(0, 3, shape, generator=g, dtype=torch.int32)
        want = x
        for i in range(60):
            want = torch.flip(torch.pow(want, e), [i % 2])
        (got,) = exe(x, e)
        assert torch.equal(got, want)


def test_llvm_parts_setting_is_checked(monkeypatch):
    monkeypatch.setenv("DISC_LLVM_PARTS", "0")
    monkeypatch.setenv("DISC_CACHE", "0")
    with pytest.raises(ValueError, match="DISC_LLVM_PARTS must be 1 to 64, got '0'"):
        disc.compile_mlir(_many_kernels_program(1))
