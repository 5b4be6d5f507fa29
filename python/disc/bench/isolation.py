"""One subprocess per sample, shared by the correctness run and the
benchmark harness: a crash, hang or error of the child becomes an outcome
("crash", "timeout", "error") with the tail of its output, never an
exception in the driver."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from typing import Optional


@dataclass
class ChildRun:
    stdout: str
    outcome: Optional[str]  # None: exit status 0
    detail: str


def run_child(module: str, args: list, timeout: float, env: Optional[dict] = None,
              tail_lines: int = 12) -> ChildRun:
    """`python -m module args...` with a timeout. A negative exit status
    (killed by a signal: a segfault, an abort) is a "crash", any other
    non-zero status an "error"."""
    cmd = [sys.executable, "-m", module] + [str(a) for a in args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return ChildRun(out, "timeout", f"no result after {timeout:.0f} s")
    if proc.returncode == 0:
        return ChildRun(proc.stdout, None, "")
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-tail_lines:]
    return ChildRun(proc.stdout, "crash" if proc.returncode < 0 else "error",
                    f"exit status {proc.returncode}: " + "\n".join(tail))
