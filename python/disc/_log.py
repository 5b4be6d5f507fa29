"""DISC_LOG=topic,topic,...: decisions logged to stderr.

Topics: ``compile`` (phase times of each MLIR compilation), ``fallback``
(ops left to eager PyTorch, and why), ``partition`` (the partitions of each
graph), ``import`` (the MLIR of each partition), ``fusion`` (the stitch
kernels of each compilation: row reductions fused with their elementwise
stages; the epilogues fused into library calls), ``library`` (printed by
the runtime: each oneDNN convolution primitive it builds, its
implementation and how its epilogue runs), ``cache`` (compile cache hits,
misses and unusable entries), ``recompiles`` (why disc.compile(mode="export")
traced a model again), ``memory`` (where cuda calls take device memory:
PyTorch's caching allocator or the device's pool), ``all``.
"""
from __future__ import annotations

import os
import sys

TOPICS = ("compile", "fallback", "partition", "import", "fusion", "library", "cache",
          "recompiles", "memory")


def enabled(topic: str) -> bool:
    topics = {t.strip() for t in os.environ.get("DISC_LOG", "").split(",") if t.strip()}
    return topic in topics or "all" in topics


def log(topic: str, message: str) -> None:
    if enabled(topic):
        print(f"[disc:{topic}] {message}", file=sys.stderr, flush=True)
