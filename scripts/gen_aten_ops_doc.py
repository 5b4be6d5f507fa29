"""Writes the ATen section of docs/ops.md from the front end's lowering table
(python/disc/frontend/lowerings.py). Run after adding a lowering:

    .venv/bin/python scripts/gen_aten_ops_doc.py

python/tests/frontend/test_ops_doc.py fails when an op is missing here.
"""
import os
import re

from disc.frontend import lowerings

DOC = os.path.join(os.path.dirname(__file__), "..", "docs", "ops.md")
BEGIN, END = "<!-- BEGIN ATEN OPS (generated) -->", "<!-- END ATEN OPS -->"

FLOAT_ONLY = {"cos", "sin", "tan", "tanh", "exp", "expm1", "log", "log1p", "erf", "sqrt", "rsqrt",
              "sigmoid", "reciprocal", "atan", "atan2", "isfinite", "isinf", "isnan",
              "var", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
              "adaptive_avg_pool2d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "leaky_relu",
              "hardtanh", "rand", "rand_like"}
INT_BOOL = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
            "bitwise_right_shift"}
LIBRARY = {"mm", "bmm", "addmm", "convolution"}
HOST = {"sym_size", "sym_numel", "sym_stride", "_assert_scalar", "_assert_tensor_metadata",
        "sym_constrain_range_for_size"}
ALL = "f16, bf16, f32, f64, int8-64, uint8, bool"


def dtypes(name: str) -> str:
    base = name.split(".")[1]
    if base in HOST:
        return "(host shape code)"
    if base in LIBRARY:
        return "f32, f16, bf16 (oneDNN); int8-64 (loop nests)"
    if base == "convolution_backward":
        return ("f32, f16, bf16: the kernel gradient alone (oneDNN's backward-weights "
                "primitive; cuDNN's backward filter on cuda; docs/training.md)")
    if base == "sort":
        return ALL + " (runtime stable sort)"
    if base == "topk":
        return ALL + " (the sort's first k; equal values: lowest index first)"
    if base in ("cummax", "cummin"):
        return ALL + " (two scans: the values, then the last index reaching them)"
    if base == "_scaled_dot_product_flash_attention_for_cpu":
        return "f32, f16, bf16 (runtime attention, f32 inside)"
    if base in FLOAT_ONLY:
        return "f16, bf16, f32, f64"
    if base in INT_BOOL:
        return "int8-64, uint8, bool"
    return ALL


def conditions(lowering) -> str:
    check = lowering.check
    if check is None:
        return ""
    src = open(check.__code__.co_filename).read().splitlines()
    body = src[check.__code__.co_firstlineno:check.__code__.co_firstlineno + 40]
    reasons = []
    for line in body:
        if line and not line.startswith((" ", "\t")):
            break
        m = re.search(r'return f?"([^"]+)"', line)
        if m:
            reasons.append(m.group(1).replace("{", "").replace("}", "").replace("|", "/"))
    return "falls back: " + "; ".join(dict.fromkeys(reasons)) if reasons else "checked"


def main():
    rows = ["| ATen / prims op | dtypes | notes |", "|---|---|---|"]
    for target, lowering in sorted(lowerings.LOWERINGS.items(), key=lambda kv: str(kv[0])):
        rows.append(f"| `{target}` | {dtypes(str(target))} | {conditions(lowering)} |")
    section = "\n".join([BEGIN, "", *rows, "", END])
    text = open(DOC).read()
    if BEGIN in text:
        text = text[:text.index(BEGIN)] + section + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(DOC, "w") as f:
        f.write(text)
    print(f"{len(lowerings.LOWERINGS)} ops written to {os.path.normpath(DOC)}")


if __name__ == "__main__":
    main()
