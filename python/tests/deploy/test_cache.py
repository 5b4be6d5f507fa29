"""The persistent compile cache and the shared Redis cache: a second process
compiles nothing; corrupt, truncated or foreign entries are detected, logged
and compiled again; a remote cache that is down or slow is a warning and a
local compile."""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))

# Compiles two programs with compile_mlir and, unless DISC_TEST_NO_TORCH_COMPILE
# is set, two more through torch.compile (the zoo MLP, batch sizes 3 and
# 17); checks them against eager; prints the cache counters.
WORKLOAD = textwrap.dedent("""
    import json, os, sys, warnings
    import torch
    sys.path.insert(0, os.path.join({root!r}, "examples"))
    import disc, zoo
    torch.manual_seed(0)
    for op, ref in (("tanh", torch.tanh), ("exponential", torch.exp)):
        exe = disc.compile_mlir(
            "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {{\\n"
            "  %0 = disc." + op + " %x : tensor<?xf32>\\n"
            "  return %0 : tensor<?xf32>\\n}}\\n")
        x = torch.randn(10)
        torch.testing.assert_close(exe(x)[0], ref(x))
    if not os.environ.get("DISC_TEST_NO_TORCH_COMPILE"):
        model = zoo.build("mlp").eval()
        compiled = torch.compile(model, backend="disc", dynamic=True)
        with torch.no_grad():
            for b in (3, 17):
                x = torch.randn(b, 64)
                torch.testing.assert_close(compiled(x), model(x), rtol=2e-4, atol=2e-4)
    s = disc.stats()
    print(json.dumps({{k: s[k] for k in ("compilations", "cache_hits", "cache_misses",
                                         "cache_errors", "remote_cache_hits",
                                         "remote_cache_errors")}}))
""").format(root=ROOT)
# The tests of damage, concurrency and keys need no torch.compile.
MLIR_ONLY = {"DISC_TEST_NO_TORCH_COMPILE": "1"}


def run_workload(cache_dir, **env):
    full = dict(os.environ, DISC_CACHE="1", DISC_CACHE_DIR=str(cache_dir), DISC_LOG="cache")
    full.pop("DISC_REMOTE_CACHE", None)
    full.update(env)
    result = subprocess.run([sys.executable, "-c", WORKLOAD], capture_output=True, text=True,
                            env=full, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    import json

    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def entries(cache_dir):
    return sorted(glob.glob(os.path.join(str(cache_dir), "*", "*.disc")))


def test_second_process_compiles_nothing(tmp_path):
    cold, _ = run_workload(tmp_path)
    assert cold["compilations"] >= 2 and cold["cache_hits"] == 0
    assert cold["cache_misses"] == cold["compilations"]
    assert len(entries(tmp_path)) == cold["compilations"]
    warm, log = run_workload(tmp_path)
    assert warm["compilations"] == 0, log
    assert warm["cache_hits"] == cold["compilations"]
    assert warm["cache_misses"] == 0


# Each run damages its two entries in two ways (CI time: four kinds, two
# runs).
@pytest.mark.parametrize("damages", [("flip", "truncate"), ("garbage", "empty")],
                         ids=["flip-truncate", "garbage-empty"])
def test_damaged_entries_are_detected_and_compiled_again(tmp_path, damages):
    cold, _ = run_workload(tmp_path, **MLIR_ONLY)
    paths = sorted(entries(tmp_path))
    assert len(paths) == len(damages)
    for path, damage in zip(paths, damages):
        data = open(path, "rb").read()
        if damage == "flip":
            i = len(data) // 2
            data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
            while data == open(path, "rb").read():  # padding: flip another
                i += 1
                data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
        elif damage == "truncate":
            data = data[: len(data) - 100]
        elif damage == "garbage":
            data = os.urandom(len(data))
        else:
            data = b""
        open(path, "wb").write(data)
    warm, log = run_workload(tmp_path, **MLIR_ONLY)
    n = cold["compilations"]
    assert n == 2
    assert warm["cache_errors"] == n and warm["compilations"] == n, log
    assert "is unusable, compiling again" in log
    # The entries were replaced by good ones.
    again, _ = run_workload(tmp_path, **MLIR_ONLY)
    assert again["compilations"] == 0 and again["cache_errors"] == 0


def test_concurrent_writers_leave_valid_entries(tmp_path):
    env = dict(os.environ, DISC_CACHE="1", DISC_CACHE_DIR=str(tmp_path), **MLIR_ONLY)
    procs = [subprocess.Popen([sys.executable, "-c", WORKLOAD], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
    assert not glob.glob(os.path.join(str(tmp_path), "*", ".tmp-*")), "temporary files left"
    warm, log = run_workload(tmp_path, **MLIR_ONLY)
    assert warm["compilations"] == 0 and warm["cache_errors"] == 0, log


def test_cache_off_and_key_changes(tmp_path):
    off, _ = run_workload(tmp_path, DISC_CACHE="0", **MLIR_ONLY)
    assert off["cache_hits"] == 0 and off["cache_misses"] == 0 and not entries(tmp_path)
    cold, _ = run_workload(tmp_path, **MLIR_ONLY)
    # An option that changes the code is part of the key.
    checks, _ = run_workload(tmp_path, DISC_RUNTIME_CHECKS="1", **MLIR_ONLY)
    assert checks["cache_hits"] == 0 and checks["compilations"] == cold["compilations"]


# ------------------------------------------------------------------- Redis

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def redis_url(tmp_path):
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (scripts/setup.sh installs it)")
    pytest.importorskip("redis")
    port = free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("redis-server did not start")
        yield f"redis://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_remote_cache_shares_compilations_across_machines(tmp_path, redis_url):
    first, _ = run_workload(tmp_path / "a", DISC_REMOTE_CACHE=redis_url)
    assert first["compilations"] >= 2 and first["remote_cache_errors"] == 0
    # Another "machine": an empty local cache, the same remote.
    second, log = run_workload(tmp_path / "b", DISC_REMOTE_CACHE=redis_url)
    assert second["compilations"] == 0, log
    assert second["remote_cache_hits"] == first["compilations"]
    assert len(entries(tmp_path / "b")) == first["compilations"], "remote hits kept locally"


def test_remote_cache_down_is_a_warning_and_a_local_compile(tmp_path):
    pytest.importorskip("redis")
    url = f"redis://127.0.0.1:{free_port()}"  # nothing listens there
    stats, log = run_workload(tmp_path, DISC_REMOTE_CACHE=url, **MLIR_ONLY)
    assert stats["compilations"] >= 2 and stats["remote_cache_errors"] >= 1
    assert "compiling locally" in log


def test_remote_cache_that_never_answers_times_out(tmp_path):
    pytest.importorskip("redis")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    held = []
    stop = threading.Event()

    def accept():  # accept and never answer
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        start = time.time()
        stats, log = run_workload(tmp_path, DISC_REMOTE_CACHE=f"redis://127.0.0.1:{port}",
                                  **MLIR_ONLY)
        assert stats["compilations"] >= 2 and stats["remote_cache_errors"] >= 1
        assert "compiling locally" in log
        assert time.time() - start < 120
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()
