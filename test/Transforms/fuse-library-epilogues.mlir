// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-fuse-library-epilogues{all=1}))' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-fuse-library-epilogues{log=1 all=1}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// Without `all`, only profitable chains: a convolution with at most two
// binary steps; no matmul.
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-fuse-library-epilogues{log=1}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT

// Convolution + bias + inference batch norm: one convolution whose
// epilogue reads per-channel operands of shape [1, C, 1, 1]. The ReLU after
// it is NOT fused: oneDNN's relu turns NaN into 0, PyTorch keeps it NaN.
// CHECK-LABEL: func.func @conv_bn_relu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x3x8x8xf32>, %[[W:[^:]*]]: tensor<4x3x3x3xf32>, %[[B:[^:]*]]: tensor<4xf32>, %[[M:[^:]*]]: tensor<4x1x1xf32>
// CHECK-DAG: %[[EB:.*]] = disc.reshape %[[B]] : (tensor<4xf32>) -> tensor<1x4x1x1xf32>
// CHECK-DAG: %[[EM:.*]] = disc.reshape %[[M]] : (tensor<4x1x1xf32>) -> tensor<1x4x1x1xf32>
// CHECK: %[[C:.*]] = disc.convolution %[[X]], %[[W]], {{.*}} epilogue [#disc.post_op<add>, #disc.post_op<subtract>, #disc.post_op<multiply>](%[[EB]], %[[EM]], %{{.*}}) {disc.dims = ["1", "4", "6", "6"]}
// CHECK-NOT: disc.add
// CHECK: %[[R:.*]] = disc.maximum %[[C]], %{{.*}}
// CHECK: return %[[R]]
// LOG: [disc] fusion: convolution epilogue: add, subtract, multiply (stops: at disc.maximum: oneDNN's max/min/relu/clip post-ops do not propagate NaN)
// DEFAULT: convolution epilogue: none (not profitable: 3 binary steps slow the convolution down)
func.func @conv_bn_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %m: tensor<4x1x1xf32>, %s: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] {disc.dims = ["1", "4", "6", "6"]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = disc.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %2 = disc.add %0, %1 : tensor<1x4x6x6xf32>
  %3 = disc.broadcast_in_dim %m, dims = [1, 2, 3] : (tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %4 = disc.subtract %2, %3 : tensor<1x4x6x6xf32>
  %5 = disc.broadcast_in_dim %s, dims = [1, 2, 3] : (tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %6 = disc.multiply %5, %4 : tensor<1x4x6x6xf32>
  %zero = disc.constant dense<0.0> : tensor<f32>
  %7 = disc.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<1x4x6x6xf32>
  %8 = disc.maximum %6, %7 : tensor<1x4x6x6xf32>
  return %8 : tensor<1x4x6x6xf32>
}

// -----

// A transposed convolution with a dynamic kernel size keeps its dynamic
// padding operands when the bias joins it.
// CHECK-LABEL: func.func @conv_transpose_dynamic_padding_bias
// CHECK-SAME: %[[LO:[a-z0-9]+]]: index, %[[HI:[a-z0-9]+]]: index
// CHECK: disc.convolution %{{.*}}, %{{.*}}, strides = [1], pad_low = [%[[LO]]], pad_high = [%[[HI]]], dilation = [1] lhs_dilation = [8] epilogue [#disc.post_op<add>](%{{.*}}) {{.*}}: (tensor<1x4x?xf32>, tensor<2x4x?xf32>, tensor<1x2x1xf32>, index, index) -> tensor<1x2x?xf32>
// CHECK-NOT: disc.add
// LOG: convolution epilogue: add
func.func @conv_transpose_dynamic_padding_bias(%x: tensor<1x4x?xf32>, %w: tensor<2x4x?xf32>, %b: tensor<2xf32>, %lo: index, %hi: index, %shape: tensor<3xindex>) -> tensor<1x2x?xf32> {
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [%lo], pad_high = [%hi], dilation = [1] lhs_dilation = [8] {disc.dims = ["1", "2", "s0"]} : (tensor<1x4x?xf32>, tensor<2x4x?xf32>, index, index) -> tensor<1x2x?xf32>
  %1 = disc.dynamic_broadcast_in_dim %b, %shape, dims = [1] {disc.dims = ["1", "2", "s0"]} : (tensor<2xf32>, tensor<3xindex>) -> tensor<1x2x?xf32>
  %2 = disc.add %0, %1 {disc.dims = ["1", "2", "s0"]} : tensor<1x2x?xf32>
  return %2 : tensor<1x2x?xf32>
}

// -----

// Linear layer with a dynamic batch: bias, exact GELU (x used twice), and
// a residual of the result's shape (dot_general takes full operands).
// CHECK-LABEL: func.func @linear_gelu_residual
// CHECK: %[[D:.*]] = disc.dot_general {{.*}} epilogue [#disc.post_op<add>, #disc.post_op<gelu_erf>, #disc.post_op<add>](%{{.*}}, %{{.*}}) {disc.dims = ["s0", "16"]}
// CHECK-NOT: disc.erf
// CHECK: return %[[D]]
// LOG: [disc] fusion: dot_general epilogue: add, gelu_erf, add
// DEFAULT: dot_general epilogue: none (not profitable: matmul epilogues run as an extra pass inside oneDNN)
func.func @linear_gelu_residual(%x: tensor<?x8xf32> {disc.dims = ["s0", "8"]}, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %r: tensor<?x16xf32> {disc.dims = ["s0", "16"]}, %shape: tensor<2xindex>) -> tensor<?x16xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [1] {disc.dims = ["s0", "16"]} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %1 = disc.dynamic_broadcast_in_dim %b, %shape, dims = [1] {disc.dims = ["s0", "16"]} : (tensor<16xf32>, tensor<2xindex>) -> tensor<?x16xf32>
  %2 = disc.add %0, %1 {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %half = disc.constant dense<5.000000e-01> : tensor<f32>
  %h = disc.dynamic_broadcast_in_dim %half, %shape, dims = [] {disc.dims = ["s0", "16"]} : (tensor<f32>, tensor<2xindex>) -> tensor<?x16xf32>
  %3 = disc.multiply %2, %h {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %k = disc.constant dense<0.707106769> : tensor<f32>
  %kb = disc.dynamic_broadcast_in_dim %k, %shape, dims = [] {disc.dims = ["s0", "16"]} : (tensor<f32>, tensor<2xindex>) -> tensor<?x16xf32>
  %4 = disc.multiply %2, %kb {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %5 = disc.erf %4 {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %one = disc.constant dense<1.000000e+00> : tensor<f32>
  %ob = disc.dynamic_broadcast_in_dim %one, %shape, dims = [] {disc.dims = ["s0", "16"]} : (tensor<f32>, tensor<2xindex>) -> tensor<?x16xf32>
  %6 = disc.add %5, %ob {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %7 = disc.multiply %3, %6 {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  %8 = disc.add %7, %r {disc.dims = ["s0", "16"]} : tensor<?x16xf32>
  return %8 : tensor<?x16xf32>
}

// -----

// SiLU is fused; the ReLU6 after it (max(x, 0) then min(x, 6)) and a
// clamp are NOT: oneDNN's relu/clip/max/min post-ops turn NaN into a number.
// CHECK-LABEL: func.func @silu_relu6
// CHECK: disc.dot_general {{.*}} epilogue [#disc.post_op<swish, 1.000000e+00, 0.000000e+00>]() :
// CHECK-NOT: disc.logistic
// CHECK: disc.maximum
// CHECK: disc.minimum
// CHECK: disc.convolution
// CHECK-NOT: epilogue
// CHECK: disc.clamp
// LOG: dot_general epilogue: swish (stops: at disc.maximum: oneDNN's max/min/relu/clip post-ops do not propagate NaN)
// LOG: convolution epilogue: none (stops: at disc.clamp: oneDNN's max/min/relu/clip post-ops do not propagate NaN)
func.func @silu_relu6(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %x4: tensor<1x3x8x8xf32>, %w4: tensor<4x3x3x3xf32>) -> (tensor<4x16xf32>, tensor<1x4x6x6xf32>) {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = disc.logistic %0 : tensor<4x16xf32>
  %2 = disc.multiply %0, %1 : tensor<4x16xf32>
  %zero = disc.constant dense<0.0> : tensor<4x16xf32>
  %3 = disc.maximum %2, %zero : tensor<4x16xf32>
  %six = disc.constant dense<6.0> : tensor<f32>
  %sb = disc.broadcast_in_dim %six, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
  %4 = disc.minimum %3, %sb : tensor<4x16xf32>
  %c = disc.convolution %x4, %w4, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %lo = disc.constant dense<-1.0> : tensor<f32>
  %hi = disc.constant dense<1.0> : tensor<f32>
  %5 = disc.clamp %lo, %c, %hi : (tensor<f32>, tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  return %4, %5 : tensor<4x16xf32>, tensor<1x4x6x6xf32>
}

// -----

// Must NOT fuse: a convolution's full-size operand (a residual; the
// convolution's result is blocked inside oneDNN), a result with two users,
// the result on the right of a subtraction, and bf16.
// CHECK-LABEL: func.func @not_fused
// CHECK: disc.convolution
// CHECK-NOT: epilogue
// CHECK: disc.add
// CHECK: disc.dot_general
// CHECK-NOT: epilogue
// CHECK: disc.subtract
// CHECK: disc.dot_general
// CHECK-NOT: epilogue
// CHECK: disc.tanh
// CHECK: disc.dot_general
// CHECK-NOT: epilogue
// CHECK: disc.tanh
// LOG: convolution epilogue: none (stops: at disc.add: a convolution epilogue reads per-channel or scalar operands)
// LOG: dot_general epilogue: none (stops: at disc.subtract: the result is the right operand of a non-commutative op)
// LOG: dot_general epilogue: none (stops: the value has several users)
// LOG: dot_general epilogue: none (element type bf16, only f32)
func.func @not_fused(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %r: tensor<1x4x6x6xf32>, %a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>, %ah: tensor<4x8xbf16>, %bh: tensor<8x16xbf16>) -> (tensor<1x4x6x6xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xbf16>) {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = disc.add %0, %r : tensor<1x4x6x6xf32>
  %2 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %3 = disc.subtract %c, %2 : tensor<4x16xf32>
  %4 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %5 = disc.tanh %4 : tensor<4x16xf32>
  %6 = disc.dot_general %ah, %bh, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %7 = disc.tanh %6 : tensor<4x16xbf16>
  return %1, %3, %4, %5, %7 : tensor<1x4x6x6xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xbf16>
}

// -----

// A convolution with a bias and an activation: fused by default.
// CHECK-LABEL: func.func @conv_bias_tanh
// CHECK: disc.convolution {{.*}} epilogue [#disc.post_op<add>, #disc.post_op<tanh>]
// DEFAULT: convolution epilogue: add, tanh (stops: the user is func.return
func.func @conv_bias_tanh(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %0 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = disc.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %2 = disc.add %1, %0 : tensor<1x4x6x6xf32>
  %3 = disc.tanh %2 : tensor<1x4x6x6xf32>
  return %3 : tensor<1x4x6x6xf32>
}

// -----

// A transposed convolution (lhs_dilation) keeps its input dilation when the
// bias add becomes its epilogue.
// CHECK-LABEL: func.func @conv_transpose_bias
// CHECK: disc.convolution %{{.*}}, %{{.*}}, strides = [1], pad_low = [15], pad_high = [15], dilation = [1] lhs_dilation = [8] epilogue [#disc.post_op<add>]
// CHECK-NOT: disc.add
func.func @conv_transpose_bias(%x: tensor<1x4x9xf32>, %w: tensor<2x4x16xf32>, %b: tensor<2xf32>) -> tensor<1x2x80xf32> {
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [15], pad_high = [15], dilation = [1] lhs_dilation = [8] : (tensor<1x4x9xf32>, tensor<2x4x16xf32>) -> tensor<1x2x80xf32>
  %1 = disc.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<1x2x80xf32>
  %2 = disc.add %0, %1 : tensor<1x2x80xf32>
  return %2 : tensor<1x2x80xf32>
}

// -----

// NOT fused: an operand broadcast with its dims transposed. The epilogue
// operand is its source reshaped, which would read it in the wrong order.
// CHECK-LABEL: func.func @transposing_broadcast
// CHECK-NOT: epilogue
// CHECK: disc.add
// LOG: dot_general epilogue: none (stops: at disc.add: the broadcast transposes its operand)
func.func @transposing_broadcast(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %t: tensor<5x3xf32>) -> tensor<3x5xf32> {
  %0 = disc.dot_general %x, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = disc.broadcast_in_dim %t, dims = [1, 0] : (tensor<5x3xf32>) -> tensor<3x5xf32>
  %2 = disc.add %0, %1 : tensor<3x5xf32>
  return %2 : tensor<3x5xf32>
}
