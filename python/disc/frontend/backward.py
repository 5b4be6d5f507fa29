"""Decompositions of the backward ops PyTorch's tables leave whole, into ops
DISC compiles: a convolution's gradients are convolutions (oneDNN), SDPA's
backward is the attention math's backward. Used by the training path
(backend.decompositions(training=True))."""
from __future__ import annotations

import torch

aten = torch.ops.aten


def _contiguous(t):
    """`t` as a contiguous tensor, so that it can be viewed: a gradient may
    be a strided view (a slice of a concatenation's gradient). A copy DISC
    fuses into its reader."""
    return aten.clone.default(t, memory_format=torch.contiguous_format)


def _gradient_input(grad, weight, input_shape, stride, padding, dilation, groups):
    """d(loss)/d(input) of a (non-transposed) convolution: the transposed
    convolution of the gradient with the same weight. With stride 1 and a
    padding the kernel covers, that is the transposed convolution with the
    forward's padding. Otherwise it is computed uncropped, then the input's
    rows are cut from it (from `padding` on). A strided convolution's last
    input rows can lie past the uncropped result (no window reads them:
    zero gradient), hence stride - 1 zero rows after it. This keeps every
    size symbolic, where output_padding would have to be a constant. One
    zero row before it too, so that the cut never starts at 0: a slice from
    0 makes PyTorch ask whether it is the whole (contiguous) tensor, a
    guard on the size's parity that Dynamo would then check."""
    spatial = len(input_shape) - 2
    if all(s == 1 for s in stride) and all(
            padding[d] <= dilation[d] * (weight.shape[2 + d] - 1) for d in range(spatial)):
        # Stride 1: the transposed convolution with the forward's padding
        # has the input's size exactly (one library call, no pad and crop
        # around it, no border rows computed and cut away). The padding
        # bound is a guard where the kernel's size is symbolic.
        return aten.convolution.default(grad, weight, None, stride, padding, dilation, True,
                                        [0] * spatial, groups)
    full = aten.convolution.default(grad, weight, None, stride, [0] * spatial, dilation, True,
                                    [0] * spatial, groups)
    extra = []
    for d in reversed(range(spatial)):
        extra += [1, stride[d] - 1]
    full = aten.constant_pad_nd.default(full, extra, 0.0)
    for d in range(spatial):
        full = aten.slice.Tensor(full, 2 + d, padding[d] + 1, padding[d] + 1 + input_shape[2 + d])
    return full


def _gradient_weight(grad, input, weight_shape, stride, padding, dilation, groups):
    """d(loss)/d(weight) of a (non-transposed) convolution: a convolution of
    the input (batch as channels) with the gradient (batch as input
    channels), the forward's stride as dilation and its dilation as stride,
    one group per forward group; then cut to the kernel's size."""
    n, spatial = input.shape[0], input.dim() - 2
    c_in_group = weight_shape[1]
    c_out_group = weight_shape[0] // groups
    space_in, space_out = list(input.shape[2:]), list(grad.shape[2:])
    order = [2, 1, 0] + list(range(3, 3 + spatial))
    # [C_in/g, g*N, *space]: group j's channels are (j, n) for every n.
    lhs = aten.permute.default(
        aten.view.default(_contiguous(input), [n, groups, c_in_group] + space_in), order)
    lhs = aten.clone.default(lhs, memory_format=torch.contiguous_format)
    lhs = aten.view.default(lhs, [c_in_group, groups * n] + space_in)
    # [g*C_out/g, N, *space_out]: output channel (j, o) reads group j's N.
    rhs = aten.permute.default(
        aten.view.default(_contiguous(grad), [n, groups, c_out_group] + space_out), [1, 2, 0] +
        list(range(3, 3 + spatial)))
    rhs = aten.clone.default(rhs, memory_format=torch.contiguous_format)
    rhs = aten.view.default(rhs, [groups * c_out_group, n] + space_out)
    out = aten.convolution.default(lhs, rhs, None, dilation, padding, stride, False,
                                   [0] * spatial, groups)
    # [C_in/g, C_out, *k'], k' >= k: cut to the kernel (a negative pad: its
    # result is a new tensor of static size, where a slice's view would
    # have its contiguity asked of k', a guard), then [C_out, C_in/g, *k].
    amounts = []
    for d in reversed(range(spatial)):
        amounts += [0, weight_shape[2 + d] - out.shape[2 + d]]
    out = aten.constant_pad_nd.default(out, amounts, 0.0)
    out = aten.permute.default(out, [1, 0] + list(range(2, 2 + spatial)))
    return aten.clone.default(out, memory_format=torch.contiguous_format)


def _windows(input, kernel, stride, padding, dilation, out_space):
    """Per kernel offset (row-major over the kernel's dims), the input
    elements that offset reads for every output position: [N, C, *out]
    strided slices of the zero-padded input. One extra zero row in front
    of each dim keeps every slice from starting at 0 (a slice from 0 makes
    PyTorch ask whether it is the whole tensor: a guard on the size)."""
    import itertools

    spatial = len(kernel)
    amounts = []
    for d in reversed(range(spatial)):
        amounts += [padding[d] + 1, padding[d]]
    padded = aten.constant_pad_nd.default(input, amounts, 0.0)
    windows = []
    for offsets in itertools.product(*(range(k) for k in kernel)):
        window = padded
        for d, k in enumerate(offsets):
            start = 1 + k * dilation[d]
            window = aten.slice.Tensor(window, 2 + d, start,
                                       start + (out_space[d] - 1) * stride[d] + 1, stride[d])
        windows.append(window)
    return windows


def _gradient_weight_by_windows(grad, input, weight_shape, stride, padding, dilation,
                                groups):
    """d(loss)/d(weight) from the input windows each kernel offset reads
    (_windows), for the shapes where that beats a convolution whose kernel
    is the whole output (oneDNN runs those slowly: 1-d audio convolutions
    took 2x eager's step time):
    - groups 1, 1-d: one batched product over the batch,
      sum_n grad[n] (C_out x T) @ windows[n] (T x C_in*K), then a sum;
    - depthwise (C_out = C_in = groups): grad * window summed over batch
      and space, per offset.
    None for other shapes."""
    spatial = input.dim() - 2
    kernel = list(weight_shape[2:])
    c_out, c_in_group = weight_shape[0], weight_shape[1]
    out_space = list(grad.shape[2:])
    depthwise = groups > 1 and c_in_group == 1 and c_out == groups
    if not (groups == 1 and spatial == 1) and not (depthwise and spatial <= 2):
        return None
    windows = _windows(input, kernel, stride, padding, dilation, out_space)
    if depthwise:
        dims = [0] + list(range(2, 2 + spatial))
        per_offset = [aten.sum.dim_IntList(aten.mul.Tensor(grad, w), dims) for w in windows]
        return aten.view.default(aten.stack.default(per_offset, 1), list(weight_shape))
    n = input.shape[0]
    columns = aten.view.default(aten.stack.default(windows, 2),
                                [n, c_in_group * kernel[0], out_space[0]])
    product = aten.bmm.default(grad, aten.transpose.int(columns, 1, 2))
    return aten.view.default(aten.sum.dim_IntList(product, [0]), list(weight_shape))


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    """A convolution's gradients as convolutions. A transposed convolution
    y = C_w^T x (C_w: the ordinary convolution with the same weight, from
    y's space to x's) has the roles swapped: d/dx = C_w dy, an ordinary
    convolution of the gradient (its output has x's size exactly: the
    output_padding rows are ones no window reads), and d/dw is the
    ordinary convolution's weight gradient with dy as its input and x as
    its output's gradient."""
    spatial = input.dim() - 2
    stride, padding, dilation = (list(v) * (spatial if len(v) == 1 else 1)
                                 for v in (stride, padding, dilation))
    if _is_library_weight_gradient(input, weight, dilation, transposed, output_padding, groups,
                                   output_mask):
        return NotImplemented  # kept whole: disc.convolution_backward_weights
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        if transposed:
            grad_input = aten.convolution.default(grad_output, weight, None, stride, padding,
                                                  dilation, False, [0] * spatial, groups)
        else:
            grad_input = _gradient_input(grad_output, weight, list(input.shape), stride,
                                         padding, dilation, groups)
    if output_mask[1]:
        # The ordinary convolution's (output gradient, input) pair.
        pair = (input, grad_output) if transposed else (grad_output, input)
        if _library_weight_gradient(pair[1], weight, dilation, groups):
            grad_weight = aten.convolution_backward.default(
                pair[0], pair[1], weight, None, stride, padding, dilation, False,
                [0] * spatial, groups, [False, True, False])[1]
            return grad_input, grad_weight, _gradient_bias(grad_output, output_mask)
        grad_weight = _gradient_weight_by_windows(pair[0], pair[1], list(weight.shape),
                                                  stride, padding, dilation, groups)
        if grad_weight is None:
            grad_weight = _gradient_weight(pair[0], pair[1], list(weight.shape), stride,
                                           padding, dilation, groups)
    return grad_input, grad_weight, _gradient_bias(grad_output, output_mask)


def _gradient_bias(grad_output, output_mask):
    if not output_mask[2]:
        return None
    return aten.sum.dim_IntList(grad_output, [0] + list(range(2, grad_output.dim())))


def _library_weight_gradient(input, weight, dilation, groups) -> bool:
    """Whether a convolution's weight gradient runs as one library call
    (disc.convolution_backward_weights: oneDNN's backward-weights
    primitive) instead of the decompositions above: on CPU tensors of a
    float type (a kernel of symbolic sizes, a weight input under
    dynamic=True, passes them to the op). Not for a depthwise convolution
    that is dilated or 1-d, where the windows
    (_gradient_weight_by_windows) measured faster: oneDNN has no direct
    kernel for a dilated one (x64:gemm:jit; the windows took 0.55x its
    time at [2, 128, 2000], kernel 3, dilation 8, a convtasnet block), and
    a 1-d one took 1.0-1.5x the windows' time (the zoo's audio block at
    [9, 32, 290], kernel 5). On cuda tensors the call is cuDNN's backward
    filter, for every float convolution (the decompositions' convolution
    whose kernel is the whole output, or the windows, are what eager never
    runs there)."""
    if input.dtype not in (torch.float32, torch.float16, torch.bfloat16) or \
            not 3 <= input.dim() <= 5:
        return False
    if input.device.type == "cuda":
        return True
    depthwise = groups > 1 and weight.shape[1] == 1 and weight.shape[0] == groups
    return (input.device.type == "cpu"
            and not (depthwise and (input.dim() == 3 or any(d != 1 for d in dilation))))


def _is_library_weight_gradient(input, weight, dilation, transposed, output_padding, groups,
                                output_mask) -> bool:
    """The weight-gradient-only convolution_backward this decomposition
    emits for _library_weight_gradient: kept whole in the graph (the
    importer lowers it), not decomposed again."""
    return (list(output_mask) == [False, True, False] and not transposed
            and not any(output_padding)
            and _library_weight_gradient(input, weight, dilation, groups))


def avg_pool2d_backward(grad_output, input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    """Each output's gradient, divided by its window's divisor, spread back
    over the window: a depthwise transposed convolution with a kernel of
    ones (as _gradient_input). The divisors come from the forward op on
    ones: avg_pool(ones) = (real elements) / divisor and, with divisor 1,
    the real elements themselves, so 1 / divisor is their ratio (with
    ceil_mode, count_include_pad and divisor_override as the forward has
    them)."""
    kernel = list(kernel_size) * (2 if len(kernel_size) == 1 else 1)
    stride = list(stride) or kernel
    stride = stride * (2 if len(stride) == 1 else 1)
    padding = list(padding) * (2 if len(padding) == 1 else 1)
    spatial_in = list(input.shape[-2:])
    ones = aten.ones.default([1, 1] + spatial_in, dtype=grad_output.dtype,
                             device=grad_output.device)
    averaged = aten.avg_pool2d.default(ones, kernel, stride, padding, ceil_mode,
                                       count_include_pad, divisor_override)
    summed = aten.avg_pool2d.default(ones, kernel, stride, padding, ceil_mode,
                                     count_include_pad, 1)
    scaled = aten.mul.Tensor(grad_output, aten.div.Tensor(averaged, summed))
    # Every channel alike: channels as a third spatial dim of extent 1 in
    # the kernel, one input channel ([N, 1, C, h, w]; a depthwise kernel
    # would need the channel count, maybe symbolic, as its groups, and
    # folding channels into the batch a reshape of a strided result).
    batched = input.dim() == 4
    grad = aten.unsqueeze.default(scaled if batched else aten.unsqueeze.default(scaled, 0), 1)
    shape = [grad.shape[0], 1, input.shape[-3]] + spatial_in
    weight = aten.ones.default([1, 1, 1] + kernel, dtype=grad.dtype, device=grad.device)
    result = _gradient_input(grad, weight, shape, [1] + stride, [0] + padding, [1, 1, 1], 1)
    result = aten.squeeze.dim(result, 1)
    return result if batched else aten.squeeze.dim(result, 0)


def _attention_scores(query, key, is_causal, attn_mask, scale):
    """softmax's input: q k^T * scale plus the mask (-inf where a boolean
    mask or the causal, top-left aligned triangle excludes a key)."""
    if scale is None:
        scale = 1.0 / (query.shape[-1] ** 0.5)
    scores = aten.mul.Tensor(aten.matmul.default(query, aten.transpose.int(key, -2, -1)), scale)
    if is_causal:
        length, keys = query.shape[-2], key.shape[-2]
        keep = aten.tril.default(aten.ones.default([length, keys], dtype=torch.bool,
                                                   device=query.device))
        scores = aten.masked_fill.Scalar(scores, aten.logical_not.default(keep), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = aten.masked_fill.Scalar(scores, aten.logical_not.default(attn_mask),
                                             float("-inf"))
        else:
            scores = aten.add.Tensor(scores, attn_mask)
    return scores, scale


def flash_attention_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *,
                            attn_mask=None, scale=None):
    """PyTorch's CPU flash-attention op as math, with the real logsumexp
    (PyTorch's own decomposition returns the attention weights in its
    place, which is right for inference and wrong for the backward op
    that reads it)."""
    return attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale) \
        or NotImplemented


def attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale):
    """(output, logsumexp) of attention as math, or None where it does not
    apply (dropout, grouped-query heads)."""
    if dropout_p != 0.0 or query.shape[1] != key.shape[1]:
        return None
    scores, _ = _attention_scores(query, key, is_causal, attn_mask, scale)
    scores = aten._to_copy.default(scores, dtype=torch.float32)
    logsumexp = aten.logsumexp.default(scores, [-1], True)
    weights = aten._to_copy.default(aten.exp.default(aten.sub.Tensor(scores, logsumexp)),
                                    dtype=query.dtype)
    output = aten.matmul.default(weights, value)
    return output, aten.squeeze.dim(logsumexp, -1)


def attention_math_backward(grad_out, query, key, value, out, logsumexp, attn_mask, dropout_p,
                            is_causal, scale):
    """The gradients of attention_math from its logsumexp, (grad_query,
    grad_key, grad_value, grad_scores), or None where attention_math does
    not apply: P = exp(S - lse), dV = P^T dO, dS = P * (dO V^T -
    rowsum(dO * O)), dQ = dS K * scale, dK = dS^T Q * scale; dS is also an
    additive mask's gradient."""
    if dropout_p != 0.0 or query.shape[1] != key.shape[1]:
        return None
    scores, scale = _attention_scores(query, key, is_causal, attn_mask, scale)
    scores = aten._to_copy.default(scores, dtype=torch.float32)
    probs = aten.exp.default(aten.sub.Tensor(scores, aten.unsqueeze.default(logsumexp, -1)))
    probs = aten._to_copy.default(probs, dtype=query.dtype)
    grad_value = aten.matmul.default(aten.transpose.int(probs, -2, -1), grad_out)
    grad_probs = aten.matmul.default(grad_out, aten.transpose.int(value, -2, -1))
    row = aten.sum.dim_IntList(aten.mul.Tensor(grad_out, out), [-1], True)
    grad_scores = aten.mul.Tensor(probs, aten.sub.Tensor(grad_probs, row))
    grad_query = aten.mul.Tensor(aten.matmul.default(grad_scores, key), scale)
    grad_key = aten.mul.Tensor(
        aten.matmul.default(aten.transpose.int(grad_scores, -2, -1), query), scale)
    return grad_query, grad_key, grad_value, grad_scores


def flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                     is_causal, *, attn_mask=None, scale=None):
    """The CPU flash-attention op's gradients (attention_math_backward)."""
    grads = attention_math_backward(grad_out, query, key, value, out, logsumexp, attn_mask,
                                    dropout_p, is_causal, scale)
    return NotImplemented if grads is None else grads[:3]


def _adaptive_window_matrix(out_size, in_size, dtype, device):
    """[out_size, in_size]: row i averages input positions start_i <= h <
    end_i, start_i = floor(i * in / out), end_i = ceil((i + 1) * in / out)
    (adaptive average pooling's windows along one dim)."""
    rows = aten.unsqueeze.default(
        aten.arange.default(out_size, dtype=torch.int64, device=device), 1)
    cols = aten.unsqueeze.default(
        aten.arange.default(in_size, dtype=torch.int64, device=device), 0)
    start = aten.div.Tensor_mode(aten.mul.Tensor(rows, in_size), out_size,
                                 rounding_mode="floor")
    end = aten.div.Tensor_mode(
        aten.add.Tensor(aten.mul.Tensor(aten.add.Tensor(rows, 1), in_size), out_size - 1),
        out_size, rounding_mode="floor")
    inside = aten.logical_and.default(aten.ge.Tensor(cols, start), aten.lt.Tensor(cols, end))
    weight = aten.reciprocal.default(aten._to_copy.default(aten.sub.Tensor(end, start),
                                                           dtype=dtype))
    return aten.where.self(inside, weight, aten.zeros_like.default(weight))


def adaptive_avg_pool2d_backward(grad_output, input):
    """Adaptive average pooling averages separable windows: per channel,
    out = A_h x A_w^T with A the window matrices (_adaptive_window_matrix),
    so the input's gradient is A_h^T grad A_w: two batched products, any
    (symbolic) sizes."""
    if input.dim() not in (3, 4):
        return NotImplemented
    dtype = grad_output.dtype
    compute = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    out_h, out_w = grad_output.shape[-2:]
    in_h, in_w = input.shape[-2:]
    a_h = _adaptive_window_matrix(out_h, in_h, compute, grad_output.device)
    a_w = _adaptive_window_matrix(out_w, in_w, compute, grad_output.device)
    grad = aten._to_copy.default(grad_output, dtype=compute)
    rows = aten.matmul.default(aten.t.default(a_h), grad)    # [..., H, OW]
    full = aten.matmul.default(rows, a_w)                    # [..., H, W]
    return aten._to_copy.default(full, dtype=input.dtype)


def max_pool2d_with_indices_backward(grad_output, input, kernel_size, stride, padding,
                                     dilation, ceil_mode, indices):
    """grad_output summed into the input's elements that indices (h * W + w
    within each [H, W] plane) name: an index_put with accumulate into the
    flattened input, by one index each (the plane's offset added to it).
    PyTorch's decomposition indexes the [planes, H * W] view with two index
    tensors, the plane numbers and indices, which DISC's scatter reads as a
    [planes, OH * OW, 2] coordinate tensor that it builds first and then
    reads back."""
    height, width = input.shape[-2], input.shape[-1]
    plane = height * width
    lead = list(grad_output.shape[:-2])
    planes = 1
    for size in lead:  # symbolic sizes multiply without a guard
        planes = planes * size
    offsets = aten.mul.Tensor(
        aten.arange.start_step(0, planes, 1, dtype=torch.int64, device=indices.device), plane)
    offsets = aten.view.default(offsets, lead + [1, 1])
    flat = aten.view.default(aten.add.Tensor(indices, offsets), [-1])
    zeros = aten.zeros.default([input.numel()], dtype=grad_output.dtype,
                               device=grad_output.device)
    # grad_output may be a strided view (a slice of a concatenation's
    # gradient, as in YOLO's SPPF).
    updates = aten.view.default(_contiguous(grad_output), [-1])
    summed = aten.index_put.default(zeros, [flat], updates, True)
    return aten.view.default(summed, list(input.shape))


def replication_pad_backward(grad_output, input, padding):
    """d(loss)/d(input) of replication padding (1d, 2d, 3d; `padding` is
    (left, right) per padded dim, last dim first), one padded dim at a
    time: the gradient's middle, plus the sum of the left border on the
    first element and of the right border on the last (both on the one
    element of a dim of size 1). Slices, sums along the dim and a select by
    position: elementwise work DISC fuses, where PyTorch leaves the op
    whole (no decomposition: it ran in eager)."""
    grad = grad_output
    for k in range(len(padding) // 2):
        dim = grad.dim() - 1 - k
        left, right = padding[2 * k], padding[2 * k + 1]
        size = input.shape[dim]
        result = aten.slice.Tensor(grad, dim, left, left + size)
        shape = [1] * grad.dim()
        shape[dim] = size
        position = aten.view.default(
            aten.arange.default(size, dtype=torch.int64, device=grad.device), shape)
        for start, length, at in ((0, left, 0), (left + size, right, size - 1)):
            if length == 0:
                continue
            border = aten.sum.dim_IntList(
                aten.slice.Tensor(grad, dim, start, start + length), [dim], True)
            result = aten.add.Tensor(result, aten.where.ScalarOther(
                aten.eq.Scalar(position, at), border, 0.0))
        grad = result
    return grad


def table() -> dict:
    return {aten.convolution_backward.default: convolution_backward,
            aten.avg_pool2d_backward.default: avg_pool2d_backward,
            aten.max_pool2d_with_indices_backward.default: max_pool2d_with_indices_backward,
            aten._adaptive_avg_pool2d_backward.default: adaptive_avg_pool2d_backward,
            aten.replication_pad1d_backward.default: replication_pad_backward,
            aten.replication_pad2d_backward.default: replication_pad_backward,
            aten.replication_pad3d_backward.default: replication_pad_backward,
            aten._scaled_dot_product_flash_attention_for_cpu.default: flash_attention_for_cpu,
            aten._scaled_dot_product_flash_attention_for_cpu_backward.default:
                flash_attention_for_cpu_backward}
