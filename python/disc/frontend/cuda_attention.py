"""PyTorch's CUDA attention kernels as math, forward and backward.

On CUDA tensors, `scaled_dot_product_attention` dispatches to the
efficient-attention, flash-attention or cuDNN kernel while the graph is
traced. The cuda target has no attention kernel yet (docs/cuda.md), and
left in eager these ops take DISC's outputs as operands: the
efficient-attention kernel then rejects a mask whose row stride is not a
multiple of 4, which eager never passes it (its composite pads the mask
first; the first GPU training run hit this in the zoo transformer). As math
(two batched matmuls through cuBLASLt and a stitch softmax) they compile.

In training graphs the backward ops are decomposed too (training_table):
AOTAutograd applies the table to the joint graph, so a backward op reads
the logsumexp that the decomposed forward produced (attention_math's
[B, H, L], not a kernel's own layout). Forward and backward decline the
same cases (dropout, grouped-query heads; attention_math returns None), so
a pair is either decomposed together or kept whole together; a kept op
gets its mask realigned (backend._aligned_attention_bias).
"""
from __future__ import annotations

import torch

from .backward import attention_math, attention_math_backward

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


def efficient_attention_backward(grad_out, query, key, value, attn_bias, out, logsumexp,
                                 philox_seed, philox_offset, dropout_p, grad_input_mask,
                                 is_causal=False, *, scale=None):
    """-> (grad_query, grad_key, grad_value, grad_attn_bias or None)."""
    grads = attention_math_backward(grad_out, query, key, value, out, logsumexp, attn_bias,
                                    dropout_p, is_causal, scale)
    if grads is None:
        return NotImplemented
    grad_query, grad_key, grad_value, grad_scores = grads
    grad_bias = None
    if attn_bias is not None and grad_input_mask[3]:
        # scores = q k^T * scale + bias: the bias's gradient is dS, in the
        # bias's (already broadcast, 4-d) shape.
        grad_bias = aten._to_copy.default(grad_scores, dtype=attn_bias.dtype)
    return grad_query, grad_key, grad_value, grad_bias


def flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k,
                             max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, *,
                             scale=None):
    """-> (grad_query, grad_key, grad_value)."""
    grads = attention_math_backward(grad_out, query, key, value, out, logsumexp, None,
                                    dropout_p, is_causal, scale)
    return NotImplemented if grads is None else grads[:3]


def cudnn_attention_backward(grad_out, query, key, value, out, logsumexp, philox_seed,
                             philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k,
                             dropout_p, is_causal, *, scale=None):
    """-> (grad_query, grad_key, grad_value)."""
    grads = attention_math_backward(grad_out, query, key, value, out, logsumexp, attn_bias,
                                    dropout_p, is_causal, scale)
    return NotImplemented if grads is None else grads[:3]


def table() -> dict:
    """The forward decompositions (inference and training graphs)."""
    out = {aten._scaled_dot_product_efficient_attention.default: efficient_attention,
           aten._scaled_dot_product_flash_attention.default: flash_attention}
    cudnn = getattr(aten, "_scaled_dot_product_cudnn_attention", None)
    if cudnn is not None:
        out[cudnn.default] = cudnn_attention
    return out


def training_table() -> dict:
    """table() and the backward ops that read its logsumexp."""
    out = table()
    out[aten._scaled_dot_product_efficient_attention_backward.default] = \
        efficient_attention_backward
    out[aten._scaled_dot_product_flash_attention_backward.default] = flash_attention_backward
    cudnn = getattr(aten, "_scaled_dot_product_cudnn_attention_backward", None)
    if cudnn is not None:
        out[cudnn.default] = cudnn_attention_backward
    return out
