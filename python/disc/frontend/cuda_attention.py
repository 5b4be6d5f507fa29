"""PyTorch's CUDA attention kernels as math, for inference graphs.

On CUDA tensors, `scaled_dot_product_attention` dispatches to the
efficient-attention, flash-attention or cuDNN kernel while the graph is
traced. The cuda target has no attention kernel yet (docs/cuda.md), and
left in eager these ops take DISC's outputs as operands: the
efficient-attention kernel then rejects a mask whose row stride is not a
multiple of 4, which eager never passes it (its composite pads the mask
first). As math (two batched matmuls through cuBLASLt and a stitch softmax)
they compile. Training keeps PyTorch's ops: their backward ops read the
forward's logsumexp in each kernel's own layout.
"""
from __future__ import annotations

import torch

from .backward import attention_math

aten = torch.ops.aten


def _unused_tensor(like):
    return aten.empty.memory_format([0], dtype=torch.int64, device=like.device)


def efficient_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                        is_causal=False, *, scale=None):
    """-> (output, log_sumexp, philox_seed, philox_offset)."""
    result = attention_math(query, key, value, attn_bias, dropout_p, is_causal, scale)
    if result is None:
        return NotImplemented
    output, logsumexp = result
    return output, logsumexp, _unused_tensor(query), _unused_tensor(query)


def _nine_values(query, key, output, logsumexp):
    """The nine results of the flash and cuDNN kernels; inference graphs
    read the first."""
    unused = _unused_tensor(query)
    return (output, logsumexp, unused, unused, query.shape[-2], key.shape[-2], unused, unused,
            aten.empty.memory_format([0], dtype=query.dtype, device=query.device))


def flash_attention(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False,
                    *, scale=None):
    """-> (output, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
    philox_seed, philox_offset, debug_attn_mask)."""
    result = attention_math(query, key, value, None, dropout_p, is_causal, scale)
    if result is None or return_debug_mask:
        return NotImplemented
    return _nine_values(query, key, *result)


def cudnn_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                    is_causal=False, return_debug_mask=False, *, scale=None):
    """-> the nine values of flash_attention."""
    result = attention_math(query, key, value, attn_bias, dropout_p, is_causal, scale)
    if result is None or return_debug_mask:
        return NotImplemented
    return _nine_values(query, key, *result)


def table() -> dict:
    """The inference decompositions (backend.decompositions(training=False))."""
    out = {aten._scaled_dot_product_efficient_attention.default: efficient_attention,
           aten._scaled_dot_product_flash_attention.default: flash_attention}
    cudnn = getattr(aten, "_scaled_dot_product_cudnn_attention", None)
    if cudnn is not None:
        out[cudnn.default] = cudnn_attention
    return out
