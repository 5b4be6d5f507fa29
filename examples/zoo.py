"""A small model zoo, written in the repository, that exercises what real
models do: dense layers and norms, convolutions and pooling, attention with a
padding mask, message passing with gather/scatter, 1-d audio convolutions and
embeddings. Used by `make demo` (examples/demo.py) and by the model-zoo tests
(python/tests/frontend/test_model_zoo.py).

Each entry of ZOO is a `ZooModel`: a constructor and a function that makes
inputs for a given "size" (batch, sequence length, image size, node count...),
so one compiled model can be run at several shapes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=64, hidden=256, d_out=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, d_out)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        h = self.drop(F.gelu(self.fc1(x)))
        h = self.norm(h)
        h = h + F.silu(self.fc2(h))
        return torch.softmax(self.head(h), dim=-1)


class BasicBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.down = None
        if stride != 1 or c_in != c_out:
            self.down = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.down is None else self.down(x)
        return F.relu(out + identity)


class SmallResNet(nn.Module):
    """A ResNet-like CNN: stem, max pool, two stages of basic blocks,
    global average pool, classifier."""

    def __init__(self, num_classes=10, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = BasicBlock(width, width, 1)
        self.layer2 = BasicBlock(width, 2 * width, 2)
        self.fc = nn.Linear(2 * width, num_classes)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = self.layer2(self.layer1(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class EncoderLayer(nn.Module):
    """Pre-norm transformer encoder layer; attention through
    scaled_dot_product_attention with a key-padding mask."""

    def __init__(self, d_model, heads, ffn):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, ffn)
        self.ff2 = nn.Linear(ffn, d_model)

    def forward(self, x, keep):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        mask = keep[:, None, None, :]  # (b, 1, 1, t): True = attend
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff2(F.gelu(self.ff1(self.norm2(x)), approximate="tanh"))


class TransformerEncoder(nn.Module):
    """Token embedding + learned positions, encoder layers, masked mean
    pooling over the valid tokens, classifier."""

    def __init__(self, vocab=1000, d_model=64, heads=4, ffn=128, layers=2, max_len=512, num_classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        self.layers = nn.ModuleList([EncoderLayer(d_model, heads, ffn) for _ in range(layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, tokens, lengths):
        b, t = tokens.shape
        keep = torch.arange(t, device=tokens.device)[None, :] < lengths[:, None]
        x = self.embed(tokens) + self.pos[:t]
        for layer in self.layers:
            x = layer(x, keep)
        x = self.norm(x)
        w = keep.to(x.dtype)[..., None]
        pooled = (x * w).sum(1) / w.sum(1).clamp(min=1.0)
        return self.head(pooled)


class GNN(nn.Module):
    """Two rounds of mean-aggregation message passing (GraphSAGE-like):
    gather source features along the edges, scatter-add them into the
    destination nodes, normalise by in-degree."""

    def __init__(self, d_in=16, hidden=32, d_out=8):
        super().__init__()
        self.msg1 = nn.Linear(d_in, hidden)
        self.self1 = nn.Linear(d_in, hidden)
        self.msg2 = nn.Linear(hidden, d_out)
        self.self2 = nn.Linear(hidden, d_out)

    @staticmethod
    def aggregate(h, src, dst):
        out = torch.zeros(h.shape[0], h.shape[1], dtype=h.dtype, device=h.device)
        out = out.index_add(0, dst, h[src])
        deg = torch.zeros(h.shape[0], dtype=h.dtype, device=h.device)
        deg = deg.scatter_add(0, dst, torch.ones_like(dst, dtype=h.dtype))
        return out / deg.clamp(min=1.0)[:, None]

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        h = F.relu(self.msg1(self.aggregate(x, src, dst)) + self.self1(x))
        return self.msg2(self.aggregate(h, src, dst)) + self.self2(h)


class AudioBlock(nn.Module):
    """A 1-d conv audio block: strided feature conv, group norm, GELU,
    depthwise conv with a residual, pointwise projection."""

    def __init__(self, c_in=1, channels=32):
        super().__init__()
        self.feat = nn.Conv1d(c_in, channels, 10, stride=5)
        self.norm = nn.GroupNorm(4, channels)
        self.depthwise = nn.Conv1d(channels, channels, 5, padding=2, groups=channels)
        self.pointwise = nn.Conv1d(channels, channels, 1)

    def forward(self, wave):
        h = F.gelu(self.norm(self.feat(wave)))
        h = h + F.hardswish(self.depthwise(h))
        return self.pointwise(h).transpose(1, 2)


class EmbeddingMLP(nn.Module):
    """A recommendation-style model: two embedding tables, mean over the
    bag of items, concatenated with dense features, MLP, sigmoid."""

    def __init__(self, users=500, items=2000, dim=16, dense=8):
        super().__init__()
        self.user = nn.Embedding(users, dim)
        self.item = nn.Embedding(items, dim)
        self.mlp = nn.Sequential(nn.Linear(2 * dim + dense, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, user_ids, item_bags, dense):
        u = self.user(user_ids)
        i = self.item(item_bags).mean(dim=1)
        return torch.sigmoid(self.mlp(torch.cat([u, i, dense], dim=1))).squeeze(-1)


@dataclass
class ZooModel:
    name: str
    make: Callable[[], nn.Module]
    inputs: Callable[[int, torch.Generator], tuple]  # (size, rng) -> args
    sizes: Sequence[int]  # the sizes the tests and the demo run
    describe: Callable[[int], str]  # size -> "batch 8, seq 33" etc.


def _randn(shape, g):
    return torch.randn(shape, generator=g)


def _tokens_inputs(size, g):
    batch, seq = size, 3 * size + 5
    tokens = torch.randint(0, 1000, (batch, seq), generator=g)
    lengths = torch.randint(seq // 2, seq + 1, (batch,), generator=g)
    return tokens, lengths


def _graph_inputs(size, g):
    nodes, edges = size, 4 * size + 3
    x = _randn((nodes, 16), g)
    edge_index = torch.randint(0, nodes, (2, edges), generator=g)
    return x, edge_index


def _recsys_inputs(size, g):
    batch, bag = size, size // 3 + 2
    return (torch.randint(0, 500, (batch,), generator=g),
            torch.randint(0, 2000, (batch, bag), generator=g), _randn((batch, 8), g))


ZOO = {
    m.name: m for m in [
        ZooModel("mlp", MLP, lambda s, g: (_randn((s, 64), g),), [3, 17, 129],
                 lambda s: f"batch {s}"),
        ZooModel("resnet", SmallResNet, lambda s, g: (_randn((s % 13 + 3, 3, 4 * s + 5, 4 * s + 9), g),),
                 [5, 8, 14], lambda s: f"batch {s % 13 + 3}, image {4 * s + 5}x{4 * s + 9}"),
        ZooModel("transformer", TransformerEncoder, _tokens_inputs, [3, 6, 11],
                 lambda s: f"batch {s}, seq {3 * s + 5}"),
        ZooModel("gnn", GNN, _graph_inputs, [9, 23, 70], lambda s: f"{s} nodes, {4 * s + 3} edges"),
        ZooModel("audio", AudioBlock, lambda s, g: (_randn((s, 1, 160 * s + 17), g),), [3, 5, 9],
                 lambda s: f"batch {s}, {160 * s + 17} samples"),
        ZooModel("embedding_mlp", EmbeddingMLP, _recsys_inputs, [5, 12, 40],
                 lambda s: f"batch {s}, bag {s // 3 + 2}"),
    ]
}


def build(name: str, seed: int = 0) -> nn.Module:
    """The zoo model `name` in eval mode, with seeded weights (batch-norm
    statistics randomised so that inference batch norm is not an identity)."""
    torch.manual_seed(seed)
    model = ZOO[name].make().eval()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    return model
