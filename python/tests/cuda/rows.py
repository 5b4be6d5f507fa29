"""Inputs and settings shared by the row-kernel tests of the cuda target
(test_cuda_row_vectors.py, test_cuda_row_cache.py, test_cuda_gpu.py)."""
import torch


def rand(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def row_calls(widths, rows=(3, 5)):
    """(x, weight, bias) for each row length of `widths`: x of shape
    (*rows, width) with outliers and a NaN (it must propagate through
    vector lanes and caches alike)."""
    calls = []
    for i, width in enumerate(widths):
        x = rand(*rows, width, seed=i)
        if x.numel() > 3:
            x.view(-1)[::7] *= 4
            x.view(-1)[3] = float("nan")
        calls.append((x, rand(width, seed=100 + i), rand(width, seed=200 + i)))
    return calls


def offset_row_calls(cases, device):
    """(x, weight, bias) for each (rows, length, storage offset) of `cases`:
    x a view into a larger buffer at that offset in elements (4: 16 bytes
    past an aligned start, 5: misaligned for a vector; 0 and 1 would each
    be a specialisation of their own)."""
    calls = []
    for n, length, offset in cases:
        base = torch.randn(n * length + 8, device=device)
        x = base[offset:offset + n * length].view(n, length)
        calls.append((x, torch.randn(length, device=device),
                      torch.randn(length, device=device)))
    return calls


def row_settings(monkeypatch, **settings):
    """DISC_CACHE=0 and, for each NAME=value, DISC_CUDA_NAME (unset when
    the value is None)."""
    monkeypatch.setenv("DISC_CACHE", "0")
    for name, value in settings.items():
        if value is None:
            monkeypatch.delenv(f"DISC_CUDA_{name}", raising=False)
        else:
            monkeypatch.setenv(f"DISC_CUDA_{name}", value)
