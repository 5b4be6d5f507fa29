"""The mutation fuzzer (fuzz/disc_fuzz.py) in CI: the kept corpus replays
with only the expected outcomes (compiled and ran, CompileError or
InvocationError), and a bounded fuzz run finds nothing, plain and
differential (the cuda-emulated build against the CPU's). A finding fails the
test; its program and report are in fuzz/findings/ and the seed is printed
(`disc_fuzz.py --seed N --seconds S` reproduces the run)."""
from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FUZZ = os.path.join(ROOT, "fuzz", "disc_fuzz.py")
TORCH_FUZZ = os.path.join(ROOT, "fuzz", "torch_fuzz.py")


def _run(*args, timeout, fuzzer=FUZZ):
    proc = subprocess.run([sys.executable, fuzzer, *args], capture_output=True, text=True,
                          timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


def test_corpus_replays_clean(tmp_path):
    corpus = sorted(glob.glob(os.path.join(ROOT, "fuzz", "corpus", "*.mlir")))
    assert corpus, "the corpus is kept in fuzz/corpus"
    code, out = _run("--replay", *corpus, "--findings", str(tmp_path), timeout=1800)
    assert code == 0, out[-4000:]
    assert f"{len(corpus)} executions" in out, out[-2000:]


def test_bounded_fuzz_run(tmp_path):
    seconds = os.environ.get("DISC_FUZZ_SECONDS", "30")
    seed = os.environ.get("DISC_FUZZ_SEED", str(int(time.time()) // 86400))  # one per day
    code, out = _run("--seconds", seconds, "--seed", seed, "--findings",
                     os.path.join(ROOT, "fuzz", "findings"), timeout=float(seconds) + 600)
    print(out[-3000:])
    assert code == 0, f"the fuzzer found something (seed {seed}):\n{out[-4000:]}"
    assert "executions in" in out


def test_bounded_differential_fuzz_run(tmp_path):
    """The cuda target's block/thread mapping against the CPU build on the
    same mutants and inputs (`--differential cuda-emulated`): a difference
    in outcome or results, or a CompileError of the cuda build that does
    not name the target, is a finding."""
    seconds = os.environ.get("DISC_FUZZ_DIFF_SECONDS", "30")
    seed = os.environ.get("DISC_FUZZ_SEED", str(int(time.time()) // 86400))
    code, out = _run("--seconds", seconds, "--seed", seed, "--differential", "cuda-emulated",
                     "--findings", os.path.join(ROOT, "fuzz", "findings"),
                     timeout=float(seconds) + 600)
    print(out[-3000:])
    assert code == 0, f"the differential fuzzer found something (seed {seed}):\n{out[-4000:]}"
    assert "executions in" in out


def test_seeds_option_takes_input_programs_only(tmp_path):
    """`--seeds DIR` (real models' partitions as seeds): disc-level programs
    are taken, lowered ones (a dump's later files) left out, and a directory
    without a disc-level program is an error rather than a silent run of
    the usual seeds."""
    dump = tmp_path / "dump" / "partition-0"
    dump.mkdir(parents=True)
    (dump / "000-input.mlir").write_text(
        "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
        "  %0 = disc.add %x, %x : tensor<?xf32>\n"
        "  return %0 : tensor<?xf32>\n}\n")
    (dump / "040-lowered.mlir").write_text(
        "func.func @main(%x: memref<?xf32>) {\n  return\n}\n")
    code, out = _run("--executions", "2", "--seed", "1", "--seeds", str(tmp_path / "dump"),
                     "--findings", str(tmp_path / "findings"), timeout=600)
    assert code == 0, out[-4000:]
    assert "1 programs (1 pipeline-internal files left out)" in out, out[-2000:]
    lowered_only = tmp_path / "lowered"
    lowered_only.mkdir()
    (lowered_only / "a.mlir").write_text((dump / "040-lowered.mlir").read_text())
    code, out = _run("--executions", "1", "--seeds", str(lowered_only),
                     "--findings", str(tmp_path / "findings"), timeout=600)
    assert code != 0 and "no disc-level *.mlir program there (1 .mlir files)" in out, out[-2000:]


def test_bounded_torch_fuzz_run():
    """Random PyTorch programs (fuzz/torch_fuzz.py) through
    torch.compile(backend="disc", dynamic=True) at three sizes each, against
    eager: a mismatch, an exception eager does not raise, a crash or a hang
    is a finding. A quarter of them are training programs (their gradients
    compared too)."""
    seconds = os.environ.get("DISC_TORCH_FUZZ_SECONDS", "30")
    seed = os.environ.get("DISC_FUZZ_SEED", str(int(time.time()) // 86400))
    code, out = _run("--seconds", seconds, "--seed", seed, "--grad", "0.25", "--findings",
                     os.path.join(ROOT, "fuzz", "findings"), timeout=float(seconds) + 600,
                     fuzzer=TORCH_FUZZ)
    print(out[-3000:])
    assert code == 0, f"the PyTorch-level fuzzer found something (seed {seed}):\n{out[-4000:]}"
    assert "programs in" in out


def test_torch_fuzz_finds_a_wrong_result(tmp_path):
    """The fuzzer's comparison can fail: a program whose compiled result
    cannot match eager's (dropout's masks come from DISC's own generator)
    is a mismatch finding, written as a runnable file that --replay runs."""
    sys.path.insert(0, os.path.dirname(TORCH_FUZZ))
    import torch_fuzz
    program = {"source": "def program(x0):\n    v1 = torch.nn.functional.dropout(x0, 0.5, True)\n"
                         "    return (v1,)\n",
               "inputs": [{"name": "x0", "shape": ["s0", 8], "dtype": "float32", "kind": "data"}],
               "grad": False}
    path = tmp_path / "dropout.py"
    path.write_text(torch_fuzz.program_file(program))
    assert torch_fuzz.parse_program_file(path.read_text()) == program
    code, out = _run("--replay", str(path), "--special", "0", "--findings", str(tmp_path / "found"),
                     timeout=600, fuzzer=TORCH_FUZZ)
    assert code == 1 and "FINDING mismatch" in out, out[-3000:]
    found = list((tmp_path / "found").glob("mismatch-*.py"))
    assert len(found) == 1 and (tmp_path / "found" / (found[0].stem + ".txt")).exists()


def test_torch_fuzz_compares_gradients(tmp_path):
    """In --grad programs the gradients are compared too: here the forward
    is x0 exactly (v1 - v1.detach() is 0) while the gradient is dropout's
    mask, which DISC draws from its own generator, so only output 1 (x0's
    gradient) can differ. And a gradient that matches passes: x0's
    gradient through a scatter-add (index_add's backward is a gather)
    through the training path."""
    sys.path.insert(0, os.path.dirname(TORCH_FUZZ))
    import torch_fuzz
    data = {"name": "x0", "shape": ["s0", 8], "dtype": "float32", "kind": "data"}
    index = {"name": "x1", "shape": ["s0"], "dtype": "int64", "kind": "index", "high": 3}
    masked = {"source": "def program(x0):\n"
                        "    v1 = torch.nn.functional.dropout(x0, 0.5, True)\n"
                        "    v2 = x0.detach() + (v1 - v1.detach())\n"
                        "    return (v2,)\n",
              "inputs": [data], "grad": True}
    scattered = {"source": "def program(x0, x1):\n"
                           "    v1 = x0.new_zeros((3, 8)).index_add(0, x1, x0.sin())\n"
                           "    return (v1 * v1,)\n",
                 "inputs": [data, index], "grad": True}
    for name, program in (("masked", masked), ("scattered", scattered)):
        (tmp_path / f"{name}.py").write_text(torch_fuzz.program_file(program))
        assert torch_fuzz.parse_program_file((tmp_path / f"{name}.py").read_text()) == program
    code, out = _run("--replay", str(tmp_path / "masked.py"), str(tmp_path / "scattered.py"),
                     "--findings", str(tmp_path / "found"), timeout=600, fuzzer=TORCH_FUZZ)
    assert code == 1 and "masked.py: mismatch cpu: output 1:" in out, out[-3000:]
    assert "scattered.py: ran" in out, out[-3000:]
    assert re.search(r"training graphs [1-9]", out), out[-3000:]
