"""Loading GraphNet samples (see ../shared/graphnet/README.md for the format).

A sample directory holds model.py (class GraphModule), weight_meta.py and
input_meta.py (one class per forward argument), input_tensor_constraints.py
(the dynamic dims) and graph_net.json. `load_sample` builds the module and a
reproducible set of inputs for one device.
"""
from __future__ import annotations

import inspect
import json
import math
import os
import re
import types
from dataclasses import dataclass, field
from typing import Optional

import torch

_CUDA_PATTERNS = [
    (re.compile(r'device\(type=["\']cuda["\'](, index=\d+)?\)'), 'device(type="{dev}")'),
    (re.compile(r'(["\'])cuda(:\d+)?\1'), '"{dev}"'),
]


def rewrite_device(source: str, device: str) -> str:
    """GraphNet's model.py files may name `cuda` devices: point them at
    `device` (what GraphNet's own harness does)."""
    if device.startswith("cuda"):
        return source
    for pattern, replacement in _CUDA_PATTERNS:
        source = pattern.sub(replacement.format(dev=device), source)
    return source


def _exec_file(path: str, device: str = "cpu", name: str = "graphnet_module") -> types.ModuleType:
    with open(path) as f:
        source = rewrite_device(f.read(), device)
    module = types.ModuleType(name)
    module.__file__ = path
    exec(compile(source, path, "exec"), module.__dict__)
    return module


@dataclass
class TensorMeta:
    name: str
    shape: list
    dtype: torch.dtype
    mean: Optional[float] = None
    std: Optional[float] = None
    data: Optional[list] = None
    min_val: Optional[float] = None
    max_val: Optional[float] = None


def _parse_dtype(text) -> torch.dtype:
    if isinstance(text, torch.dtype):
        return text
    name = str(text).replace("torch.", "")
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {text!r}")
    return dtype


def read_meta(path: str) -> dict[str, TensorMeta]:
    if not os.path.exists(path):
        return {}
    module = _exec_file(path, name="graphnet_meta")
    metas = {}
    for value in module.__dict__.values():
        if isinstance(value, type) and hasattr(value, "name") and hasattr(value, "shape"):
            meta = TensorMeta(
                name=value.name, shape=list(value.shape), dtype=_parse_dtype(value.dtype),
                mean=getattr(value, "mean", None), std=getattr(value, "std", None),
                data=getattr(value, "data", None), min_val=getattr(value, "min_val", None),
                max_val=getattr(value, "max_val", None))
            metas[meta.name] = meta
    return metas


def _is_variance(name: str) -> bool:
    return "running_var" in name


def make_tensor(meta: TensorMeta, generator: torch.Generator, device: str = "cpu",
                shape: Optional[list] = None) -> torch.Tensor:
    """`data` when given (and the shape is the recorded one); else random
    with the recorded mean/std for floats; integers in [min_val, max_val]
    when known, else zeros (a valid index for any non-empty dim); random
    bools."""
    shape = list(meta.shape if shape is None else shape)
    dtype = meta.dtype
    if meta.data is not None and shape == list(meta.shape):
        t = torch.tensor(meta.data, dtype=dtype).reshape(shape)
    elif dtype.is_floating_point:
        mean = 0.0 if meta.mean is None else float(meta.mean)
        std = 1.0 if meta.std is None else float(meta.std)
        if math.isnan(std):
            # GraphNet records the sample std of a one-element tensor as NaN;
            # its one value is the mean. (A NaN draw made convtasnet's PReLU
            # weight NaN and its whole output NaN in every back end.)
            std = 0.0
        t = torch.randn(shape, generator=generator, dtype=torch.float32) * std + mean
        if _is_variance(meta.name):
            # A normal draw around a positive mean can go negative; a
            # negative variance makes batch norm NaN in every back end.
            t = t.abs()
        t = t.to(dtype)
    elif dtype == torch.bool:
        t = torch.randint(0, 2, shape, generator=generator).bool()
    elif meta.min_val is not None and meta.max_val is not None:
        t = torch.randint(int(meta.min_val), int(meta.max_val) + 1, shape, generator=generator,
                          dtype=torch.int64).to(dtype)
    else:
        t = torch.zeros(shape, dtype=dtype)
    return t.to(device)


@dataclass
class Sample:
    path: str
    name: str
    module: torch.nn.Module
    arg_names: list
    metas: dict
    inputs: list
    info: dict = field(default_factory=dict)


def sample_name(path: str) -> str:
    path = os.path.abspath(path)
    marker = os.sep + "samples" + os.sep
    return path.split(marker, 1)[1] if marker in path else os.path.basename(path)


def find_samples(paths) -> list[str]:
    """Sample directories (holding model.py) under each path, sorted."""
    found = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "model.py")):
            found.append(os.path.abspath(p))
            continue
        for root, _dirs, files in os.walk(p):
            if "model.py" in files:
                found.append(os.path.abspath(root))
    return sorted(set(found))


def load_sample(path: str, device: str = "cpu", seed: int = 0) -> Sample:
    module = _exec_file(os.path.join(path, "model.py"), device)
    if not hasattr(module, "GraphModule"):
        raise ValueError(f"{path}/model.py defines no GraphModule")
    gm = module.GraphModule()
    metas = read_meta(os.path.join(path, "weight_meta.py"))
    metas.update(read_meta(os.path.join(path, "input_meta.py")))
    signature = inspect.signature(gm.forward)
    generator = torch.Generator().manual_seed(seed)
    arg_names, inputs = [], []
    for name, param in signature.parameters.items():
        meta = metas.get(name)
        if meta is None:
            raise ValueError(f"{path}: no metadata for forward argument {name}")
        arg_names.append(name)
        if "SymInt" in str(param.annotation) or (meta.shape == [] and name.startswith("s")
                                                 and meta.data is not None
                                                 and not meta.dtype.is_floating_point
                                                 and "Tensor" not in str(param.annotation)):
            inputs.append(int(meta.data[0]) if meta.data else 1)
        else:
            inputs.append(make_tensor(meta, generator, device))
    info = {}
    info_path = os.path.join(path, "graph_net.json")
    if os.path.exists(info_path):
        with open(info_path) as f:
            info = json.load(f)
    return Sample(path=path, name=sample_name(path), module=gm.eval(), arg_names=arg_names,
                  metas=metas, inputs=inputs, info=info)
