"""Random PyTorch programs through torch.compile(backend="disc"), against eager.

fuzz/disc_fuzz.py mutates programs of the disc dialect; this fuzzer starts
one layer up, where users start: it writes random Python functions of
PyTorch ops (pointwise math, broadcasting, reductions, softmax and norms,
views and slices, concatenation, padding, matmul, convolution, pooling,
resampling and attention, casts to half/bfloat16 and integers,
comparisons and masks, gathers, embeddings, index_add/index_put, sorting,
in-place updates of clones), with every size but a few symbolic, and runs
each through `torch.compile(fn, backend="disc", dynamic=True)` at three
sets of sizes (5-23, never 0 or 1, which PyTorch specialises). So the
front end (Dynamo's graphs, AOTAutograd's decompositions, DISC's importer
and its shape constraints) is fuzzed together with the compiler and the
runtime. With --grad F, a share F of the programs (float32 only, no
NaN/inf inputs) also compare the gradients of sum(output * a fixed random
tensor) with respect to every float input: those compile as training
graphs (AOTAutograd's joint graph, split into a forward and a backward:
docs/training.md).

Each program runs in a forked child (disc_fuzz.py's worker). Outcomes:

    ran         every call matched eager (the GraphNet harness's tolerance,
                NaN and inf in the same places; integers and bools exact)
    invalid     eager itself raised: the generator wrote a program PyTorch
                rejects (counted; its reason printed once)
    recompiled  a later call compiled again (Dynamo's guards; counted and
                printed once, not a finding: DISC does not decide it)

and the findings, written to --findings as a runnable .py file with a
.txt report: `mismatch` (a result differs from eager), `unexpected` (the
compiled call raised where eager did not), `crash`, `hang`. With
--differential cuda-emulated each program is also compiled and called
through the cuda target's block/thread mapping on the CPU (DISC_TARGET),
against eager too.

    .venv/bin/python fuzz/torch_fuzz.py --seconds 600 --seed 1
    .venv/bin/python fuzz/torch_fuzz.py --seconds 600 --seed 1 --grad 1
    .venv/bin/python fuzz/torch_fuzz.py --replay fuzz/findings/mismatch-....py
    python fuzz/findings/mismatch-....py     # the program, eager and disc, alone
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from disc_fuzz import Worker, add_run_arguments, run_budget, save_finding  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYMBOLS = ("s0", "s1", "s2")
FLOATS = ("float32", "float16", "bfloat16")

# ------------------------------------------------------------- the generator
#
# A value is (name, shape, dtype). A dim is an int (static) or a string (a
# symbolic size: "s0", or an expression such as "(s0*4)" that is equal only
# to itself); the generator uses shapes to pick ops that apply, never to
# compute sizes (the program reads them from its tensors).

UNARY = [
    "torch.tanh({x})", "torch.sigmoid({x})", "torch.relu({x})", "F.gelu({x})",
    "F.gelu({x}, approximate='tanh')", "F.silu({x})", "torch.exp({x})",
    "torch.sqrt({x}.abs())", "torch.log1p({x}.abs())", "torch.sin({x})", "torch.cos({x})",
    "{x}.abs()", "-{x}", "{x} * 0.5 + 1.0", "torch.rsqrt({x}.abs() + 1)", "torch.erf({x})",
    "torch.floor({x})", "{x}.clamp(-1, 1)", "F.leaky_relu({x}, 0.1)", "F.hardswish({x})",
    "F.softplus({x})", "torch.square({x})", "torch.reciprocal({x}.abs() + 1)",
    "torch.sign({x})", "F.elu({x})", "torch.atan({x})", "F.hardsigmoid({x})",
    "F.mish({x})", "torch.log({x}.abs() + 1e-3)", "{x} ** 3", "torch.round({x} * 4)",
]
# Step functions: thresholds at every integer (see Program.full_precision).
STEPS = ["torch.floor({x})", "torch.sign({x})", "torch.round({x} * 4)"]
BINARY = [
    "{x} + {y}", "{x} - {y}", "{x} * {y}", "{x} / ({y}.abs() + 1)", "torch.maximum({x}, {y})",
    "torch.minimum({x}, {y})", "torch.where({x} > {y}, {x}, {y})",
    # atan2 away from its branch cut, where the sign of a zero decides
    # (-pi or pi): a convolution's zeros may come out +0 or -0.
    "torch.atan2({x}, {y}.abs() + 0.1)",
    "{x} * torch.sigmoid({y})", "torch.hypot({x}, {y})", "torch.lerp({x}, {y}, 0.3)",
    "torch.addcmul({x}, {x}, {y}, value=0.5)", "({x}.abs() + 0.5) ** {y}.clamp(-2, 2)",
]
REDUCE = [
    "{x}.sum(dim={d}, keepdim={k})", "{x}.mean(dim={d}, keepdim={k})",
    "{x}.amax(dim={d}, keepdim={k})", "{x}.amin(dim={d}, keepdim={k})",
    "torch.var({x}, dim={d}, keepdim={k})", "torch.logsumexp({x}, dim={d}, keepdim={k})",
    "{x}.norm(dim={d}, keepdim={k})", "torch.std({x}, dim={d}, keepdim={k}, correction=0)",
]
ALONG = [
    "torch.softmax({x}, {d})", "torch.log_softmax({x}, {d})", "torch.cumsum({x}, {d})",
    "F.normalize({x}, dim={d})", "{x}.sort(dim={d}).values", "torch.flip({x}, [{d}])",
    "torch.roll({x}, 1, {d})", "{x} - {x}.mean(dim={d}, keepdim=True)",
    "{x} / {x}.amax(dim={d}, keepdim=True).abs().clamp(min=1e-3)",
    "torch.gather({x}, {d}, {x}.argmax(dim={d}, keepdim=True))",
    "torch.take_along_dim({x}, {x}.argmin(dim={d}, keepdim=True), {d})",
    "torch.cummax({x}, {d}).values", "{x}.topk(1, dim={d}).values",
]
INT_UNARY = ["{x} + 1", "{x} * 3", "torch.remainder({x}, 3)", "{x} // 2", "{x}.abs()",
             "torch.clamp({x}, -2, 2)", "-{x}"]


def mul(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    return f"({a}*{b})"


def add(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return f"({a}+{b})"


def opaque(tag, a, counter):
    """A size computed from `a` that equals nothing else."""
    return f"{tag}({a})#{counter}"


def broadcast(a, b):
    """The broadcast shape of a and b, or None."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return list(reversed(out))


def plain(shape):
    """Whether every dim of `shape` is a number or a symbol an input can be
    made with (not an expression such as "(s0*4)")."""
    return all(isinstance(d, int) or d in SYMBOLS for d in shape)


class Program:
    def __init__(self, rng, grad=False):
        self.rng = rng
        self.grad = grad  # gradients are compared too: float32 only
        self.inputs = []  # (name, shape, dtype, kind): kind "data" or "weight"
        self.values = []  # (name, shape, dtype)
        self.lines = []
        self.counter = 0

    def fresh(self, prefix="v"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def add_input(self, shape, dtype, kind="data", high=None):
        """A new input; kind "index" is an int64 tensor of values in
        [0, high)."""
        name = f"x{len(self.inputs)}"
        self.inputs.append((name, shape, dtype, kind, high))
        if kind != "index":
            self.values.append((name, shape, dtype))
        return name

    def emit(self, expr, shape, dtype):
        name = self.fresh()
        self.lines.append(f"    {name} = {expr}")
        self.values.append((name, shape, dtype))
        return name

    def floats(self, dtype=None):
        return [v for v in self.values if v[2] in FLOATS and (dtype is None or v[2] == dtype)]

    def full_precision(self):
        """Whether the program holds no f16/bf16 value yet. Thresholds (a
        comparison, a cast to an integer) and normalisations need that:
        DISC and eager place f16/bf16 roundings apart (per kernel, per op:
        docs/ops.md), so a value an ulp from a threshold flips, and a layer
        norm of a nearly constant bf16 row turns an ulp into 0.1."""
        return not any(v[2] in ("float16", "bfloat16") for v in self.values)

    @staticmethod
    def float_with_dims(v):
        """Whether value `v` is a float tensor of rank 1 or more."""
        return v[2] in FLOATS and bool(v[1])

    # ---- ops: each takes a value, emits a line or returns False

    def op_unary(self, v):
        name, shape, dtype = v
        if dtype not in FLOATS:
            return False
        ops = UNARY if self.full_precision() else [u for u in UNARY if u not in STEPS]
        self.emit(self.rng.choice(ops).format(x=name), shape, dtype)
        return True

    def op_binary(self, v):
        name, shape, dtype = v
        if dtype not in FLOATS:
            return False
        partners = [w for w in self.floats(dtype) if broadcast(shape, w[1]) is not None]
        w = self.rng.choice(partners)
        out = broadcast(shape, w[1])
        x, y = (name, w[0]) if self.rng.random() < 0.5 else (w[0], name)
        self.emit(self.rng.choice(BINARY).format(x=x, y=y), out, dtype)
        return True

    def op_scalar(self, v):
        name, shape, dtype = v
        if dtype not in FLOATS:
            return False
        # Thresholds a computed value is unlikely to sit on: a value that is
        # 0 in exact arithmetic (the variance of a constant row) comes out
        # 0 or 1e-16 depending on the order of the rounding, and `> 0` then
        # flips (the generator's first false finding).
        c = self.rng.choice([0.37, 1.0, -2.5, 3.0, 1e-3])
        exprs = ["{x} + {c}", "{x} * {c}", "torch.clamp({x}, min={c})"]
        if self.full_precision():
            exprs += ["torch.where({x} > 0.37, {x}, {c})", "{x}.masked_fill({x} < {c}, 0.5)"]
        expr = self.rng.choice(exprs)
        self.emit(expr.format(x=name, c=c), shape, dtype)
        return True

    def op_reduce(self, v):
        name, shape, dtype = v
        if not self.float_with_dims(v):
            return False
        if self.rng.random() < 0.1:
            self.emit(f"{name}.sum()", [], dtype)
            return True
        d = self.rng.randrange(len(shape))
        keep = self.rng.random() < 0.5
        out = list(shape)
        if keep:
            out[d] = 1
        else:
            del out[d]
        expr = self.rng.choice(REDUCE)
        if not self.full_precision() and ("var" in expr or "std" in expr):
            expr = REDUCE[0]
        self.emit(expr.format(x=name, d=d, k=keep), out, dtype)
        return True

    def op_along(self, v):
        name, shape, dtype = v
        if not self.float_with_dims(v):
            return False
        d = self.rng.randrange(len(shape))
        expr = self.rng.choice(ALONG)
        if not self.full_precision() and any(
                word in expr for word in ("cummax", "sort", "normalize", "amax", "mean", "topk")):
            expr = "torch.softmax({x}, {d})"
        out = list(shape)
        if "gather" in expr or "take_along" in expr or "topk" in expr:
            out[d] = 1
        self.emit(expr.format(x=name, d=d), out, dtype)
        return True

    def op_norm(self, v):
        name, shape, dtype = v
        if not self.float_with_dims(v) or not self.full_precision():
            return False
        choice = self.rng.randrange(4)
        if choice == 3 and len(shape) >= 3 and isinstance(shape[1], int):
            groups = self.rng.choice([g for g in (1, 2, shape[1]) if shape[1] % g == 0])
            self.emit(f"F.group_norm({name}, {groups})", shape, dtype)
        elif choice == 0:
            self.emit(f"F.layer_norm({name}, {name}.shape[-1:])", shape, dtype)
        elif choice == 1 and len(shape) >= 3 and dtype == "float32":
            self.emit(f"F.batch_norm({name}, None, None, training=True)", shape, dtype)
        elif len(shape) >= 2 and isinstance(shape[-1], int):
            w = self.add_input([shape[-1]], dtype, "weight")
            self.emit(f"F.layer_norm({name}, {name}.shape[-1:], {w})", shape, dtype)
        else:
            return False
        return True

    def op_view(self, v):
        name, shape, dtype = v
        r = len(shape)
        choice = self.rng.randrange(9)
        if choice == 0 and r >= 2:
            a, b = sorted(self.rng.sample(range(r), 2))
            out = list(shape)
            out[a], out[b] = out[b], out[a]
            self.emit(f"{name}.transpose({a}, {b})", out, dtype)
        elif choice == 1 and r >= 2:
            perm = list(range(r))
            self.rng.shuffle(perm)
            self.emit(f"{name}.permute({perm})", [shape[p] for p in perm], dtype)
        elif choice == 2 and r < 5:
            d = self.rng.randrange(r + 1)
            self.emit(f"{name}.unsqueeze({d})", shape[:d] + [1] + shape[d:], dtype)
        elif choice == 3 and 1 in shape:
            d = shape.index(1)
            self.emit(f"{name}.squeeze({d})", shape[:d] + shape[d + 1:], dtype)
        elif choice == 4 and r >= 2:
            d = self.rng.randrange(r - 1)
            self.emit(f"{name}.flatten({d}, {d + 1})",
                      shape[:d] + [mul(shape[d], shape[d + 1])] + shape[d + 2:], dtype)
        elif choice == 5 and r >= 1 and shape[-1] != 1:
            d = self.rng.randrange(r)
            if shape[d] == 1:
                return False
            self.counter += 1
            out = list(shape)
            start = self.rng.choice([1, 0])
            if self.rng.random() < 0.5:
                out[d] = opaque("narrow", shape[d], self.counter)
                self.emit(f"{name}.narrow({d}, {start}, {name}.shape[{d}] - 1)", out, dtype)
            else:
                out[d] = opaque("step2", shape[d], self.counter)
                index = ", ".join([":"] * d + [f"{start}::2"])
                self.emit(f"{name}[{index}]", out, dtype)
        elif choice == 6 and r >= 1:
            d = self.rng.randrange(r)
            same = [w for w in self.values if w[2] == dtype and len(w[1]) == r and all(
                w[1][i] == shape[i] for i in range(r) if i != d)]
            w = self.rng.choice(same)
            out = list(shape)
            out[d] = add(shape[d], w[1][d])
            self.emit(f"torch.cat([{name}, {w[0]}], dim={d})", out, dtype)
        elif choice == 7 and r < 5:
            d = self.rng.randrange(r + 1)
            self.emit(f"torch.stack([{name}, {name} * 2], dim={d})", shape[:d] + [2] + shape[d:],
                      dtype)
        elif choice == 8 and r >= 1:
            d = self.rng.randrange(r)
            if shape[d] == 1:
                return False
            index = self.rng.choice(["[0, 1, 0]", "[1]", "[1, 0]"])
            self.emit(f"{name}.index_select({d}, torch.tensor({index}))",
                      shape[:d] + [index.count(",") + 1] + shape[d + 1:], dtype)
        else:
            return False
        return True

    def op_expand(self, v):
        name, shape, dtype = v
        targets = [w for w in self.values if len(w[1]) == len(shape) and w[1] != shape
                   and broadcast(shape, w[1]) == w[1]]
        if not targets:
            return False
        w = self.rng.choice(targets)
        self.emit(f"{name}.expand_as({w[0]})", w[1], dtype)
        return True

    def op_matmul(self, v):
        name, shape, dtype = v
        if dtype not in FLOATS or len(shape) < 2:
            return False
        k = shape[-1]
        same_k = [w for w in self.floats(dtype) if len(w[1]) == len(shape)
                  and w[1][-1] == k and w[1][:-2] == shape[:-2]]
        if same_k and self.rng.random() < 0.5:
            w = self.rng.choice(same_k)
            self.emit(f"{name} @ {w[0]}.transpose(-1, -2)", shape[:-1] + [w[1][-2]], dtype)
            return True
        if not isinstance(k, int):
            return False
        n = self.rng.choice([3, 8, 16])
        w = self.add_input([n, k], dtype, "weight")
        if self.rng.random() < 0.5:
            b = self.add_input([n], dtype, "weight")
            self.emit(f"F.linear({name}, {w}, {b})", shape[:-1] + [n], dtype)
        else:
            self.emit(f"F.linear({name}, {w})", shape[:-1] + [n], dtype)
        return True

    def op_conv(self, v):
        name, shape, dtype = v
        if dtype != "float32" or len(shape) not in (3, 4) or not isinstance(shape[1], int):
            return False
        spatial = len(shape) - 2
        cin, cout = shape[1], self.rng.choice([2, 4, 6])
        groups = self.rng.choice([g for g in (1, 2, cin) if cin % g == 0 and cout % g == 0]
                                 or [1])
        kernel = self.rng.choice([1, 3])
        stride, pad = self.rng.choice([1, 2]), self.rng.choice([0, 1])
        w = self.add_input([cout, cin // groups] + [kernel] * spatial, dtype, "weight")
        self.counter += 1
        out = [shape[0], cout] + [opaque("conv", s, self.counter) for s in shape[2:]]
        # Windows larger than the input would be a PyTorch error: pad first.
        self.emit(f"F.conv{spatial}d(F.pad({name}, [{kernel}] * {2 * spatial}), {w}, "
                  f"stride={stride}, padding={pad}, groups={groups})", out, dtype)
        return True

    def resized(self, v, tag):
        """For a float32 batch of 1-d or 2-d images: (its spatial rank, its
        shape with new spatial sizes); else None."""
        name, shape, dtype = v
        if dtype != "float32" or len(shape) not in (3, 4):
            return None
        self.counter += 1
        return len(shape) - 2, shape[:2] + [opaque(tag, s, self.counter) for s in shape[2:]]

    def op_pool(self, v):
        name, shape, dtype = v
        if not (image := self.resized(v, "pool")):
            return False
        spatial, out = image
        kind = self.rng.choice(["max", "avg", "adaptive"])
        if kind == "adaptive":
            self.emit(f"F.adaptive_avg_pool{spatial}d({name}, 1)", shape[:2] + [1] * spatial,
                      dtype)
        else:
            self.emit(f"F.{kind}_pool{spatial}d({name}, 2, ceil_mode=True)", out, dtype)
        return True

    def op_cast(self, v):
        name, shape, dtype = v
        if dtype == "int64":
            expr = self.rng.choice(INT_UNARY).format(x=name)
            if self.rng.random() < 0.5:
                self.emit(f"({expr}).float() * 0.5", shape, "float32")
            else:
                self.emit(expr, shape, "int64")
            return True
        if dtype == "bool":
            choice = self.rng.randrange(4)
            if choice == 0:
                self.emit(f"{name}.float()", shape, "float32")
            elif choice == 1:
                self.emit(f"~{name}", shape, "bool")
            elif choice == 2 and shape:
                d = self.rng.randrange(len(shape))
                reduce = self.rng.choice(["sum", "any", "all"])
                self.emit(f"{name}.{reduce}(dim={d})", shape[:d] + shape[d + 1:],
                          "int64" if reduce == "sum" else "bool")
            else:
                floats = [w for w in self.floats("float32") if broadcast(shape, w[1]) == w[1]]
                if not floats:
                    return False
                w = self.rng.choice(floats)
                self.emit(f"torch.where({name}, {w[0]}, {w[0]} * -0.5)", w[1], "float32")
            return True
        choice = self.rng.randrange(4)
        if choice == 0 and dtype == "float32" and not self.grad:
            low = self.rng.choice(["float16", "bfloat16"])
            self.emit(f"{name}.to(torch.{low})", shape, low)
        elif choice == 1:
            self.emit(f"{name}.float()", shape, "float32")
        elif choice == 2 and self.full_precision():
            self.emit(f"({name} * 4).to(torch.int64)", shape, "int64")
        elif self.full_precision():
            self.emit(f"{name} > {self.rng.choice(['0.37', '-0.61', name + '.mean() + 0.37'])}",
                      shape, "bool")
        else:
            return False
        return True

    def op_inplace(self, v):
        name, shape, dtype = v
        if dtype not in FLOATS:
            return False
        copy = self.fresh()
        self.lines.append(f"    {copy} = {name}.clone()")
        choice = self.rng.randrange(3)
        if choice == 0:
            self.lines.append(f"    {copy}.mul_(2).add_(1)")
        elif choice == 1 and shape and shape[-1] != 1:
            self.lines.append(f"    {copy}[..., :1] = 0.5")
        else:
            self.lines.append(f"    {copy}.relu_()")
        self.values.append((copy, shape, dtype))
        return True

    def op_index(self, v):
        """Embedding lookups and index_add/index_put(accumulate): int64
        index inputs, scatter-adds in the backward."""
        name, shape, dtype = v
        if dtype not in FLOATS or not shape or not plain(shape) or len(shape) > 3:
            return False
        rows = self.rng.choice([3, 8])
        choice = self.rng.randrange(3)
        if choice == 0:
            width = self.rng.choice([2, 4])
            table = self.add_input([rows, width], dtype, "weight")
            index = self.add_input(list(shape), "int64", "index", high=rows)
            self.emit(f"F.embedding({index}, {table}) * {name}.unsqueeze(-1)",
                      shape + [width], dtype)
            return True
        index = self.add_input([shape[0]], "int64", "index", high=rows)
        zeros = f"{name}.new_zeros(({rows},) + tuple({name}.shape[1:]))"
        if choice == 1:
            self.emit(f"{zeros}.index_add(0, {index}, {name})", [rows] + shape[1:], dtype)
        else:
            self.emit(f"{zeros}.index_put(({index},), {name}, accumulate=True)",
                      [rows] + shape[1:], dtype)
        return True

    def op_resample(self, v):
        name, shape, dtype = v
        if not (image := self.resized(v, "up")):
            return False
        spatial, out = image
        linear = "bilinear" if spatial == 2 else "linear"
        mode = self.rng.choice(["'nearest'", f"'{linear}'", f"'{linear}', align_corners=True"])
        self.emit(f"F.interpolate({name}, scale_factor=2, mode={mode})", out, dtype)
        return True

    def op_attention(self, v):
        name, shape, dtype = v
        if (dtype not in FLOATS or len(shape) not in (3, 4) or not isinstance(shape[-1], int)
                or not self.full_precision()):
            return False
        same = [w[0] for w in self.values if w[1] == shape and w[2] == dtype]
        k, value = self.rng.choice(same), self.rng.choice(same)
        causal = self.rng.random() < 0.5
        self.emit(f"F.scaled_dot_product_attention({name}, {k}, {value}, is_causal={causal})",
                  shape, dtype)
        return True

    def op_shape(self, v):
        name, shape, dtype = v
        r = len(shape)
        choice = self.rng.randrange(4)
        if choice == 0 and r >= 2:
            self.emit(self.rng.choice([f"torch.tril({name})", f"torch.triu({name}, 1)"]),
                      shape, dtype)
        elif choice == 1 and r >= 1:
            d = self.rng.randrange(r)
            times = [1] * r
            times[d] = 2
            out = list(shape)
            out[d] = mul(shape[d], 2)
            self.emit(f"{name}.repeat({times})", out, dtype)
        elif choice == 2 and r >= 1:
            d = self.rng.randrange(r)
            self.counter += 1
            out = list(shape)
            out[d] = opaque("chunk", shape[d], self.counter)
            self.emit(f"{name}.chunk(2, dim={d})[0]", out, dtype)
        elif choice == 3 and r in (2, 3, 4) and dtype in FLOATS:
            # Non-constant modes pad the last one (2-d, 3-d) or two (3-d,
            # 4-d) dims of a batched input; 1 < every size but 1.
            last = {2: 1, 3: self.rng.choice([1, 2]), 4: 2}[r]
            mode = self.rng.choice(["constant", "replicate", "reflect", "circular"])
            out = list(shape)
            for d in range(r - last, r):
                out[d] = add(shape[d], 2)
            self.emit(f"F.pad({name}, [1, 1] * {last}, mode='{mode}')", out, dtype)
        else:
            return False
        return True

    OPS = [("op_unary", 5), ("op_binary", 5), ("op_scalar", 2), ("op_reduce", 3),
           ("op_along", 3), ("op_norm", 1), ("op_view", 5), ("op_expand", 1),
           ("op_matmul", 2), ("op_conv", 1), ("op_pool", 1), ("op_cast", 2),
           ("op_inplace", 1), ("op_index", 1), ("op_resample", 1), ("op_attention", 1),
           ("op_shape", 2)]


def generate(rng, grad=False) -> dict:
    """A random program: its source text, its inputs' specs and whether
    its gradients are compared (float32 programs only)."""
    p = Program(rng, grad)
    rank = rng.choice([1, 2, 2, 3, 3, 4])
    symbols = list(SYMBOLS)
    base = []
    for _ in range(rank):
        base.append(rng.choice(symbols) if rng.random() < 0.65 else rng.choice([2, 3, 4, 8]))
    dtype = "float32" if grad or rng.random() < 0.85 else rng.choice(["float16", "bfloat16"])
    p.add_input(base, dtype)
    for _ in range(rng.choice([0, 1, 1, 2])):
        shape = [1 if rng.random() < 0.3 else d for d in base]
        shape = shape[rng.randrange(len(shape)):] if rng.random() < 0.3 else shape
        p.add_input(shape, dtype)
    names, weights = zip(*Program.OPS)
    for _ in range(rng.randint(3, 12)):
        for _attempt in range(20):
            op = rng.choices(names, weights)[0]
            v = p.values[-1] if rng.random() < 0.6 else rng.choice(p.values)
            if getattr(p, op)(v):
                break
    outputs = [p.values[-1][0]]
    others = [v[0] for v in p.values[:-1] if not v[0].startswith("x")]
    if others and rng.random() < 0.5:
        outputs.append(rng.choice(others))
    args = ", ".join(i[0] for i in p.inputs)
    body = "\n".join(p.lines)
    source = f"def program({args}):\n{body}\n    return ({', '.join(outputs)},)\n"
    specs = [{"name": n, "shape": s, "dtype": d, "kind": k, **({} if high is None else
                                                               {"high": high})}
             for n, s, d, k, high in p.inputs]
    return {"source": source, "inputs": specs, "grad": grad}

# ------------------------------------------------------------- running one

# Runs in the worker (disc_fuzz.FORK_LOOP forks one child per job).
WORKER = r'''
import json, os, random, sys, traceback
os.environ["DISC_CACHE"] = "0"
import torch
import torch.nn.functional as F
import disc
from disc.bench.correctness import outputs_match
torch.set_num_threads(1)
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

def size_of(dim, values):
    if isinstance(dim, int):
        return dim
    return values[dim]

# Symbolic sizes: never a static size the generator writes (1-4, 6, 8,
# 16) and distinct within a call, so that Dynamo's duck sizing (equal sizes
# on the first call share a symbol) does not tie dims that a later call
# sets apart, which would recompile.
SIZES = [5, 7, 9, 10, 11, 12, 13, 14, 15, 17, 19, 23]

def make_inputs(specs, rng, special):
    values = dict(zip(("s0", "s1", "s2"), rng.sample(SIZES, 3)))
    out = []
    for spec in specs:
        shape = [size_of(d, values) for d in spec["shape"]]
        if spec["kind"] == "index":
            out.append(torch.randint(0, spec["high"], shape))
            continue
        x = torch.randn(shape)
        if spec["kind"] == "weight":
            x = x * 0.3
        elif special and x.numel():
            x.view(-1)[rng.randrange(x.numel())] = rng.choice(
                [float("nan"), float("inf"), -float("inf")])
        out.append(x.to(DTYPES[spec["dtype"]]))
    return out, values

def load(source):
    scope = {"torch": torch, "F": F}
    exec(compile(source, "<program>", "exec"), scope)
    return scope["program"]

def lowest_precision(job):
    """bfloat16 or float16 when the program computes in one (an input or a
    cast): its float32 results are compared at that precision, since DISC
    rounds f16/bf16 chains per kernel and eager per op (docs/ops.md)."""
    text = job["text"] + " ".join(spec["dtype"] for spec in job["inputs"])
    for low in ("bfloat16", "float16"):
        if low in text:
            return DTYPES[low]
    return None

def at_precision(result, low):
    if low is None:
        return result
    if isinstance(result, (tuple, list)):
        return type(result)(at_precision(r, low) for r in result)
    if isinstance(result, torch.Tensor) and result.dtype in (torch.float32, torch.float64):
        return result.to(low)
    return result

def call(fn, inputs, grad, seed):
    """fn's results; with `grad`, followed by the gradients of
    sum(output * a fixed random tensor) over the float outputs with respect
    to every float input (zeros where an input does not reach the loss)."""
    if not grad:
        with torch.no_grad():
            return fn(*[x.clone() for x in inputs])
    leaves = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    outputs = fn(*leaves)
    generator = torch.Generator().manual_seed(seed)
    loss = None
    for out in outputs:
        if isinstance(out, torch.Tensor) and out.requires_grad:
            term = (out * torch.randn(out.shape, generator=generator)).sum()
            loss = term if loss is None else loss + term
    wrt = [x for x in leaves if x.requires_grad]
    grads = [None] * len(wrt)
    if loss is not None:
        grads = torch.autograd.grad(loss, wrt, allow_unused=True)
    grads = tuple(torch.zeros_like(x) if g is None else g for x, g in zip(wrt, grads))
    return tuple(o.detach() if isinstance(o, torch.Tensor) else o for o in outputs) + grads

def run_job(job):
    rng = random.Random(job["seed"])
    torch.manual_seed(job["seed"])
    grad = job.get("grad", False)
    calls = []
    for trial in range(3):
        special = not grad and rng.random() < job["special"]
        inputs, sizes = make_inputs(job["inputs"], rng, special=special)
        calls.append((inputs, sizes))
    expected = []
    for i, (inputs, sizes) in enumerate(calls):
        try:
            expected.append(call(load(job["text"]), inputs, grad, job["seed"] + i))
        except Exception as e:
            return {"outcome": "invalid", "key": f"{type(e).__name__}: {str(e)[:160]}"}
    low = lowest_precision(job)
    targets = ["cpu"] + list(job.get("targets", []))
    recompiled = None
    for target in targets:
        os.environ["DISC_TARGET"] = target
        torch._dynamo.reset()
        fn = torch.compile(load(job["text"]), backend="disc", dynamic=True)
        for i, ((inputs, sizes), want) in enumerate(zip(calls, expected)):
            before = disc.stats()["compilations"]
            try:
                got = call(fn, inputs, grad, job["seed"] + i)
            except Exception as e:
                return {"outcome": "unexpected", "key": f"{target}: {type(e).__name__}",
                        "detail": traceback.format_exc()[-3000:], "sizes": sizes, "call": i}
            ok, err, why = outputs_match(at_precision(want, low), at_precision(got, low))
            if not ok:
                return {"outcome": "mismatch", "key": f"{target}: {why}", "sizes": sizes,
                        "call": i}
            if i > 0 and disc.stats()["compilations"] > before and recompiled is None:
                from torch._dynamo.utils import guard_failures
                why = [str(r) for failures in guard_failures.values() for r in failures]
                recompiled = f"{target}: call {i} at sizes {sizes}: {'; '.join(why)[:300]}"
    stats = disc.stats()
    result = {"outcome": "recompiled" if recompiled else "ran", "key": recompiled or "",
              "fallback_ops": stats["fallback_ops"], "compiled_nodes": stats["compiled_nodes"],
              "training_graphs": stats["training_graphs"]}
    return result
'''

FINDINGS = ("crash", "hang", "unexpected", "mismatch")

REPRO = '''
# Replays this program: eager against torch.compile(backend="disc") at the
# sizes of the report (see the .txt beside this file), or
#   fuzz/torch_fuzz.py --replay THIS_FILE --job-seed N
if __name__ == "__main__":
    import json, sys, torch, torch.nn.functional as F
    import disc
    from disc.bench.correctness import outputs_match
    sizes = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {{"s0": 5, "s1": 7, "s2": 3}}
    dtypes = {{"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}}

    def make(spec):
        shape = [sizes.get(d, d) if isinstance(d, str) else d for d in spec["shape"]]
        if spec["kind"] == "index":
            return torch.randint(0, spec["high"], shape)
        return torch.randn(shape).to(dtypes[spec["dtype"]])

    def results(fn, inputs):
        leaves = [x.clone().requires_grad_(GRAD and x.is_floating_point()) for x in inputs]
        with torch.set_grad_enabled(GRAD):
            outputs = fn(*leaves)
        if not GRAD:
            return outputs
        loss = sum((o * torch.randn(o.shape, generator=torch.Generator().manual_seed(i))).sum()
                   for i, o in enumerate(outputs) if o.requires_grad)
        wrt = [x for x in leaves if x.requires_grad]
        grads = torch.autograd.grad(loss, wrt, allow_unused=True)
        return tuple(o.detach() for o in outputs) + tuple(
            torch.zeros_like(x) if g is None else g for x, g in zip(wrt, grads))

    inputs = [make(spec) for spec in INPUTS]
    want = results(program, inputs)
    got = results(torch.compile(program, backend="disc", dynamic=True), inputs)
    print(outputs_match(want, got))
'''


def program_file(program, result=None) -> str:
    head = "import torch\nimport torch.nn.functional as F\n\n"
    specs = f"\nINPUTS = {json.dumps(program['inputs'])}\nGRAD = {program.get('grad', False)}\n"
    return head + program["source"] + specs + REPRO.format()


def parse_program_file(text) -> dict:
    source = text[text.index("def program("):text.index("\nINPUTS = ")].rstrip("\n") + "\n"
    specs = json.loads(re.search(r"^INPUTS = (.*)$", text, re.M).group(1))
    grad = re.search(r"^GRAD = (True|False)$", text, re.M)
    return {"source": source, "inputs": specs, "grad": bool(grad) and grad.group(1) == "True"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser, timeout=120.0)
    parser.add_argument("--replay", nargs="*", default=None,
                        help="run these program files (a finding's .py) as they are")
    parser.add_argument("--job-seed", type=int, default=0,
                        help="with --replay: the seed of the inputs (a finding's job_seed)")
    parser.add_argument("--special", type=float, default=0.15,
                        help="the share of calls with a NaN or inf in a data input")
    parser.add_argument("--grad", type=float, default=0.0,
                        help="the share of programs (float32 only) whose gradients are "
                             "compared too: compiled as training graphs (docs/training.md)")
    parser.add_argument("--differential", action="append", default=[],
                        choices=["cuda-emulated"],
                        help="also run every program through this target, against eager")
    parser.add_argument("--print-programs", action="store_true",
                        help="print each generated program (to see what the generator writes)")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    print(f"[torch-fuzz] seed {seed}", flush=True)
    worker = Worker(args.python, WORKER)
    findings, counts, seen = [], {}, set()
    fallbacks, compiled_nodes, training_graphs = {}, 0, 0
    start = time.time()

    def run(program, job_seed):
        nonlocal compiled_nodes, training_graphs
        result = worker.run(program["source"], job_seed, args.timeout, args.differential,
                            inputs=program["inputs"], special=args.special,
                            grad=program.get("grad", False))
        result["job_seed"] = job_seed
        outcome = result["outcome"]
        counts[outcome] = counts.get(outcome, 0) + 1
        for op, n in result.get("fallback_ops", {}).items():
            fallbacks[op] = fallbacks.get(op, 0) + n
        compiled_nodes += result.get("compiled_nodes", 0)
        training_graphs += result.get("training_graphs", 0)
        key = (outcome, re.sub(r"\d+", "N", result.get("key", "")))
        if outcome in FINDINGS:
            path = save_finding(args.findings, program_file(program), result, suffix=".py")
            findings.append((path, result))
            print(f"[torch-fuzz] FINDING {outcome}: {result.get('key')} -> {path}", flush=True)
        elif outcome in ("invalid", "recompiled") and key not in seen:
            seen.add(key)
            # Kept beside the findings to look at, not counted as one.
            path = save_finding(args.findings, program_file(program), result, suffix=".py")
            print(f"[torch-fuzz] {outcome}: {result.get('key')} -> {path}", flush=True)
        return result

    try:
        if args.replay is not None:
            for path in args.replay:
                result = run(parse_program_file(open(path).read()), args.job_seed)
                print(f"[torch-fuzz] {path}: {result['outcome']} {result.get('key', '')}",
                      flush=True)
        else:
            for n in run_budget(args, start):
                program = generate(rng, grad=rng.random() < args.grad)
                if args.print_programs:
                    print(program["source"], flush=True)
                run(program, rng.randrange(2**31))
                if n % 100 == 0:
                    rate = n / (time.time() - start)
                    print(f"[torch-fuzz] {n} programs ({rate:.2f}/s) {counts}", flush=True)
    finally:
        worker.close()
    total = sum(counts.values())
    print(f"[torch-fuzz] {total} programs in {time.time() - start:.0f} s, seed {seed}: "
          f"{counts}; {len(findings)} findings; training graphs {training_graphs}", flush=True)
    if fallbacks:
        top = sorted(fallbacks.items(), key=lambda kv: -kv[1])[:10]
        print(f"[torch-fuzz] compiled nodes {compiled_nodes}; fallback nodes by op: {top}",
              flush=True)
    for path, result in findings:
        print(f"  {path}: {result['outcome']} {result.get('key')}\n{result.get('detail', '')}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
