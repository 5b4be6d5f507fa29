"""Memory-bound fused kernels and GEMMs on a GPU (issue 29's kernel figures):

- softmax, layer norm and bias+GELU at [16, 128, 3072] (and a 4x larger
  shape, where per-call host costs matter less), through
  torch.compile(backend="disc", dynamic=True), as a share of the
  device-to-device copy bandwidth measured in the same run (bytes read +
  written by the op / time, against the same for `y.copy_(x)`);
- GEMMs through DISC (cuBLASLt) against torch.matmul (cuBLAS) alone.

Eager and Inductor (dynamic=True) are measured beside DISC. Times are CUDA
events around `--iters` back-to-back calls after warm-up, so a per-call host
cost larger than the kernel shows up in the figure (as it would in a model).

    python bench/cuda_kernels.py [--out results.json] [--compilers eager,disc,disc-novec,inductor]

"disc-novec" is DISC with DISC_CUDA_VECTORIZE=0 (no vector variant of
elementwise grids), for the memory-bound kernels; "disc@VAR=VALUE" is DISC
compiled with an environment variable set (disc@DISC_CUDA_ROW_UNROLL=1).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import torch
import torch.nn.functional as F


def timed(fn, args, iters):
    for _ in range(5):
        fn(*args)
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(3):
        begin.record()
        for _ in range(iters):
            fn(*args)
        end.record()
        end.synchronize()
        best = min(best, begin.elapsed_time(end) / iters * 1e3)  # us per call
    return best


def device_us(fn, args, iters=20):
    """GPU time per call: the kernels' and copies' durations (CUPTI, through
    torch.profiler), without the host's per-call cost that `timed` sees when
    it exceeds the kernel (a compiled graph's guards and wrapper). The
    figure the bandwidth target is about. None when the profiler fails."""
    try:
        from torch.profiler import ProfilerActivity, profile

        fn(*args)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                fn(*args)
            torch.cuda.synchronize()
        total = 0.0
        for item in prof.key_averages():
            total += getattr(item, "self_device_time_total", None) or \
                getattr(item, "self_cuda_time_total", 0.0)
        return total / iters if total > 0 else None
    except Exception:  # a figure, not a test
        return None


def host_profile(calls: int = 300) -> str:
    """Where a compiled call's host time goes (DISC's softmax at a small
    shape, where the GPU work is negligible): the per-call time, the time
    inside the runtime's run(), and cProfile's top entries. The first GPU
    runs measured about 80 us per call against 33 us of GPU time."""
    import cProfile
    import io
    import pstats

    import disc

    x = torch.randn(64, 256, device="cuda")
    f = compiled(softmax, "disc")
    for _ in range(20):
        f(x)
    torch.cuda.synchronize()
    inside = [0.0]
    original = disc.Executable._run

    def timed_run(self, *a, **k):
        t = time.perf_counter()
        try:
            return original(self, *a, **k)
        finally:
            inside[0] += time.perf_counter() - t

    disc.Executable._run = timed_run
    try:
        t = time.perf_counter()
        for _ in range(calls):
            f(x)
        torch.cuda.synchronize()
        per_call = (time.perf_counter() - t) / calls * 1e6
        in_run = inside[0] / calls * 1e6
        disc.Executable._run = original
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(calls):
            f(x)
        profile.disable()
        torch.cuda.synchronize()
    finally:
        disc.Executable._run = original
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(15)
    return (f"\n## Host time of a compiled call (DISC softmax [64, 256])\n{per_call:.1f} us per "
            f"call, {in_run:.1f} us of it in Executable._run (the runtime)\n"
            f"```\n{text.getvalue()[-3500:]}\n```")


def softmax(x):
    return torch.softmax(x, -1)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def bias_gelu(x, b):
    return F.gelu(x + b)


def matmul(a, b):
    return a @ b


def memory_cases(shape):
    x = torch.randn(shape, device="cuda")
    n = x.numel() * 4
    c = shape[-1]
    w, b = torch.randn(c, device="cuda"), torch.randn(c, device="cuda")
    return [("softmax", softmax, (x,), 2 * n),
            ("layer_norm", layer_norm, (x, w, b), 2 * n),
            ("bias_gelu", bias_gelu, (x, b), 2 * n)]


def gemm_cases():
    out = []
    for dtype in (torch.float32, torch.bfloat16):
        for m, k, n in ((2048, 3072, 768), (2048, 768, 3072), (8192, 4096, 4096)):
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            out.append((f"matmul {m}x{k}x{n} {str(dtype).replace('torch.', '')}", matmul,
                        (a, b), 2 * m * n * k))
    return out


def fallback_nodes():
    import disc

    return disc.stats()["fallback_nodes"]


def compiled(fn, compiler):
    """`fn` through `compiler`. "disc-novec" is DISC with DISC_CUDA_VECTORIZE=0
    (no vector variant of elementwise grids); "disc@VAR=VALUE" is DISC with
    the environment variable VAR set to VALUE while it compiles (on the
    first call), e.g. disc@DISC_CUDA_ROW_UNROLL=1."""
    if compiler == "eager":
        return fn
    torch._dynamo.reset()
    if compiler == "disc-novec":
        compiler = "disc@DISC_CUDA_VECTORIZE=0"
    if not compiler.startswith("disc@"):
        return torch.compile(fn, backend=compiler, dynamic=True)
    import os

    name, _, value = compiler[len("disc@"):].partition("=")
    inner = torch.compile(fn, backend="disc", dynamic=True)
    first = [True]

    def call(*args):
        if first[0]:
            saved = os.environ.get(name)
            os.environ[name] = value
            try:
                return inner(*args)
            finally:
                if saved is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = saved
                first[0] = False
        return inner(*args)

    return call


def host_cost_per_kernel(compilers, iters: int) -> list[str]:
    """Per-call time of a chain of k softmaxes at a small shape ([8, 64]:
    the GPU work is a few microseconds), k = 1, 4, 16: the slope is the host
    cost of one more fused kernel (launch, allocation, result), the
    intercept the cost of a compiled call (guards, wrappers, the runtime's
    entry)."""
    lines = ["\n## Host cost per call and per kernel (chain of k softmaxes, [8, 64])",
             "| compiler | k=1 us | k=4 us | k=16 us | per softmax us |", "|---|---:|---:|---:|---:|"]
    x = torch.randn(8, 64, device="cuda")
    for compiler in compilers:
        times = []
        for k in (1, 4, 16):
            def chain(x, k=k):
                for _ in range(k):
                    x = torch.softmax(x, -1) * 2
                return x
            try:
                times.append(timed(compiled(chain, compiler), (x,), iters))
            except Exception as e:  # a diagnostic
                times.append(float("nan"))
                print(f"host cost {compiler} k={k}: {type(e).__name__}: {str(e)[:200]}")
        lines.append(f"| {compiler} | {times[0]:.1f} | {times[1]:.1f} | {times[2]:.1f} | "
                     f"{(times[2] - times[0]) / 15:.2f} |")
        print(lines[-1], flush=True)
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the records as JSON here")
    parser.add_argument("--compilers", default="eager,disc,inductor")
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--parts", default="memory,gemm,host",
                        help="which tables: memory (the memory-bound kernels), gemm, host "
                             "(host cost per call and kernel)")
    args = parser.parse_args(argv)
    import disc  # noqa: F401  (registers the backend)

    compilers = args.compilers.split(",")
    parts = set(args.parts.split(","))
    records, lines = [], []
    lines.append(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, "
                 f"allow_tf32={torch.backends.cuda.matmul.allow_tf32}")
    for shape in ((16, 128, 3072), (64, 128, 3072)) if "memory" in parts else ():
        src = torch.randn(shape, device="cuda")
        dst = torch.empty_like(src)
        copy_us = timed(lambda: dst.copy_(src), (), args.iters)
        copy_bw = 2 * src.numel() * 4 / copy_us / 1e3  # GB/s
        copy_dev = device_us(lambda: dst.copy_(src), ())
        copy_dev_bw = 2 * src.numel() * 4 / copy_dev / 1e3 if copy_dev else None
        lines.append(f"\n## {list(shape)} f32: copy {copy_us:.1f} us = {copy_bw:.0f} GB/s"
                     + (f"; GPU time {copy_dev:.1f} us" if copy_dev else ""))
        lines.append("| kernel | " + " | ".join(f"{c} us (% copy bw; GPU time, % copy's)"
                                                for c in compilers) + " |")
        lines.append("|---|" + "---:|" * len(compilers))
        records.append({"case": "copy", "shape": list(shape), "us": copy_us, "gbps": copy_bw,
                        "device_us": copy_dev})
        for name, fn, inputs, nbytes in memory_cases(shape):
            cells = []
            expected = fn(*inputs)
            for compiler in compilers:
                try:
                    f = compiled(fn, compiler)
                    t0 = time.time()
                    fb = fallback_nodes()
                    got = f(*inputs)
                    torch.cuda.synchronize()
                    compile_s = time.time() - t0
                    fb = fallback_nodes() - fb
                    err = (got - expected).abs().max().item()
                    us = timed(f, inputs, args.iters)
                    bw = nbytes / us / 1e3
                    dev = device_us(f, inputs)
                    dev_share = nbytes / dev / 1e3 / copy_dev_bw if dev and copy_dev_bw else None
                    note = f", {fb} nodes in eager" if fb and compiler == "disc" else ""
                    gpu = f"; GPU {dev:.1f} us = {100 * dev_share:.0f}%" if dev_share else ""
                    cells.append(f"{us:.1f} ({100 * bw / copy_bw:.0f}%{note}{gpu})")
                    records.append({"case": name, "shape": list(shape), "compiler": compiler,
                                    "us": us, "gbps": bw, "share_of_copy": bw / copy_bw,
                                    "device_us": dev, "device_share_of_copy": dev_share,
                                    "max_abs_err": err, "first_call_s": compile_s,
                                    "fallback_nodes": fb})
                except Exception as e:  # a figure table, not a test: report and go on
                    cells.append(f"error: {type(e).__name__}")
                    records.append({"case": name, "shape": list(shape), "compiler": compiler,
                                    "error": f"{type(e).__name__}: {str(e)[:300]}"})
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    gemm_compilers = [c for c in compilers if c != "disc-novec" and "@" not in c]
    if "gemm" in parts:
        lines.append("\n## GEMMs (TFLOP/s per call; GPU: from the kernels' device time)")
        lines.append("| gemm | " + " | ".join(gemm_compilers) + " |")
        lines.append("|---|" + "---:|" * len(gemm_compilers))
    for name, fn, inputs, flops in (gemm_cases() if "gemm" in parts else []):
        cells = []
        for compiler in gemm_compilers:
            try:
                f = compiled(fn, compiler)
                fb = fallback_nodes()
                got = f(*inputs)
                fb = fallback_nodes() - fb
                ref = fn(*inputs)
                err = ((got.float() - ref.float()).abs().max() /
                       ref.float().abs().max().clamp_min(1e-30)).item()
                us = timed(f, inputs, max(5, args.iters // 5))
                dev = device_us(f, inputs, iters=5)
                note = f" ({fb} nodes in eager)" if fb and compiler == "disc" else ""
                gpu = f"; GPU {flops / dev / 1e6:.1f}" if dev else ""
                cells.append(f"{flops / us / 1e6:.1f}{gpu}{note}")
                records.append({"case": name, "compiler": compiler, "us": us,
                                "tflops": flops / us / 1e6, "rel_err": err, "device_us": dev,
                                "device_tflops": flops / dev / 1e6 if dev else None,
                                "fallback_nodes": fb})
            except Exception as e:
                cells.append(f"error: {type(e).__name__}")
                records.append({"case": name, "compiler": compiler,
                                "error": f"{type(e).__name__}: {str(e)[:300]}"})
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    if "host" in parts:
        lines += host_cost_per_kernel(gemm_compilers, args.iters)
    if "host" in parts and "disc" in compilers:
        try:
            lines.append(host_profile())
        except Exception as e:  # a diagnostic, not a figure
            lines.append(f"\n(host profile failed: {type(e).__name__}: {str(e)[:300]})")
    print("\n".join(lines))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "records": records, "table": "\n".join(lines)}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
