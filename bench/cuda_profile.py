"""Where a GraphNet sample's time goes on a GPU (issue 29): per contender,
the wall time per call (synchronised), the host time to issue a call, the
GPU kernel time of one call and its kernel count, and the top kernels by
GPU time (torch.profiler's CUDA activity, which sees DISC's launches too).
"disc-prof" compiles with DISC_PROFILE=1 and prints the host cost of each
launch and library call (docs/debugging.md).

    python bench/cuda_profile.py SAMPLE_DIR[:eager,disc,inductor,disc-prof] ...

PROF_DEVICE=cpu runs it on the CPU (a smoke test of the script itself).
The 2026-11-27 H200 runs used it: bench/results/2026-11-27-cuda-h200-b.md."""
import collections
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import disc
from disc.bench.graphnet import load_sample

DEVICE = os.environ.get("PROF_DEVICE", "cuda")  # cpu: a smoke test of this script
sync = torch.cuda.synchronize if DEVICE == "cuda" else (lambda: None)
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False


def wall(fn, inputs, n=20):
    for _ in range(3):
        fn(*inputs)
    sync()
    t = time.perf_counter()
    for _ in range(n):
        fn(*inputs)
    sync()
    return (time.perf_counter() - t) / n * 1e3


def host(fn, inputs, n=20):
    """Time to issue n calls without waiting (host cost per call)."""
    sync()
    t = time.perf_counter()
    for _ in range(n):
        fn(*inputs)
    h = (time.perf_counter() - t) / n * 1e3
    sync()
    return h


def kernels(fn, inputs, n=5):
    with profile(activities=[ProfilerActivity.CUDA if DEVICE == 'cuda' else ProfilerActivity.CPU]) as p:
        for _ in range(n):
            fn(*inputs)
        sync()
    agg = collections.defaultdict(lambda: [0, 0.0])
    total = 0.0
    count = 0
    for e in p.events():
        if DEVICE != 'cuda' or e.device_type == torch.autograd.DeviceType.CUDA:
            agg[e.name][0] += 1
            agg[e.name][1] += e.device_time
            total += e.device_time
            count += 1
    top = sorted(agg.items(), key=lambda kv: -kv[1][1])[:8]
    return total / n / 1e3, count / n, [(k[:70], v[0] // n, round(v[1] / n, 1)) for k, v in top]


for arg in sys.argv[1:]:
    path, _, comps = arg.partition(":")
    comps = (comps or "eager,disc,inductor").split(",")
    s = load_sample(path, device=DEVICE)
    name = s.name.split("/")[-1]
    with torch.no_grad():
        for comp in comps:
            torch._dynamo.reset()
            if comp == "disc-prof":  # host time of each launch and library call
                os.environ["DISC_PROFILE"] = "1"
                m = torch.compile(s.module, backend="disc", dynamic=True)
                try:
                    m(*s.inputs)
                    sync()
                    disc.reset_profile()
                    for _ in range(10):
                        m(*s.inputs)
                    sync()
                    print(f"{name} disc-prof (host time per launch or library call, 10 calls):", flush=True)
                    print(disc.profile_table(14), flush=True)
                except Exception as e:
                    print(f"{name} disc-prof: {type(e).__name__}: {str(e)[:300]}", flush=True)
                finally:
                    os.environ.pop("DISC_PROFILE", None)
                continue
            m = s.module if comp == "eager" else torch.compile(s.module, backend=comp, dynamic=True)
            try:
                t0 = time.perf_counter()
                m(*s.inputs)
                sync()
                c = time.perf_counter() - t0
                w = wall(m, s.inputs)
                h = host(m, s.inputs)
                g, nk, top = kernels(m, s.inputs)
                print(f"{name} {comp}: first {c:.1f}s wall {w:.3f} ms host {h:.3f} ms gpu {g:.3f} ms kernels {nk:.0f}",
                      flush=True)
                for t in top:
                    print("   ", t, flush=True)
            except Exception as e:
                print(f"{name} {comp}: {type(e).__name__}: {str(e)[:300]}", flush=True)
    if hasattr(disc, "stats"):
        print("stats", {k: v for k, v in disc.stats().items() if v}, flush=True)
