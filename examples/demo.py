"""`make demo`: two PyTorch models written in this repository (examples/zoo.py)
- a small transformer encoder with a padding mask and a small ResNet-like CNN
- compiled ONCE each with `disc.compile(model)` (torch.compile, backend "disc",
dynamic shapes) and run at several batch sizes, sequence lengths and image
sizes. Per shape: max error against eager PyTorch, eager and DISC time per
call (medians), and the DISC compile count, which stays 1. Then the
transformer once more through disc.export: saved to one file, loaded back
with disc.load, run at the same shapes. Last, training: the transformer
trained for a few AdamW steps through DISC (forward and backward graphs
compiled once, the batch size changing between steps) beside eager, with
the losses of both.

The dialect-level example (examples/mlp.mlir through disc.compile_mlir) is
examples/mlir_demo.py.
"""
from __future__ import annotations

import statistics
import sys
import time

import torch

import disc
import zoo

# (model, sizes): each size is one input shape for the same compiled model.
RUNS = [
    ("transformer", [2, 4, 8, 16, 32]),
    ("resnet", [3, 6, 9, 12]),
]
TOLERANCE = 1e-4


def median_ms(fn, repeats):
    for _ in range(2):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def run_model(name, sizes) -> bool:
    entry = zoo.ZOO[name]
    model = zoo.build(name)
    compiled = disc.compile(model)
    g = torch.Generator().manual_seed(0)
    before = disc.stats()
    print(f"{name}: {model.__class__.__name__}, {sum(p.numel() for p in model.parameters()):,} parameters")
    header = f"  {'shape':<32} {'max |err|':>10} {'eager ms':>9} {'disc ms':>8} {'speedup':>8} {'compiles':>8}"
    print(header)
    print("  " + "-" * (len(header) - 2))
    ok = True
    for i, size in enumerate(sizes):
        args = entry.inputs(size, g)
        with torch.no_grad():
            expected = model(*args)
            start = time.perf_counter()
            actual = compiled(*args)
            first_ms = (time.perf_counter() - start) * 1e3
            err = (actual - expected).abs().max().item()
            repeats = 20
            eager = median_ms(lambda: model(*args), repeats)
            ours = median_ms(lambda: compiled(*args), repeats)
        # Programs compiled, or found in the compile cache (a second `make
        # demo` compiles nothing: docs/artifacts.md).
        after = disc.stats()
        compiles = (after["compilations"] - before["compilations"]
                    + after["cache_hits"] - before["cache_hits"])
        note = f"   (first call {first_ms / 1e3:.1f} s: compile)" if i == 0 else ""
        print(f"  {entry.describe(size):<32} {err:>10.2e} {eager:>9.3f} {ours:>8.3f} "
              f"{eager / ours:>7.2f}x {compiles:>8}{note}")
        ok &= err < TOLERANCE and compiles == 1
    fallback = disc.stats()["fallback_nodes"] - before["fallback_nodes"]
    compiled_nodes = disc.stats()["compiled_nodes"] - before["compiled_nodes"]
    hits = disc.stats()["cache_hits"] - before["cache_hits"]
    print(f"  {compiled_nodes} ATen nodes compiled by DISC, {fallback} left to eager"
          + (f"; {hits} program(s) from the compile cache" if hits else "") + "\n")
    return ok


def run_exported(name, sizes) -> bool:
    """The same model through disc.export: one file, loaded back (no
    compiler needed), at the same shapes."""
    import os
    import tempfile

    entry = zoo.ZOO[name]
    model = zoo.build(name).eval()
    g = torch.Generator().manual_seed(0)
    artifact = disc.export(model, entry.inputs(sizes[0], g))
    path = os.path.join(tempfile.mkdtemp(prefix="disc-demo-"), f"{name}.disc")
    artifact.save(path)
    start = time.perf_counter()
    loaded = disc.load(path)
    load_ms = (time.perf_counter() - start) * 1e3
    print(f"{name} via disc.export: {os.path.getsize(path) / 1e6:.1f} MB artifact, "
          f"trace {artifact.trace_seconds:.1f} s, compile {artifact.compile_seconds:.1f} s, "
          f"disc.load {load_ms:.1f} ms")
    ok = True
    for size in sizes:
        args = entry.inputs(size, g)
        with torch.no_grad():
            err = (loaded(*args) - model(*args)).abs().max().item()
            ms = median_ms(lambda: loaded(*args), 20)
        print(f"  {entry.describe(size):<32} max |err| {err:.2e}, {ms:.3f} ms per call")
        ok &= err < TOLERANCE
    os.unlink(path)
    return ok


def run_training(name, sizes, steps_per_size=3) -> bool:
    """Training through DISC: forward and backward graphs compiled once for
    every batch size, the optimizer step compiled too; losses against an
    eager copy of the model trained side by side (dropout off: the two
    draw different random numbers)."""
    import copy

    entry = zoo.ZOO[name]
    model = zoo.build(name).train()
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    ref = copy.deepcopy(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, eps=1e-3, foreach=True)
    opt_ref = torch.optim.AdamW(ref.parameters(), lr=1e-3, eps=1e-3, foreach=True)
    compiled = disc.compile(model)
    step = torch.compile(opt.step, backend="disc")
    g = torch.Generator().manual_seed(0)
    before = disc.stats()["compilations"]
    print(f"\n{name} training (AdamW, forward + backward + step compiled by DISC):")
    ok = True
    for size in sizes:
        args = entry.inputs(size, g)
        for _ in range(steps_per_size):
            start = time.perf_counter()
            opt.zero_grad()
            loss = compiled(*args).float().square().mean()
            loss.backward()
            step()
            ms = (time.perf_counter() - start) * 1e3
            opt_ref.zero_grad()
            want = ref(*args).float().square().mean()
            want.backward()
            opt_ref.step()
        err = abs(loss.item() - want.item())
        print(f"  {entry.describe(size):<32} loss {loss.item():.6f} (eager {want.item():.6f}), "
              f"{ms:.1f} ms per step")
        ok &= err < 1e-3 * max(1.0, abs(want.item()))
    print(f"  DISC compilations for every batch size: {disc.stats()['compilations'] - before} "
          "(forward, backward, optimizer step), "
          f"{disc.stats()['fallback_nodes']} ATen nodes left to eager in this process")
    return ok


def main() -> int:
    torch.manual_seed(0)
    print(f"DISC demo: torch.compile(backend=\"disc\", dynamic=True) via disc.compile; torch "
          f"{torch.__version__}, {torch.get_num_threads()} threads for PyTorch (DISC: oneDNN on "
          f"the same threads, shared with the generated loops)\n")
    ok = all([run_model(name, sizes) for name, sizes in RUNS])
    ok &= run_exported("transformer", RUNS[0][1])
    ok &= run_training("transformer", [2, 5, 9])
    print("correct at every shape, one compile per model" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
