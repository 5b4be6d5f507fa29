// RUN: disc-opt %s -disc-select-entry -disc-add-ral-context -disc-lower-library-calls -split-input-file | FileCheck %s

// x @ W^T (PyTorch linear): rhs is [N, K], passed with transB = 1, no
// transpose is materialised.
// CHECK: func.func private @disc_ral_matmul_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr {disc.ral_context}
// CHECK-NOT: disc.transpose
// CHECK: memref.alloc
// CHECK: bufferization.to_buffer %{{.*}} read_only
// CHECK: call @disc_ral_matmul_f32(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64, %c1_i64)
// CHECK: bufferization.to_tensor %{{.*}} restrict writable
// CHECK: disc.dynamic_reshape
// CHECK-NOT: disc.dot_general
func.func @linear(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [1] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Batched bf16 matmul in natural layout: already rank 3, no reshape.
// CHECK-LABEL: func @bmm
// CHECK-NOT: disc.transpose
// CHECK-NOT: disc.dynamic_reshape
// CHECK: call @disc_ral_matmul_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}})
func.func @bmm(%a: tensor<?x?x?xbf16>, %b: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %0 = disc.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<?x?x?xbf16>, tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
  return %0 : tensor<?x?x?xbf16>
}

// -----

// A layout that is neither natural nor a transpose flag gets a transpose.
// CHECK-LABEL: func @batch_last
// CHECK: disc.transpose %{{.*}}, dims = [2, 0, 1]
// CHECK: call @disc_ral_matmul_f32
func.func @batch_last(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = disc.dot_general %a, %b, batching_dims = [2] x [0], contracting_dims = [1] x [1] : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// CHECK: func.func private @disc_ral_conv_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// The window must fit in the padded input (PyTorch's error; span / stride
// + 1 would round a negative span up to one element): checked per dynamic
// spatial dim before the result is allocated.
// CHECK-LABEL: func @conv
// CHECK: cf.assert %{{.*}}, "disc.convolution: along spatial dim 0 the kernel (dilated) is larger than the padded input"
// CHECK: cf.assert %{{.*}}, "disc.convolution: along spatial dim 1 the kernel (dilated) is larger than the padded input"
// CHECK: memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x8x?x?xf32>
// CHECK: call @disc_ral_conv_f32(
func.func @conv(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// Static spatial sizes whose window fits: no check.
// CHECK-LABEL: func @conv_static_fits
// CHECK-NOT: cf.assert
// CHECK: call @disc_ral_conv_f32(
func.func @conv_static_fits(%x: tensor<?x3x4x4xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x2x2xf32> {
  %0 = disc.convolution %x, %w, strides = [2, 2], pad_low = [0, 0], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x3x4x4xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x2x2xf32>
  return %0 : tensor<?x8x2x2xf32>
}

// -----

// A transposed convolution (lhs_dilation): the output length is
// max((in - 1) * 8 + 1, 0) + 30 - 15; the same call, with the input
// dilations after the kernel dilations (unused spatial slots 1), then the
// groups.
// CHECK-LABEL: func @conv_transpose
// CHECK: %[[IN:.*]] = tensor.dim %{{.*}}, %c2
// CHECK: %[[M1:.*]] = arith.subi %[[IN]], %c1
// CHECK: %[[SPREAD:.*]] = arith.muli %[[M1]], %c8
// CHECK: %[[P1:.*]] = arith.addi %[[SPREAD]], %c1
// CHECK: arith.maxsi %[[P1]], %{{.*}}
// CHECK: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 15 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: arith.constant 15 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 8 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: call @disc_ral_conv_f32(
func.func @conv_transpose(%x: tensor<?x4x?xf32>, %w: tensor<2x4x16xf32>) -> tensor<?x2x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [15], pad_high = [15], dilation = [1] lhs_dilation = [8] : (tensor<?x4x?xf32>, tensor<2x4x16xf32>) -> tensor<?x2x?xf32>
  return %0 : tensor<?x2x?xf32>
}

// -----

// A transposed convolution whose kernel size is dynamic: its padding
// (rhs_dilation * (k - 1) - p) is an operand, passed to the library as an
// i64 in its slot (the library checks it is not negative), and the output
// length adds it.
// CHECK-LABEL: func @conv_transpose_dynamic_kernel
// CHECK-SAME: %[[LO:[a-z0-9]+]]: index, %[[HI:[a-z0-9]+]]: index
// CHECK: %[[SUM:.*]] = arith.addi %[[LO]], %[[HI]]
// CHECK: arith.addi %{{.*}}, %[[SUM]]
// CHECK: %[[LO64:.*]] = arith.index_cast %[[LO]] : index to i64
// CHECK: %[[HI64:.*]] = arith.index_cast %[[HI]] : index to i64
// CHECK: call @disc_ral_conv_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LO64]], %{{.*}}, %{{.*}}, %[[HI64]],
// CHECK-NOT: arith.index_cast
func.func @conv_transpose_dynamic_kernel(%x: tensor<?x4x?xf32>, %w: tensor<2x4x?xf32>, %lo: index, %hi: index) -> tensor<?x2x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [%lo], pad_high = [%hi], dilation = [1] lhs_dilation = [8] : (tensor<?x4x?xf32>, tensor<2x4x?xf32>, index, index) -> tensor<?x2x?xf32>
  return %0 : tensor<?x2x?xf32>
}

// -----

// A kernel gradient: the convolution's parameter list (input dilations 1),
// into a static kernel-sized buffer; a dynamic batch and image are read by
// the library from the operands.
// CHECK: func.func private @disc_ral_conv_backward_weights_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func @conv_backward_weights
// CHECK: memref.alloc() {{.*}}: memref<8x2x3x3xf32>
// CHECK: %[[S:.*]] = arith.constant 2 : i64
// CHECK-NEXT: %[[S1:.*]] = arith.constant 2 : i64
// CHECK-NEXT: %[[S2:.*]] = arith.constant 1 : i64
// CHECK: %[[G:.*]] = arith.constant 2 : i64
// CHECK-NEXT: call @disc_ral_conv_backward_weights_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S]], %[[S1]], %[[S2]], {{.*}}, %[[G]])
// CHECK-NOT: disc.convolution_backward_weights
func.func @conv_backward_weights(%x: tensor<?x4x?x?xf32>, %dy: tensor<?x8x?x?xf32>) -> tensor<8x2x3x3xf32> {
  %0 = disc.convolution_backward_weights %x, %dy, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] {feature_group_count = 2 : i64} : (tensor<?x4x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<8x2x3x3xf32>
  return %0 : tensor<8x2x3x3xf32>
}

// -----

// A kernel of symbolic sizes: the buffer's dynamic dims come from the
// kernel_size operand (the output features from the gradient), and the
// library reads them from the buffer like static ones.
// CHECK-LABEL: func @conv_backward_weights_dynamic_kernel
// CHECK-SAME: (%{{.*}}, %[[X:.*]]: tensor<?x4x?x?xf32>, %[[DY:.*]]: tensor<?x?x?x?xf32>, %[[K:.*]]: tensor<2xindex>)
// CHECK-DAG: %[[O:.*]] = tensor.dim %[[DY]], %c1
// CHECK-DAG: %[[KH:.*]] = tensor.extract %[[K]][%c0]
// CHECK-DAG: %[[KW:.*]] = tensor.extract %[[K]][%{{.*}}]
// CHECK: memref.alloc(%[[O]], %[[KH]], %[[KW]]) : memref<?x4x?x?xf32>
// CHECK: call @disc_ral_conv_backward_weights_f32
func.func @conv_backward_weights_dynamic_kernel(%x: tensor<?x4x?x?xf32>, %dy: tensor<?x?x?x?xf32>, %k: tensor<2xindex>) -> tensor<?x4x?x?xf32> {
  %0 = disc.convolution_backward_weights %x, %dy kernel_size(%k), strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x4x?x?xf32>, tensor<?x?x?x?xf32>, tensor<2xindex>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

// A kernel_size built from sizes (what the importer emits) gives the buffer
// those sizes themselves: no read back from the shape tensor, which the
// cuda target's host code could not make once it is a buffer.
// CHECK-LABEL: func @conv_backward_weights_kernel_size_from_elements
// CHECK-SAME: (%{{.*}}, %[[X:.*]]: tensor<?x4x?x?xf32>, %[[DY:.*]]: tensor<?x?x?x?xf32>, %[[KH:[^:]*]]: index, %[[KW:[^:]*]]: index)
// CHECK-NOT: tensor.extract
// CHECK: memref.alloc(%{{.*}}, %[[KH]], %[[KW]]) : memref<?x4x?x?xf32>
// CHECK: call @disc_ral_conv_backward_weights_f32
func.func @conv_backward_weights_kernel_size_from_elements(%x: tensor<?x4x?x?xf32>, %dy: tensor<?x?x?x?xf32>, %kh: index, %kw: index) -> tensor<?x4x?x?xf32> {
  %k = tensor.from_elements %kh, %kw : tensor<2xindex>
  %0 = disc.convolution_backward_weights %x, %dy kernel_size(%k), strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] : (tensor<?x4x?x?xf32>, tensor<?x?x?x?xf32>, tensor<2xindex>) -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// -----

// Epilogues call the `_post_` entry points: the (kind, alpha, beta) triples
// as an f64 constant, then the operands (a dot_general's brought to rank 3
// like its result), then the output buffer in the unused slots.
// CHECK: func.func private @disc_ral_conv_post_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, memref<*xf64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
// CHECK: func.func private @disc_ral_matmul_post_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, memref<*xf64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>)
// CHECK-LABEL: func.func @epilogues
// CHECK: %[[C:.*]] = memref.cast %{{.*}} : memref<1x4x16xf32> to memref<*xf32>
// CHECK: arith.constant dense<[0.000000e+00, 0.000000e+00, 0.000000e+00, 2.100000e+01, 0.000000e+00, 0.000000e+00]> : tensor<6xf64>
// CHECK: disc.dynamic_reshape %{{.*}}, %{{.*}} : (tensor<1x16xf32>, tensor<3xindex>) -> tensor<1x1x16xf32>
// CHECK: call @disc_ral_matmul_post_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[C]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C]], %[[C]], %[[C]], %[[C]], %[[C]])
// CHECK: %[[OUT:.*]] = memref.cast %{{.*}} : memref<1x4x6x6xf32> to memref<*xf32>
// CHECK: arith.constant dense<[0.000000e+00, 0.000000e+00, 0.000000e+00, 1.700000e+01, 0.000000e+00, 6.000000e+00]> : tensor<6xf64>
// CHECK: call @disc_ral_conv_post_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[OUT]], {{.*}}, %{{.*}}, %{{.*}}, %[[OUT]], %[[OUT]], %[[OUT]], %[[OUT]], %[[OUT]])
func.func @epilogues(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<1x16xf32>, %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %cb: tensor<1x4x1x1xf32>) -> (tensor<4x16xf32>, tensor<1x4x6x6xf32>) {
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] epilogue [#disc.post_op<add>, #disc.post_op<gelu_erf>](%bias) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  %1 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] epilogue [#disc.post_op<add>, #disc.post_op<clamp, 0.0, 6.0>](%cb) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<1x4x6x6xf32>
}

// -----

// Attention: one call on the 4-d operands as they are; the result buffer
// fills the mask slot when there is no mask (has_mask = 0).
// CHECK: func.func private @disc_ral_attention_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, f64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func @attention
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr {disc.ral_context}
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x3x?x16xf32>
// CHECK: %[[U:.*]] = memref.cast %[[OUT]] : memref<?x3x?x16xf32> to memref<*xf32>
// CHECK: %[[SCALE:.*]] = arith.constant 2.500000e-01 : f64
// CHECK: call @disc_ral_attention_f32(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %[[U]], %[[U]], %c0_i64, %c0_i64{{.*}}, %[[SCALE]])
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: disc.attention
func.func @attention(%q: tensor<?x3x?x16xf32>, %k: tensor<?x3x?x16xf32>, %v: tensor<?x3x?x16xf32>) -> tensor<?x3x?x16xf32> {
  %0 = disc.attention %q, %k, %v scale = 0.25 : (tensor<?x3x?x16xf32>, tensor<?x3x?x16xf32>, tensor<?x3x?x16xf32>) -> tensor<?x3x?x16xf32>
  return %0 : tensor<?x3x?x16xf32>
}

// -----

// With a mask and causal: the mask's buffer in its slot, has_mask = 1,
// causal = 1.
// CHECK-LABEL: func @masked_causal
// CHECK: %[[M:.*]] = bufferization.to_buffer %arg4 read_only
// CHECK: %[[MU:.*]] = memref.cast %[[M]]
// CHECK: call @disc_ral_attention_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MU]], %{{.*}}, %c1_i64, %c1_i64{{.*}}, %{{.*}})
func.func @masked_causal(%q: tensor<2x3x5x16xf32>, %k: tensor<2x3x7x16xf32>, %v: tensor<2x3x7x8xf32>, %m: tensor<2x1x1x7xf32>) -> tensor<2x3x5x8xf32> {
  %0 = disc.attention %q, %k, %v mask(%m) scale = 0.25 causal : (tensor<2x3x5x16xf32>, tensor<2x3x7x16xf32>, tensor<2x3x7x8xf32>, tensor<2x1x1x7xf32>) -> tensor<2x3x5x8xf32>
  return %0 : tensor<2x3x5x8xf32>
}

// -----

// No scale: 1 / sqrt(head dim), a constant when the head dim is static ...
// CHECK-LABEL: func @default_scale_static
// CHECK: %[[S:.*]] = arith.constant 1.250000e-01 : f64
// CHECK: call @disc_ral_attention_f32({{.*}}, %[[S]])
func.func @default_scale_static(%q: tensor<?x2x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x2x?x64xf32> {
  %0 = disc.attention %q, %k, %v : (tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> tensor<?x2x?x64xf32>
  return %0 : tensor<?x2x?x64xf32>
}

// -----

// ... and computed at run time from the query's dim 3 when it is dynamic.
// CHECK-LABEL: func @default_scale_dynamic
// (the first tensor.dim ops are the result shape's)
// CHECK: %[[E:.*]] = tensor.dim %arg1, %c3_{{[0-9]+}} :
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[E]] : index to i64
// CHECK: %[[F:.*]] = arith.uitofp %[[I]] : i64 to f64
// CHECK: %[[R:.*]] = math.sqrt %[[F]] : f64
// CHECK: %[[S:.*]] = arith.divf %{{.*}}, %[[R]] : f64
// CHECK: call @disc_ral_attention_f32({{.*}}, %[[S]])
func.func @default_scale_dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = disc.attention %q, %k, %v : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

// A sort: one call of the runtime's stable sort for the element type, the
// operand read as it is (any strides), values and indices in fresh buffers.
// CHECK: func.func private @disc_ral_sort_i64(!llvm.ptr, memref<*xi64>, memref<*xi64>, memref<*xi64>, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func @sort_descending
// CHECK: %[[VALUES:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xi64>
// CHECK: %[[INDICES:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xi64>
// CHECK: bufferization.to_buffer %{{.*}} read_only
// CHECK: call @disc_ral_sort_i64(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1_i64{{.*}}, %c1_i64{{.*}})
// CHECK-NOT: disc.sort
func.func @sort_descending(%x: tensor<?x?xi64>) -> (tensor<?x?xi64>, tensor<?x?xi64>) {
  %0:2 = disc.sort %x, dim = 1 {descending = true} : (tensor<?x?xi64>) -> (tensor<?x?xi64>, tensor<?x?xi64>)
  return %0#0, %0#1 : tensor<?x?xi64>, tensor<?x?xi64>
}
