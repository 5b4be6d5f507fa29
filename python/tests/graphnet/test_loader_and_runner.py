"""The GraphNet sample loader and the correctness runner, on synthetic
samples written here in GraphNet's format (model.py with a GraphModule,
weight_meta.py / input_meta.py with one class per tensor)."""
from __future__ import annotations

import textwrap

import torch

from disc.bench.correctness import run_isolated
from disc.bench.graphnet import find_samples, load_sample

MODEL = """
import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: torch.Tensor, L_idx_: torch.Tensor, L_w_: torch.nn.parameter.Parameter,
                L_bn_buffers_running_var_: torch.Tensor):
        h = torch.nn.functional.linear(L_x_, L_w_)
        g = h[L_idx_] / (L_bn_buffers_running_var_ + 1e-5).sqrt()
        return (BODY,)
"""

META = """
class Program_weight_tensor_meta_{cls}:
    name = "{name}"
    shape = {shape}
    dtype = "{dtype}"
    device = "cpu"
    mean = {mean}
    std = {std}
    data = {data}
{extra}
"""


def write_sample(root, name="syn/sample", body="g.relu()"):
    d = root / name
    d.mkdir(parents=True)
    (d / "model.py").write_text(MODEL.replace("BODY", body))
    inputs = [
        META.format(cls="L_x_", name="L_x_", shape=[6, 4], dtype="torch.float32", mean=0.5, std=2.0,
                    data=None, extra=""),
        META.format(cls="L_idx_", name="L_idx_", shape=[5], dtype="torch.int64", mean=None, std=None,
                    data=None, extra="    min_val = 0\n    max_val = 5\n"),
    ]
    weights = [
        META.format(cls="L_w_", name="L_w_", shape=[3, 4], dtype="torch.float32", mean=0.0, std=0.1,
                    data=None, extra=""),
        META.format(cls="L_var_", name="L_bn_buffers_running_var_", shape=[3], dtype="torch.float32",
                    mean=0.0, std=1.0, data=None, extra=""),
    ]
    (d / "input_meta.py").write_text(textwrap.dedent("\n".join(inputs)))
    (d / "weight_meta.py").write_text(textwrap.dedent("\n".join(weights)))
    return d


def test_loader_builds_inputs_from_metadata(tmp_path):
    d = write_sample(tmp_path)
    s = load_sample(str(d))
    assert s.arg_names == ["L_x_", "L_idx_", "L_w_", "L_bn_buffers_running_var_"]
    x, idx, w, var = s.inputs
    assert x.shape == (6, 4) and x.dtype == torch.float32
    assert abs(x.mean().item() - 0.5) < 2.0 and x.std().item() > 0.5
    assert idx.dtype == torch.int64 and idx.min() >= 0 and idx.max() <= 5
    assert (var >= 0).all()  # variances are never negative
    # Seeded: the same inputs every time.
    again = load_sample(str(d))
    assert all(torch.equal(a, b) for a, b in zip(s.inputs, again.inputs))
    assert find_samples([str(tmp_path)]) == [str(d)]
    assert s.name == "sample"  # the path has no "samples/" folder to name it from


def test_runner_outcomes(tmp_path):
    good = write_sample(tmp_path, "syn/good")
    record = run_isolated(str(good), dynamic=None, timeout=300)
    assert record["outcome"] == "correct", record
    assert record["fallback_nodes"] == 0 and record["compiled_nodes"] > 0
    # A sample that raises in eager is an "error" with the exception named,
    # not a crash of the runner.
    bad = write_sample(tmp_path, "syn/bad", body="g.view(7, 7)")
    record = run_isolated(str(bad), dynamic=None, timeout=300)
    assert record["outcome"] == "error" and "RuntimeError" in record["detail"], record
    # A hang is a "timeout".
    slow = write_sample(tmp_path, "syn/slow", body="__import__('time').sleep(60) or g")
    record = run_isolated(str(slow), dynamic=None, timeout=5)
    assert record["outcome"] == "timeout", record
    # A process killed by a signal (a segfault in compiled code, say) is a
    # "crash".
    crash = write_sample(tmp_path, "syn/crash",
                         body="__import__('os').kill(__import__('os').getpid(), 11) or g")
    record = run_isolated(str(crash), dynamic=None, timeout=300)
    assert record["outcome"] == "crash" and "exit status -11" in record["detail"], record
