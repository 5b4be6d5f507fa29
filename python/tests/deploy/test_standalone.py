"""The standalone runtime: an exported model run from a C++ program and from
disc-run, built and linked against the installed package the way
examples/standalone/README.md says, with no MLIR, LLVM or Python in the
runtime library's dependencies or symbols."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

import disc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
RUNTIME = disc.runtime_dir()
LIBRARY = os.path.join(RUNTIME, "libdisc_runtime.so")


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    """The example's artifact and the sums export_model.py expects."""
    path = tmp_path_factory.mktemp("standalone") / "resnet.disc"
    result = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "standalone",
                                                          "export_model.py"), str(path)],
                            capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, DISC_CACHE="0"))
    assert result.returncode == 0, result.stderr[-3000:]
    sums = {int(b): float(s) for b, s in re.findall(r"batch (\d+): output .* sum (\S+)",
                                                    result.stdout)}
    assert sorted(sums) == [1, 3, 8], result.stdout
    return path, sums


def _dependencies(binary: str) -> str:
    return subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout


def _no_compiler_in(binary: str) -> None:
    deps = _dependencies(binary)
    for lib in ("libMLIR", "libLLVM", "libpython", "libclang"):
        assert lib not in deps, f"{binary} depends on {lib}:\n{deps}"
    symbols = subprocess.run(["nm", "-DC", binary], capture_output=True, text=True,
                             check=True).stdout
    for namespace in ("mlir::", "llvm::", "Py_", "lld::"):
        assert namespace not in symbols, f"{binary} has {namespace} symbols"


def test_runtime_library_links_no_compiler():
    _no_compiler_in(LIBRARY)
    _no_compiler_in(os.path.join(RUNTIME, "bin", "disc-run"))
    runtime_module = disc._runtime.__file__
    assert "libMLIR" not in _dependencies(runtime_module)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_cpp_program_runs_the_artifact_at_three_shapes(resnet, tmp_path):
    artifact, sums = resnet
    program = tmp_path / "run-model"
    build = subprocess.run(["g++", "-std=c++17", "-O1",
                            os.path.join(ROOT, "examples", "standalone", "main.cpp"),
                            f"-I{RUNTIME}/include", f"-L{RUNTIME}", "-ldisc_runtime",
                            f"-Wl,-rpath,{RUNTIME}", "-o", str(program)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    _no_compiler_in(str(program))
    result = subprocess.run([str(program), str(artifact)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    got = {int(b): (shape, float(s)) for b, shape, s in
           re.findall(r"batch (\d+): output \[(.*)\] sum (\S+)", result.stdout)}
    for batch, want in sums.items():
        shape, value = got[batch]
        assert shape == f"{batch}, 10"
        assert value == pytest.approx(want, rel=1e-4, abs=1e-4)
    # Errors: a missing file and a wrong shape, as messages, not crashes.
    missing = subprocess.run([str(program), str(tmp_path / "none.disc")],
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "cannot open" in missing.stderr


def test_disc_run_prints_outputs_and_times(resnet):
    artifact, _ = resnet
    tool = os.path.join(RUNTIME, "bin", "disc-run")
    result = subprocess.run([tool, str(artifact), "--shapes", "5x3x32x32", "--repeat", "3"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "output 0: f32[5, 10]" in result.stdout
    assert re.search(r"median [\d.]+ ms over 3 calls", result.stdout)
    bad = subprocess.run([tool, str(artifact), "--shapes", "5x4x32x32"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and "dim 1 is 4, expected 3" in bad.stderr
    dynamic = subprocess.run([tool, str(artifact)], capture_output=True, text=True)
    assert dynamic.returncode == 1 and "give --shapes" in dynamic.stderr
