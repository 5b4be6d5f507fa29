"""Exports the model zoo's SmallResNet (examples/zoo.py) to an artifact:

    .venv/bin/python examples/standalone/export_model.py resnet.disc

Then run it without Python: build/examples/standalone/disc-standalone-example
resnet.disc (see README.md here). Prints the reference outputs the C++
program must reproduce (sum of each output at batch 1, 3 and 8, with the
inputs the program builds: element i of the input is sin(i) / 2).
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import disc  # noqa: E402
import zoo  # noqa: E402


def example_input(batch: int) -> torch.Tensor:
    """What main.cpp feeds: element i (row-major) is sin(i) / 2."""
    n = batch * 3 * 32 * 32
    return torch.tensor([math.sin(i) / 2 for i in range(n)],
                        dtype=torch.float32).reshape(batch, 3, 32, 32)


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else "resnet.disc"
    model = zoo.build("resnet").eval()
    artifact = disc.export(model, (torch.randn(2, 3, 32, 32),))
    artifact.save(path)
    print(f"exported {artifact} to {path} ({os.path.getsize(path) / 1e6:.1f} MB; "
          f"trace {artifact.trace_seconds:.1f} s, compile {artifact.compile_seconds:.1f} s)")
    with torch.no_grad():
        for batch in (1, 3, 8):
            out = model(example_input(batch))
            print(f"batch {batch}: output {list(out.shape)} sum {out.double().sum().item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
