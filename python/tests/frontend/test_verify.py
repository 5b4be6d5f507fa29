"""DISC_VERIFY / verify=True: each compiled partition is checked against
its FX graph run in eager."""
import pytest
import torch

import disc
from disc.frontend.backend import DiscPartition
from disc.frontend.importer import ArgPlan


def test_verify_passes_on_a_correct_model(monkeypatch):
    checks = []
    original = DiscPartition._verify
    monkeypatch.setattr(DiscPartition, "_verify",
                        lambda self, *a: (checks.append(self.partition_name), original(self, *a)))

    def fn(x, w):
        return torch.softmax(x @ w, dim=-1) * 2.0

    compiled = disc.compile(fn, verify=True)
    w = torch.randn(8, 5)
    for n in (3, 6, 11):
        x = torch.randn(n, 8)
        torch.testing.assert_close(compiled(x, w), fn(x, w))
    assert len(checks) == 3


class _Returning:
    """An executable that returns fixed outputs (DiscPartition runs an
    Executable through _cuda_device and _run)."""

    target = "cpu"

    def __init__(self, outputs):
        self.outputs = outputs

    def _cuda_device(self):
        return -1

    def _run(self, arguments, into, device, share_groups=()):
        return self.outputs


def _partition(outputs, reference, dump_dir=None):
    plan = [ArgPlan("tensor", 0)]
    return DiscPartition(_Returning(outputs), plan, len(outputs), False, "graph 7 partition-0",
                         reference, verify=True, dump_dir=dump_dir)


def test_verify_names_the_partition_output_and_saves_inputs(tmp_path):
    x = torch.arange(6.0).reshape(2, 3)
    reference = lambda x: (x + 1, x * 2)  # noqa: E731  the partition's FX graph
    wrong = (x + 1, (x * 2).index_put((torch.tensor([1]), torch.tensor([2])), torch.tensor(99.0)))
    part = _partition(wrong, reference, str(tmp_path))
    with pytest.raises(disc.VerificationError) as info:
        part(x)
    message = str(info.value)
    assert "graph 7 partition-0" in message and "output 1" in message and "output 0" not in message
    assert "at (1, 2)" in message and "1 of 6 elements off" in message
    saved = torch.load(tmp_path / "inputs.pt")
    assert torch.equal(saved[0], x)


def test_verify_reports_shape_mismatch():
    x = torch.ones(2, 3)
    part = _partition((torch.ones(3, 2),), lambda x: (x,))
    with pytest.raises(disc.VerificationError, match=r"output 0 .*DISC gives torch.float32\[3, 2\]"):
        part(x)
