"""docs/ops.md lists every ATen/prims op the front end lowers."""
import os

from disc.frontend.lowerings import LOWERINGS

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "ops.md")


def test_every_lowered_op_is_documented():
    text = open(DOC).read()
    missing = sorted(str(t) for t in LOWERINGS if f"`{t}`" not in text)
    assert not missing, f"run scripts/gen_aten_ops_doc.py; missing from docs/ops.md: {missing}"
