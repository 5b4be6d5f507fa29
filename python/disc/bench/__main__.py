"""python -m disc.bench COMMAND ...

    graphnet     benchmark GraphNet samples: eager, TorchInductor, DISC
    report       summary.md and plots again from a results.jsonl
    correctness  DISC against eager only, one subprocess per sample
"""
from __future__ import annotations

import os
import sys

# Compile times are reported cold: no compile cache unless asked for
# (DISC_CACHE=1; the warm-start benchmark sets it per process).
os.environ.setdefault("DISC_CACHE", "0")

COMMANDS = {
    "graphnet": "disc.bench.harness",
    "report": "disc.bench.report",
    "correctness": "disc.bench.correctness",
}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    import importlib

    module = importlib.import_module(COMMANDS[argv[0]])
    return module.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
