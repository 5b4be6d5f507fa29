"""Mutation fuzzer for disc.compile_mlir and the executables it returns.

Seeds are the lit tests' programs (test/**/*.mlir, split at `// -----`) and
the corpus (fuzz/corpus/*.mlir). Each execution takes a seed, mutates it
(integer literals to boundary values, static/dynamic dims, element types,
dropped or duplicated lines) and runs it in a worker process:

    compile  -> disc.CompileError is an expected outcome
    invoke   -> every compiled program is called with random inputs: dims
                0, 1, primes and large, dtypes of the signature, and
                deliberately wrong ranks and dtypes; disc.InvocationError is
                an expected outcome

Anything else is a finding: the worker dying (a crash), not answering in
time (a hang), or another exception type.

With --differential cuda-emulated, every program that compiles is also
compiled for the cuda target's block/thread mapping run on the CPU, called
on the same inputs, and must agree with the first build: the same outcome
(ran, or InvocationError) and the same results (NaN and inf in the same
places, floats within the GraphNet harness's tolerance). A difference is a
finding ("mismatch"): index arithmetic of the GPU mapping (row kernels,
vector grids, column splits, 32-bit indices) that no GPU is needed to
catch. --differential cuda compiles each program for the GPU too, ptxas
included (not called: no GPU here). A program the first build takes and a
cuda target declines with a CompileError that names the target ("which
the cuda target does not support") is an outcome of its own,
"target_declined", whose reasons are printed once each for review; any
other CompileError there is a finding ("target_error"). Findings are written to
fuzz/findings/ (the program and the report) and make the run fail.
Mutants with an outcome not seen before go to --save-corpus. --seeds DIR
adds programs of your own, such as the partitions of real models
(000-input.mlir of a DISC_DUMP_DIR dump, docs/debugging.md).

    .venv/bin/python fuzz/disc_fuzz.py --seconds 60            # what CI runs
    .venv/bin/python fuzz/disc_fuzz.py --executions 1000000
    .venv/bin/python fuzz/disc_fuzz.py --replay fuzz/findings/crash-....mlir
    .venv/bin/python fuzz/disc_fuzz.py --seconds 600 --differential cuda-emulated
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import random
import re
import select
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BOUNDARY_INTS = [0, 1, -1, 2, 3, 7, 13, 64, 127, 255, 1024, 65537, 2**31 - 1, 2**31,
                 -2**31, 2**32, 2**62, 2**63 - 1, -2**63, -2**63 + 1]
ELEMENT_TYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "index", "ui8"]
DIM_SIZES = [0, 1, 2, 3, 5, 7, 13, 64, 257]

# ------------------------------------------------------------------ seeds


def is_input_program(text: str) -> bool:
    """Whether `text` is in DISC's input language: the disc dialect and the
    upstream ops its front end emits. linalg/scf/memref programs are the
    pipeline's internals (compile_mlir accepts them for tests, but their
    dynamic dims are not checked against each other: a fuzzed one would
    read out of bounds by design)."""
    return "func.func" in text and not re.search(r"\b(memref|linalg|scf|llvm)\.", text) \
        and "memref<" not in text


def load_seeds(extra_dirs=()) -> list:
    seeds = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)):
        for chunk in open(path).read().split("// -----"):
            lines = [l for l in chunk.splitlines() if not l.lstrip().startswith("//")]
            text = "\n".join(lines).strip()
            if is_input_program(text):
                seeds.append(text)
    for path in sorted(glob.glob(os.path.join(ROOT, "fuzz", "corpus", "*.mlir"))):
        seeds.append(open(path).read())
    # --seeds: whole files. Of a DISC_DUMP_DIR dump, the input and the
    # disc-level passes' files are taken, the lowered ones left out.
    for d in extra_dirs:
        paths = sorted(glob.glob(os.path.join(d, "**", "*.mlir"), recursive=True))
        taken = [text for text in (open(p).read() for p in paths) if is_input_program(text)]
        if not taken:
            raise SystemExit(f"disc_fuzz: --seeds {d}: no disc-level *.mlir program there "
                             f"({len(paths)} .mlir files)")
        print(f"[fuzz] --seeds {d}: {len(taken)} programs ({len(paths) - len(taken)} "
              "pipeline-internal files left out)", flush=True)
        seeds.extend(taken)
    return seeds

# -------------------------------------------------------------- mutation

_INT = re.compile(r"(?<![\w.#%@])-?\d+(?![\w.])")
_TENSOR = re.compile(r"tensor<([^<>]*)>")


def _mutate_int(text, rng):
    matches = list(_INT.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[:m.start()] + str(rng.choice(BOUNDARY_INTS)) + text[m.end():]


def _mutate_type(text, rng):
    matches = list(_TENSOR.finditer(text))
    if not matches:
        return text
    m = rng.choice(matches)
    parts = m.group(1).split("x")
    choice = rng.random()
    if choice < 0.4 and len(parts) > 1:  # a dim: static <-> dynamic
        i = rng.randrange(len(parts) - 1)
        parts[i] = "?" if parts[i] != "?" else str(rng.choice(DIM_SIZES))
    elif choice < 0.7:  # element type
        parts[-1] = rng.choice(ELEMENT_TYPES)
    else:  # rank
        if len(parts) > 1 and rng.random() < 0.5:
            del parts[rng.randrange(len(parts) - 1)]
        else:
            parts.insert(rng.randrange(len(parts)), rng.choice(["?", "1", "4"]))
    new = "tensor<" + "x".join(parts) + ">"
    # The same type everywhere it occurs, so many mutants still verify.
    return text.replace(m.group(0), new) if rng.random() < 0.7 else \
        text[:m.start()] + new + text[m.end():]


def _mutate_lines(text, rng):
    lines = text.splitlines()
    body = [i for i, l in enumerate(lines) if "=" in l and "func.func" not in l]
    if not body:
        return text
    i = rng.choice(body)
    if rng.random() < 0.5:
        del lines[i]
    else:
        lines.insert(i, lines[i])
    return "\n".join(lines)


def _mutate_attr_list(text, rng):
    matches = list(re.finditer(r"\[(-?\d+(?:, -?\d+)*)\]", text))
    if not matches:
        return text
    m = rng.choice(matches)
    values = [int(v) for v in m.group(1).split(", ")]
    op = rng.random()
    if op < 0.4:
        values[rng.randrange(len(values))] = rng.choice(BOUNDARY_INTS)
    elif op < 0.7:
        rng.shuffle(values)
    elif len(values) > 1:
        values.pop()
    else:
        values.append(rng.choice([0, 1, -1]))
    return text[:m.start()] + "[" + ", ".join(map(str, values)) + "]" + text[m.end():]


MUTATORS = [_mutate_int, _mutate_type, _mutate_type, _mutate_lines, _mutate_attr_list]


def mutate(text, rng, rounds=None):
    for _ in range(rounds or rng.choice([1, 1, 1, 2, 3])):
        text = rng.choice(MUTATORS)(text, rng)
    return text

# ---------------------------------------------------------------- worker

WORKER = r'''
import json, random, sys, traceback
import torch, disc
torch.set_num_threads(1)
DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
      "f64": torch.float64, "i1": torch.bool, "i8": torch.int8, "i16": torch.int16,
      "i32": torch.int32, "i64": torch.int64}
SIZES = [0, 1, 2, 3, 5, 7, 13, 64]
BASE = disc.default_target()  # DISC_TARGET, else cpu: every program's first build

# --differential also draws sizes around the GPU mapping's boundaries
# (vectors of 4, warps of 32, blocks of 256, row lengths past a block),
# and for half of the calls one size for every dynamic dim (programs whose
# dims must agree then run instead of raising InvocationError).
WIDE_SIZES = SIZES + [4, 8, 31, 32, 33, 128, 257, 1025]
MAX_ELEMENTS = 1 << 21

def make(dtype, dims, rng, pick, anywhere):
    shape = [d if d >= 0 else pick() for d in dims]
    count = 1
    for d in shape:
        count *= max(d, 0)
    if count > MAX_ELEMENTS:
        shape = [d if d >= 0 else rng.choice(SIZES) for d in dims]
    t = DT.get(dtype, torch.float32)
    if t == torch.bool:
        return torch.rand(shape) > 0.5
    if t.is_floating_point:
        x = torch.randn(shape).to(t)
        if rng.random() < 0.2 and x.numel():
            at = rng.randrange(x.numel()) if anywhere else 0
            x.view(-1)[at] = rng.choice([float("nan"), float("inf"), -float("inf"), 0.0])
        return x
    return torch.randint(-3, 8, shape, dtype=t)

def inputs_for(exe, rng, trial, wide):
    args, _ = exe.signature
    if wide and rng.random() < 0.5:
        common = rng.choice(WIDE_SIZES)
        pick = lambda: common
    else:
        pick = lambda: rng.choice(WIDE_SIZES if wide else SIZES)
    inputs = [make(dtype, dims, rng, pick, wide) for name, dtype, dims, classes in args]
    if trial == 2 and inputs:  # a deliberately wrong argument
        i = rng.randrange(len(inputs))
        inputs[i] = rng.choice([inputs[i].unsqueeze(0), inputs[i].to(torch.int32)
                                if inputs[i].is_floating_point() else inputs[i].float(),
                                torch.randn(1).expand(5)])
    return inputs

def invoke(exe, inputs):
    """("ok", results) or ("InvocationError", None)."""
    try:
        return "ok", exe(*[x.clone() for x in inputs])
    except disc.InvocationError:
        return "InvocationError", None

def call(exe, rng, others=()):
    """Three calls of `exe` on random inputs (the third with a wrong
    argument); each `others` executable (another target's build of the
    program) on the same inputs must have the same outcome and results."""
    from disc.bench.correctness import outputs_match
    outcomes = []
    for trial in range(3):
        inputs = inputs_for(exe, rng, trial, wide=bool(others))
        outcome, results = invoke(exe, inputs)
        outcomes.append(outcome)
        for target, other in others:
            other_outcome, other_results = invoke(other, inputs)
            if other_outcome != outcome:
                raise Mismatch(f"{target}: {other_outcome} where {BASE}: {outcome}", inputs)
            if results is not None:
                ok, err, why = outputs_match(sampled(results), sampled(other_results))
                if not ok:
                    raise Mismatch(f"{target} differs from {BASE}: {why}", inputs)
    return outcomes

def sampled(results, most=1 << 22):
    """The results, each cut to at most `most` evenly spaced elements: a
    mutant's padding of 2^31 gives outputs of a billion elements, which the
    comparison's temporaries would take minutes over (a "hang")."""
    out = []
    for r in results:
        if isinstance(r, torch.Tensor) and r.numel() > most:
            r = r.reshape(-1)[::-(-r.numel() // most)]
        out.append(r)
    return tuple(out)

class Mismatch(Exception):
    def __init__(self, what, inputs):
        shapes = ", ".join(f"{str(x.dtype).replace('torch.', '')}{list(x.shape)}"
                           for x in inputs)
        super().__init__(f"{what} (inputs {shapes})")
        self.what = what

def run_job(job):
    rng = random.Random(job["seed"])
    torch.manual_seed(job["seed"])  # the inputs' values: --job-seed replays them
    try:
        exe = disc.compile_mlir(job["text"])
    except disc.CompileError as e:
        msg = str(e).split("error: ", 1)[-1].splitlines()[0]
        return {"outcome": "CompileError", "key": msg}
    except Exception as e:
        return {"outcome": "unexpected", "key": type(e).__name__,
                "detail": traceback.format_exc()[-1500:]}
    # --differential: the program's other targets, compiled from the same
    # text. A CompileError there is an outcome of its own (the cuda
    # targets decline some programs the CPU takes, with a reason).
    others = []
    for target in job.get("targets", []):
        try:
            other = disc.compile_mlir(job["text"], target=target)
        except disc.CompileError as e:
            msg = str(e).split("error: ", 1)[-1].splitlines()[0]
            # A decline on purpose names the target (docs/cuda.md); any
            # other error is the cuda pipeline failing on a program the
            # first build took (invalid IR from a pass, say): a finding.
            outcome = "target_declined" if "cuda target" in msg else "target_error"
            return {"outcome": outcome, "key": f"{target}: {msg}",
                    "detail": str(e)[-3000:]}
        except Exception as e:
            return {"outcome": "unexpected", "key": f"{target}: {type(e).__name__}",
                    "detail": traceback.format_exc()[-1500:]}
        if target != "cuda":  # compiled only (ptxas), no GPU to call it
            others.append((target, other))
    try:
        return {"outcome": "ran", "key": ",".join(call(exe, rng, others))}
    except Mismatch as e:
        return {"outcome": "mismatch", "key": e.what, "detail": str(e)}
    except Exception as e:
        return {"outcome": "unexpected", "key": type(e).__name__,
                "detail": traceback.format_exc()[-1500:]}

'''

# The worker's loop, after its run_job: each job (a JSON line) runs in a
# forked child; its answer (a JSON line) is printed.
FORK_LOOP = r'''
# Each program runs in a child forked from this process (torch and disc are
# imported once, no kernel has run here, so no thread pool is forked): a
# crash or a corrupted heap stays with the program that caused it.
import json, os, select, signal, sys, time
for line in sys.stdin:
    job = json.loads(line)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        result = run_job(job)
        os.write(write_end, (json.dumps(result) + "\n").encode())
        os._exit(0)
    os.close(write_end)
    ready, _, _ = select.select([read_end], [], [], job["timeout"])
    data = b""
    if ready:
        while True:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            data += chunk
    else:
        os.kill(pid, signal.SIGKILL)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    if not ready:
        result = {"outcome": "hang", "key": "no answer in %s s" % job["timeout"]}
    elif not data:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        result = {"outcome": "crash",
                  "key": "signal %s" % sig if sig else "exit %s" % os.WEXITSTATUS(status)}
    else:
        result = json.loads(data)
    print(json.dumps(result), flush=True)
'''


class Worker:
    """A Python process running `source` (which defines run_job(job) ->
    dict) and then FORK_LOOP."""

    def __init__(self, python, source=None):
        self.python = python
        self.source = (WORKER if source is None else source) + FORK_LOOP
        self.proc = None
        self.start()

    def start(self):
        # stderr to a file: a crashing child may print more than a pipe holds.
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([self.python, "-c", self.source], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr,
                                     text=True, bufsize=1)

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        text = self.stderr.read()[-3000:]
        self.stderr.seek(0)
        self.stderr.truncate()
        return text

    def run(self, text, seed, timeout, targets=(), **fields):
        """The worker's answer, or {"outcome": "crash"/"hang", ...};
        `fields` go into the job as they are."""
        try:
            self.proc.stdin.write(json.dumps({"text": text, "seed": seed, "timeout": timeout,
                                              "targets": list(targets), **fields}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout + 30)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            self.start()
            return {"outcome": "hang", "key": f"the worker did not answer in {timeout + 30} s"}
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            err = self.stderr_tail()
            self.start()
            return {"outcome": "crash", "key": f"the worker died (exit {code})", "detail": err}
        result = json.loads(line)
        if result["outcome"] == "crash":
            result["detail"] = self.stderr_tail()
        return result

    def close(self):
        self.proc.kill()
        self.proc.wait()

# ------------------------------------------------------------------ main

FINDINGS = ("crash", "hang", "unexpected", "mismatch", "target_error")


def save_finding(directory, text, result, suffix=".mlir"):
    """Writes the program (`text`) and its report (.txt); returns the
    program's path."""
    os.makedirs(directory, exist_ok=True)
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    path = os.path.join(directory, f"{result['outcome']}-{digest}{suffix}")
    with open(path, "w") as f:
        f.write(text)
    with open(path[:-len(suffix)] + ".txt", "w") as f:
        f.write(json.dumps(result, indent=1))
    return path


def add_run_arguments(parser, timeout):
    """The options both fuzzers take: how long, which seed, where findings go."""
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--executions", type=int, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=timeout, help="per program")
    parser.add_argument("--findings", default=os.path.join(ROOT, "fuzz", "findings"))


def run_budget(args, start):
    """1, 2, 3, ...: the executions --executions and --seconds allow."""
    n = 0
    while (args.executions is None or n < args.executions) and \
            (args.seconds is None or time.time() - start < args.seconds):
        n += 1
        yield n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser, timeout=60.0)
    parser.add_argument("--save-corpus", default=None,
                        help="write mutants whose outcome is new here")
    parser.add_argument("--seeds", action="append", default=[], metavar="DIR",
                        help="also take the *.mlir programs under DIR (recursively) as "
                             "seeds, e.g. a DISC_DUMP_DIR dump's 000-input.mlir files. "
                             "Repeatable")
    parser.add_argument("--replay", nargs="*", default=None,
                        help="run these programs as they are (no mutation)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--job-seed", type=int, default=0,
                        help="with --replay: the seed of the program's inputs (a finding's "
                             "report gives it as job_seed)")
    parser.add_argument("--differential", action="append", default=[],
                        choices=["cuda-emulated", "cuda"],
                        help="also compile every program for this target; cuda-emulated "
                             "builds are called on the same inputs and must agree with the "
                             "first build (a mismatch is a finding), cuda builds are "
                             "compiled only (ptxas). Repeatable")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    print(f"[fuzz] seed {seed}", flush=True)
    worker = Worker(args.python)
    findings = []
    counts = {}
    seen = set()
    start = time.time()
    try:
        if args.replay is not None:
            jobs = [(open(p).read(), p) for p in args.replay]
            for text, path in jobs:
                result = worker.run(text, args.job_seed, args.timeout, args.differential)
                counts[result["outcome"]] = counts.get(result["outcome"], 0) + 1
                print(f"[fuzz] {path}: {result['outcome']} {result.get('key', '')}", flush=True)
                if result["outcome"] in FINDINGS:
                    findings.append((path, result))
        else:
            seeds = load_seeds(args.seeds)
            print(f"[fuzz] {len(seeds)} seed programs", flush=True)
            for n in run_budget(args, start):
                text = rng.choice(seeds)
                # --differential: a quarter of the programs as written (new
                # inputs each time), the rest mutated.
                if not args.differential or rng.random() >= 0.25:
                    text = mutate(text, rng)
                job_seed = rng.randrange(2**31)
                result = worker.run(text, job_seed, args.timeout, args.differential)
                result["job_seed"] = job_seed  # --replay FILE --job-seed N
                outcome = result["outcome"]
                counts[outcome] = counts.get(outcome, 0) + 1
                if outcome in FINDINGS:
                    path = save_finding(args.findings, text, result)
                    findings.append((path, result))
                    print(f"[fuzz] FINDING {outcome}: {result.get('key')} -> {path}", flush=True)
                key = (outcome, re.sub(r"\d+", "N", result.get("key", "")))
                if key not in seen:
                    seen.add(key)
                    if outcome == "target_declined":  # to review: a reason, or a bug?
                        print(f"[fuzz] declined ({key[1]})", flush=True)
                    if args.save_corpus and outcome == "ran":
                        os.makedirs(args.save_corpus, exist_ok=True)
                        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
                        with open(os.path.join(args.save_corpus, f"{digest}.mlir"), "w") as f:
                            f.write(text)
                if n % 500 == 0:
                    rate = n / (time.time() - start)
                    print(f"[fuzz] {n} executions ({rate:.1f}/s) {counts}", flush=True)
    finally:
        worker.close()
    elapsed = time.time() - start
    total = sum(counts.values())
    print(f"[fuzz] {total} executions in {elapsed:.0f} s, seed {seed}: {counts}; "
          f"{len(findings)} findings", flush=True)
    for path, result in findings:
        print(f"  {path}: {result['outcome']} {result.get('key')}\n{result.get('detail', '')}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
