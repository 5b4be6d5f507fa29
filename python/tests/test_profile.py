"""DISC_PROFILE=1: every kernel, library call and copy of an executable is
timed (disc-profile-calls), and disc.profile() adds calls and wall time up
per kernel. The profiled executable must still be correct at every shape,
compile once, and count exactly the calls made."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

import disc
from conftest import compilations


class MlpWithNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(16, 64)
        self.norm = torch.nn.LayerNorm(64)
        self.down = torch.nn.Linear(64, 16)

    def forward(self, x):
        return self.down(self.norm(torch.nn.functional.gelu(self.up(x)))).t().contiguous()


def _run(monkeypatch, setting: str | None, shapes):
    if setting is None:
        monkeypatch.delenv("DISC_PROFILE", raising=False)
    else:
        monkeypatch.setenv("DISC_PROFILE", setting)
    torch.manual_seed(0)
    model = MlpWithNorm().eval()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="disc", dynamic=True)
    before = compilations()
    with torch.no_grad():
        compiled(torch.randn(shapes[0]))  # compile, build oneDNN primitives
        disc.reset_profile()
        for shape in shapes:
            x = torch.randn(shape)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4,
                                       msg=lambda m: f"{shape}: {m}")
    assert compilations() - before == 1, "one compilation for every shape"
    return disc.profile()


def test_profile_counts_every_kernel_call(monkeypatch):
    shapes = [(3, 16), (8, 16), (37, 16)]
    rows = _run(monkeypatch, "1", shapes)
    names = [row["name"] for row in rows]
    matmuls = [n for n in names if n.startswith("library matmul_f32 at graph")]
    loops = [n for n in names if n.startswith("loop main_kernel_")]
    assert len(matmuls) == 2, names
    assert loops, names
    for row in rows:
        assert row["calls"] == len(shapes), row
        assert row["seconds"] > 0, row
    assert [r["seconds"] for r in rows] == sorted((r["seconds"] for r in rows), reverse=True)
    table = disc.profile_table(limit=2)
    lines = table.splitlines()
    assert len(lines) == 5 and rows[0]["name"] in lines[1] and rows[1]["name"] in lines[2], table
    assert f"({len(rows) - 2} more)" in lines[3] and f"total ({len(rows)} kernels)" in lines[4], table


def test_reset_forgets_the_profile(monkeypatch):
    _run(monkeypatch, "1", [(4, 16)])
    assert disc.profile()
    disc.reset_profile()
    assert disc.profile() == []


@pytest.mark.parametrize("setting", [None, "0"])
def test_off_by_default(monkeypatch, setting):
    assert _run(monkeypatch, setting, [(4, 16), (9, 16)]) == []


def test_bad_setting_is_an_error(monkeypatch):
    monkeypatch.setenv("DISC_PROFILE", "on")
    with pytest.raises(ValueError, match="DISC_PROFILE must be 0 or 1, got 'on'"):
        disc.compile_mlir("""
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = disc.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}""")


def test_table_printed_at_exit():
    """The way users run it: DISC_PROFILE=1 python script.py prints the
    table to stderr when the process ends."""
    script = """
import disc, torch
exe = disc.compile_mlir('''
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.exponential %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}''')
for n in (5, 50):
    x = torch.randn(n)
    torch.testing.assert_close(exe(x)[0], x.exp())
"""
    import os
    env = dict(os.environ, DISC_PROFILE="1")
    result = subprocess.run([sys.executable, "-c", script], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "[disc] profile (DISC_PROFILE=1)" in result.stderr, result.stderr
    assert "loop main_kernel_0 at input.mlir:3:" in result.stderr, result.stderr
    assert "total (1 kernel)" in result.stderr, result.stderr
